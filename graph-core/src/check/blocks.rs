//! Blocks under GPU control (`if`/`else`, `switch`, `repeat`): their members are kernels (fills, copies and
//! subgraphs included) of one block each, gated by a `u32` flag (a `switch`'s value) written before the
//! block; a block orders as one node with the rest of the graph.

use super::Checker;
use super::resolve::Space;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{BlockKind, DispatchSpec, NodeKind, Role};
use crate::types::ValueType;

/// The most iterations a `repeat` may unroll into one replay.
pub const MAX_REPEAT: u32 = 100_000;

/// The most arms of a `switch` (its gate compares the value with each arm's).
pub const MAX_ARMS: usize = 256;

/// A block, resolved: its members (by index), the branch each runs in (see [`crate::ir::Block::members`]),
/// its flag buffer, and a `switch`'s arm values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedBlock {
    pub name: String,
    pub count: u32,
    pub flag: Option<usize>,
    pub nodes: Vec<usize>,
    pub branches: Vec<u32>,
    /// A `switch`'s explicit arm values, in order; `None` for `if` and `repeat`.
    pub cases: Option<Vec<u32>>,
}

impl Checker<'_> {
    /// Resolves each block's members and flag, and checks what may be in a block.
    pub(super) fn check_blocks(&mut self) {
        let graph = self.graph;
        let mut owner: Vec<Option<usize>> = vec![None; graph.nodes.len()];
        for (b, block) in graph.blocks.iter().enumerate() {
            let keyword = block.kind.keyword();
            let count = match block.kind {
                BlockKind::If { .. } | BlockKind::Switch { .. } => 1,
                BlockKind::Repeat { count, .. } => count,
            };
            let cases = match &block.kind {
                BlockKind::Switch { arms, .. } => {
                    self.check_arms(b, arms);
                    Some(block.case_values())
                }
                _ => None,
            };
            if count == 0 || count > MAX_REPEAT {
                self.diags.push(Diagnostic::new(
                    Loc::Block(b),
                    format!(
                        "`repeat {}` runs {count} times; a repeat runs 1 to {MAX_REPEAT} times",
                        block.name
                    ),
                ));
            }
            let listed = block.members();
            if listed.is_empty() {
                self.diags.push(
                    Diagnostic::new(
                        Loc::Block(b),
                        format!(
                            "`{keyword} {}` holds no nodes; a block runs the kernels, fills, copies and \
                             subgraphs written in it",
                            block.name
                        ),
                    )
                    .with_help("give it the nodes it runs, or remove it"),
                );
            }
            let flag = block
                .kind
                .flag()
                .and_then(|f| self.resolve_name(Space::Buffer, f, Loc::Block(b)));
            if let Some(f) = flag
                && let Some(elem) = self.buffer_types.get(f).copied().flatten()
                && elem != ValueType::U32
            {
                self.diags.push(
                    Diagnostic::new(
                        Loc::Block(b),
                        match cases {
                            Some(_) => format!(
                                "`{keyword} {}` picks its arm by `{}`, which holds `{elem}`; a switch's value \
                                 is a `u32`",
                                block.name, graph.buffers[f].name
                            ),
                            None => format!(
                                "`{keyword} {}` is gated by `{}`, which holds `{elem}`; a flag is a `u32` (0 \
                                 stops)",
                                block.name, graph.buffers[f].name
                            ),
                        },
                    )
                    .with_help(format!("declare `{}: [u32; 1]`", graph.buffers[f].name)),
                );
            }
            let (mut members, mut branches) = (Vec::new(), Vec::new());
            for (branch, name) in listed {
                let Some(n) = self.resolve_name(Space::Node, name, Loc::Block(b)) else {
                    continue;
                };
                let why_not = match &graph.nodes[n].kind {
                    NodeKind::Kernel(k) if matches!(k.dispatch, DispatchSpec::Indirect(_)) => Some(
                        "an indirect dispatch (its counts cannot be gated as well)".to_string(),
                    ),
                    // A subgraph's nodes join the block when it is flattened (bake refuses a child with
                    // nodes of other kinds).
                    NodeKind::Kernel(_)
                    | NodeKind::Fill { .. }
                    | NodeKind::Copy { .. }
                    | NodeKind::Subgraph { .. } => None,
                    other => Some(format!(
                        "a {} node (only kernels, fills, copies and subgraphs of them run under GPU control)",
                        other.keyword()
                    )),
                };
                if let Some(why) = why_not {
                    self.diags.push(Diagnostic::new(
                        Loc::Node(n),
                        format!(
                            "`{name}` cannot be in `{keyword} {}`: it is {why}",
                            block.name
                        ),
                    ));
                    continue;
                }
                if let Some(other) = owner[n].replace(b) {
                    self.diags.push(Diagnostic::new(
                        Loc::Node(n),
                        format!(
                            "`{name}` is in `{}` and in `{}`; blocks do not nest or share nodes",
                            graph.blocks[other].name, block.name
                        ),
                    ));
                    continue;
                }
                members.push(n);
                branches.push(branch);
            }
            self.blocks.push(CheckedBlock {
                name: block.name.clone(),
                count: count.clamp(1, MAX_REPEAT),
                flag,
                nodes: members,
                branches,
                cases,
            });
        }
    }

    /// A `switch`'s arms: its nodes are in them (none beside), each value once, at most one default arm,
    /// at most [`MAX_ARMS`].
    fn check_arms(&mut self, b: usize, arms: &[crate::ir::SwitchArm]) {
        let block = &self.graph.blocks[b];
        let name = &block.name;
        if !block.nodes.is_empty() {
            self.diags.push(Diagnostic::new(
                Loc::Block(b),
                format!(
                    "`switch {name}` lists nodes outside its arms; a switch's nodes are in its arms"
                ),
            ));
        }
        if arms.len() > MAX_ARMS {
            self.diags.push(Diagnostic::new(
                Loc::Block(b),
                format!(
                    "`switch {name}` has {} arms; a switch has at most {MAX_ARMS}",
                    arms.len()
                ),
            ));
        }
        let mut seen: Vec<Option<u32>> = Vec::new();
        for arm in arms {
            if seen.contains(&arm.value) {
                let message = match arm.value {
                    Some(v) => {
                        format!("`switch {name}` has two arms for `{v}`; each value picks one arm")
                    }
                    None => format!("`switch {name}` has two default arms (`_`); it may have one"),
                };
                self.diags.push(
                    Diagnostic::new(Loc::Block(b), message)
                        .with_help("merge their nodes into one arm"),
                );
            }
            seen.push(arm.value);
        }
    }

    /// The flag of block member `n`, which it reads (the gate reads it before each run).
    pub(super) fn flag_read_by(&self, n: usize) -> Option<usize> {
        self.blocks
            .iter()
            .find(|b| b.nodes.contains(&n))
            .and_then(|b| b.flag)
    }

    /// A graph-owned flag is written before its block: by a node outside it with a path to the block.
    pub(super) fn check_flags_are_set(&mut self, reach: &crate::schedule::Reachability) {
        for (b, block) in self.blocks.clone().iter().enumerate() {
            let (Some(flag), Some(&first)) = (block.flag, block.nodes.first()) else {
                continue;
            };
            if self.graph.buffers[flag].role != Role::Owned {
                continue;
            }
            if !self.written_before(flag, first, reach, |w| block.nodes.contains(&w)) {
                let name = &self.graph.buffers[flag].name;
                self.diags.push(
                    Diagnostic::new(
                        Loc::Block(b),
                        format!(
                            "`{} {}` is gated by graph-owned `{name}`, but no node before it writes it",
                            self.graph.blocks[b].kind.keyword(),
                            block.name
                        ),
                    )
                    .with_help(format!("set it before the block: `fill start({name} = 1u);`")),
                );
            }
        }
    }
}
