//! Every name a graph declares is an identifier, as the macro's parser requires of every name it reads: the
//! builder and graph files take names as strings, and a name is shown in messages, labels and (for bindings)
//! kernels' WGSL. Buffers and parameters are held to it with WGSL's reserved words in
//! [`Checker::check_wgsl_names`].

use super::Checker;
use super::layout::{SEEN_BY_NAME, wgsl_reserves};
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{KernelSource, NodeKind};
use crate::names::{is_identifier, not_an_identifier, shown};

/// Why the other names must be identifiers.
const A_NAME: &str = "a name must be an identifier";

impl Checker<'_> {
    /// The graph, its nodes, groups of alternatives and blocks have identifiers for names; a kernel's chosen
    /// entry point is one; and the names a node binds buffers by (a kernel's WGSL name for a buffer, a
    /// task's, a child graph's buffer) are identifiers, a kernel's also none WGSL reserves.
    pub(super) fn check_identifiers(&mut self) {
        let graph = self.graph;
        if !is_identifier(&graph.name) {
            self.diags.push(not_an_identifier(
                Loc::Graph,
                "a graph",
                &graph.name,
                A_NAME,
            ));
        }
        for (n, node) in graph.nodes.iter().enumerate() {
            if !is_identifier(&node.name) {
                self.diags.push(not_an_identifier(
                    Loc::Node(n),
                    "a node",
                    &node.name,
                    A_NAME,
                ));
            }
            if let NodeKind::Kernel(kernel) = &node.kind
                && let Some(entry) = &kernel.entry
                && !is_identifier(entry)
            {
                self.diags.push(not_an_identifier(
                    Loc::KernelEntry(n),
                    "an entry point",
                    entry,
                    "WGSL names its functions by identifiers",
                ));
            }
            self.check_binding_names(n);
        }
        for (g, group) in graph.alternatives.iter().enumerate() {
            if !is_identifier(&group.name) {
                self.diags.push(not_an_identifier(
                    Loc::Alternatives(g),
                    "a group of alternatives",
                    &group.name,
                    A_NAME,
                ));
            }
        }
        for (b, block) in graph.blocks.iter().enumerate() {
            if !is_identifier(&block.name) {
                self.diags.push(not_an_identifier(
                    Loc::Block(b),
                    "a block",
                    &block.name,
                    A_NAME,
                ));
            }
        }
    }

    /// The names node `n` binds its buffers by, where they are its own: a WGSL kernel's (its WGSL sees the
    /// buffer by that name), a task's, a subgraph's (the child's buffer). A binding that repeats its
    /// buffer's name was judged with the buffer; a library kernel's names are the library's, looked up there.
    fn check_binding_names(&mut self, n: usize) {
        let node = &self.graph.nodes[n];
        let wgsl = match &node.kind {
            NodeKind::Kernel(k) => match k.source {
                KernelSource::Wgsl { .. } => true,
                KernelSource::Library(_) => return,
            },
            NodeKind::Host { .. } | NodeKind::Interop { .. } | NodeKind::Subgraph { .. } => false,
            _ => return,
        };
        for (i, access) in node.accesses().iter().enumerate() {
            if access.binding == access.buffer {
                continue;
            }
            let loc = Loc::Access { node: n, index: i };
            if !is_identifier(&access.binding) {
                self.badly_named_bindings.push(n);
                let why = if wgsl { SEEN_BY_NAME } else { A_NAME };
                self.diags
                    .push(not_an_identifier(loc, "a binding", &access.binding, why));
            } else if wgsl && (wgsl_reserves(&access.binding) || access.binding == "params") {
                self.badly_named_bindings.push(n);
                self.diags.push(
                    Diagnostic::new(
                        loc,
                        format!(
                            "{} cannot name a binding: kernels see buffers by name, and WGSL reserves it",
                            shown(&access.binding)
                        ),
                    )
                    .with_help("choose another name"),
                );
            }
        }
    }
}
