//! Transient memory: the graph-owned buffers that no two steps of a replay use at once share memory.
//!
//! A buffer's lifetime is the span of the replay's plan ([`crate::plan`]) from the first level that touches
//! it to the last (its first writer to its last reader: an owned buffer is written before it is read, which
//! the checks enforce), in the order the plan records: GPU levels, with blocks under GPU control unrolled as
//! often as they run (so a `repeat` keeps its buffers for all its runs), and host tasks. Buffers whose
//! lifetimes do not intersect may take the same bytes of one heap; [`place`] decides where, by one of two
//! documented heuristics. Some owned buffers are kept apart, each in memory of its own ([`Apart`]): what the
//! application can see (readbacks, host and interop tasks), what may keep its contents from one replay to the
//! next (written under a block's flag, which may skip the write), what the runtime reads in ways of its own
//! (block flags, indirect arguments), buffers marked `#[no_alias]`, and buffers fusion keeps in registers
//! (they take no memory) or that nothing touches.
//!
//! The placed buffers go into a few heaps, not one: wgpu binds a buffer in one dispatch either read-only or
//! writable, not both, and copies between two buffers, not within one. So a kernel's read-only buffers and
//! the buffers it writes, and a copy's source and destination, are put in different heaps (a greedy
//! colouring of those pairs; a pipeline needs two heaps), and each heap is packed on its own.
//!
//! A plan is pure data, made without a device (only the storage offset alignment): the runtime makes it at
//! bake, for every front door alike, and [`add_alias_hazards`] puts the barrier a buffer needs before it
//! reuses memory another buffer used since the last barrier.

use crate::desc::{GraphDesc, OpDesc};
use crate::plan::{BufferHazard, HazardKind, Plan, PlanPartition, Touched};

/// Where a buffer lives: bytes `offset .. offset + bytes` of heap `heap`, used from plan step `first` to
/// `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub heap: u32,
    pub offset: u64,
    pub bytes: u64,
    pub first: u32,
    pub last: u32,
}

impl Placement {
    /// Whether the two are used at some step in common.
    pub fn lives_with(&self, other: &Placement) -> bool {
        self.first <= other.last && other.first <= self.last
    }

    /// Whether they share a byte.
    pub fn shares_memory(&self, other: &Placement) -> bool {
        self.heap == other.heap
            && self.offset < other.offset + other.bytes
            && other.offset < self.offset + self.bytes
    }
}

/// Why a graph-owned buffer is in no heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Apart {
    /// A readback reads it: the application sees what it holds.
    Readback,
    /// A host or interop task declares it: the application's code sees it.
    Task,
    /// Written by a member of a block with a flag: the flag may skip the write, and the buffer then keeps
    /// what it held, maybe since the replay before.
    Gated,
    /// A block's flag, or a kernel's indirect arguments: read by the runtime's own gate or by the dispatch.
    Control,
    /// Marked `#[no_alias]` (or its graph is), or written by a node turned off after bake.
    NoAlias,
    /// Written by some choices of a group of alternatives and not by others: when one of the others runs, the
    /// buffer keeps what it held.
    Chosen,
    /// Kept in registers by fusion: nothing reads or writes it.
    Registers,
    /// No step of the plan touches it.
    Untouched,
}

impl Apart {
    /// Why, in a few words.
    pub fn words(self) -> &'static str {
        match self {
            Apart::Readback => "read back",
            Apart::Task => "a host or interop task's",
            Apart::Gated => "written under a flag",
            Apart::Control => "a flag or indirect counts",
            Apart::NoAlias => "#[no_alias]",
            Apart::Chosen => "written by some choices of alternatives",
            Apart::Registers => "in registers",
            Apart::Untouched => "untouched",
        }
    }
}

/// How [`place`] orders the buffers it places, each at the lowest offset where it fits beside the buffers
/// already placed that live with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heuristic {
    /// Largest first (ties: earliest first), as TensorFlow Lite's arena planner and AMD RPS's size-sorted
    /// packing do: the large buffers set the peak, the small fill the gaps around them.
    LargestFirst,
    /// In the order their lifetimes begin, each into the smallest gap it fits (best fit), as Daxa's transient
    /// allocator does.
    EarliestFirst,
}

/// The default, the better of the two where both were measured (`tests/memory.rs`): over 400 fixed random
/// sets of lifetimes, half of them pipelines, largest first needed 21.8 MB of heap in all against 23.0 MB,
/// and less in 253 sets against 49; over 120 random graphs (fused or not) and a 100-stage pipeline, 3.96 MB
/// against 3.99 MB.
pub const HEURISTIC: Heuristic = Heuristic::LargestFirst;

/// The memory plan of a baked graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPlan {
    /// Each heap's bytes: the peak of its buffers' memory.
    pub heaps: Vec<u64>,
    /// The heaps' bytes in all (0 when no buffer is placed).
    pub heap_bytes: u64,
    /// By buffer: its place in the heap, if it has one.
    pub placements: Vec<Option<Placement>>,
    /// By buffer: why a graph-owned buffer is not in the heap (`None` for external buffers and placed ones).
    pub apart: Vec<Option<Apart>>,
    /// What the graph-owned buffers kept apart take, each in memory of its own (none for a buffer kept in
    /// registers).
    pub apart_bytes: u64,
    /// What every graph-owned buffer would take in memory of its own: the memory without the plan.
    pub unaliased_bytes: u64,
}

impl MemoryPlan {
    /// What bake allocates for the graph-owned buffers: the heaps, and the buffers kept apart.
    pub fn owned_bytes(&self) -> u64 {
        self.heap_bytes + self.apart_bytes
    }

    /// The plan in words, a line per heap and one for the buffers kept apart, each buffer (by `names`, the
    /// planned description's buffer names) with its offset and the steps it lives (`graph check`, DOT).
    pub fn summary(&self, names: &[&str]) -> Vec<String> {
        let name = |b: usize| names.get(b).copied().unwrap_or("?");
        if self.unaliased_bytes == 0 {
            return vec!["memory: no graph-owned buffers".to_string()];
        }
        let mut lines = vec![format!(
            "memory: {} bytes for graph-owned buffers ({} each in memory of its own), {} heap{}",
            self.owned_bytes(),
            self.unaliased_bytes,
            self.heaps.len(),
            if self.heaps.len() == 1 { "" } else { "s" }
        )];
        for (h, bytes) in self.heaps.iter().enumerate() {
            let mut placed: Vec<(usize, Placement)> = (self.placements.iter().enumerate())
                .filter_map(|(b, p)| p.filter(|p| p.heap as usize == h).map(|p| (b, p)))
                .collect();
            placed.sort_by_key(|&(b, p)| (p.offset, p.first, b));
            let list: Vec<String> = placed
                .iter()
                .map(|(b, p)| format!("{} @{} (steps {}-{})", name(*b), p.offset, p.first, p.last))
                .collect();
            lines.push(format!("  heap {h}, {bytes} bytes: {}", list.join(", ")));
        }
        let apart: Vec<String> = (self.apart.iter().enumerate())
            .filter_map(|(b, why)| why.map(|why| format!("{} ({})", name(b), why.words())))
            .collect();
        if !apart.is_empty() {
            lines.push(format!("  apart: {}", apart.join(", ")));
        }
        lines
    }

    /// Two placed buffers that live at a step in common and share a byte, if any (none, by construction:
    /// the property tests check it).
    pub fn conflict(&self) -> Option<(u32, u32)> {
        let placed: Vec<(u32, Placement)> = self
            .placements
            .iter()
            .enumerate()
            .filter_map(|(b, p)| p.map(|p| (b as u32, p)))
            .collect();
        for (i, (a, pa)) in placed.iter().enumerate() {
            for (b, pb) in &placed[i + 1..] {
                if pa.lives_with(pb) && pa.shares_memory(pb) {
                    return Some((*a, *b));
                }
            }
        }
        None
    }

    /// Buffers placed to share memory with buffer `b` (at other steps), for drawings and messages.
    pub fn sharing_with(&self, b: u32) -> Vec<u32> {
        let Some(Some(own)) = self.placements.get(b as usize) else {
            return Vec::new();
        };
        self.placements
            .iter()
            .enumerate()
            .filter(|&(other, p)| other != b as usize && p.is_some_and(|p| p.shares_memory(own)))
            .map(|(other, _)| other as u32)
            .collect()
    }
}

/// By buffer, the first and last plan step that touch it (`None`: none does). Steps are numbered over the
/// whole plan: each GPU level one step, each host task one step.
pub fn lifetimes(desc: &GraphDesc, plan: &Plan) -> Vec<Option<(u32, u32)>> {
    let mut spans: Vec<Option<(u32, u32)>> = vec![None; desc.buffers.len()];
    let mut touch = |b: u32, step: u32| {
        if let Some(span) = spans.get_mut(b as usize) {
            *span = Some(match *span {
                None => (step, step),
                Some((first, _)) => (first, step),
            });
        }
    };
    let mut step = 0u32;
    for partition in &plan.partitions {
        match partition {
            PlanPartition::Gpu { levels } => {
                for level in levels {
                    let touched = Touched::of(desc, &level.steps);
                    for &b in touched.read.iter().chain(&touched.written) {
                        touch(b, step);
                    }
                    step += 1;
                }
            }
            PlanPartition::Host { nodes } => {
                for &n in nodes {
                    if let Some(OpDesc::Host { accesses }) =
                        desc.nodes.get(n as usize).map(|n| &n.op)
                    {
                        for a in accesses.iter() {
                            touch(a.buffer, step);
                        }
                    }
                    step += 1;
                }
            }
        }
    }
    spans
}

/// By buffer, why a graph-owned buffer must keep memory of its own, whatever its lifetime (`None` for the
/// external ones and for those that may share). `registers`: the buffers fusion keeps in registers.
pub fn kept_apart(desc: &GraphDesc, registers: &[u32]) -> Vec<Option<Apart>> {
    let mut apart: Vec<Option<Apart>> = vec![None; desc.buffers.len()];
    let mut mark = |b: u32, why: Apart| {
        if let Some(slot) = apart.get_mut(b as usize)
            && slot.is_none()
        {
            *slot = Some(why);
        }
    };
    for &b in registers {
        mark(b, Apart::Registers);
    }
    for (b, buffer) in desc.buffers.iter().enumerate() {
        if buffer.no_alias {
            mark(b as u32, Apart::NoAlias);
        }
    }
    for block in desc.blocks.iter() {
        if let Some(flag) = block.flag {
            mark(flag, Apart::Control);
            for &n in block.nodes.iter() {
                for (b, writes) in node_accesses(desc, n) {
                    if writes {
                        mark(b, Apart::Gated);
                    }
                }
            }
        }
    }
    for node in desc.nodes.iter() {
        match &node.op {
            OpDesc::Readback { buffer, .. } => mark(*buffer, Apart::Readback),
            OpDesc::Host { accesses } | OpDesc::Interop { accesses } => {
                for a in accesses.iter() {
                    mark(a.buffer, Apart::Task);
                }
            }
            OpDesc::Kernel(k) => {
                if let crate::desc::DispatchDesc::Indirect(b) = k.dispatch {
                    mark(b, Apart::Control);
                }
            }
            _ => {}
        }
    }
    // By group of alternatives, what each choice writes: a buffer one writes and another does not.
    let mut groups: Vec<(&str, Vec<Vec<u32>>)> = Vec::new();
    for (n, node) in desc.nodes.iter().enumerate() {
        if let OpDesc::Kernel(k) = &node.op
            && let Some(a) = &k.alternative
        {
            let writes: Vec<u32> = node_accesses(desc, n as u32)
                .into_iter()
                .filter_map(|(b, w)| w.then_some(b))
                .collect();
            match groups.iter_mut().find(|(g, _)| *g == &*a.group) {
                Some((_, choices)) => choices.push(writes),
                None => groups.push((&a.group, vec![writes])),
            }
        }
    }
    for (_, choices) in &groups {
        for writes in choices {
            for &b in writes {
                if !choices.iter().all(|other| other.contains(&b)) {
                    mark(b, Apart::Chosen);
                }
            }
        }
    }
    for (b, buffer) in desc.buffers.iter().enumerate() {
        if buffer.role.is_external() {
            apart[b] = None;
        }
    }
    apart
}

/// Node `n`'s buffers, each with whether it writes it.
pub(crate) fn node_accesses(desc: &GraphDesc, n: u32) -> Vec<(u32, bool)> {
    match desc.nodes.get(n as usize).map(|n| &n.op) {
        Some(OpDesc::Kernel(k)) => k
            .bindings
            .iter()
            .map(|a| (a.buffer, a.mode.writes()))
            .collect(),
        Some(OpDesc::Copy { src, dst, .. }) => vec![(*src, false), (*dst, true)],
        Some(OpDesc::Upload { buffer, .. }) => vec![(*buffer, true)],
        Some(OpDesc::Readback { buffer, .. }) => vec![(*buffer, false)],
        Some(OpDesc::Host { accesses } | OpDesc::Interop { accesses }) => accesses
            .iter()
            .map(|a| (a.buffer, a.mode.writes()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The memory plan of `desc` (flattened and fused, as baked) over `plan`, its buffers taking `bytes` each
/// (by buffer; rounded up to 4 bytes here), the heap's offsets multiples of `alignment` (the device's storage
/// offset alignment). `registers`: the buffers fusion keeps in registers. `alias: false` places nothing (the
/// graph asked for memory of its own per buffer).
pub fn plan_memory(
    desc: &GraphDesc,
    plan: &Plan,
    bytes: &[u64],
    registers: &[u32],
    alignment: u64,
    alias: bool,
) -> MemoryPlan {
    plan_memory_by(desc, plan, bytes, registers, alignment, alias, HEURISTIC)
}

/// [`plan_memory`] with each heap packed by `heuristic`, to compare the two.
pub fn plan_memory_by(
    desc: &GraphDesc,
    plan: &Plan,
    bytes: &[u64],
    registers: &[u32],
    alignment: u64,
    alias: bool,
    heuristic: Heuristic,
) -> MemoryPlan {
    let spans = lifetimes(desc, plan);
    let mut apart = kept_apart(desc, registers);
    let mut candidates = Vec::new();
    for (b, buffer) in desc.buffers.iter().enumerate() {
        // A graph-owned texture or sampler is an object of its own, made at bake: no range of a heap.
        if buffer.role.is_external() || !buffer.is_buffer() || apart[b].is_some() {
            continue;
        }
        match spans[b] {
            None => apart[b] = Some(Apart::Untouched),
            Some((first, last)) => {
                let size = bytes
                    .get(b)
                    .copied()
                    .unwrap_or(0)
                    .next_multiple_of(4)
                    .max(4);
                candidates.push((
                    b,
                    Lifetime {
                        first,
                        last,
                        bytes: size,
                    },
                ));
            }
        }
    }
    let mut placements = vec![None; desc.buffers.len()];
    // A buffer in registers takes no memory (the runtime binds nothing there: one placeholder serves all).
    let own_bytes = |b: usize| match registers.contains(&(b as u32)) {
        true => 0,
        false => bytes.get(b).copied().unwrap_or(0),
    };
    let apart_bytes: u64 = (0..desc.buffers.len())
        .filter(|&b| apart[b].is_some())
        .map(own_bytes)
        .sum();
    let placed_bytes: u64 = candidates.iter().map(|&(b, _)| own_bytes(b)).sum();
    let unaliased_bytes = apart_bytes + placed_bytes;
    if !alias {
        return MemoryPlan {
            heaps: Vec::new(),
            heap_bytes: 0,
            placements,
            apart,
            apart_bytes: unaliased_bytes,
            unaliased_bytes,
        };
    }
    let members: Vec<u32> = candidates.iter().map(|(b, _)| *b as u32).collect();
    let colours = heap_of(desc, &members);
    let count = colours.iter().max().map_or(0, |&c| c + 1);
    let mut heaps = vec![0u64; count as usize];
    for heap in 0..count {
        let inside: Vec<usize> = (0..candidates.len())
            .filter(|&i| colours[i] == heap)
            .collect();
        let lives: Vec<Lifetime> = inside.iter().map(|&i| candidates[i].1).collect();
        let offsets = place(&lives, alignment, heuristic);
        for (&i, offset) in inside.iter().zip(offsets) {
            let (b, life) = candidates[i];
            heaps[heap as usize] = heaps[heap as usize].max(offset + life.bytes);
            placements[b] = Some(Placement {
                heap,
                offset,
                bytes: life.bytes,
                first: life.first,
                last: life.last,
            });
        }
    }
    MemoryPlan {
        heap_bytes: heaps.iter().sum(),
        heaps,
        placements,
        apart,
        apart_bytes,
        unaliased_bytes,
    }
}

/// A heap for each of `members` (buffers to place), numbered from 0, such that no kernel binds one heap both
/// read-only and writable and no copy runs within one heap: the pairs that must differ are coloured
/// greedily, the buffers in the most pairs first.
fn heap_of(desc: &GraphDesc, members: &[u32]) -> Vec<u32> {
    let mut slot: Vec<Option<usize>> = vec![None; desc.buffers.len()];
    for (i, &b) in members.iter().enumerate() {
        if let Some(s) = slot.get_mut(b as usize) {
            *s = Some(i);
        }
    }
    let position = |b: u32| slot.get(b as usize).copied().flatten();
    let mut apart: Vec<Vec<usize>> = vec![Vec::new(); members.len()];
    let mut pair = |a: u32, b: u32| {
        if let (Some(a), Some(b)) = (position(a), position(b))
            && a != b
        {
            apart[a].push(b);
            apart[b].push(a);
        }
    };
    for node in desc.nodes.iter() {
        match &node.op {
            OpDesc::Kernel(k) => {
                for read in k.bindings.iter().filter(|a| !a.mode.writes()) {
                    for written in k.bindings.iter().filter(|a| a.mode.writes()) {
                        pair(read.buffer, written.buffer);
                    }
                }
            }
            OpDesc::Copy { src, dst, .. } => pair(*src, *dst),
            _ => {}
        }
    }
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(apart[i].len()));
    let mut colour: Vec<Option<u32>> = vec![None; members.len()];
    for i in order {
        let taken: Vec<u32> = apart[i].iter().filter_map(|&j| colour[j]).collect();
        colour[i] = (0..).find(|c| !taken.contains(c));
    }
    colour.into_iter().map(|c| c.unwrap_or(0)).collect()
}

/// The memory plan bake makes of `desc` (checked) on a device of WebGPU's default limits (storage offsets
/// aligned to 256 bytes, the fusion the macro's `FUSED` lists), for what `graph!`'s `MEMORY`, `graph check`
/// and DOT show: graph-owned buffers have their declared lengths, which are all the plan's sizes need.
/// `None` when the description cannot be planned without the lengths of its external buffers (a range
/// that reads one), or is not valid. The plan's buffer indices are those of the description flattened
/// ([`crate::flatten`]: a subgraph's own buffers come after the parent's), whose buffer names come with it.
pub fn declared_plan(desc: &GraphDesc) -> Option<(MemoryPlan, Vec<String>)> {
    let flat = crate::flatten::flatten(desc).ok()?;
    let lengths = crate::fusion::declared_lengths(&flat);
    fused_plan(&crate::fusion::fuse(
        &flat,
        &lengths,
        crate::fusion::MAX_FUSED_BINDINGS,
    ))
}

/// [`declared_plan`] of a flattened description already fused at its declared lengths and
/// [`crate::fusion::MAX_FUSED_BINDINGS`] (the macro has that fusion for `FUSED`).
pub fn fused_plan(fusion: &crate::fusion::Fusion<'_>) -> Option<(MemoryPlan, Vec<String>)> {
    let fused = &*fusion.desc;
    let lens: Vec<u32> = crate::fusion::declared_lengths(fused)
        .iter()
        .map(|l| l.and_then(|l| u32::try_from(l).ok()).unwrap_or(1))
        .collect();
    let plan = crate::plan::plan(fused, &lens).ok()?;
    let bytes: Vec<u64> = (fused.buffers.iter().zip(&lens))
        .map(|(b, &len)| b.elem.buffer_bytes(u64::from(len)))
        .collect();
    let names = fused.buffers.iter().map(|b| b.name.to_string()).collect();
    let registers = fusion.registers();
    let memory = plan_memory(
        fused,
        &plan,
        &bytes,
        &registers,
        WEBGPU_STORAGE_ALIGNMENT,
        true,
    );
    Some((memory, names))
}

/// A graph's memory plan as `graph!` writes it (`G::MEMORY`), from [`declared_plan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeclaredMemory {
    /// What bake allocates for the graph-owned buffers ([`MemoryPlan::owned_bytes`], and a baked graph's
    /// `owned_bytes()` on a device of WebGPU's default limits): the heaps and the buffers kept apart.
    pub owned_bytes: u64,
    /// What they would take each in memory of its own.
    pub unaliased_bytes: u64,
    /// Each heap's bytes.
    pub heaps: &'static [u64],
    /// Each graph-owned buffer by name, with its heap and byte offset where it is placed.
    pub placements: &'static [(&'static str, Option<(u32, u64)>)],
}

/// WebGPU's default `minStorageBufferOffsetAlignment`.
pub const WEBGPU_STORAGE_ALIGNMENT: u64 = 256;

/// A buffer to place: its bytes, used from step `first` to `last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetime {
    pub first: u32,
    pub last: u32,
    pub bytes: u64,
}

/// An offset for each of `lives`, a multiple of `alignment` (at least 1), such that no two whose steps meet
/// share a byte, by `heuristic`.
pub fn place(lives: &[Lifetime], alignment: u64, heuristic: Heuristic) -> Vec<u64> {
    let alignment = alignment.max(1);
    let mut order: Vec<usize> = (0..lives.len()).collect();
    match heuristic {
        Heuristic::LargestFirst => order.sort_by_key(|&i| {
            (
                std::cmp::Reverse(lives[i].bytes),
                lives[i].first,
                lives[i].last,
            )
        }),
        Heuristic::EarliestFirst => {
            order.sort_by_key(|&i| (lives[i].first, std::cmp::Reverse(lives[i].bytes)))
        }
    }
    let mut offsets = vec![0u64; lives.len()];
    // The placed buffers, sorted by step of first use, so that those that may meet one are found by a scan.
    let mut placed: Vec<usize> = Vec::with_capacity(lives.len());
    let mut taken: Vec<(u64, u64)> = Vec::new();
    for &i in &order {
        let life = lives[i];
        taken.clear();
        for &p in &placed {
            let other = lives[p];
            if other.first > life.last {
                break;
            }
            if other.last >= life.first {
                taken.push((offsets[p], offsets[p] + other.bytes));
            }
        }
        taken.sort_unstable();
        offsets[i] = match heuristic {
            Heuristic::LargestFirst => first_fit(&taken, life.bytes, alignment),
            Heuristic::EarliestFirst => best_fit(&taken, life.bytes, alignment),
        };
        let at = placed.partition_point(|&p| (lives[p].first, p) < (life.first, i));
        placed.insert(at, i);
    }
    offsets
}

/// The lowest aligned offset at which `bytes` fit between the `taken` ranges (sorted by start).
fn first_fit(taken: &[(u64, u64)], bytes: u64, alignment: u64) -> u64 {
    let mut at = 0u64;
    for &(start, end) in taken {
        if at + bytes <= start {
            return at;
        }
        at = at.max(end.next_multiple_of(alignment));
    }
    at
}

/// The aligned offset of the smallest gap between the `taken` ranges (sorted by start) that `bytes` fit in,
/// else past the last.
fn best_fit(taken: &[(u64, u64)], bytes: u64, alignment: u64) -> u64 {
    let mut best: Option<(u64, u64)> = None;
    let mut at = 0u64;
    for &(start, end) in taken {
        if at + bytes <= start {
            let gap = start - at;
            if best.is_none_or(|(size, _)| gap < size) {
                best = Some((gap, at));
            }
        }
        at = at.max(end.next_multiple_of(alignment));
    }
    best.map_or(at, |(_, offset)| offset)
}

/// Adds the barrier each placed buffer needs before the first level that touches it, where another buffer
/// that shares its memory was touched since the last barrier of the partition (the first scope of a global
/// barrier is everything recorded before it; separate partitions are ordered by their submissions). A
/// recorder that places its own barriers (portable wgpu, where the heap is one buffer it tracks) may ignore
/// them, as it ignores the others.
pub fn add_alias_hazards(plan: &mut Plan, desc: &GraphDesc, memory: &MemoryPlan) {
    if memory.heap_bytes == 0 {
        return;
    }
    for partition in &mut plan.partitions {
        let PlanPartition::Gpu { levels } = partition else {
            continue;
        };
        // By placed buffer: the last level that touched it, while no barrier has come since.
        let mut unordered: Vec<(u32, Placement)> = Vec::new();
        for level in levels.iter_mut() {
            if !level.hazards.is_empty() {
                unordered.clear();
            }
            let touched = Touched::of(desc, &level.steps);
            let mut here: Vec<u32> = touched
                .read
                .iter()
                .chain(&touched.written)
                .copied()
                .collect();
            here.sort_unstable();
            here.dedup();
            let mut hazards = Vec::new();
            for &b in &here {
                let Some(Some(own)) = memory.placements.get(b as usize) else {
                    continue;
                };
                let reused = unordered
                    .iter()
                    .any(|(other, p)| *other != b && p.shares_memory(own) && !p.lives_with(own));
                if reused {
                    hazards.push(BufferHazard {
                        buffer: b,
                        hazard: HazardKind::WriteAfterWrite,
                    });
                }
            }
            if !hazards.is_empty() {
                level.hazards.extend(hazards);
                level.hazards.sort_unstable();
                level.hazards.dedup();
                unordered.clear();
            }
            for &b in &here {
                if let Some(Some(p)) = memory.placements.get(b as usize) {
                    unordered.retain(|(other, _)| *other != b);
                    unordered.push((b, *p));
                }
            }
        }
    }
}
