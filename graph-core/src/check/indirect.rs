//! Indirect dispatches: the buffer a kernel reads its workgroup counts from holds `u32`s, at least three, and
//! (when the graph owns it) an earlier node writes it.

use super::Checker;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::Role;
use crate::types::ValueType;

impl Checker<'_> {
    /// The counts' buffer of each indirect dispatch is `u32`, and at least 3 long where its length is declared.
    pub(super) fn check_indirect_dispatches(&mut self) {
        for (n, buffer) in self.indirect.clone().into_iter().enumerate() {
            let Some(b) = buffer else { continue };
            let decl = &self.graph.buffers[b];
            let node = &self.graph.nodes[n].name;
            if let Some(elem) = self.buffer_types[b]
                && elem != ValueType::U32
            {
                self.diags.push(
                    Diagnostic::new(
                        Loc::Dispatch(n),
                        format!(
                            "kernel `{node}` reads its workgroup counts from `{}`, which holds `{elem}`; counts are \
                             three `u32`s",
                            decl.name
                        ),
                    )
                    .with_help(format!("declare `{}: [u32; 3]`", decl.name)),
                );
            }
            if let Some(len) = decl.len
                && len < 3
            {
                self.diags.push(Diagnostic::new(
                    Loc::Dispatch(n),
                    format!(
                        "kernel `{node}` reads three workgroup counts from `{}`, which holds {len}",
                        decl.name
                    ),
                ));
            }
        }
    }

    /// A graph-owned counts' buffer is written before the kernel that reads it: by a node with a path to it.
    pub(super) fn check_indirect_counts_are_written(
        &mut self,
        reach: &crate::schedule::Reachability,
    ) {
        for (n, buffer) in self.indirect.clone().into_iter().enumerate() {
            let Some(b) = buffer else { continue };
            if self.graph.buffers[b].role != Role::Owned {
                continue;
            }
            if !self.written_before(b, n, reach, |w| w == n) {
                let name = &self.graph.buffers[b].name;
                self.diags.push(
                    Diagnostic::new(
                        Loc::Dispatch(n),
                        format!(
                            "kernel `{}` reads its workgroup counts from graph-owned `{name}`, but no node writes \
                             it before",
                            self.graph.nodes[n].name
                        ),
                    )
                    .with_help(format!("write the counts into `{name}` in an earlier node")),
                );
            }
        }
    }
}
