//! The native recorder: on Vulkan, a baked graph's dispatches are replayed from Vulkan secondary command
//! buffers recorded once ([`crate::native::NativeGraph`]), with one barrier per level boundary that has
//! hazards (where wgpu's portable pass places one before every dispatch that touches a written buffer),
//! executed from wgpu's command encoders. A GPU partition's copies, uploads, readbacks and interop tasks
//! split it into segments, one command buffer each; wgpu (or the task) records the steps between them, in
//! the replay's order. A replay whose parameters and dispatch sizes are those of the last recording records
//! nothing: its CPU cost does not grow with the node count. `if`/`repeat` blocks are recorded with their
//! gates, each run unrolled, once. Workgroup counts a kernel wrote are checked against the device's limits
//! by a one-invocation kernel ahead of their dispatch, as wgpu does on the portable recorder. Level
//! barriers, not per-edge events: a `vkCmdWaitEvents` before each dependent dispatch measured 2-4.5x slower
//! on the H100 on every benchmark shape with edges (README, Performance).
//!
//! The parameters reach the kernels through a small uniform buffer written before a replay whose values
//! changed ([`NativeParamsIn::Buffer`], the default), or as push constants recorded into the command buffers,
//! which new values record again ([`NativeParamsIn::PushConstants`]).
//!
//! `GRAPH_RUNTIME_RECORDER=portable` turns it off; `=native` makes a graph that cannot use it, or a failure
//! to build it, a bake error instead of a quiet fall back to the portable recorder.

#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use graph_core::desc::GraphDesc;
use graph_core::ir::ParamsStorage;
use graph_core::plan::Transfer;

use crate::bake::BoundBuffers;
use crate::error::Error;
use crate::gate::{GATE_WGSL, Gates, gate_constants};
use crate::gpu::Gpu;
use crate::native::{
    DescriptorKind, ImageKind, ImageLayout, KernelOf, Marker, NativeBinding, NativeGraph,
    NativeKernel, NativeParams, NativePipeline, NativeShared, Recorded, RecordedLevel,
    SpirvFeatures, queries_of,
};
use crate::profile::TimedDispatch;
use crate::program::{Op, Partition, Program, Segment, Step};
use crate::queue::GpuQueue;
use crate::recorder::{Choice, NativeBuilt, NativeParamsIn, RECORDER_ENV, Recorder};
use crate::replay::DispatchSize;
use crate::slice::Slice;
use crate::transfer::TransferBuffers;
use crate::wait::{Work, WorkOf};

/// A baked graph's native replay: the recorded command buffers and what they were recorded with.
#[derive(Debug)]
pub(crate) struct NativeReplay {
    graph: NativeGraph,
    /// What the graphs of the baked graph's updates share: layouts and the pipeline cache.
    shared: Arc<NativeShared>,
    /// Every pipeline the graph binds, by what its SPIR-V was made from: an update takes those of equal key.
    pipelines: HashMap<PipelineKey, Arc<NativePipeline>>,
    /// The pipeline of the init pass, kept for updates.
    init_pipeline: InitPipeline,
    /// Recorded ahead of the first replay's command buffers, then dropped (see [`InitPass`]); none when
    /// every buffer was in an earlier one.
    init: Option<InitPass>,
    /// The bound buffers, by index: an update's init pass binds only the buffers that are new to it.
    bound: Vec<wgpu::Buffer>,
    /// The checked copies of counts kernels wrote, if any kernel dispatches from them.
    checked_counts: Option<wgpu::Buffer>,
    /// The parameter buffer, with [`NativeParamsIn::Buffer`] and parameters.
    params: Option<ParamsBuffer>,
    /// What the command buffers hold; `None` before the first recording.
    recorded: Option<Recording>,
    /// Per segment, whether its command buffer holds a dispatch (one that holds none is not executed).
    has_dispatches: Vec<bool>,
    /// Per segment, whether a direct submission may submit it (its partition is segments alone): only those
    /// segments' primary command buffers are recorded.
    direct_segments: Vec<bool>,
    /// Written at the end of each submission: waiting reads it rather than waiting for wgpu's fence.
    marker: Arc<Marker>,
    /// Every partition is kernels alone, and no parameter goes through a buffer: with direct submission, a
    /// replay calls no wgpu function once the init pass went (see [`NativeReplay::calls_no_wgpu`]).
    kernels_alone: bool,
    /// Each texture the kernels bind, once, with the wgpu state of the layout the command buffers keep it
    /// in: wgpu puts it there (`transition_resources`) ahead of every run of segments, wherever the
    /// application or the graph's own copies left it, and so knows its layout after them too.
    textures: Vec<(wgpu::Texture, wgpu::TextureUses)>,
    /// The parts of textures (a level, some layers) the kernels bind, each once: those an update need not
    /// bind in an init pass again once this replay's went.
    parts: Vec<(wgpu::Texture, crate::texture::Part)>,
    /// What making it built (the rest it took from the replay it updates).
    pub(crate) built: NativeBuilt,
}

/// What a native pipeline is made from: its WGSL module, entry point, override constants (name, value's
/// bits) and its bindings' descriptor types. Equal keys make equal SPIR-V, so naga runs once per key.
type PipelineKey = (String, String, Vec<(String, u64)>, Vec<DescriptorKind>);

/// The native pipelines of one [`NativeReplay::new`]: those of the replay before it taken where their keys
/// are equal, the others made (SPIR-V from naga, then Vulkan) and counted.
struct Pipelines<'a> {
    shared: &'a Arc<NativeShared>,
    old: Option<&'a HashMap<PipelineKey, Arc<NativePipeline>>>,
    made: HashMap<PipelineKey, Arc<NativePipeline>>,
    /// What [`Pipelines::prepare`] could not make, for [`Pipelines::get`] to return.
    failed: HashMap<PipelineKey, String>,
    built: usize,
}

impl Pipelines<'_> {
    /// The key of `source`'s `entry` with override `constants`, binding descriptors of `kinds`.
    fn key(
        source: String,
        entry: &str,
        constants: &[(&str, f64)],
        kinds: Vec<DescriptorKind>,
    ) -> PipelineKey {
        (
            source,
            entry.to_string(),
            constants
                .iter()
                .map(|&(n, v)| (n.to_string(), v.to_bits()))
                .collect(),
            kinds,
        )
    }

    /// Makes the pipelines of `wanted` that neither this replay nor the one before has, several at once:
    /// naga's SPIR-V and the driver's compile are most of a cold bake, and one pipeline's do not wait for
    /// another's. [`Pipelines::get`] then finds each made, or its error.
    fn prepare(&mut self, wanted: impl IntoIterator<Item = PipelineKey>) {
        let mut todo: Vec<PipelineKey> = wanted
            .into_iter()
            .filter(|key| {
                !self.made.contains_key(key) && !self.old.is_some_and(|old| old.contains_key(key))
            })
            .collect();
        // Sorted, not searched per key: a thousand distinct kernels are a thousand whole modules to compare.
        todo.sort_unstable();
        todo.dedup();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(todo.len());
        if threads < 2 {
            // `get` makes it, on this thread.
            return;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Vec<std::sync::OnceLock<Result<Arc<NativePipeline>, String>>> =
            todo.iter().map(|_| std::sync::OnceLock::new()).collect();
        let shared = self.shared;
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(key) = todo.get(i) else {
                            break;
                        };
                        // Each index is taken by one thread, so the cell is empty.
                        let _ = results[i].set(make_pipeline(shared, key));
                    }
                });
            }
        });
        // Every cell is set: the threads take every index, and a thread that panicked has made the scope
        // panic before this (an empty cell would leave the key to `get`).
        for (key, result) in todo.into_iter().zip(results) {
            match result.into_inner() {
                Some(Ok(pipeline)) => {
                    self.built += 1;
                    self.made.insert(key, pipeline);
                }
                Some(Err(e)) => {
                    self.failed.insert(key, e);
                }
                None => {}
            }
        }
    }

    /// The pipeline of `source`'s `entry` with override `constants`, binding descriptors of `kinds`; an error
    /// says what the kernel lacks ("has no SPIR-V: ..").
    fn get(
        &mut self,
        source: String,
        entry: &str,
        constants: &[(&str, f64)],
        kinds: Vec<DescriptorKind>,
    ) -> Result<Arc<NativePipeline>, String> {
        let key = Self::key(source, entry, constants, kinds);
        if let Some(p) = self.made.get(&key) {
            return Ok(p.clone());
        }
        if let Some(e) = self.failed.get(&key) {
            return Err(e.clone());
        }
        let pipeline = match self.old.and_then(|old| old.get(&key)) {
            Some(p) => p.clone(),
            None => {
                let p = make_pipeline(self.shared, &key)?;
                self.built += 1;
                p
            }
        };
        self.made.insert(key, pipeline.clone());
        Ok(pipeline)
    }
}

/// Makes `key`'s pipeline: its SPIR-V from naga, then the driver's. Safe to call from several threads at once
/// (see [`NativePipeline::new`]).
fn make_pipeline(
    shared: &Arc<NativeShared>,
    key: &PipelineKey,
) -> Result<Arc<NativePipeline>, String> {
    let (source, entry, constants, kinds) = key;
    let constants: Vec<(&str, f64)> = constants
        .iter()
        .map(|(n, bits)| (n.as_str(), f64::from_bits(*bits)))
        .collect();
    let words = spirv(source, entry, &constants, shared.spirv_features())
        .map_err(|e| format!("has no SPIR-V: {e}"))?;
    NativePipeline::new(shared, &words, entry, kinds.clone())
        .map_err(|e| format!("has no pipeline: {e}"))
}

/// The descriptor types of a kernel's bindings: a storage buffer, or a texture bound as its declaration and
/// the access say ([`graph_core::texture::TextureType::binding_wgsl`]): sampled for a read of a sampled
/// declaration, else a storage image.
fn descriptor_kinds(entry: &crate::program::KernelEntry) -> Vec<DescriptorKind> {
    entry
        .modes
        .iter()
        .zip(entry.textures.iter().zip(&entry.samplers))
        .map(|(&mode, (texture, sampler))| match texture {
            None if sampler.is_some() => DescriptorKind::Sampler,
            None => DescriptorKind::StorageBuffer,
            Some(t) if t.storage.is_none() && mode == graph_core::ir::AccessMode::Read => {
                DescriptorKind::SampledImage
            }
            Some(_) => DescriptorKind::StorageImage,
        })
        .collect()
}

/// The layout a texture is kept in while the native command buffers bind it, and the wgpu state that is:
/// `GENERAL` (`STORAGE_READ_WRITE`) for a texture with storage usage, which kernels may write, else
/// `SHADER_READ_ONLY_OPTIMAL` (`RESOURCE`) for one kernels only read sampled.
fn native_layout(texture: &wgpu::Texture) -> ImageLayout {
    match texture
        .usage()
        .contains(wgpu::TextureUsages::STORAGE_BINDING)
    {
        true => ImageLayout::General,
        false => ImageLayout::ShaderReadOnly,
    }
}

/// wgpu's state for a texture in `layout`: what `transition_resources` puts it in before a segment.
fn wgpu_state(layout: ImageLayout) -> wgpu::TextureUses {
    match layout {
        ImageLayout::General => wgpu::TextureUses::STORAGE_READ_WRITE,
        ImageLayout::ShaderReadOnly => wgpu::TextureUses::RESOURCE,
    }
}

/// What the command buffers were recorded with.
#[derive(Debug)]
struct Recording {
    /// The push constants (none with a parameter buffer).
    push: Vec<u8>,
    workgroups: Vec<[u32; 3]>,
    /// With timestamps, for one profiled replay.
    profiled: bool,
}

/// The uniform buffer the kernels read the parameters from, and the values last written to it. An update's
/// replay takes the one of the replay before (a clone of the same buffer).
#[derive(Debug, Clone)]
struct ParamsBuffer {
    buffer: wgpu::Buffer,
    written: Option<Vec<u8>>,
}

impl ParamsBuffer {
    fn new(gpu: &Gpu, size: u32) -> Self {
        // Mapped at creation so that wgpu zeroes it, padding included: no byte is uninitialised when the
        // command buffers, which wgpu does not see, first read it.
        let buffer = gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("graph-runtime native params"),
            size: u64::from(size.next_multiple_of(16)),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: true,
        });
        buffer.unmap();
        ParamsBuffer {
            buffer,
            written: None,
        }
    }

    /// Queues a write of `params` when they differ from the last: wgpu submits it ahead of the replay's
    /// command buffers, whose first barrier waits for it; the last barrier of the replay before orders its
    /// reads ahead of it.
    fn write(&mut self, queue: &GpuQueue, params: &[u8]) {
        if self.written.as_deref() != Some(params) {
            queue.write_buffer(&self.buffer, 0, params);
            self.written = Some(params.to_vec());
        }
    }
}

/// Why a graph replays through the portable recorder, if it must. (Every dispatch of a program is a kernel of
/// its table, so every program's segments can be recorded.)
fn ineligible(
    desc: &GraphDesc,
    storage: ParamsStorage,
    params_in: NativeParamsIn,
) -> Option<&'static str> {
    if storage != ParamsStorage::Immediates
        && desc.params.size > 0
        && params_in == NativeParamsIn::PushConstants
    {
        return Some("its parameters cannot be push constants on this device");
    }
    None
}

impl NativeReplay {
    /// The native replay of `program` (compiled from `desc`, the fused description), when `wanted`, the
    /// device and the graph allow it; `Ok(None)` means the portable recorder. `storage` is where
    /// the portable recorder's kernels read the parameters: a uniform buffer there means one here too.
    /// `previous` is the replay an update replaces: its pipelines of unchanged code, its descriptor sets over
    /// unchanged buffers, its parameter buffer and its marker are taken rather than made.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        gpu: &Gpu,
        desc: &GraphDesc,
        program: &Program,
        bound: &BoundBuffers,
        gates: Option<&Gates>,
        storage: ParamsStorage,
        wanted: Choice,
        params_in: NativeParamsIn,
        previous: Option<&NativeReplay>,
    ) -> Result<Option<Self>, Error> {
        let refuse = |why: String| match wanted {
            Choice::Require => Err(Error::Unsupported {
                graph: desc.name.to_string(),
                what: format!(
                    "the native recorder was asked for ({RECORDER_ENV}=native or use_native_recorder), but {why}"
                ),
            }),
            _ => {
                tracing::debug!(graph = %desc.name, "portable recorder: {why}");
                Ok(None)
            }
        };
        if wanted == Choice::Portable {
            return Ok(None);
        }
        if let Some(why) = ineligible(desc, storage, params_in) {
            return refuse(why.to_string());
        }
        let size = desc.params.size;
        let params_storage = match params_in {
            NativeParamsIn::PushConstants => ParamsStorage::Immediates,
            NativeParamsIn::Buffer => ParamsStorage::Uniform,
        };
        let params = match params_in {
            _ if size == 0 => None,
            NativeParamsIn::Buffer => Some(
                previous
                    .and_then(|p| p.params.clone())
                    .unwrap_or_else(|| ParamsBuffer::new(gpu, size)),
            ),
            NativeParamsIn::PushConstants => None,
        };
        let native_params = match (&params, size) {
            (_, 0) => NativeParams::None,
            (Some(p), _) => NativeParams::Uniform(p.buffer.clone()),
            (None, size) => NativeParams::PushConstants(size),
        };
        let shared = match previous.map(|p| &p.shared) {
            Some(shared) if shared.fits(&native_params) => shared.clone(),
            _ => match NativeShared::new(gpu.device(), &native_params) {
                None => return refuse("the device is not a Vulkan device".to_string()),
                Some(Err(e)) => return refuse(e),
                Some(Ok(shared)) => shared,
            },
        };
        // The pipelines of the replay before, where they were made with these layouts.
        let old = previous
            .filter(|p| Arc::ptr_eq(&p.shared, &shared))
            .map(|p| &p.pipelines);
        let mut pipelines = Pipelines {
            shared: &shared,
            old,
            made: HashMap::new(),
            failed: HashMap::new(),
            built: 0,
        };
        {
            let _span = tracing::debug_span!("native pipelines").entered();
            let used = program.nodes.iter().flatten().map(|node| node.kernel);
            let mut kernels: Vec<usize> = used.collect();
            kernels.sort_unstable();
            kernels.dedup();
            pipelines.prepare(kernels.into_iter().map(|k| {
                let entry = &program.kernels[k];
                Pipelines::key(
                    entry.module(params_storage),
                    &entry.entry,
                    &entry.constant_pairs(),
                    descriptor_kinds(entry),
                )
            }));
        }
        let mut native_kernels = Vec::new();
        let mut checks = Checks::new(program, previous.and_then(|p| p.checked_counts.clone()));
        // Each entry of the kernel table once, made for the storage this recorder reads parameters from.
        let mut entries: Vec<Option<Arc<NativePipeline>>> = vec![None; program.kernels.len()];
        for (n, node) in program.nodes.iter().enumerate() {
            let Some(node) = node else {
                continue;
            };
            let entry = &program.kernels[node.kernel];
            let pipeline = match &entries[node.kernel] {
                Some(pipeline) => pipeline.clone(),
                None => {
                    let kinds = descriptor_kinds(entry);
                    let source = entry.module(params_storage);
                    match pipelines.get(source, &entry.entry, &entry.constant_pairs(), kinds) {
                        Ok(pipeline) => entries[node.kernel].insert(pipeline).clone(),
                        Err(e) => return refuse(format!("kernel `{}` {e}", desc.nodes[n].name)),
                    }
                }
            };
            let kinds = descriptor_kinds(entry);
            let mut bindings = Vec::with_capacity(node.buffers.len());
            for (i, &b) in node.buffers.iter().enumerate() {
                let sampler = entry.samplers.get(i).copied().flatten();
                let view = bound.views.get(b as usize).cloned().flatten();
                let texture = bound.textures.get(b as usize).and_then(Option::as_ref);
                bindings.push(match (sampler, view, texture) {
                    (Some(ty), _, _) => NativeBinding::Sampler(ty),
                    (None, Some(view), Some(texture)) => NativeBinding::Image {
                        view,
                        kind: match kinds.get(i) {
                            Some(DescriptorKind::SampledImage) => ImageKind::Sampled,
                            _ => ImageKind::Storage,
                        },
                        layout: native_layout(texture.wgpu()),
                    },
                    _ => NativeBinding::Buffer(bound.buffers[b as usize].clone()),
                });
            }
            // A gated member dispatches from its gate's arguments, whatever its own size says; counts a
            // kernel wrote, from their checked copy.
            let gated = gates.and_then(|g| {
                let slot = program.gates.slot(n as u32)?;
                Some((g.args().clone(), u64::from(slot) * 12))
            });
            let indirect = match (gated, &node.size) {
                (Some(gated), _) => Some(gated),
                (None, &DispatchSize::Indirect(b)) => {
                    let Some(counts) = bound.buffers.get(b as usize) else {
                        return refuse(format!(
                            "node `{}` reads no bound counts",
                            desc.nodes[n].name
                        ));
                    };
                    // Indirect counts are never placed in the heap: the slice is the whole buffer.
                    let (check, at) =
                        match checks.add(gpu, n as u32, &counts.buffer, &mut pipelines) {
                            Ok(check) => check,
                            Err(e) => return refuse(e),
                        };
                    native_kernels.push(check);
                    Some(at)
                }
                _ => None,
            };
            native_kernels.push(NativeKernel {
                of: KernelOf::Node(n as u32),
                pipeline,
                bindings,
                indirect,
            });
        }
        for (block, gate) in program.gates.blocks.iter().enumerate() {
            let block = block as u32;
            let (Some(gate), Some(buffers)) = (gate, gates.and_then(|g| g.buffers(block))) else {
                continue;
            };
            let constants = gate_constants(*gate, program.gates.count * 3);
            let kinds = vec![DescriptorKind::StorageBuffer; buffers.len()];
            let pipeline = match pipelines.get(GATE_WGSL.to_string(), "main", &constants, kinds) {
                Ok(pipeline) => pipeline,
                Err(e) => return refuse(format!("a gate {e}")),
            };
            native_kernels.push(NativeKernel {
                of: KernelOf::Gate(block, gate.workgroups),
                pipeline,
                bindings: buffers
                    .iter()
                    .map(|&b| NativeBinding::Buffer(Slice::whole(b.clone())))
                    .collect(),
                indirect: None,
            });
        }
        // Each texture the kernels bind, once, and the state of the layout its bindings were given.
        let kernel_textures = texture_inits(program, bound);
        // Layouts are moved for whole textures: each once, whatever parts of it the kernels bind.
        let mut textures: Vec<(wgpu::Texture, wgpu::TextureUses)> = Vec::new();
        for t in &kernel_textures {
            if !textures.iter().any(|(seen, _)| *seen == t.texture) {
                textures.push((t.texture.clone(), wgpu_state(native_layout(&t.texture))));
            }
        }
        let segments = program.segments.len();
        let graph = match NativeGraph::new(
            &shared,
            (desc.nodes.len(), desc.blocks.len()),
            native_kernels,
            native_params,
            segments,
            previous.map(|p| &p.graph),
            gpu.queue().direct().cloned(),
        ) {
            Ok(graph) => graph,
            Err(e) => return refuse(e),
        };
        let marker = match previous.map(|p| p.marker.clone()) {
            Some(marker) => marker,
            None => match Marker::new(gpu.device()) {
                None => return refuse("the device is not a Vulkan device".to_string()),
                Some(Err(e)) => return refuse(e),
                Some(Ok(marker)) => Arc::new(marker),
            },
        };
        let mut init_pipeline =
            previous.map_or_else(|| InitPipeline::new(gpu), |p| p.init_pipeline.clone());
        // wgpu saw the buffers an earlier init pass bound (once it was submitted): only new ones need one. (A
        // wgpu handle hashes and compares by its identity, which never changes.)
        #[allow(clippy::mutable_key_type)]
        let seen: HashSet<&wgpu::Buffer> = previous
            .filter(|p| p.init.is_none())
            .map(|p| p.bound.iter().collect())
            .unwrap_or_default();
        // Each buffer once: the placed graph-owned buffers are ranges of one heap.
        let mut distinct: Vec<&wgpu::Buffer> = Vec::new();
        for slice in &bound.buffers {
            if !distinct.contains(&&slice.buffer) {
                distinct.push(&slice.buffer);
            }
        }
        let parts: Vec<(wgpu::Texture, crate::texture::Part)> = kernel_textures
            .iter()
            .map(|t| (t.texture.clone(), t.part))
            .collect();
        let init_textures: Vec<TextureInit> = kernel_textures
            .into_iter()
            .filter(|t| {
                !previous.filter(|p| p.init.is_none()).is_some_and(|p| {
                    p.parts
                        .iter()
                        .any(|(seen, part)| *seen == t.texture && *part == t.part)
                })
            })
            .collect();
        let (init, init_pipelines) = init_pipeline.pass(
            gpu,
            distinct.into_iter().filter(|b| !seen.contains(b)),
            &init_textures,
        );
        let built = NativeBuilt {
            pipelines: pipelines.built,
            sets: graph.sets_built,
            init_pipelines,
        };
        // A textured graph's segments follow wgpu's transition of its textures: never submitted alone.
        let kernels_alone = params.is_none() && program.segments_alone() && textures.is_empty();
        let mut direct_segments = vec![false; program.segments.len()];
        for partition in &program.partitions {
            if let Partition::Gpu(steps) = partition
                && steps.iter().all(|s| matches!(s, Step::Segment(_)))
            {
                for step in steps {
                    if let &Step::Segment(index) = step
                        && let Some(direct) = direct_segments.get_mut(index)
                    {
                        *direct = true;
                    }
                }
            }
        }
        Ok(Some(NativeReplay {
            graph,
            pipelines: pipelines.made,
            shared,
            init_pipeline,
            init,
            bound: bound.buffers.iter().map(|s| s.buffer.clone()).collect(),
            checked_counts: checks.buffer,
            params,
            recorded: None,
            has_dispatches: Vec::new(),
            direct_segments,
            marker,
            kernels_alone,
            textures,
            parts,
            built,
        }))
    }

    /// Whether a replay now calls no wgpu function: submitted directly, every partition kernels alone, no
    /// parameter buffer to write, no init pass and no queued write to submit first (the caller also knows
    /// of no write of its own to queue).
    pub(crate) fn calls_no_wgpu(&self, gpu: &Gpu) -> bool {
        self.kernels_alone
            && self.init.is_none()
            && gpu.queue().direct().is_some()
            && !gpu.queue().has_queued_writes()
    }

    /// Writes `params` to the parameter buffer, or, as push constants, records the command buffers again if
    /// they differ from what they hold; records them again if `workgroups` differ, or if they were recorded
    /// for a profile. A recording waits for the replays that execute the command buffers to finish.
    pub(crate) fn prepare(
        &mut self,
        gpu: &Gpu,
        program: &Program,
        workgroups: &[[u32; 3]],
        params: &[u8],
    ) -> Result<(), Error> {
        let push = self.write_params(gpu, params);
        let same = self
            .recorded
            .as_ref()
            .is_some_and(|r| !r.profiled && r.push == push && r.workgroups == workgroups);
        if same {
            return Ok(());
        }
        self.record(gpu, program, workgroups, push, false)?;
        Ok(())
    }

    /// Records the command buffers with a timestamp before each level and after each dispatch, for the next
    /// replay to run (the one after records them again without). Returns which queries time each dispatch.
    pub(crate) fn prepare_profiled(
        &mut self,
        gpu: &Gpu,
        program: &Program,
        workgroups: &[[u32; 3]],
        params: &[u8],
    ) -> Result<Vec<TimedDispatch>, Error> {
        let push = self.write_params(gpu, params);
        self.record(gpu, program, workgroups, push, true)
    }

    /// The timestamps of a profiled replay, in ticks, once it has finished: `count` queries from the first.
    pub(crate) fn read_timestamps(&self, count: u32) -> Result<Vec<u64>, Error> {
        self.graph.read_queries(count).map_err(Error::Gpu)
    }

    /// Writes `params` to the parameter buffer (when they are in one) and returns the push constants the
    /// command buffers must hold: `params`, or nothing with a parameter buffer.
    fn write_params<'p>(&mut self, gpu: &Gpu, params: &'p [u8]) -> &'p [u8] {
        match &mut self.params {
            Some(buffer) => {
                buffer.write(gpu.queue(), params);
                &[]
            }
            None => params,
        }
    }

    /// Records every segment's command buffer, after the replays that execute them have finished;
    /// `profiled`: with timestamps, whose queries it returns.
    fn record(
        &mut self,
        gpu: &Gpu,
        program: &Program,
        workgroups: &[[u32; 3]],
        push: &[u8],
        profiled: bool,
    ) -> Result<Vec<TimedDispatch>, Error> {
        // Only this graph's own last replay (`wait_for(None)` would wait for every graph's work).
        if let Some(last) = self.graph.last.take() {
            gpu.wait_for(Some(last.into()))?;
        }
        self.graph.wait_direct().map_err(Error::Wait)?;
        self.recorded = None;
        let segments = recorded_segments(program, workgroups);
        let mut next_query = None;
        if profiled {
            let queries = segments.iter().map(|levels| queries_of(levels)).sum();
            self.graph.reserve_queries(queries).map_err(Error::Gpu)?;
            next_query = Some(0);
        }
        self.has_dispatches = segments
            .iter()
            .map(|levels| levels.iter().any(|(_, steps)| !steps.is_empty()))
            .collect();
        let mut timed = Vec::new();
        for (index, levels) in segments.iter().enumerate() {
            timed.extend(
                self.graph
                    .record(
                        index,
                        levels,
                        push,
                        next_query,
                        self.direct_segments.get(index).copied().unwrap_or(false),
                    )
                    .map_err(Error::Gpu)?,
            );
            next_query = next_query.map(|first| first + queries_of(levels));
        }
        self.recorded = Some(Recording {
            push: push.to_vec(),
            workgroups: workgroups.to_vec(),
            profiled,
        });
        Ok(timed)
    }

    /// The recorder of one replay, whose copies, uploads and readbacks copy between `transfers`.
    pub(crate) fn recorder<'a>(
        &'a mut self,
        gpu: &'a Gpu,
        transfers: TransferBuffers<'a>,
    ) -> NativeRecorder<'a> {
        // Direct submission where the device has it, unless an init pass must go first: that replay goes
        // through wgpu, the init pass in its first submission. (Submitted on its own here, ahead of the
        // replay, it would make a graph that starts with host tasks wait for other graphs' work before them:
        // Mesa's llvmpipe blocks a wgpu submission until the one before it can run.) A partition with
        // readbacks goes through wgpu too, which maps them after its submission: see `last_wgpu`.
        let direct =
            gpu.queue().direct().is_some() && self.init.is_none() && self.textures.is_empty();
        NativeRecorder {
            gpu,
            native: self,
            transfers,
            direct,
            unplaced: Vec::new(),
            recorded: Vec::new(),
            tail: None,
            steps: None,
            marked: None,
            last_wgpu: None,
            lost: false,
        }
    }
}

/// The check of counts a kernel wrote for an indirect dispatch, as wgpu's portable recorder checks them: one
/// invocation copies the three counts into a buffer of the native recorder's own, or zeros if any is past the
/// device's limit per dimension (past it, a dispatch is undefined behaviour); the dispatch reads the copy.
const CHECK_WGSL: &str = "
@group(0) @binding(0) var<storage, read> counts: array<u32>;
@group(0) @binding(1) var<storage, read_write> checked: array<u32>;
override first: u32 = 0u;
override limit: u32 = 65535u;
@compute @workgroup_size(1)
fn main() {
    let c = vec3<u32>(counts[0], counts[1], counts[2]);
    let ok = all(c <= vec3<u32>(limit));
    checked[first] = select(0u, c.x, ok);
    checked[first + 1u] = select(0u, c.y, ok);
    checked[first + 2u] = select(0u, c.z, ok);
}
";

/// The checked copies of a graph's GPU-written indirect counts: three words per such node, in one buffer.
struct Checks {
    /// Made at the first node that needs it, with room for every such node (or the replay before's, of
    /// that size: only the checks write it, before each read, so replays may share it).
    buffer: Option<wgpu::Buffer>,
    /// The replay before's buffer.
    previous: Option<wgpu::Buffer>,
    nodes: u32,
    next: u32,
}

impl Checks {
    fn new(program: &Program, previous: Option<wgpu::Buffer>) -> Self {
        let nodes = program
            .nodes
            .iter()
            .flatten()
            .filter(|node| matches!(node.size, DispatchSize::Indirect(_)))
            .count() as u32;
        Checks {
            buffer: None,
            previous,
            nodes,
            next: 0,
        }
    }

    /// The check kernel of node `node`, whose counts are in `counts`, and where its dispatch reads the
    /// checked copy.
    fn add(
        &mut self,
        gpu: &Gpu,
        node: u32,
        counts: &wgpu::Buffer,
        pipelines: &mut Pipelines<'_>,
    ) -> Result<(NativeKernel, (wgpu::Buffer, u64)), String> {
        let nodes = self.nodes.max(1);
        let size = u64::from(nodes) * 12;
        let previous = self.previous.take().filter(|b| b.size() == size);
        let buffer = self
            .buffer
            .get_or_insert_with(|| {
                previous.unwrap_or_else(|| {
                    // Mapped at creation so that wgpu zeroes it; only the checks write it, before each read.
                    let buffer = gpu.device().create_buffer(&wgpu::BufferDescriptor {
                        label: Some("graph-runtime checked indirect counts"),
                        size,
                        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
                        mapped_at_creation: true,
                    });
                    buffer.unmap();
                    buffer
                })
            })
            .clone();
        let slot = self.next;
        self.next += 1;
        if slot >= nodes {
            return Err(format!("more indirect dispatches than the {nodes} counted"));
        }
        let limit = gpu.device().limits().max_compute_workgroups_per_dimension;
        let constants = [("first", f64::from(slot * 3)), ("limit", f64::from(limit))];
        let kinds = vec![DescriptorKind::StorageBuffer; 2];
        let pipeline = pipelines
            .get(CHECK_WGSL.to_string(), "main", &constants, kinds)
            .map_err(|e| format!("the check of indirect counts {e}"))?;
        let kernel = NativeKernel {
            of: KernelOf::Check(node),
            pipeline,
            bindings: vec![
                NativeBinding::Buffer(Slice::whole(counts.clone())),
                NativeBinding::Buffer(Slice::whole(buffer.clone())),
            ],
            indirect: None,
        };
        Ok((kernel, (buffer, u64::from(slot) * 12)))
    }
}

/// What each of the program's segments records, one command buffer each, for these workgroup counts: each
/// level's barrier where it has hazards (even a level left with no dispatch: its barrier may be the one
/// that orders the levels around it), its gates, and its dispatches but those of no workgroups.
fn recorded_segments(program: &Program, workgroups: &[[u32; 3]]) -> Vec<Vec<RecordedLevel>> {
    let recorded = |op: &Op| match *op {
        Op::Dispatch(node) => workgroups
            .get(node as usize)
            .filter(|counts| !counts.contains(&0))
            .map(|&counts| Recorded::Dispatch(node, counts)),
        Op::Gate(block) => Some(Recorded::Gate(block)),
    };
    program
        .segments
        .iter()
        .map(|segment| {
            segment
                .levels
                .iter()
                .map(|level| {
                    let steps = level.ops.iter().filter_map(recorded).collect();
                    (!level.hazards.is_empty(), steps)
                })
                .collect()
        })
        .collect()
}

/// SPIR-V of `source`'s entry point `entry`, from naga, with its override `constants` (a ranged fill's
/// bounds, a gate's words) and the options wgpu-hal's own Vulkan compilation uses on a device of `features`,
/// so that a kernel behaves the same on either recorder: buffer indices unchecked where the driver bounds them
/// (`robustBufferAccess2`), else clamped to the binding's last element (`Restrict`), and indices into arrays
/// of known size (workgroup and private arrays) always clamped. (`ReadZeroSkipWrite` has no atomics in
/// naga's SPIR-V writer.)
fn spirv(
    source: &str,
    entry: &str,
    constants: &[(&str, f64)],
    features: SpirvFeatures,
) -> Result<Vec<u32>, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.message().to_string())?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        graph_core::wgsl::CAPABILITIES,
    )
    .validate(&module)
    .map_err(|e| e.as_inner().to_string())?;
    let mut overrides = naga::back::PipelineConstants::default();
    for &(name, value) in constants {
        overrides.insert(name.to_string(), value);
    }
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        Some((naga::ShaderStage::Compute, entry)),
        &overrides,
    )
    .map_err(|e| e.to_string())?;
    let options = naga::back::spv::Options {
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: naga::proc::BoundsCheckPolicy::Restrict,
            buffer: if features.robust_buffer_access2 {
                naga::proc::BoundsCheckPolicy::Unchecked
            } else {
                naga::proc::BoundsCheckPolicy::Restrict
            },
            // A texel load past the texture is clamped into it, whatever the device's image robustness.
            image_load: naga::proc::BoundsCheckPolicy::Restrict,
            ..Default::default()
        },
        // A compute shader has no inputs or outputs of `f16` to store (its builtins are integers), so the
        // capability naga would otherwise declare for any `f16` type (`StorageInputOutput16`), which a device
        // may lack (lavapipe does), is not asked for.
        use_storage_input_output_16: false,
        // As wgpu does: the driver zeroes workgroup memory where it can (see `SpirvFeatures`).
        zero_initialize_workgroup_memory: if features.zero_init_workgroup {
            naga::back::spv::ZeroInitializeWorkgroupMemoryMode::Native
        } else {
            naga::back::spv::ZeroInitializeWorkgroupMemoryMode::Polyfill
        },
        ..Default::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: entry.to_string(),
    };
    naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline)).map_err(|e| e.to_string())
}

/// wgpu zeroes a buffer's uninitialised memory the first time it sees the buffer used, and it does not see
/// the native command buffers: the first replay binds every buffer once in a wgpu dispatch ahead of them, so
/// wgpu never zeroes later what they wrote. (Memory never written reads as zeros either way.) It is recorded
/// into the first replay's command buffer rather than submitted at bake: a submission at bake would wait
/// behind other graphs' work on a queue that runs submissions in order. After an update, the first replay
/// binds the buffers new to it.
#[derive(Debug)]
struct InitPass {
    pipeline: wgpu::ComputePipeline,
    groups: Vec<wgpu::BindGroup>,
    /// Per texture, a pipeline that binds it as a kernel of the graph does, and its bind group.
    textures: Vec<(wgpu::ComputePipeline, wgpu::BindGroup)>,
}

/// A texture the init pass binds (wgpu zeroes a texture's uninitialised texels too, the first time it sees
/// it bound), with the view, type and access of a kernel's binding of it, whose binding is valid.
struct TextureInit {
    texture: wgpu::Texture,
    /// The part of `texture` the kernels bind (a level, some layers): each part is bound once.
    part: crate::texture::Part,
    view: wgpu::TextureView,
    ty: graph_core::texture::TextureType,
    mode: graph_core::ir::AccessMode,
}

/// Each texture the program's kernels bind, once, as the first kernel that binds it does.
fn texture_inits(program: &Program, bound: &BoundBuffers) -> Vec<TextureInit> {
    let mut inits: Vec<TextureInit> = Vec::new();
    for node in program.nodes.iter().flatten() {
        let entry = &program.kernels[node.kernel];
        for (i, &b) in node.buffers.iter().enumerate() {
            let (Some(ty), Some(&mode)) =
                (entry.textures.get(i).copied().flatten(), entry.modes.get(i))
            else {
                continue;
            };
            let texture = bound.textures.get(b as usize).and_then(Option::as_ref);
            let view = bound.views.get(b as usize).cloned().flatten();
            let (Some(texture), Some(view)) = (texture, view) else {
                continue;
            };
            let (whole, part) = texture.key();
            if inits.iter().any(|t| t.texture == *whole && t.part == part) {
                continue;
            }
            inits.push(TextureInit {
                texture: whole.clone(),
                part,
                view,
                ty,
                mode,
            });
        }
    }
    inits
}

/// The init pass's pipelines, made once per baked graph (updates keep them): the buffers' one, and one per
/// texture binding the graph's textures have had (by the declared type and access, which give its layout), so that an update compiles none again
/// (two on the H100 took 2.2 ms of every update of the flagship's graph before they were kept).
#[derive(Debug, Clone)]
struct InitPipeline {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
    textures: HashMap<
        (graph_core::texture::TextureType, graph_core::ir::AccessMode),
        (wgpu::BindGroupLayout, wgpu::ComputePipeline),
    >,
}

impl InitPipeline {
    fn new(gpu: &Gpu) -> Self {
        let device = gpu.device();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("graph-runtime native init"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("graph-runtime native init"),
            source: wgpu::ShaderSource::Wgsl(
                "@group(0) @binding(0) var<storage, read_write> b: array<u32>;\n\
                 @compute @workgroup_size(1) fn main() { _ = arrayLength(&b); }"
                    .into(),
            ),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("graph-runtime native init"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        InitPipeline {
            layout,
            pipeline,
            textures: HashMap::new(),
        }
    }

    /// The pass that binds `buffers` (those a shader may bind) and `textures` (`None` when there are none),
    /// and how many pipelines it compiled for them.
    fn pass<'b>(
        &mut self,
        gpu: &Gpu,
        buffers: impl Iterator<Item = &'b wgpu::Buffer>,
        textures: &[TextureInit],
    ) -> (Option<InitPass>, usize) {
        let groups: Vec<wgpu::BindGroup> = buffers
            .filter(|b| b.usage().contains(wgpu::BufferUsages::STORAGE) && b.size() >= 4)
            .map(|buffer| {
                gpu.device().create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &self.layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: buffer.as_entire_binding(),
                    }],
                })
            })
            .collect();
        let mut compiled = 0;
        let textures: Vec<(wgpu::ComputePipeline, wgpu::BindGroup)> = textures
            .iter()
            .map(|t| {
                let (layout, pipeline) = self.textures.entry((t.ty, t.mode)).or_insert_with(|| {
                    compiled += 1;
                    texture_init_pipeline(gpu, t)
                });
                let group = gpu.device().create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout,
                    entries: &[wgpu::BindGroupEntry {
                        binding: 0,
                        resource: wgpu::BindingResource::TextureView(&t.view),
                    }],
                });
                (pipeline.clone(), group)
            })
            .collect();
        let pass = (!groups.is_empty() || !textures.is_empty()).then(|| InitPass {
            pipeline: self.pipeline.clone(),
            groups,
            textures,
        });
        (pass, compiled)
    }
}

/// A one-invocation pipeline that binds `t` as its kernel does (its WGSL written from the parsed type,
/// [`graph_core::texture::TextureType::binding_wgsl`]), and its bind group layout.
fn texture_init_pipeline(
    gpu: &Gpu,
    t: &TextureInit,
) -> (wgpu::BindGroupLayout, wgpu::ComputePipeline) {
    let device = gpu.device();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("graph-runtime native texture init"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: crate::bake::texture_binding(&t.ty, t.mode),
            count: None,
        }],
    });
    let source = format!(
        "@group(0) @binding(0) var t: {};\n@compute @workgroup_size(1) fn main() {{ _ = textureDimensions(t); }}",
        t.ty.binding_wgsl(t.mode)
    );
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("graph-runtime native texture init"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("graph-runtime native texture init"),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    (layout, pipeline)
}

impl InitPass {
    fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&self.pipeline);
        for group in &self.groups {
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        for (pipeline, group) in &self.textures {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
    }
}

/// One replay through the native command buffers: each GPU partition one submission of wgpu command
/// buffers, one per segment that executes the segment's recorded command buffer, and between them one per run
/// of copies, uploads, readbacks and interop tasks, recorded by wgpu. The last command buffer of each
/// submission ends with the marker's write, which waiting for the submission reads. With direct submission,
/// a partition of segments alone (nothing for wgpu to record) is submitted to Vulkan by the runtime, its
/// segments' primary command buffers in one submission.
pub(crate) struct NativeRecorder<'a> {
    gpu: &'a Gpu,
    native: &'a mut NativeReplay,
    transfers: TransferBuffers<'a>,
    /// Whether a partition of segments alone is submitted directly.
    direct: bool,
    /// The partition's segments so far that no wgpu encoder executes yet (with `direct`, until wgpu records
    /// something, or the partition ends with segments alone).
    unplaced: Vec<usize>,
    /// This partition's finished command buffers so far, in order.
    recorded: Vec<wgpu::CommandBuffer>,
    /// The encoder that executed the last segment, open until something follows it: the marker's write
    /// goes at its end when the partition ends there.
    tail: Option<wgpu::CommandEncoder>,
    /// The encoder of the copies, uploads, readbacks and interop tasks since the last segment.
    steps: Option<wgpu::CommandEncoder>,
    /// The marker value the last submission writes, when it writes one.
    marked: Option<u32>,
    /// The replay's last submission through wgpu, after which wgpu maps the readbacks it copied into.
    last_wgpu: Option<wgpu::SubmissionIndex>,
    /// wgpu had no Vulkan command buffer to execute a segment in.
    lost: bool,
}

impl NativeRecorder<'_> {
    /// Segment `segment`'s command buffer, executed from an encoder of its own (wgpu keeps an encoder used
    /// through its raw API to that API), after the steps recorded before it.
    fn add_segment(&mut self, segment: usize) {
        if !self
            .native
            .has_dispatches
            .get(segment)
            .copied()
            .unwrap_or(false)
        {
            return;
        }
        self.unplaced.push(segment);
        // Without direct submission, once wgpu recorded something in this partition, or for a segment of a
        // partition with other steps (whose command buffers are executed from wgpu's: a partition whose copy
        // a replay leaves out still has no direct submission of its own), at once.
        let direct_segment = self.native.direct_segments.get(segment).copied();
        if !self.direct
            || !direct_segment.unwrap_or(false)
            || !self.recorded.is_empty()
            || self.tail.is_some()
            || self.steps.is_some()
        {
            self.place();
        }
    }

    /// Executes the unplaced segments' command buffers from an encoder of their own (wgpu keeps an encoder
    /// used through its raw API to that API), after what was recorded before.
    fn place(&mut self) {
        if self.unplaced.is_empty() {
            return;
        }
        self.finish_open();
        // The textures into the layouts the command buffers bind them in, in a command buffer of wgpu's own
        // (an encoder keeps to one API, wgpu's or the raw one).
        if !self.native.textures.is_empty() {
            let mut transitions = self
                .gpu
                .device()
                .create_command_encoder(&Default::default());
            transitions.transition_resources(
                std::iter::empty(),
                self.native
                    .textures
                    .iter()
                    .map(|(texture, state)| wgpu::TextureTransition {
                        texture,
                        selector: None,
                        state: *state,
                    }),
            );
            self.recorded.push(transitions.finish());
        }
        let mut encoder = self
            .gpu
            .device()
            .create_command_encoder(&Default::default());
        for segment in std::mem::take(&mut self.unplaced) {
            if !self.native.graph.execute(&mut encoder, segment) {
                self.lost = true;
            }
        }
        self.tail = Some(encoder);
    }

    /// Finishes the open encoder (at most one of the two is open), in order after what was recorded before.
    fn finish_open(&mut self) {
        for open in [self.tail.take(), self.steps.take()].into_iter().flatten() {
            self.recorded.push(open.finish());
        }
    }

    /// The encoder of the copies, uploads, readbacks and interop tasks after the current segment.
    fn steps(&mut self) -> &mut wgpu::CommandEncoder {
        self.place();
        if let Some(tail) = self.tail.take() {
            self.recorded.push(tail.finish());
        }
        let device = self.gpu.device();
        self.steps
            .get_or_insert_with(|| device.create_command_encoder(&Default::default()))
    }

    /// The replay's last submission through wgpu: a wait for it maps the readbacks (which only wgpu's
    /// submissions copy into), also when a direct submission came after it.
    pub(crate) fn last_wgpu(&self) -> Option<wgpu::SubmissionIndex> {
        self.last_wgpu.clone()
    }

    /// The marker and the value the replay's last submission writes, if it wrote one: waiting for the
    /// replay reads it.
    pub(crate) fn marked(&self) -> Option<(Arc<Marker>, u32)> {
        self.marked.map(|value| (self.native.marker.clone(), value))
    }
}

impl Recorder for NativeRecorder<'_> {
    type Submitted = Work;

    fn begin(&mut self) {
        self.recorded.clear();
        self.unplaced.clear();
        self.tail = None;
        self.steps = None;
    }

    // Its barriers, gates and dispatches are in the command buffer recorded from it.
    fn segment(&mut self, index: usize, _: &Segment, _: &[[u32; 3]]) {
        self.add_segment(index);
    }

    fn copy(&mut self, src: u32, src_offset: u64, dst: u32, dst_offset: u64, bytes: u64) {
        let transfers = self.transfers;
        transfers.copy(self.steps(), (src, src_offset), (dst, dst_offset), bytes);
    }

    fn upload(&mut self, t: Transfer) {
        let transfers = self.transfers;
        transfers.upload(self.steps(), t);
    }

    fn readback(&mut self, t: Transfer) {
        let transfers = self.transfers;
        transfers.readback(self.steps(), t);
    }

    fn submit(&mut self) -> Result<Work, Error> {
        let alone = self.recorded.is_empty() && self.tail.is_none() && self.steps.is_none();
        // Segments stay unplaced only with direct submission (see `add_segment`).
        if alone && !self.unplaced.is_empty() {
            let segments = std::mem::take(&mut self.unplaced);
            self.marked = None;
            let graph = &mut self.native.graph;
            let value = self
                .gpu
                .queue()
                .submit_direct(|guard| graph.submit_direct(guard, &segments));
            return match value {
                Ok(value) => Ok(Work(WorkOf::Direct(value))),
                Err(e) => {
                    // Vulkan refuses a submission when the device is lost: report the loss if it is one.
                    self.gpu.poll_lost()?;
                    Err(Error::Gpu(e))
                }
            };
        }
        self.place();
        // The marker's write ends the segment's encoder, or one of its own after wgpu's steps (wgpu keeps an
        // encoder to one API, raw or its own).
        let mut last = match (self.tail.take(), self.steps.take()) {
            (Some(tail), _) => tail,
            (None, steps) => {
                if let Some(steps) = steps {
                    self.recorded.push(steps.finish());
                }
                self.gpu
                    .device()
                    .create_command_encoder(&Default::default())
            }
        };
        self.marked = self.native.marker.record(&mut last);
        self.lost |= self.marked.is_none();
        self.recorded.push(last.finish());
        if self.lost {
            // Only an encoder of a device that is gone has no command buffer: the device is lost, for this
            // replay and everything after, as wgpu reports it once it notices.
            self.gpu.poll_lost()?;
            self.gpu.mark_lost(
                "it was destroyed or lost: wgpu has no command buffer to record into".into(),
            );
            self.gpu.check_lost()?;
        }
        // The first replay's init pass goes ahead, in a command buffer of its own.
        let init = self.native.init.take().map(|init| {
            let mut encoder = self
                .gpu
                .device()
                .create_command_encoder(&Default::default());
            init.record(&mut encoder);
            encoder.finish()
        });
        let index = self
            .gpu
            .queue()
            .submit(init.into_iter().chain(self.recorded.drain(..)));
        self.native.marker.submitted(index.clone());
        self.native.graph.last = Some(index.clone());
        self.last_wgpu = Some(index.clone());
        Ok(index.into())
    }

    fn wait(&mut self, submitted: Work) -> Result<(), Error> {
        // The loop waits for the partition it submitted last, whose marker value this is (if it went through
        // wgpu).
        match (self.marked.take(), &submitted.0) {
            (Some(value), WorkOf::Wgpu(_)) if self.native.marker.wait(value) => {
                self.gpu.check_lost()
            }
            _ => self.gpu.wait_for(Some(submitted)),
        }
    }

    fn to_await(&mut self, submitted: Work) -> Option<Work> {
        // Awaited through wgpu's fence or the timeline, not the marker.
        self.marked = None;
        Some(submitted)
    }

    /// The encoder of the steps after the current segment.
    fn with_encoder(
        &mut self,
        record: &mut dyn FnMut(&mut wgpu::CommandEncoder) -> Result<(), Error>,
    ) -> Result<(), Error> {
        record(self.steps())
    }
}
