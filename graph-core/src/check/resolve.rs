//! The resolve stage: names to indices, in the graph's three namespaces. An unknown name is reported once,
//! where it is written (with what it names when it names something of another kind), and resolves to
//! nothing, so later checks skip it rather than repeat it.

use super::Checker;
use crate::deps::{
    BufferAccess, Edge, add_leaf_edges, infer_edges, merge_edges, spread_over_groups,
};
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{EdgeMode, NodeKind};
use crate::names::{NameTable, unknown};

impl<'g> Checker<'g> {
    pub(super) fn table(&self, space: Space) -> &NameTable<'g> {
        match space {
            Space::Node => &self.nodes,
            Space::Buffer => &self.buffers,
            Space::Param => &self.params,
        }
    }

    /// Looks a name up in its namespace, reporting an unknown one at `loc`.
    pub(super) fn resolve_name(&mut self, space: Space, name: &str, loc: Loc) -> Option<usize> {
        let found = self.table(space).get(name);
        if found.is_none() {
            let d = self.unknown_name(space, name, loc);
            self.diags.push(d);
        }
        found
    }

    /// An unknown name: when it names something of another kind, says so (the likelier mistake); else the
    /// closest name of the right kind.
    pub(super) fn unknown_name(&self, space: Space, name: &str, loc: Loc) -> Diagnostic {
        let other = [Space::Node, Space::Buffer, Space::Param]
            .into_iter()
            .find(|&other| other != space && self.table(other).get(name).is_some());
        match other {
            Some(other) => Diagnostic::new(
                loc,
                format!("`{name}` is a {}, not a {}", other.what(), space.what()),
            )
            .with_help(wrong_namespace_help(space, other, name)),
            None => unknown(loc, space.what(), name, self.table(space).names()),
        }
    }

    /// Every buffer a node names exists, and no node names one buffer twice.
    pub(super) fn resolve_accesses(&mut self) {
        for (n, node) in self.graph.nodes.iter().enumerate() {
            let mut resolved = Vec::new();
            for (i, access) in node.accesses().iter().enumerate() {
                let loc = Loc::Access { node: n, index: i };
                let found = self.resolve_name(Space::Buffer, &access.buffer, loc.clone());
                let repeated = found.is_some()
                    && resolved
                        .iter()
                        .flatten()
                        .any(|a: &BufferAccess| Some(a.buffer) == found);
                if repeated {
                    let diagnostic = match node.kind {
                        NodeKind::Copy { .. } => Diagnostic::new(
                            loc,
                            format!("copy `{}` copies `{}` into itself", node.name, access.buffer),
                        )
                        .with_help(
                            "a copy moves elements between two buffers; copy through a graph-owned one",
                        ),
                        _ => Diagnostic::new(
                            loc,
                            format!(
                                "node `{}` names buffer `{}` twice",
                                node.name, access.buffer
                            ),
                        )
                        .with_help("bind each buffer once, with the widest access the node needs"),
                    };
                    self.diags.push(diagnostic);
                }
                resolved.push(found.filter(|_| !repeated).map(|buffer| BufferAccess {
                    buffer,
                    mode: access.mode,
                }));
            }
            self.accesses.push(resolved);
        }
    }

    /// Both ends of an explicit edge are nodes of this graph.
    pub(super) fn resolve_explicit_edges(&mut self) {
        for (i, e) in self.graph.edges.iter().enumerate() {
            let from = self.resolve_name(Space::Node, &e.from, Loc::EdgeFrom(i));
            let to = self.resolve_name(Space::Node, &e.to, Loc::EdgeTo(i));
            if let (Some(from), Some(to)) = (from, to) {
                self.explicit.push((i, from, to));
            }
        }
    }

    pub(super) fn dependency_edges(&self) -> Vec<Edge> {
        // A group of alternatives is one node for inference, at the place of its first declared choice,
        // accessing what any choice accesses (a buffer read by one and written by another, read and written).
        let mut accesses = self.resolved_accesses();
        for group in &self.groups {
            let Some(first) = group.iter().min().copied() else {
                continue;
            };
            let mut union: Vec<BufferAccess> = Vec::new();
            for &n in group {
                for access in std::mem::take(&mut accesses[n]) {
                    match union.iter_mut().find(|u| u.buffer == access.buffer) {
                        Some(u) => u.mode = u.mode.joined(access.mode),
                        None => union.push(access),
                    }
                }
            }
            accesses[first] = union;
        }
        let inferred = match self.graph.edge_mode {
            EdgeMode::Inferred => infer_edges(self.graph.buffers.len(), &accesses),
            EdgeMode::ExplicitOnly => Vec::new(),
        };
        let is_barrier: Vec<bool> = self
            .graph
            .nodes
            .iter()
            .map(|n| matches!(n.kind, NodeKind::Barrier {}))
            .collect();
        let edges = merge_edges(&self.explicit, inferred);
        let edges = spread_over_groups(edges, &self.groups, false);
        let blocks: Vec<Vec<usize>> = self.blocks.iter().map(|b| b.nodes.clone()).collect();
        let edges = spread_over_groups(edges, &blocks, true);
        add_leaf_edges(&is_barrier, edges)
    }

    /// Every node's accesses, resolved; a kernel dispatched indirectly also reads its counts' buffer.
    pub(super) fn resolved_accesses(&self) -> Vec<Vec<BufferAccess>> {
        self.accesses
            .iter()
            .enumerate()
            .map(|(n, list)| {
                // A block's member also reads its flag: the gate reads it before each run.
                let implicit = [
                    self.indirect.get(n).copied().flatten(),
                    self.flag_read_by(n),
                ];
                let reads = implicit.into_iter().flatten().map(|buffer| BufferAccess {
                    buffer,
                    mode: crate::ir::AccessMode::Read,
                });
                list.iter().flatten().copied().chain(reads).collect()
            })
            .collect()
    }

    /// The buffer each indirect dispatch names, by node.
    pub(super) fn resolve_indirect_dispatches(&mut self) {
        let graph = self.graph;
        self.indirect = graph
            .nodes
            .iter()
            .enumerate()
            .map(|(n, node)| match &node.kind {
                crate::ir::NodeKind::Kernel(k) => match &k.dispatch {
                    crate::ir::DispatchSpec::Indirect(name) => {
                        self.resolve_name(Space::Buffer, name, Loc::Dispatch(n))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect();
    }
}

/// The graph's three namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Space {
    Node,
    Buffer,
    Param,
}

impl Space {
    pub(super) fn what(self) -> &'static str {
        match self {
            Space::Node => "node",
            Space::Buffer => "buffer",
            Space::Param => "parameter",
        }
    }
}

/// What to write instead, when a name of one kind stands where another kind belongs.
fn wrong_namespace_help(wanted: Space, found: Space, name: &str) -> String {
    match (wanted, found) {
        (Space::Node, Space::Buffer) => format!(
            "edges join nodes; the nodes that use buffer `{name}` are already ordered by their accesses"
        ),
        (Space::Node, _) => "edges join nodes: `a -> b;`".to_string(),
        (Space::Buffer, Space::Param) => format!(
            "parameters are not buffers: kernels read this one as `params.{name}`, and library kernels take it as \
             an argument (`alpha: params.{name}`)"
        ),
        (Space::Buffer, _) => "name a buffer declared in `buffers { .. }`".to_string(),
        (Space::Param, Space::Buffer) => format!(
            "a kernel sees buffer `{name}` by its own name once it lists it (`{name}: read`); in a dispatch size, \
             its length is `{name}.len()`"
        ),
        (Space::Param, _) => {
            "`params.NAME` names a parameter declared in `params { .. }`".to_string()
        }
    }
}
