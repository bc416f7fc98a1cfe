//! Groups of alternatives (SYCL's dynamic command group): kernel nodes of which one runs, acting as one node
//! for ordering that accesses what any of them accesses. Each choice binds what it needs (other buffers,
//! another number of them) and is checked on its own, as every kernel is.

use super::Checker;
use super::resolve::Space;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::NodeKind;

impl Checker<'_> {
    /// Each group's choices: existing kernel nodes, each in one group, with no explicit edge between two of one
    /// group. Resolved groups go to `self.groups`.
    pub(super) fn check_alternatives(&mut self) {
        let graph = self.graph;
        let mut owner: Vec<Option<usize>> = vec![None; graph.nodes.len()];
        for (g, group) in graph.alternatives.iter().enumerate() {
            if group.choices.is_empty() {
                self.diags.push(Diagnostic::new(
                    Loc::Alternatives(g),
                    format!("alternatives `{}` has no choices", group.name),
                ));
            }
            let mut members = Vec::new();
            for choice in &group.choices {
                let Some(n) = self.resolve_name(Space::Node, choice, Loc::Alternatives(g)) else {
                    continue;
                };
                if !matches!(graph.nodes[n].kind, NodeKind::Kernel(_)) {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::Node(n),
                            format!(
                                "`{choice}` is a {} node, but alternatives `{}` may only choose between kernels",
                                graph.nodes[n].kind.keyword(),
                                group.name
                            ),
                        )
                        .with_help(format!("take `{choice}` out of `{}`", group.name)),
                    );
                    continue;
                }
                if let Some(other) = owner[n].replace(g) {
                    self.diags.push(Diagnostic::new(
                        Loc::Alternatives(g),
                        format!(
                            "kernel `{choice}` is a choice of alternatives `{}` and `{}`; a kernel is a choice of \
                             one group",
                            graph.alternatives[other].name, group.name
                        ),
                    ));
                    continue;
                }
                members.push(n);
            }
            self.groups.push(members);
        }
        for &(i, from, to) in &self.explicit {
            if let (Some(a), Some(b)) = (owner[from], owner[to])
                && a == b
            {
                self.diags.push(Diagnostic::new(
                    Loc::Edge(i),
                    format!(
                        "an edge between `{}` and `{}`, which are alternatives of `{}`: only one of them runs",
                        graph.nodes[from].name, graph.nodes[to].name, graph.alternatives[a].name
                    ),
                ));
            }
        }
    }

    /// Whether nodes `a` and `b` are choices of one group (never both run, so never race).
    pub(super) fn alternatives_of_one_group(&self, a: usize, b: usize) -> bool {
        self.groups.iter().any(|g| g.contains(&a) && g.contains(&b))
    }
}
