//! The one road from a declared graph to its description, for the front doors that have no spans: the
//! run-time builder and graph files. (The macro walks the same road and renders diagnostics as spans.)

use std::fmt;

use crate::check::Children;
use crate::desc::GraphDesc;
use crate::diagnostic::Diagnostic;
use crate::file_spans::SourceFile;
use crate::ir::Graph;
use crate::library::Library;
use crate::render::{render, render_in_file};
use crate::subgraph::Subgraphs;

/// Checks `graph` and describes it: the description, or every diagnostic with the graph they point into.
/// A graph with subgraph nodes needs its children: [`describe_graph_with`].
pub fn describe_graph(graph: Graph, library: &Library) -> Result<GraphDesc, GraphErrors> {
    describe_graph_with(graph, library, &Subgraphs::new())
}

/// [`describe_graph`], each subgraph node's child found in `subgraphs` by the name the node gives, or in
/// `library` when it names a library subgraph (`kernels::reduce_sum`).
pub fn describe_graph_with(
    graph: Graph,
    library: &Library,
    subgraphs: &Subgraphs,
) -> Result<GraphDesc, GraphErrors> {
    let mut children = library_children(&graph, library);
    children.extend(subgraphs.iter().map(|(k, v)| (k.clone(), v.clone())));
    let given = Children {
        given: &children,
        const_evaluated: false,
    };
    match crate::check::check_with(graph.clone(), library, given) {
        Ok(checked) => Ok(crate::describe::describe(&checked)),
        Err(diagnostics) => Err(GraphErrors {
            graph: Box::new(graph),
            diagnostics,
        }),
    }
}

/// The library subgraphs `graph`'s subgraph nodes name (`kernels::path`), each described with `library`, by
/// the name the node gives. One that does not check (a mistake of the library, which its own tests catch) is
/// left out: the checks then report the node's child as not given.
pub fn library_children(graph: &Graph, library: &Library) -> Subgraphs {
    let mut children = Subgraphs::new();
    for node in &graph.nodes {
        if let crate::ir::NodeKind::Subgraph { graph: path, .. } = &node.kind
            && let Some(sub) = path
                .strip_prefix(crate::library::SUBGRAPH_PREFIX)
                .and_then(|p| library.subgraph(p))
            && !children.contains_key(path)
        {
            let child_graph = (sub.graph)();
            let nested = library_children(&child_graph, library);
            let given = Children {
                given: &nested,
                const_evaluated: false,
            };
            if let Ok(checked) = crate::check::check_with(child_graph, library, given) {
                let desc = crate::describe::describe(&checked);
                children.insert(path.clone(), std::sync::Arc::new(desc));
            }
        }
    }
    children
}

/// Every problem the checks found in a graph, with the graph, so each can be rendered with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphErrors {
    /// Boxed: a graph is large, and errors travel in `Result`s.
    pub graph: Box<Graph>,
    pub diagnostics: Vec<Diagnostic>,
}

impl GraphErrors {
    /// Each diagnostic rendered with its location in words (and WGSL's line), in the order found.
    pub fn rendered(&self) -> Vec<String> {
        self.diagnostics
            .iter()
            .map(|d| render(&self.graph, d))
            .collect()
    }

    /// Each diagnostic pointing at the line and column of `source`, the graph file the graph was loaded
    /// from, where it is written (or of the `.wgsl` file it names), in the order found.
    pub fn rendered_in(&self, source: &SourceFile) -> Vec<String> {
        render_in_file(&self.graph, &self.diagnostics, source)
    }

    /// The whole report as [`fmt::Display`] gives it, each diagnostic pointing into `source` (see
    /// [`GraphErrors::rendered_in`]).
    pub fn report_in(&self, source: &SourceFile) -> String {
        self.report(self.rendered_in(source))
    }

    /// A line that counts the errors, then each of `texts`.
    fn report(&self, texts: Vec<String>) -> String {
        let count = self.diagnostics.len();
        let mut report = format!(
            "graph `{}` has {count} error{}:\n",
            crate::names::escaped(&self.graph.name),
            if count == 1 { "" } else { "s" }
        );
        for text in texts {
            report.push_str(&text);
            report.push('\n');
        }
        report
    }
}

impl fmt::Display for GraphErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report(self.rendered()))
    }
}

impl std::error::Error for GraphErrors {}
