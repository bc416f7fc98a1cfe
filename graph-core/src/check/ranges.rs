//! Copy, fill, upload and readback ranges: each bound resolved into a program over buffer lengths and literals (a range is
//! fixed when the graph is baked, so it never reads a parameter), and checked now wherever the lengths it
//! uses are declared; the runtime checks the rest at bake, with the same rules.

use super::sizes::SizeUse;
use super::{Checker, SizeProgram};
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{ElementRange, NodeKind};
use crate::layout::ParamsLayout;
use crate::size::{SizeError, SizeExpr, SizeStep, evaluate};

/// `start..end` of one buffer, in elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedRange {
    pub buffer: usize,
    pub start: SizeProgram,
    pub end: SizeProgram,
}

impl Checker<'_> {
    /// The ranges of every copy (source, then destination), fill, upload and readback (its buffer), whole
    /// buffers where no
    /// range is written; `None` for a node whose range could not be resolved.
    pub(super) fn check_ranges(&mut self) {
        let graph = self.graph;
        let layout = self.params_layout();
        self.ranges = graph
            .nodes
            .iter()
            .enumerate()
            .map(|(n, node)| match &node.kind {
                NodeKind::Copy {
                    src_range,
                    dst_range,
                    ..
                } => {
                    let src = self.resolve_range(n, 0, src_range.as_ref(), &layout);
                    let dst = self.resolve_range(n, 1, dst_range.as_ref(), &layout);
                    let (src, dst) = (src?, dst?);
                    if src_range.is_some() || dst_range.is_some() {
                        self.check_copy_lengths(n, &src, &dst);
                    }
                    Some(vec![src, dst])
                }
                NodeKind::Fill { range, .. }
                | NodeKind::Upload { range, .. }
                | NodeKind::Readback { range, .. } => {
                    Some(vec![self.resolve_range(n, 0, range.as_ref(), &layout)?])
                }
                _ => Some(Vec::new()),
            })
            .collect();
    }

    /// The range of access `side` of node `n` (its size slots `2 * side` and `2 * side + 1`), checked against
    /// the buffer's declared length.
    fn resolve_range(
        &mut self,
        n: usize,
        side: usize,
        range: Option<&ElementRange>,
        layout: &ParamsLayout,
    ) -> Option<CheckedRange> {
        let buffer = self.accesses[n].get(side).copied().flatten()?.buffer;
        let name = &self.graph.buffers[buffer].name;
        let mut bound = |slot: usize, written: Option<&SizeExpr>, implied: SizeExpr| match written {
            Some(expr) => self.resolve_size(n, 2 * side + slot, expr, layout, SizeUse::Range),
            None => Some(SizeProgram {
                text: implied.to_string(),
                steps: implied_steps(&implied, buffer),
            }),
        };
        let start = bound(
            0,
            range.and_then(|r| r.start.as_ref()),
            SizeExpr::Literal(0),
        );
        let end = bound(
            1,
            range.and_then(|r| r.end.as_ref()),
            SizeExpr::Len(name.clone()),
        );
        let checked = CheckedRange {
            buffer,
            start: start?,
            end: end?,
        };
        let written = |slot: usize| range.and_then(|r| r.bounds()[slot]).is_some();
        let at = |slot: usize| match written(slot) {
            true => Loc::SizeTerm {
                node: n,
                dim: 2 * side + slot,
                term: 0,
            },
            false => Loc::Access {
                node: n,
                index: side,
            },
        };
        let node = &self.graph.nodes[n];
        let kind = match node.kind {
            NodeKind::Fill { .. } => "fill",
            NodeKind::Upload { .. } => "upload",
            NodeKind::Readback { .. } => "readback",
            _ => "copy",
        };
        let node = format!("{kind} `{}`", node.name);
        let len = self.graph.buffers[buffer].len;
        // wgpu copies whole 4-byte words, and a fill of packed elements writes whole words: a range of
        // elements smaller than a word would move or overwrite its neighbours in the word.
        if let Some(elem) = self.buffer_types[buffer].filter(|t| t.size() % 4 != 0)
            && (written(0) || written(1))
        {
            let slot = if written(0) { 0 } else { 1 };
            self.diags.push(
                Diagnostic::new(
                    at(slot),
                    format!(
                        "{node} moves a range of `{name}`, whose `{elem}` elements are smaller than the 4-byte \
                         words the GPU copies and fills"
                    ),
                )
                .with_help(format!(
                    "a buffer of `{elem}` is copied, filled, uploaded and read back whole; use a buffer of \
                     its own for the part, or a `u32` buffer"
                )),
            );
            return None;
        }
        // A bound whose arithmetic fails on the declared lengths (`a.len() - 20` of 16 elements) fails at
        // every bake: an error now.
        let mut bounds = [None, None];
        for (slot, program) in [&checked.start, &checked.end].into_iter().enumerate() {
            match self.known(program) {
                Ok(value) => bounds[slot] = value,
                Err(e) => {
                    let verb = ["starts", "ends"][slot];
                    let message = format!(
                        "the range of `{name}` in {node} {verb} at `{}`, which is always an error: {e}",
                        program.text
                    );
                    let help = match len {
                        Some(l) => format!(
                            "a bound of a range of `{name}` lies between 0 and `{name}.len()` = {l}"
                        ),
                        None => format!(
                            "a bound of a range of `{name}` lies between 0 and `{name}.len()`"
                        ),
                    };
                    self.diags
                        .push(Diagnostic::new(at(slot), message).with_help(help));
                    return None;
                }
            }
        }
        let [start, end] = bounds;
        if let (Some(s), Some(e)) = (start, end)
            && s > e
        {
            let message = match written(1) {
                true => {
                    format!("the range `{s}..{e}` of `{name}` in {node} starts after it ends")
                }
                false => format!(
                    "the range of `{name}` in {node} starts at {s}, past its end ({e} elements)"
                ),
            };
            self.diags.push(Diagnostic::new(at(0), message));
            return None;
        }
        if let (Some(e), Some(l)) = (end, len)
            && u64::from(e) > l
        {
            self.diags.push(
                Diagnostic::new(
                    at(1),
                    format!("the range of `{name}` in {node} ends at {e}, past the end of `{name}` ({l} elements)"),
                )
                .with_help(format!("a range of `{name}` ends at `{name}.len()` = {l} at most")),
            );
            return None;
        }
        Some(checked)
    }

    /// The two sides of a copy with a range have one length, when both are known now.
    fn check_copy_lengths(&mut self, n: usize, src: &CheckedRange, dst: &CheckedRange) {
        let known = |p: &SizeProgram| self.known(p).ok().flatten();
        let count = |r: &CheckedRange| known(&r.end)?.checked_sub(known(&r.start)?);
        let (Some(from), Some(into)) = (count(src), count(dst)) else {
            return;
        };
        if from != into {
            let buffers = &self.graph.buffers;
            self.diags.push(
                Diagnostic::new(
                    Loc::Access { node: n, index: 1 },
                    format!(
                        "copy `{}` moves {from} elements of `{}` into a range of {into} elements of `{}`",
                        self.graph.nodes[n].name, buffers[src.buffer].name, buffers[dst.buffer].name
                    ),
                )
                .with_help("both sides of a copy have one length, as with `copy_from_slice`"),
            );
        }
    }

    /// A program's value when every buffer length it reads is declared (`Ok(None)` when one is not), or the
    /// error its arithmetic always gives.
    fn known(&self, program: &SizeProgram) -> Result<Option<u32>, SizeError> {
        let mut lens = vec![0; self.graph.buffers.len()];
        for step in &program.steps {
            if let SizeStep::Len(b) = *step {
                let declared = self.graph.buffers.get(b as usize).and_then(|b| b.len);
                let (Some(declared), Some(slot)) = (declared, lens.get_mut(b as usize)) else {
                    return Ok(None);
                };
                let Ok(declared) = u32::try_from(declared) else {
                    return Ok(None);
                };
                *slot = declared;
            }
        }
        match evaluate(&program.steps, &[], &lens) {
            Ok(value) => Ok(Some(value)),
            Err(e @ SizeError::Arithmetic { .. }) => Err(e),
            // Only a program that bypassed the checks is malformed.
            Err(SizeError::Malformed) => Ok(None),
        }
    }
}

/// The program of a bound left out: `0` or the buffer's length.
fn implied_steps(implied: &SizeExpr, buffer: usize) -> Vec<SizeStep> {
    match implied {
        SizeExpr::Len(_) => vec![SizeStep::Len(buffer as u32)],
        _ => vec![SizeStep::Literal(0)],
    }
}
