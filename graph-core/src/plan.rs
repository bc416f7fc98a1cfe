//! The plan: what a replay records, as ids (no GPU handles), made by a pure function from a description.
//!
//! GPU partitions are recorded level by level. Before each level the plan lists the hazards that cross the
//! boundary: the buffers that level reads or writes which an earlier level of the partition wrote (or read,
//! for a write), with no barrier carrying that buffer in between. A recorder that places its own barriers
//! (portable wgpu) may ignore them; one that places them itself (native Vulkan) puts one barrier where the
//! list is not empty, carrying exactly these hazards, so barriers scale with the depth of the graph and not
//! with its node count. Partitions end at host tasks, where the replay waits for the GPU.

use crate::deps::Hazard;
use crate::desc::{GraphDesc, OpDesc, PartitionDesc, RangeDesc};
use crate::size::{SizeError, evaluate};
use crate::types::ValueType;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub partitions: Vec<PlanPartition>,
    /// The number of dispatch steps in the whole plan.
    pub dispatches: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanPartition {
    /// Recorded into one command buffer and submitted.
    Gpu { levels: Vec<PlanLevel> },
    /// Host tasks by node index, run in this order once the partition before has finished.
    Host { nodes: Vec<u32> },
}

/// One topological level of a GPU partition: no two of its steps depend on each other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanLevel {
    /// What must be ordered before this level's steps run: each buffer this level reads or writes that an
    /// earlier level of the partition wrote (or read, for a write) with no barrier carrying that buffer in
    /// between. Empty for the first level and for a level that conflicts with nothing still unordered.
    pub hazards: Vec<BufferHazard>,
    /// Dispatches first, then copies, uploads and readbacks, then interop tasks, each in declaration order.
    pub steps: Vec<PlanStep>,
}

/// A buffer written on one side of a level boundary and read or written on the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferHazard {
    pub buffer: u32,
    pub hazard: HazardKind,
}

/// [`Hazard`], orderable so that a level's list is sorted and free of repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HazardKind {
    ReadAfterWrite,
    WriteAfterRead,
    WriteAfterWrite,
}

impl From<HazardKind> for Hazard {
    fn from(kind: HazardKind) -> Hazard {
        match kind {
            HazardKind::ReadAfterWrite => Hazard::ReadAfterWrite,
            HazardKind::WriteAfterRead => Hazard::WriteAfterRead,
            HazardKind::WriteAfterWrite => Hazard::WriteAfterWrite,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanStep {
    /// The kernel of node `node`; its workgroup counts are evaluated at each replay.
    Dispatch { node: u32 },
    /// Node `node`'s interop task, given the partition's command encoder.
    Interop { node: u32 },
    /// The data given for upload node `node`, copied into its buffer.
    Upload(Transfer),
    /// Readback node `node`'s range, copied out for the host.
    Readback(Transfer),
    /// `bytes` from `src_offset` of `src` to `dst_offset` of `dst`, from the ranges and the bound lengths.
    Copy {
        node: u32,
        src: u32,
        dst: u32,
        src_offset: u64,
        dst_offset: u64,
        bytes: u64,
    },
    /// Before one run of block `block`: its members' workgroup counts for this run, zero unless its flag is
    /// set, computed on the GPU.
    Gate { block: u32 },
}

/// Host data into a buffer, and a buffer to the host, at a step of a replay: `bytes` at `offset` of `buffer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    pub node: u32,
    pub buffer: u32,
    pub offset: u64,
    /// What is copied: whole `u32` words, as wgpu copies.
    pub bytes: u64,
    /// What the host gives or gets: the elements' own bytes, fewer than `bytes` where the range ends at the
    /// end of a buffer of `u8` or `u16` elements whose last word has room for more (10 of a `u8` buffer's
    /// 12).
    pub data: u64,
}

/// The byte range of elements `start..end` of a buffer of `len` elements of `elem`: their bytes, except that
/// a range ending at the buffer's end takes the rest of its last word ([`ValueType::buffer_bytes`]), since
/// wgpu copies whole words. Returns the offset, the bytes copied and the elements' own bytes. (A range of
/// `u8`, `u16` or `f16` elements that starts or ends inside a word is refused by the checks.)
pub fn byte_span(elem: ValueType, start: u32, end: u32, len: u32) -> (u64, u64, u64) {
    let size = u64::from(elem.size());
    let offset = u64::from(start) * size;
    let data = u64::from(end.saturating_sub(start)) * size;
    let copied = if end >= len {
        elem.buffer_bytes(u64::from(len)).saturating_sub(offset)
    } else {
        data
    };
    (offset, copied, data)
}

impl PlanStep {
    /// The node the step runs; `None` for a block's gate.
    pub fn node(&self) -> Option<u32> {
        match *self {
            PlanStep::Dispatch { node }
            | PlanStep::Interop { node }
            | PlanStep::Copy { node, .. }
            | PlanStep::Upload(Transfer { node, .. })
            | PlanStep::Readback(Transfer { node, .. }) => Some(node),
            PlanStep::Gate { .. } => None,
        }
    }
}

/// Why a description cannot be planned with these lengths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// `lens` does not hold one length per buffer.
    Lengths { expected: usize, given: usize },
    /// A copy whose source and destination (ranges) differ in length, as `copy_from_slice` refuses.
    CopyLengths {
        node: u32,
        src_len: u32,
        dst_len: u32,
    },
    /// A copy or fill range that is not `start <= end <= len` of its buffer.
    Range {
        node: u32,
        buffer: u32,
        start: u32,
        end: u32,
        len: u32,
    },
    /// A range bound whose arithmetic fails with these lengths.
    Bound { node: u32, error: SizeError },
    /// A subgraph node: plans are made of flattened descriptions ([`crate::flatten::flatten`]).
    Subgraph { node: u32 },
}

/// `start..end` of `range` over buffer `buffer` of node `node`, with buffer `i` bound at `lens[i]` elements,
/// checked to lie within the buffer.
pub fn evaluate_range(
    node: u32,
    buffer: u32,
    range: &RangeDesc,
    lens: &[u32],
) -> Result<(u32, u32), PlanError> {
    let bound = |b: &crate::desc::SizeDesc| {
        evaluate(&b.steps, &[], lens).map_err(|error| PlanError::Bound { node, error })
    };
    let (start, end) = (bound(&range.start)?, bound(&range.end)?);
    let len = lens.get(buffer as usize).copied().unwrap_or(0);
    if start > end || end > len {
        return Err(PlanError::Range {
            node,
            buffer,
            start,
            end,
            len,
        });
    }
    Ok((start, end))
}

/// The plan of `desc` with buffer `i` bound at `lens[i]` elements. `desc` must be valid
/// ([`GraphDesc::validate`]); indices out of range in an invalid one are skipped, never a panic.
pub fn plan(desc: &GraphDesc, lens: &[u32]) -> Result<Plan, PlanError> {
    if lens.len() != desc.buffers.len() {
        return Err(PlanError::Lengths {
            expected: desc.buffers.len(),
            given: lens.len(),
        });
    }
    let mut dispatches = 0;
    let mut partitions = Vec::with_capacity(desc.partitions.len());
    for partition in desc.partitions.iter() {
        match partition {
            PartitionDesc::Host { nodes } => partitions.push(PlanPartition::Host {
                nodes: nodes.to_vec(),
            }),
            PartitionDesc::Gpu { levels } => {
                let mut unordered = Touched::default();
                let mut planned = Vec::with_capacity(levels.len());
                let mut push = |steps: Vec<PlanStep>| {
                    dispatches += steps
                        .iter()
                        .filter(|s| matches!(s, PlanStep::Dispatch { .. }))
                        .count();
                    let here = Touched::of(desc, &steps);
                    let hazards = unordered.hazards_before(&here);
                    // A barrier carrying a buffer's hazards orders every earlier access to it; the accesses
                    // to other buffers stay unordered until a later barrier carries them.
                    unordered.forget(&hazards);
                    unordered.add(&here);
                    planned.push(PlanLevel { hazards, steps });
                };
                for level in levels.iter() {
                    // A block runs whole where its first member's level comes: the nodes of that level outside
                    // it have no path to or from it (it orders as one node), so they may run first.
                    let outside: Vec<u32> = level
                        .iter()
                        .copied()
                        .filter(|&n| block_of(desc, n).is_none())
                        .collect();
                    if !outside.is_empty() {
                        push(level_steps(desc, &outside, lens)?);
                    }
                    for (b, block) in desc.blocks.iter().enumerate() {
                        let starts_here = block.nodes.first().is_some_and(|n| level.contains(n));
                        if !starts_here {
                            continue;
                        }
                        for _ in 0..block.count {
                            if block.flag.is_some() {
                                push(vec![PlanStep::Gate { block: b as u32 }]);
                            }
                            for &member in block.nodes.iter() {
                                push(level_steps(desc, &[member], lens)?);
                            }
                        }
                    }
                }
                partitions.push(PlanPartition::Gpu { levels: planned });
            }
        }
    }
    Ok(Plan {
        partitions,
        dispatches,
    })
}

/// The block node `n` is a member of, if any.
fn block_of(desc: &GraphDesc, n: u32) -> Option<usize> {
    desc.blocks.iter().position(|b| b.nodes.contains(&n))
}

fn level_steps(desc: &GraphDesc, level: &[u32], lens: &[u32]) -> Result<Vec<PlanStep>, PlanError> {
    let mut dispatches = Vec::new();
    let mut copies = Vec::new();
    let mut interops = Vec::new();
    for &node in level {
        match desc.nodes.get(node as usize).map(|n| &n.op) {
            Some(OpDesc::Kernel(k)) => {
                if let (Some(range), Some(target)) = (&k.range, k.bindings.first()) {
                    evaluate_range(node, target.buffer, range, lens)?;
                }
                dispatches.push(PlanStep::Dispatch { node });
            }
            Some(OpDesc::Copy {
                src,
                dst,
                src_range,
                dst_range,
            }) => {
                let (src, dst) = (*src, *dst);
                // A texture moves whole (its sizes are the runtime's to check): no lengths, no offsets.
                let texture = |b: u32| {
                    desc.buffers
                        .get(b as usize)
                        .is_some_and(|b| b.texture.is_some())
                };
                if texture(src) || texture(dst) {
                    copies.push(PlanStep::Copy {
                        node,
                        src,
                        dst,
                        src_offset: 0,
                        dst_offset: 0,
                        bytes: 0,
                    });
                    continue;
                }
                let (src_start, src_end) = evaluate_range(node, src, src_range, lens)?;
                let (dst_start, dst_end) = evaluate_range(node, dst, dst_range, lens)?;
                if src_end - src_start != dst_end - dst_start {
                    return Err(PlanError::CopyLengths {
                        node,
                        src_len: src_end - src_start,
                        dst_len: dst_end - dst_start,
                    });
                }
                // A copy under GPU control runs as a kernel (see the runtime), which its gate can skip.
                if block_of(desc, node).is_some() {
                    dispatches.push(PlanStep::Dispatch { node });
                    continue;
                }
                let elem = desc
                    .buffers
                    .get(src as usize)
                    .map_or(ValueType::U32, |b| b.elem);
                let len = |b: u32| lens.get(b as usize).copied().unwrap_or(0);
                let (src_offset, bytes, _) = byte_span(elem, src_start, src_end, len(src));
                let (dst_offset, _, _) = byte_span(elem, dst_start, dst_end, len(dst));
                copies.push(PlanStep::Copy {
                    node,
                    src,
                    dst,
                    src_offset,
                    dst_offset,
                    bytes,
                });
            }
            Some(OpDesc::Upload { buffer, range } | OpDesc::Readback { buffer, range }) => {
                let (start, end) = evaluate_range(node, *buffer, range, lens)?;
                let elem = desc
                    .buffers
                    .get(*buffer as usize)
                    .map_or(ValueType::U32, |b| b.elem);
                let len = lens.get(*buffer as usize).copied().unwrap_or(0);
                let (offset, bytes, data) = byte_span(elem, start, end, len);
                let transfer = Transfer {
                    node,
                    buffer: *buffer,
                    offset,
                    bytes,
                    data,
                };
                copies.push(match desc.nodes[node as usize].op {
                    OpDesc::Upload { .. } => PlanStep::Upload(transfer),
                    _ => PlanStep::Readback(transfer),
                });
            }
            Some(OpDesc::Interop { .. }) => interops.push(PlanStep::Interop { node }),
            Some(OpDesc::Subgraph { .. }) => return Err(PlanError::Subgraph { node }),
            Some(OpDesc::Host { .. } | OpDesc::Empty) | None => {}
        }
    }
    dispatches.append(&mut copies);
    dispatches.append(&mut interops);
    Ok(dispatches)
}

/// The buffers some steps read and write (for the plan: not yet ordered by a barrier that carries them).
#[derive(Debug, Default)]
pub(crate) struct Touched {
    pub(crate) read: Vec<u32>,
    pub(crate) written: Vec<u32>,
}

impl Touched {
    pub(crate) fn of(desc: &GraphDesc, steps: &[PlanStep]) -> Touched {
        let mut t = Touched::default();
        for step in steps {
            match *step {
                PlanStep::Copy { src, dst, .. } => {
                    t.read.push(src);
                    t.written.push(dst);
                }
                PlanStep::Upload(Transfer { buffer, .. }) => t.written.push(buffer),
                PlanStep::Gate { block } => {
                    if let Some(flag) = desc.blocks.get(block as usize).and_then(|b| b.flag) {
                        t.read.push(flag);
                    }
                }
                PlanStep::Readback(Transfer { buffer, .. }) => t.read.push(buffer),
                PlanStep::Dispatch { node } | PlanStep::Interop { node } => {
                    // An indirect dispatch reads its counts (as indirect arguments).
                    if let Some(OpDesc::Kernel(k)) = desc.nodes.get(node as usize).map(|n| &n.op)
                        && let crate::desc::DispatchDesc::Indirect(b) = k.dispatch
                    {
                        t.read.push(b);
                    }
                    let accesses = match desc.nodes.get(node as usize).map(|n| &n.op) {
                        Some(OpDesc::Kernel(k)) => &k.bindings,
                        Some(OpDesc::Interop { accesses }) => accesses,
                        _ => continue,
                    };
                    for a in accesses.iter() {
                        if a.mode.reads() {
                            t.read.push(a.buffer);
                        }
                        if a.mode.writes() {
                            t.written.push(a.buffer);
                        }
                    }
                }
            }
        }
        t
    }

    fn add(&mut self, other: &Touched) {
        self.read.extend_from_slice(&other.read);
        self.written.extend_from_slice(&other.written);
    }

    /// Drops every access to the buffers these hazards name: a barrier carrying them orders those accesses.
    fn forget(&mut self, hazards: &[BufferHazard]) {
        let carried = |b: &u32| hazards.iter().any(|h| h.buffer == *b);
        self.read.retain(|b| !carried(b));
        self.written.retain(|b| !carried(b));
    }

    /// The hazards between what `self` touched and what `later` touches, sorted, each once.
    fn hazards_before(&self, later: &Touched) -> Vec<BufferHazard> {
        let mut hazards = Vec::new();
        let mut add = |buffer, hazard| hazards.push(BufferHazard { buffer, hazard });
        for &b in &later.read {
            if self.written.contains(&b) {
                add(b, HazardKind::ReadAfterWrite);
            }
        }
        for &b in &later.written {
            if self.written.contains(&b) {
                add(b, HazardKind::WriteAfterWrite);
            }
            if self.read.contains(&b) {
                add(b, HazardKind::WriteAfterRead);
            }
        }
        hazards.sort_unstable();
        hazards.dedup();
        hazards
    }
}
