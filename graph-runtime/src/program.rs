//! The executable program: what bake (and every update) compiles a fused description into for the bound
//! lengths and this device, as CUDA's `cudaGraphExec` and vulkano-taskgraph's `ExecutableTaskGraph` are, and
//! the only thing either recorder reads at a replay. It holds
//!
//! - the kernel table: each distinct kernel once, its WGSL composed here for both recorders (the parameter
//!   variable is the one line a recorder appends for the storage its pipelines read), its entry point,
//!   pipeline constants (a ranged fill's bounds) and access modes: the portable recorder's wgpu pipeline and
//!   the native recorder's Vulkan pipeline are both made from that one entry;
//! - the gate table: the slots and gates of blocks under GPU control;
//! - per node, which entry it dispatches, over which buffers, and its dispatch size (fixed at compile time
//!   where it reads no parameter, checked against the device);
//! - the partitions: host phases, and GPU partitions as steps: segments of recorded work (levels with the
//!   hazards that need a barrier before them, dispatches and gates), and between them the copies (as byte
//!   ranges), uploads, readbacks and interop tasks that cut a partition into segments.
//!
//! Nothing in it is a GPU handle: it is compiled without a device (only the device's limits), so it is
//! tested alone, and a recorder that records a segment into a command buffer once (native) and one that
//! records it at each replay (portable) read the same segments.

#![forbid(unsafe_code)]

use std::borrow::Cow;

use std::collections::HashMap;

use graph_core::desc::{AccessDesc, DispatchDesc, GraphDesc, KernelDesc, OpDesc, SizeDesc};
use graph_core::ir::{AccessMode, ParamsStorage};
use graph_core::memory::{MemoryPlan, add_alias_hazards, plan_memory};
use graph_core::plan::{
    BufferHazard, PlanError, PlanPartition, PlanStep, Transfer, evaluate_range, plan,
};
use graph_core::texture::{SamplerType, TextureType};
use graph_core::wgsl::params_declaration;

use crate::error::Error;
use crate::replay::{DispatchSize, SizeProblem};

/// A baked graph, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    /// The distinct kernels, each once.
    pub kernels: Vec<KernelEntry>,
    /// By node: the kernel it dispatches, if it dispatches one.
    pub nodes: Vec<Option<NodeKernel>>,
    /// In replay order.
    pub partitions: Vec<Partition>,
    /// Every GPU partition's segments, numbered over the whole program in replay order.
    pub segments: Vec<Segment>,
    /// The gates of blocks under GPU control.
    pub gates: GateTable,
    /// The device's workgroups per dimension, which a size read at replay is checked against.
    pub max_workgroups: u32,
    /// Where each graph-owned buffer lives: in the transient heap, or apart.
    pub memory: MemoryPlan,
}

/// What a program's memory plan starts from besides the description and the lengths.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MemoryOptions<'a> {
    /// The buffers fusion keeps in registers: they take no memory.
    pub registers: &'a [u32],
    /// Whether graph-owned buffers may share memory (else each has its own).
    pub alias: bool,
}

impl MemoryOptions<'_> {
    /// Each buffer its own memory, none in registers.
    #[cfg(test)]
    pub(crate) const APART: MemoryOptions<'static> = MemoryOptions {
        registers: &[],
        alias: false,
    };
}

/// Where the gates of blocks under GPU control read and write: each gated member's workgroup counts (written
/// by the host at each replay) and indirect arguments (written by its block's gate) are a slot of three
/// words, in two buffers the runtime owns; each block with a flag has a gate over its members' slots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GateTable {
    /// By node: its slot, for a gated member.
    pub slots: Vec<Option<u32>>,
    /// By block: its gate, if it has a flag (a plain `repeat` has none).
    pub blocks: Vec<Option<GateEntry>>,
    /// Slots in all; none: the graph has no gate.
    pub count: u32,
    /// What follows the counts (`3 * count` words) in the counts buffer, the same at every replay: the
    /// branch of each slot's member, then each `switch`'s arm values.
    pub fixed: Vec<u32>,
}

/// One block's gate: for `i < words`, `args[first + i] = counts[first + i]` when the slot's member runs in
/// the branch the flag picks, else 0 (see [`crate::gate::GATE_WGSL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GateEntry {
    /// The buffer whose first word is the block's flag (a `switch`'s value).
    pub flag: u32,
    /// Its first word, and its words: three per member.
    pub first: u32,
    pub words: u32,
    /// Workgroups of the gate kernel ([`crate::gate::GATE_WGSL`], 64 invocations each).
    pub workgroups: u32,
    /// A `switch`: its arm values are `cases` words of the counts buffer from word `cases_at`. Otherwise
    /// the flag picks branch 0 when nonzero, 1 when zero.
    pub switch: bool,
    pub cases_at: u32,
    pub cases: u32,
}

impl GateTable {
    /// The slots and gates of `desc`'s blocks, in declaration order.
    fn new(desc: &GraphDesc) -> Self {
        let mut table = GateTable {
            slots: vec![None; desc.nodes.len()],
            ..GateTable::default()
        };
        // Each slot's branch, then the arm values: where a switch's values start is known once every slot is.
        let (mut branches, mut values) = (Vec::new(), Vec::new());
        for block in desc.blocks.iter() {
            let Some(flag) = block.flag else {
                table.blocks.push(None);
                continue;
            };
            let first = table.count;
            for (at, &n) in block.nodes.iter().enumerate() {
                if let Some(slot) = table.slots.get_mut(n as usize) {
                    *slot = Some(table.count);
                    table.count += 1;
                    branches.push(block.branch(at));
                }
            }
            let cases = block.cases.as_deref().unwrap_or_default();
            let cases_at = values.len() as u32;
            values.extend_from_slice(cases);
            let words = (table.count - first) * 3;
            table.blocks.push(Some(GateEntry {
                flag,
                first: first * 3,
                words,
                workgroups: words.div_ceil(64),
                switch: block.cases.is_some(),
                cases_at,
                cases: cases.len() as u32,
            }));
        }
        // The values follow the counts and the branches.
        let values_at = table.count * 4;
        for entry in table.blocks.iter_mut().flatten() {
            entry.cases_at += values_at;
        }
        table.fixed = branches.into_iter().chain(values).collect();
        table
    }

    /// Node `node`'s slot, if it is a gated member: it dispatches from the arguments at `slot * 12` bytes.
    pub(crate) fn slot(&self, node: u32) -> Option<u32> {
        self.slots.get(node as usize).copied().flatten()
    }

    /// Block `block`'s gate, if it has a flag.
    pub(crate) fn gate(&self, block: u32) -> Option<GateEntry> {
        self.blocks.get(block as usize).copied().flatten()
    }
}

/// One distinct kernel: what a recorder makes its pipeline from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KernelEntry {
    /// The first node that dispatches it (for labels).
    pub label: String,
    /// The module without its parameter variable (see [`KernelDesc::compose_body`]).
    body: String,
    has_params: bool,
    pub entry: String,
    /// Override constants: a ranged fill's bounds, or the values a kernel gives its `override`s.
    pub constants: Vec<(Cow<'static, str>, f64)>,
    /// Binding by binding.
    pub modes: Vec<AccessMode>,
    /// Binding by binding: the texture's type where the binding is a texture.
    pub textures: Vec<Option<TextureType>>,
    /// Binding by binding: the sampler's type where the binding is a sampler.
    pub samplers: Vec<Option<SamplerType>>,
}

impl KernelEntry {
    /// The override constants as a pipeline takes them.
    pub(crate) fn constant_pairs(&self) -> Vec<(&str, f64)> {
        self.constants
            .iter()
            .map(|(k, v)| (k.as_ref(), *v))
            .collect()
    }

    /// The complete module, its parameters read from `storage`.
    pub(crate) fn module(&self, storage: ParamsStorage) -> String {
        let mut module = self.body.clone();
        module.push_str(params_declaration(storage, self.has_params));
        module
    }

    /// What makes two entries one (equal keys make equal pipelines), the body moved into it.
    fn into_key(self) -> (EntryKey, KernelEntry) {
        let constants = self.constants.iter().map(|(_, v)| v.to_bits()).collect();
        let key = (
            self.body,
            self.entry.clone(),
            constants,
            self.modes.clone(),
            self.textures.clone(),
            self.samplers.clone(),
        );
        let entry = KernelEntry {
            body: String::new(),
            ..self
        };
        (key, entry)
    }
}

/// A kernel-table entry's identity: its module's body, entry point, constants (as bits) and access modes.
type EntryKey = (
    String,
    String,
    Vec<u64>,
    Vec<AccessMode>,
    Vec<Option<TextureType>>,
    Vec<Option<SamplerType>>,
);

/// A node's dispatch.
#[derive(Debug, Clone)]
pub(crate) struct NodeKernel {
    /// Index into [`Program::kernels`].
    pub kernel: usize,
    /// The buffer each binding binds, by buffer index.
    pub buffers: Vec<u32>,
    pub size: DispatchSize,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Partition {
    /// Recorded and submitted as one submission.
    Gpu(Vec<Step>),
    /// Host tasks by node index, run in this order once the partition before has finished.
    Host(Vec<u32>),
}

/// A step of a GPU partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Segment `.0` of [`Program::segments`].
    Segment(usize),
    /// Copy node `node`: `bytes` of buffer `src` from byte `src_offset` into buffer `dst` at byte
    /// `dst_offset`.
    Copy {
        node: u32,
        src: u32,
        src_offset: u64,
        dst: u32,
        dst_offset: u64,
        bytes: u64,
    },
    /// Upload node `.0.node`'s staged data into its buffer.
    Upload(Transfer),
    /// Readback node `.0.node`'s range, out to the replay's readback buffer.
    Readback(Transfer),
    /// Node `.0`'s interop task, recording at its place.
    Interop(u32),
}

/// Recorded work between a partition's start or end and its copies, uploads, readbacks and interop tasks:
/// a partition with `t` of those has `t + 1` segments (some may hold nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Segment {
    pub levels: Vec<Level>,
}

/// A topological level of a segment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Level {
    /// What must be ordered before the level (a barrier, where not empty): none for a segment's first level
    /// after a step that cut it, as whatever records that step orders everything before it.
    pub hazards: Vec<BufferHazard>,
    pub ops: Vec<Op>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// Node `.0`'s kernel, over its workgroups for the replay (none: not recorded).
    Dispatch(u32),
    /// Block `.0`'s gate: its members' indirect arguments, zeros unless its flag is set.
    Gate(u32),
}

/// The limits a program is compiled against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeviceLimits {
    /// Per dimension, and invocations in all.
    pub workgroup_size: [u32; 3],
    pub invocations: u32,
    pub workgroups: u32,
    /// The storage offset alignment: where a buffer placed in the transient heap may begin.
    pub storage_alignment: u32,
    /// Bytes of workgroup memory a kernel may declare.
    pub workgroup_storage: u32,
}

impl DeviceLimits {
    /// WebGPU's default limits, which every device offers: what tests compile against.
    #[cfg(test)]
    pub(crate) const WEBGPU_DEFAULTS: DeviceLimits = DeviceLimits {
        workgroup_size: [256, 256, 64],
        invocations: 256,
        workgroups: 65535,
        storage_alignment: 256,
        workgroup_storage: 16384,
    };
}

impl From<&wgpu::Limits> for DeviceLimits {
    fn from(limits: &wgpu::Limits) -> Self {
        DeviceLimits {
            workgroup_size: [
                limits.max_compute_workgroup_size_x,
                limits.max_compute_workgroup_size_y,
                limits.max_compute_workgroup_size_z,
            ],
            invocations: limits.max_compute_invocations_per_workgroup,
            workgroups: limits.max_compute_workgroups_per_dimension,
            storage_alignment: limits.min_storage_buffer_offset_alignment,
            workgroup_storage: limits.max_compute_workgroup_storage_size,
        }
    }
}

impl Program {
    /// Compiles `desc` (fused, flattened) for buffers of lengths `lens` on a device of `limits`: the plan,
    /// every range evaluated, every node's kernel composed once (for both recorders), every size that reads no parameter resolved and
    /// checked. Errors name the graph, and the node or buffer at fault.
    pub(crate) fn compile(
        desc: &GraphDesc,
        lens: &[u32],
        limits: DeviceLimits,
        memory: MemoryOptions<'_>,
    ) -> Result<Program, Error> {
        let mut plan = plan(desc, lens).map_err(|e| plan_error(desc, e))?;
        let bytes: Vec<u64> = desc
            .buffers
            .iter()
            .zip(lens)
            .map(|(b, &len)| b.elem.buffer_bytes(u64::from(len)))
            .collect();
        let memory = plan_memory(
            desc,
            &plan,
            &bytes,
            memory.registers,
            u64::from(limits.storage_alignment),
            memory.alias,
        );
        // A buffer that reuses memory needs the barrier its own accesses may not (the native recorder's).
        add_alias_hazards(&mut plan, desc, &memory);
        let mut kernels: Vec<KernelEntry> = Vec::new();
        let mut index: HashMap<EntryKey, usize> = HashMap::new();
        let mut nodes = Vec::with_capacity(desc.nodes.len());
        for n in 0..desc.nodes.len() {
            let Some((entry, node)) = node_kernel(desc, n, lens, limits)? else {
                nodes.push(None);
                continue;
            };
            // The body moves into the key; an entry keeps a copy only when it is new.
            let (key, mut entry) = entry.into_key();
            let kernel = match index.get(&key) {
                Some(&kernel) => kernel,
                None => {
                    entry.body = key.0.clone();
                    kernels.push(entry);
                    index.insert(key, kernels.len() - 1);
                    kernels.len() - 1
                }
            };
            nodes.push(Some(NodeKernel { kernel, ..node }));
        }
        let (partitions, segments) = partitions(desc, &plan.partitions, &nodes)?;
        Ok(Program {
            kernels,
            nodes,
            partitions,
            segments,
            gates: GateTable::new(desc),
            max_workgroups: limits.workgroups,
            memory,
        })
    }

    /// Every step of every GPU partition, in replay order.
    pub(crate) fn steps(&self) -> impl Iterator<Item = &Step> {
        self.partitions.iter().flat_map(|p| match p {
            Partition::Gpu(steps) => steps.as_slice(),
            Partition::Host(_) => &[],
        })
    }

    /// Sets the size of each upload and readback of a buffer for which `bytes` gives one: a texture's, which
    /// the plan cannot size (a texture has no length), its padded rows (`crate::texture::TexelRows`).
    pub(crate) fn size_transfers(&mut self, bytes: impl Fn(u32) -> Option<u64>) {
        for partition in &mut self.partitions {
            if let Partition::Gpu(steps) = partition {
                for step in steps {
                    if let Step::Upload(t) | Step::Readback(t) = step
                        && let Some(bytes) = bytes(t.buffer)
                    {
                        t.bytes = bytes;
                        t.data = bytes;
                    }
                }
            }
        }
    }

    /// Every upload (or readback) of the program, in replay order.
    pub(crate) fn transfers(&self, readbacks: bool) -> Vec<Transfer> {
        self.steps()
            .filter_map(|s| match (*s, readbacks) {
                (Step::Upload(t), false) | (Step::Readback(t), true) => Some(t),
                _ => None,
            })
            .collect()
    }

    /// How many dispatches the program records, gates not counted.
    pub(crate) fn dispatches(&self) -> usize {
        self.segments
            .iter()
            .flat_map(|s| &s.levels)
            .flat_map(|l| &l.ops)
            .filter(|op| matches!(op, Op::Dispatch(_)))
            .count()
    }

    /// Whether the graph has a host phase: a blocking replay then waits for the GPU, or reads buffers.
    pub(crate) fn has_host_phase(&self) -> bool {
        self.partitions
            .iter()
            .any(|p| matches!(p, Partition::Host(_)))
    }

    /// Whether every partition is recorded work alone: no host phase, copy, upload, readback or interop task.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn segments_alone(&self) -> bool {
        self.partitions.iter().all(|p| match p {
            Partition::Gpu(steps) => steps.iter().all(|s| matches!(s, Step::Segment(_))),
            Partition::Host(_) => false,
        })
    }
}

/// Workgroup counts of every kernel for these parameters, into `workgroups` (by node), each checked against
/// the device limit before anything is recorded, so a bad size fails the replay whole. A kernel that does not
/// `run` (a choice of alternatives not chosen, a node turned off) gets none, and its size is not evaluated.
pub(crate) fn resolve_dispatches(
    program: &Program,
    params: &[u8],
    lens: &[u32],
    runs: impl Fn(usize) -> bool,
    workgroups: &mut [[u32; 3]],
) -> Result<(), (usize, SizeProblem)> {
    for (node, (kernel, slot)) in program.nodes.iter().zip(workgroups).enumerate() {
        let Some(kernel) = kernel else {
            continue;
        };
        if !runs(node) {
            *slot = [0; 3];
            continue;
        }
        let w = kernel
            .size
            .workgroups(params, lens)
            .map_err(|p| (node, p))?;
        if w.iter().any(|&d| d > program.max_workgroups) {
            return Err((node, SizeProblem::TooLarge(w)));
        }
        *slot = w;
    }
    Ok(())
}

/// The values kernel `k` (node `n`) gives its `override`s over buffers of lengths `lens`, by the key its
/// pipeline names each by; an error when one cannot be computed, or when the workgroup memory its module
/// declares with them passes the device's limit.
fn override_values(
    desc: &GraphDesc,
    n: usize,
    k: &KernelDesc,
    lens: &[u32],
    limits: DeviceLimits,
) -> Result<Vec<(String, u32)>, Error> {
    if k.overrides.is_empty() {
        return Ok(Vec::new());
    }
    let node = &desc.nodes[n].name;
    let bake = |reason: String| Error::Bake {
        graph: desc.name.to_string(),
        reason,
    };
    let values = k
        .overrides
        .iter()
        .map(|o| {
            graph_core::size::evaluate(&o.value.steps, &[], lens)
                .map(|v| (o.key.to_string(), v))
                .map_err(|e| {
                    bake(format!(
                        "kernel `{node}`: override `{}` = `{}` cannot be computed: {e}",
                        o.key, o.value.text
                    ))
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let module = whole_module(desc, k);
    let bytes = graph_core::wgsl::workgroup_bytes(&module, &values)
        .map_err(|e| bake(format!("kernel `{node}`: {e}")))?;
    if bytes > u64::from(limits.workgroup_storage) {
        let given: Vec<String> = values.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        return Err(bake(format!(
            "kernel `{node}` declares {bytes} bytes of workgroup memory with {}, but the device offers {}",
            given.join(", "),
            limits.workgroup_storage
        )));
    }
    Ok(values)
}

/// Kernel `k`'s whole module (its parameters in push constants), which naga reads for what the overrides
/// make of it: its workgroup memory and its workgroup size.
fn whole_module(desc: &GraphDesc, k: &KernelDesc) -> String {
    format!(
        "{}{}",
        k.compose_body(&desc.params),
        params_declaration(
            ParamsStorage::Immediates,
            !desc.params.wgsl_struct.is_empty()
        )
    )
}

/// Kernel `k`'s workgroup size: the description's, or where an `override` sizes an axis (0 there), the
/// module's with the kernel's override values (`values`, evaluated for this bake) or the override's default.
fn resolved_workgroup_size(
    desc: &GraphDesc,
    n: usize,
    k: &KernelDesc,
    values: &[(String, u32)],
) -> Result<[u32; 3], Error> {
    if k.workgroup_size.iter().all(|&d| d > 0) {
        return Ok(k.workgroup_size);
    }
    let module = whole_module(desc, k);
    graph_core::wgsl::workgroup_size(&module, &k.entry, values).map_err(|e| Error::Bake {
        graph: desc.name.to_string(),
        reason: format!("kernel `{}`: {e}", desc.nodes[n].name),
    })
}

/// Node `n`'s kernel entry (not yet numbered) and dispatch, if it dispatches a kernel: a kernel node, or a
/// copy in a block under GPU control (see [`copy_kernel`]).
fn node_kernel(
    desc: &GraphDesc,
    n: usize,
    lens: &[u32],
    limits: DeviceLimits,
) -> Result<Option<(KernelEntry, NodeKernel)>, Error> {
    let as_kernel = copy_kernel(desc, n, lens).map_err(|e| plan_error(desc, e))?;
    let (k, copy_words) = match (&desc.nodes[n].op, &as_kernel) {
        (OpDesc::Kernel(k), _) => (k, None),
        (_, Some((k, words))) => (k, Some(*words)),
        _ => return Ok(None),
    };
    let overrides = override_values(desc, n, k, lens, limits)?;
    let workgroup_size = resolved_workgroup_size(desc, n, k, &overrides)?;
    check_workgroup_size(desc, n, workgroup_size, limits)?;
    // A fill of a range: its bounds, checked by the plan, become pipeline constants.
    let range = match (&k.range, k.bindings.first()) {
        (Some(r), Some(target)) => Some(
            evaluate_range(n as u32, target.buffer, r, lens).map_err(|e| plan_error(desc, e))?,
        ),
        _ => None,
    };
    let elements = |count: u32| {
        element_dispatch(
            desc,
            n,
            count,
            workgroup_size[0],
            k.foldable,
            limits.workgroups,
        )
    };
    let size = match (&k.dispatch, range, copy_words) {
        (_, _, Some(words)) => DispatchSize::Fixed(elements(words)?),
        (_, Some((start, end)), None) => DispatchSize::Fixed(elements(end - start)?),
        (DispatchDesc::BufferLen(b), None, None) => {
            DispatchSize::Fixed(elements(lens.get(*b as usize).copied().unwrap_or(0))?)
        }
        (DispatchDesc::Threads(dims), None, None) => {
            DispatchSize::Threads(dims.clone(), workgroup_size)
        }
        (DispatchDesc::Workgroups(dims), None, None) => DispatchSize::Workgroups(dims.clone()),
        (DispatchDesc::Indirect(b), None, None) => DispatchSize::Indirect(*b),
    }
    .fixed_if_constant(lens, limits.workgroups)
    .map_err(|problem| problem.into_error(desc, n, limits.workgroups))?;
    let entry = KernelEntry {
        label: desc.nodes[n].name.to_string(),
        body: k.compose_body(&desc.params),
        has_params: !desc.params.wgsl_struct.is_empty(),
        entry: k.entry.to_string(),
        constants: match range {
            Some((start, end)) => vec![
                (
                    Cow::Borrowed(graph_core::fill::RANGE_START),
                    f64::from(start),
                ),
                (Cow::Borrowed(graph_core::fill::RANGE_END), f64::from(end)),
            ],
            None => overrides
                .into_iter()
                .map(|(key, v)| (Cow::Owned(key), f64::from(v)))
                .collect(),
        },
        modes: k.bindings.iter().map(|b| b.mode).collect(),
        textures: k
            .bindings
            .iter()
            .map(|b| desc.buffers.get(b.buffer as usize)?.texture_type())
            .collect(),
        samplers: k
            .bindings
            .iter()
            .map(|b| desc.buffers.get(b.buffer as usize)?.sampler_type())
            .collect(),
    };
    let node = NodeKernel {
        kernel: usize::MAX,
        buffers: k.bindings.iter().map(|b| b.buffer).collect(),
        size,
    };
    Ok(Some((entry, node)))
}

/// The plan's partitions as the program's steps, each GPU partition cut into segments at its copies,
/// uploads, readbacks and interop tasks. A level cut by one of those goes on in the next segment without a
/// barrier (whatever records the step orders everything before it); each dispatch names a node with a
/// kernel, or the description was not one the checks made.
fn partitions(
    desc: &GraphDesc,
    plan: &[PlanPartition],
    nodes: &[Option<NodeKernel>],
) -> Result<(Vec<Partition>, Vec<Segment>), Error> {
    let mut partitions = Vec::with_capacity(plan.len());
    let mut segments = Vec::new();
    for partition in plan {
        let levels = match partition {
            PlanPartition::Host { nodes } => {
                partitions.push(Partition::Host(nodes.clone()));
                continue;
            }
            PlanPartition::Gpu { levels } => levels,
        };
        let mut steps = Vec::new();
        let mut segment = Segment::default();
        for level in levels {
            segment.levels.push(Level {
                hazards: level.hazards.clone(),
                ops: Vec::new(),
            });
            for step in &level.steps {
                let cut = match *step {
                    PlanStep::Dispatch { node } => {
                        if nodes.get(node as usize).is_none_or(Option::is_none) {
                            return Err(Error::Bake {
                                graph: desc.name.to_string(),
                                reason: format!(
                                    "node `{}` is dispatched but has no kernel",
                                    desc.nodes.get(node as usize).map_or("?", |n| &*n.name)
                                ),
                            });
                        }
                        push_op(&mut segment, Op::Dispatch(node));
                        continue;
                    }
                    PlanStep::Gate { block } => {
                        push_op(&mut segment, Op::Gate(block));
                        continue;
                    }
                    PlanStep::Copy {
                        node,
                        src,
                        src_offset,
                        dst,
                        dst_offset,
                        bytes,
                    } => Step::Copy {
                        node,
                        src,
                        src_offset,
                        dst,
                        dst_offset,
                        bytes,
                    },
                    PlanStep::Upload(t) => Step::Upload(t),
                    PlanStep::Readback(t) => Step::Readback(t),
                    PlanStep::Interop { node } => Step::Interop(node),
                };
                steps.push(Step::Segment(segments.len()));
                segments.push(std::mem::take(&mut segment));
                steps.push(cut);
                segment.levels.push(Level::default());
            }
        }
        steps.push(Step::Segment(segments.len()));
        segments.push(segment);
        partitions.push(Partition::Gpu(steps));
    }
    Ok((partitions, segments))
}

fn push_op(segment: &mut Segment, op: Op) {
    if let Some(level) = segment.levels.last_mut() {
        level.ops.push(op);
    }
}

/// Whether node `index` is a member of a block under GPU control.
pub(crate) fn in_block(desc: &GraphDesc, index: usize) -> bool {
    desc.blocks
        .iter()
        .any(|b| b.nodes.contains(&(index as u32)))
}

/// Node `n` as a kernel, if it is a copy in a block under GPU control (so that its gate can skip it), with
/// the 32-bit words it moves: the buffers seen as `u32` words (every element type is made of them), the
/// offsets and length constants of its module, so each range is its own pipeline, as a ranged fill's is.
fn copy_kernel(
    desc: &GraphDesc,
    n: usize,
    lens: &[u32],
) -> Result<Option<(KernelDesc, u32)>, PlanError> {
    let Some(OpDesc::Copy {
        src,
        dst,
        src_range,
        dst_range,
    }) = desc.nodes.get(n).map(|node| &node.op)
    else {
        return Ok(None);
    };
    if !in_block(desc, n) {
        return Ok(None);
    }
    let (src_start, src_end) = evaluate_range(n as u32, *src, src_range, lens)?;
    let (dst_start, dst_end) = evaluate_range(n as u32, *dst, dst_range, lens)?;
    // Whole words: a range of `u8`, `u16` or `f16` elements starts on a word (the checks), and one ending at
    // its buffer's end takes the rest of the last word (`byte_span`).
    let elem = desc.buffers[*src as usize].elem;
    let len = |b: u32| lens.get(b as usize).copied().unwrap_or(0);
    let (src_offset, bytes, _) = graph_core::plan::byte_span(elem, src_start, src_end, len(*src));
    let (dst_offset, _, _) = graph_core::plan::byte_span(elem, dst_start, dst_end, len(*dst));
    let as_words = |bytes: u64| u32::try_from(bytes / 4).unwrap_or(u32::MAX);
    let (from, to, words) = (as_words(src_offset), as_words(dst_offset), as_words(bytes));
    let declarations = "@group(0) @binding(0) var<storage, read> src: array<u32>;\n\
                        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;\n";
    let source = format!(
        "const FROM: u32 = {from}u;\nconst TO: u32 = {to}u;\nconst WORDS: u32 = {words}u;\n\
         @compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{\n\
         \x20   let i = gid.x + gid.y * groups.x * 64u;\n\
         \x20   if (i < WORDS) {{ dst[TO + i] = src[FROM + i]; }}\n}}\n"
    );
    let kernel = KernelDesc {
        pointwise: false,
        reach: None,
        grid: None,
        no_fusion: true,
        overrides: Default::default(),
        declarations: declarations.into(),
        args: Default::default(),
        source: source.into(),
        entry: "main".into(),
        workgroup_size: [64, 1, 1],
        bindings: vec![
            AccessDesc {
                buffer: *src,
                mode: AccessMode::Read,
            },
            AccessDesc {
                buffer: *dst,
                mode: AccessMode::Write,
            },
        ]
        .into(),
        // Replaced by the fixed size of its words (see `node_kernel`).
        dispatch: DispatchDesc::Threads([SizeDesc::ONE, SizeDesc::ONE, SizeDesc::ONE]),
        foldable: true,
        range: None,
        alternative: None,
    };
    Ok(Some((kernel, words)))
}

/// A kernel's workgroup fits the device (the macro held it to the portable limits unless the graph is
/// `#[device_limits]`).
fn check_workgroup_size(
    desc: &GraphDesc,
    node: usize,
    size: [u32; 3],
    limits: DeviceLimits,
) -> Result<(), Error> {
    let per_dim = limits.workgroup_size;
    let total = limits.invocations;
    let invocations = size.iter().map(|&d| u64::from(d)).product::<u64>();
    if size.iter().zip(per_dim).any(|(&d, max)| d > max) || invocations > u64::from(total) {
        return Err(Error::WorkgroupTooLarge {
            graph: desc.name.to_string(),
            node: desc.nodes[node].name.to_string(),
            size,
            limit: format!(
                "{} x {} x {} per dimension, {total} invocations in all",
                per_dim[0], per_dim[1], per_dim[2]
            ),
        });
    }
    Ok(())
}

/// The workgroups for one invocation per element, decided at bake. Past the per-dimension limit, a kernel
/// that indexes by `num_workgroups` is folded into two dimensions; any other is an error now rather than at
/// every replay.
fn element_dispatch(
    desc: &GraphDesc,
    node: usize,
    elements: u32,
    workgroup_width: u32,
    foldable: bool,
    limit: u32,
) -> Result<[u32; 3], Error> {
    let groups = elements.div_ceil(workgroup_width.max(1));
    if groups <= limit {
        return Ok([groups, 1, 1]);
    }
    let folded = [limit, groups.div_ceil(limit), 1];
    if foldable && folded[1] <= limit {
        return Ok(folded);
    }
    Err(Error::DispatchTooLarge {
        graph: desc.name.to_string(),
        node: desc.nodes[node].name.to_string(),
        workgroups: [groups, 1, 1],
        limit,
    })
}

/// A plan's refusal as the runtime's error, naming the graph and the node or buffer at fault.
pub(crate) fn plan_error(desc: &GraphDesc, error: PlanError) -> Error {
    let graph = desc.name.to_string();
    let node_name = |n: u32| desc.nodes.get(n as usize).map_or("?", |n| &*n.name);
    let buffer_name = |b: u32| desc.buffers.get(b as usize).map_or("?", |b| &*b.name);
    match error {
        PlanError::CopyLengths {
            node,
            src_len,
            dst_len,
        } => {
            let (src, dst, whole) = match desc.nodes.get(node as usize).map(|n| &n.op) {
                Some(OpDesc::Copy {
                    src,
                    dst,
                    src_range,
                    dst_range,
                }) => (
                    *src,
                    *dst,
                    src_range.is_whole(*src) && dst_range.is_whole(*dst),
                ),
                _ => (u32::MAX, u32::MAX, false),
            };
            if whole {
                // A whole-buffer copy: the destination's length is what is wrong.
                return Error::BufferLength {
                    graph,
                    buffer: buffer_name(dst).to_string(),
                    expected: format!(
                        "exactly {src_len} (the length of `{}`, which node `{}` copies into it whole)",
                        buffer_name(src),
                        node_name(node)
                    ),
                    actual: dst_len.into(),
                };
            }
            Error::Bake {
                graph,
                reason: format!(
                    "copy `{}` moves {src_len} elements of `{}` into a range of {dst_len} elements of `{}`; \
                     both sides of a copy have one length",
                    node_name(node),
                    buffer_name(src),
                    buffer_name(dst)
                ),
            }
        }
        PlanError::Range {
            node,
            buffer,
            start,
            end,
            len,
        } if start <= end => Error::BufferLength {
            graph,
            buffer: buffer_name(buffer).to_string(),
            expected: format!(
                "at least {end} (node `{}` uses `{}[{start}..{end}]`)",
                node_name(node),
                buffer_name(buffer)
            ),
            actual: len.into(),
        },
        PlanError::Range {
            node,
            buffer,
            start,
            end,
            ..
        } => Error::Bake {
            graph,
            reason: format!(
                "the range `{start}..{end}` of `{}` in node `{}` starts after it ends",
                buffer_name(buffer),
                node_name(node)
            ),
        },
        PlanError::Bound { node, error } => Error::Bake {
            graph,
            reason: format!("a range bound of node `{}` fails: {error}", node_name(node)),
        },
        PlanError::Lengths { expected, given } => Error::Bake {
            graph,
            reason: format!("{given} buffer lengths for {expected} buffers"),
        },
        PlanError::Subgraph { node } => Error::Bake {
            graph,
            reason: format!("subgraph node `{}` was not flattened", node_name(node)),
        },
    }
}

#[cfg(test)]
mod tests {
    use graph_core::builder::{GraphBuilder, KernelSpec};
    use graph_core::library::Library;

    use super::*;

    const LIMITS: DeviceLimits = DeviceLimits::WEBGPU_DEFAULTS;

    fn scale(src: &str, dst: &str) -> KernelSpec {
        KernelSpec::wgsl(format!(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                 if (gid.x < arrayLength(&{dst})) {{ {dst}[gid.x] = {src}[gid.x] * params.k; }}
             }}"
        ))
        .read(src)
        .write(dst)
    }

    /// `a: x -> y`, `b: x -> z`, fills of two ranges of `w`, a readback of `y`, and `c: y -> w2` after it.
    fn graph() -> GraphDesc {
        let mut b = GraphBuilder::new("Compiled");
        b.param("k", "f32");
        b.input("x", "f32")
            .output("y", "f32")
            .output("z", "f32")
            .output("w", "f32")
            .output("w2", "f32");
        b.kernel("a", scale("x", "y"));
        b.kernel("b", scale("x", "z"));
        b.fill("low", "w[..4]", "1.0");
        b.fill("high", "w[4..]", "1.0");
        b.readback("out", "y");
        b.kernel("c", scale("y", "w2"));
        b.edge("out", "c");
        b.build(&Library::EMPTY).expect("a good graph")
    }

    #[test]
    fn each_distinct_kernel_is_one_entry_composed_once() {
        let mut b = GraphBuilder::new("Twice");
        b.param("k", "f32");
        b.input("x", "f32").output("y", "f32").output("z", "f32");
        b.kernel("a", scale("x", "y"));
        b.kernel("again", scale("x", "y"));
        b.kernel("other", scale("x", "z"));
        b.fill("low", "z[..4]", "1.0");
        b.fill("high", "z[4..]", "1.0");
        let desc = b.build(&Library::EMPTY).expect("a good graph");
        let program =
            Program::compile(&desc, &[64; 3], LIMITS, MemoryOptions::APART).expect("compiles");
        let kernel = |name: &str| {
            let n = desc
                .nodes
                .iter()
                .position(|n| n.name == name)
                .expect("a node");
            program.nodes[n].as_ref().expect("a kernel").kernel
        };
        // One text over the same bindings: one entry, dispatched twice.
        assert_eq!(kernel("a"), kernel("again"));
        assert_ne!(kernel("a"), kernel("other"));
        // The fills are one text, but their ranges are pipeline constants: two entries.
        assert_ne!(kernel("low"), kernel("high"));
        assert_eq!(program.kernels.len(), 4, "{:?}", program.kernels);
        let high = &program.kernels[kernel("high")];
        assert_eq!(
            high.constant_pairs(),
            [
                (graph_core::fill::RANGE_START, 4.0),
                (graph_core::fill::RANGE_END, 64.0)
            ]
        );
        // Each recorder's module is the one body with its storage's parameter variable.
        let entry = &program.kernels[kernel("a")];
        let immediates = entry.module(ParamsStorage::Immediates);
        let uniform = entry.module(ParamsStorage::Uniform);
        assert!(immediates.ends_with("var<immediate> params: GraphParams;\n"));
        assert!(uniform.ends_with("@group(1) @binding(0) var<uniform> params: GraphParams;\n"));
        assert_eq!(
            immediates.strip_suffix(params_declaration(ParamsStorage::Immediates, true)),
            uniform.strip_suffix(params_declaration(ParamsStorage::Uniform, true))
        );
        for module in [immediates, uniform] {
            graph_core::wgsl::validate(&module).expect("a valid module");
        }
        // Buffers by binding, and a size fixed at compile time where it reads no parameter.
        let other = program.nodes[2].as_ref().expect("a kernel");
        assert_eq!(other.buffers, [0, 2]);
        assert!(
            matches!(other.size, DispatchSize::Fixed([1, 1, 1])),
            "{other:?}"
        );
    }

    #[test]
    fn a_partition_is_cut_into_segments_at_its_transfers() {
        let desc = graph();
        let program =
            Program::compile(&desc, &[64; 5], LIMITS, MemoryOptions::APART).expect("compiles");
        let [Partition::Gpu(steps)] = program.partitions.as_slice() else {
            panic!("one GPU partition: {:?}", program.partitions);
        };
        let readback = Transfer {
            node: 4,
            buffer: 1,
            offset: 0,
            bytes: 256,
            data: 256,
        };
        assert_eq!(
            steps,
            &[Step::Segment(0), Step::Readback(readback), Step::Segment(1)]
        );
        let ops = |segment: usize| -> Vec<(bool, Vec<Op>)> {
            program.segments[segment]
                .levels
                .iter()
                .map(|l| (!l.hazards.is_empty(), l.ops.clone()))
                .collect()
        };
        // The first level's dispatches, then the second level's (`high` after `low`, behind a barrier),
        // whose readback cuts it: the level goes on without a barrier in the next segment (what records
        // the readback orders everything before it); the third level, `c`, needs none either: the
        // second level's barrier already ordered `y` after `a`, and `w2` is new.
        assert_eq!(
            ops(0),
            [
                (
                    false,
                    vec![Op::Dispatch(0), Op::Dispatch(1), Op::Dispatch(2)]
                ),
                (true, vec![Op::Dispatch(3)]),
            ]
        );
        assert_eq!(ops(1), [(false, vec![]), (false, vec![Op::Dispatch(5)])]);
        assert_eq!(program.dispatches(), 5);
        assert_eq!(program.transfers(true), [readback]);
        assert!(program.transfers(false).is_empty());
        assert!(!program.segments_alone());
    }

    #[test]
    fn sizes_and_ranges_that_do_not_fit_are_refused_when_compiled() {
        let desc = graph();
        // `w[4..]` of a 2-element `w`.
        let short = Program::compile(&desc, &[64, 64, 64, 2, 64], LIMITS, MemoryOptions::APART);
        assert!(
            matches!(&short, Err(Error::BufferLength { buffer, .. }) if buffer == "w"),
            "{short:?}"
        );
        // A kernel over more elements than the device has workgroups for, in one dimension.
        let small = DeviceLimits {
            workgroups: 2,
            ..LIMITS
        };
        let wide = Program::compile(&desc, &[64, 64, 64, 64, 1024], small, MemoryOptions::APART);
        assert!(
            matches!(&wide, Err(Error::DispatchTooLarge { node, .. }) if node == "c"),
            "{wide:?}"
        );
    }

    #[test]
    fn gates_are_laid_out_when_compiled() {
        let mut b = GraphBuilder::new("Gated");
        b.param("k", "f32");
        b.input("x", "f32")
            .output("y", "f32")
            .output("z", "f32")
            .input("flag", "u32");
        b.kernel("plain", scale("x", "y"));
        b.kernel("one", scale("x", "z"));
        b.kernel("two", scale("z", "y"));
        b.kernel("three", scale("y", "z"));
        b.repeat("twice", 2, None, &["one"]);
        b.if_block("maybe", "flag", &["two", "three"]);
        let desc = b.build(&Library::EMPTY).expect("a good graph");
        let program =
            Program::compile(&desc, &[64; 4], LIMITS, MemoryOptions::APART).expect("compiles");
        let gates = &program.gates;
        // Only the flagged block's members have slots; the plain `repeat` has no gate.
        assert_eq!(gates.slots, [None, None, Some(0), Some(1)]);
        assert_eq!(gates.count, 2);
        assert_eq!(gates.gate(0), None);
        assert_eq!(
            gates.gate(1),
            Some(GateEntry {
                flag: 3,
                first: 0,
                words: 6,
                workgroups: 1,
                switch: false,
                cases_at: 8,
                cases: 0,
            })
        );
        // The gate runs in the segment, ahead of its block's members.
        let ops: Vec<Op> = program
            .segments
            .iter()
            .flat_map(|s| &s.levels)
            .flat_map(|l| l.ops.clone())
            .collect();
        let gate = ops.iter().position(|op| *op == Op::Gate(1));
        let two = ops.iter().position(|op| *op == Op::Dispatch(2));
        assert!(gate.is_some() && gate < two, "{ops:?}");
    }
}
