//! The one road from a declared graph to its description, for the front doors that have no spans: the
//! run-time builder and graph files. (The macro walks the same road and renders diagnostics as spans.)

use std::fmt;

use crate::check::Children;
use crate::desc::GraphDesc;
use crate::diagnostic::Diagnostic;
use crate::ir::Graph;
use crate::library::Library;
use crate::render::render;
use crate::subgraph::Subgraphs;

/// Checks `graph` and describes it: the description, or every diagnostic with the graph they point into.
/// A graph with subgraph nodes needs its children: [`describe_graph_with`].
pub fn describe_graph(graph: Graph, library: &Library) -> Result<GraphDesc, GraphErrors> {
    describe_graph_with(graph, library, &Subgraphs::new())
}

/// [`describe_graph`], each subgraph node's child found in `subgraphs` by the name the node gives.
pub fn describe_graph_with(
    graph: Graph,
    library: &Library,
    subgraphs: &Subgraphs,
) -> Result<GraphDesc, GraphErrors> {
    match crate::check::check_with(graph.clone(), library, Children::Given(subgraphs)) {
        Ok(checked) => Ok(crate::describe::describe(&checked)),
        Err(diagnostics) => Err(GraphErrors {
            graph: Box::new(graph),
            diagnostics,
        }),
    }
}

/// Every problem the checks found in a graph, with the graph, so each can be rendered with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphErrors {
    /// Boxed: a graph is large, and errors travel in `Result`s.
    pub graph: Box<Graph>,
    pub diagnostics: Vec<Diagnostic>,
}

impl GraphErrors {
    /// Each diagnostic rendered with its location in words, in the order found.
    pub fn rendered(&self) -> Vec<String> {
        self.diagnostics
            .iter()
            .map(|d| render(&self.graph, d))
            .collect()
    }
}

impl fmt::Display for GraphErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.diagnostics.len();
        writeln!(
            f,
            "graph `{}` has {count} error{}:",
            self.graph.name,
            if count == 1 { "" } else { "s" }
        )?;
        for text in self.rendered() {
            writeln!(f, "{text}")?;
        }
        Ok(())
    }
}

impl std::error::Error for GraphErrors {}
