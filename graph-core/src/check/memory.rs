//! `#[no_alias]` names: each a graph-owned buffer of the graph, whose memory the plan may otherwise share.

use super::Checker;
use super::resolve::Space;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::Role;

impl Checker<'_> {
    /// Each name the graph keeps out of memory sharing is one of its graph-owned buffers.
    pub(super) fn check_no_alias(&mut self) {
        for name in &self.graph.no_alias {
            let Some(b) = self.resolve_name(Space::Buffer, name, Loc::Graph) else {
                continue;
            };
            let role = self.graph.buffers[b].role;
            if role != Role::Owned {
                self.diags.push(
                    Diagnostic::new(
                        Loc::Buffer(b),
                        format!(
                            "`#[no_alias]` marks a graph-owned buffer, whose memory bake may share with \
                             others; `{name}` is an `{}` buffer: its memory is the application's",
                            role.keyword()
                        ),
                    )
                    .with_help("remove `#[no_alias]`: bake never shares the memory of a buffer it is given"),
                );
            }
        }
    }
}
