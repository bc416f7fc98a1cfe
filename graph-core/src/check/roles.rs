//! Buffer roles and copies: inputs are only read, outputs are written, a copy joins buffers of one element
//! type and (where both are declared) one length.

use super::Checker;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{AccessMode, KernelSource, NodeKind, Role};

impl Checker<'_> {
    /// A copy moves elements of one type (between two buffers: resolving refuses one named twice); without ranges, between buffers of one length
    /// when both lengths are declared (a copy writes the whole of its destination). Ranges are checked with
    /// the other ranges.
    pub(super) fn check_copies(&mut self) {
        for (n, node) in self.graph.nodes.iter().enumerate() {
            let NodeKind::Copy {
                src,
                dst,
                src_range,
                dst_range,
            } = &node.kind
            else {
                continue;
            };
            let (Some(Some(s)), Some(Some(d))) =
                (self.accesses[n].first(), self.accesses[n].get(1))
            else {
                continue;
            };
            // A texture's copies move texels or bytes: `check_texture_uses` checks them.
            if self.textures[s.buffer].is_some() || self.textures[d.buffer].is_some() {
                continue;
            }
            if let (Some(st), Some(dt)) = (self.buffer_types[s.buffer], self.buffer_types[d.buffer])
                && st != dt
            {
                self.diags.push(Diagnostic::new(
                    Loc::Access { node: n, index: 1 },
                    format!("copy `{}` moves `{st}` elements from `{src}` into `{dst}`, which holds `{dt}`", node.name),
                ));
            }
            let (src_len, dst_len) = (
                self.graph.buffers[s.buffer].len,
                self.graph.buffers[d.buffer].len,
            );
            if let (Some(sl), Some(dl)) = (src_len, dst_len)
                && sl != dl
                && src_range.is_none()
                && dst_range.is_none()
            {
                self.diags.push(
                    Diagnostic::new(
                        Loc::Access { node: n, index: 1 },
                        format!(
                            "copy `{}` copies all {sl} elements of `{src}` into `{dst}`, which has {dl}",
                            node.name
                        ),
                    )
                    .with_help("a copy moves a whole buffer into one of the same length"),
                );
            }
        }
    }

    /// The caller lends inputs for reading only.
    pub(super) fn check_inputs_are_not_written(&mut self) {
        for (n, node) in self.graph.nodes.iter().enumerate() {
            for (i, access) in self.accesses[n].iter().enumerate() {
                let Some(access) = access else { continue };
                let buffer = &self.graph.buffers[access.buffer];
                if buffer.role == Role::Input && access.mode.writes() {
                    let is_library = matches!(&node.kind, NodeKind::Kernel(k) if matches!(k.source, KernelSource::Library(_)));
                    // Only inline and file kernels and host tasks write an access mode of their own.
                    let without_mode = matches!(
                        node.kind,
                        NodeKind::Copy { .. } | NodeKind::Fill { .. } | NodeKind::Upload { .. }
                    );
                    let loc = if is_library || without_mode {
                        Loc::Access { node: n, index: i }
                    } else {
                        Loc::AccessMode { node: n, index: i }
                    };
                    self.diags.push(
                        Diagnostic::new(
                            loc,
                            format!(
                                "node `{}` writes `{}`, which is an `input` of the graph",
                                node.name, buffer.name
                            ),
                        )
                        .with_help(format!(
                            "declare `{}` as `inout` if the graph may change it",
                            buffer.name
                        )),
                    );
                }
            }
        }
    }

    /// Something must produce each output.
    pub(super) fn check_outputs_are_written(&mut self) {
        for (b, buffer) in self.graph.buffers.iter().enumerate() {
            if buffer.role != Role::Output {
                continue;
            }
            let written = self
                .accesses
                .iter()
                .flatten()
                .flatten()
                .any(|a| a.buffer == b && a.mode.writes());
            // An access dropped for another error (an unknown library kernel) may be the writer: don't guess.
            let unknowable = self
                .graph
                .nodes
                .iter()
                .zip(&self.accesses)
                .any(|(node, resolved)| {
                    node.accesses()
                        .iter()
                        .zip(resolved)
                        .any(|(a, r)| r.is_none() && a.buffer == buffer.name)
                });
            if !written && !unknowable && self.buffers.get(&buffer.name) == Some(b) {
                self.diags.push(
                    Diagnostic::new(
                        Loc::Buffer(b),
                        format!("output `{}` is never written by any node", buffer.name),
                    )
                    .with_help(
                        "write it from a node, or declare it `input` if the graph only reads it",
                    ),
                );
            }
        }
    }
}

pub(super) fn verb(mode: AccessMode) -> &'static str {
    match mode {
        AccessMode::Read => "reads",
        AccessMode::Write | AccessMode::ReadWrite => "writes",
    }
}
