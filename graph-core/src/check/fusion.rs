//! `#[no_fusion]` names: each a node of the graph, and one the fusion pass could fuse (a kernel or a fill).

use super::Checker;
use super::resolve::Space;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::NodeKind;

impl Checker<'_> {
    /// Each name the graph keeps out of fusion is a kernel or a fill of it.
    pub(super) fn check_no_fusion(&mut self) {
        for name in &self.graph.no_fusion {
            // A buffer's name, in the words the macro uses for `#[no_fusion]` on a buffer.
            if self.table(Space::Node).get(name).is_none()
                && let Some(b) = self.table(Space::Buffer).get(name)
            {
                self.diags.push(Diagnostic::new(
                    Loc::Buffer(b),
                    "`#[no_fusion]` marks a kernel or a fill, which are fused; a buffer is not: remove it",
                ));
                continue;
            }
            let Some(n) = self.resolve_name(Space::Node, name, Loc::Graph) else {
                continue;
            };
            if !matches!(
                self.graph.nodes[n].kind,
                NodeKind::Kernel(_) | NodeKind::Fill { .. }
            ) {
                self.diags.push(Diagnostic::new(
                    Loc::Node(n),
                    "`#[no_fusion]` marks a kernel or a fill; only those are fused",
                ));
            }
        }
    }
}
