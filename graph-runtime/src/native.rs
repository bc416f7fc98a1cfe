//! The one place the runtime calls a native API directly, through wgpu's hal interop. Every `unsafe` block
//! of the crate is here, each with the invariant it relies on.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use ash::vk;

use crate::profile::TimedDispatch;
use crate::queue::{DirectOn, OrderingFault};
use crate::slice::Slice;

/// The validation-layer message ID of the error [`plant_invalid_buffer`] plants.
pub(crate) const PLANTED_VUID: &str = "VUID-VkBufferCreateInfo-usage";

/// Creates and destroys a Vulkan buffer with no usage flags: invalid usage by design
/// (`VUID-VkBufferCreateInfo-usage-requiredbitmask`), which the validation layer reports inside the call. It
/// proves that validation mode really validates. Returns `false`, doing nothing, when `device` is not a
/// Vulkan device.
pub(crate) fn plant_invalid_buffer(device: &wgpu::Device) -> bool {
    // SAFETY: `as_hal` lets us use the hal device as long as we keep wgpu's invariants: we create one buffer
    // of our own, which wgpu never sees, and destroy it before the guard is dropped; no handle outlives this
    // function.
    let Some(hal) = (unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }) else {
        return false;
    };
    let raw = hal.raw_device();
    let info = vk::BufferCreateInfo::default()
        .size(4)
        .usage(vk::BufferUsageFlags::empty())
        .sharing_mode(vk::SharingMode::EXCLUSIVE);
    // SAFETY: `raw` is the live VkDevice behind `hal`, which stays borrowed for both calls; `info` is fully
    // initialised with no extension chain. The empty usage is the planted mistake: the layer reports it, and
    // drivers create an ordinary buffer object, never bound to memory, which is destroyed at once and used by
    // nothing in between (so no queue can be using it).
    unsafe {
        if let Ok(buffer) = raw.create_buffer(&info, None) {
            raw.destroy_buffer(buffer, None);
        }
    }
    true
}

/// The Vulkan buffer behind `buffer`, to record into a descriptor set: the caller keeps `buffer` alive as long
/// as the set.
fn raw_buffer(buffer: &wgpu::Buffer) -> Result<vk::Buffer, String> {
    // SAFETY: the hal buffer is only read for its handle, while `buffer` (and so the handle) is alive; the
    // caller's set keeps the buffer alive (`NativeGraph`'s invariants).
    unsafe { buffer.as_hal::<wgpu::hal::api::Vulkan>() }
        .map(|b| unsafe { b.raw_handle() })
        .ok_or_else(|| "a bound buffer is not a Vulkan buffer".to_string())
}

/// Records a global memory barrier: what `src` stage and access did before, made visible to `dst` after.
///
/// # Safety
///
/// `cb` is a command buffer of `raw` in the recording state.
unsafe fn memory_barrier(
    raw: &ash::Device,
    cb: vk::CommandBuffer,
    (src_stage, src): (vk::PipelineStageFlags, vk::AccessFlags),
    (dst_stage, dst): (vk::PipelineStageFlags, vk::AccessFlags),
) {
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(src)
        .dst_access_mask(dst)];
    // SAFETY: `cb` is recording (the caller's contract); a plain memory barrier names no resource.
    unsafe {
        raw.cmd_pipeline_barrier(
            cb,
            src_stage,
            dst_stage,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        )
    }
}

/// A Vulkan error as words, for the runtime's errors.
fn vk_err(what: &'static str) -> impl Fn(vk::Result) -> String {
    move |e| format!("Vulkan: {what}: {e}")
}

/// One level of a recording: whether a barrier goes first (the level has hazards), then its steps.
pub(crate) type RecordedLevel = (bool, Vec<Recorded>);

/// A step of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recorded {
    /// Node `.0`'s kernel, over these workgroups (or from its indirect arguments).
    Dispatch(u32, [u32; 3]),
    /// Block `.0`'s gate: its members' indirect arguments, zeros unless its flag is set.
    Gate(u32),
}

/// How many timestamp queries a profiled recording of `levels` writes: one per level with dispatches, one per
/// dispatch.
pub(crate) fn queries_of(levels: &[RecordedLevel]) -> u32 {
    levels
        .iter()
        .map(|(_, steps)| {
            let dispatches = steps
                .iter()
                .filter(|s| matches!(s, Recorded::Dispatch(..)))
                .count() as u32;
            if dispatches == 0 { 0 } else { 1 + dispatches }
        })
        .sum()
}

/// A Vulkan buffer and the byte offset of three `u32` workgroup counts in it.
type IndirectArgs = (vk::Buffer, u64);

/// One dispatch of a recording: a pipeline over its descriptor set, over `counts` workgroups or from
/// `indirect`; `writes_args` for a gate or a check, whose output later dispatches read as indirect counts.
struct Run {
    pipeline: usize,
    set: vk::DescriptorSet,
    indirect: Option<IndirectArgs>,
    counts: [u32; 3],
    writes_args: bool,
}

impl Run {
    fn writing_args(pipeline: usize, set: vk::DescriptorSet, counts: [u32; 3]) -> Self {
        Run {
            pipeline,
            set,
            indirect: None,
            counts,
            writes_args: true,
        }
    }
}

/// Where a kernel of a [`NativeGraph`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KernelOf {
    /// A node's, by index in the program (the fused description's).
    Node(u32),
    /// A block's gate, over this many workgroups.
    Gate(u32, u32),
    /// The check of a node's indirect counts, which a kernel wrote: one invocation, ahead of the node.
    Check(u32),
}

/// What a binding of a kernel's descriptor set holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum NativeBinding {
    /// A range of a storage buffer.
    Buffer(Slice),
    /// A texture's view: bound as a storage image or a sampled image, in the layout the recorder puts the
    /// texture in before every segment that binds it (`transition_resources`), which it keeps throughout.
    Image {
        view: wgpu::TextureView,
        kind: ImageKind,
        layout: ImageLayout,
    },
    /// A sampler of this type, which the set's pool makes (wgpu lends no Vulkan handle of its own samplers)
    /// with what wgpu would make it with.
    Sampler(graph_core::texture::SamplerType),
}

/// How a kernel binds a texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ImageKind {
    Storage,
    Sampled,
}

/// The layout a texture is kept in while native command buffers use it: `GENERAL` (wgpu's
/// `STORAGE_READ_WRITE`), in which a kernel may read it sampled and read and write it as storage, or
/// `SHADER_READ_ONLY_OPTIMAL` (wgpu's `RESOURCE`) for a texture without storage usage, which kernels only
/// read sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ImageLayout {
    General,
    ShaderReadOnly,
}

impl ImageLayout {
    fn vk(self) -> vk::ImageLayout {
        match self {
            ImageLayout::General => vk::ImageLayout::GENERAL,
            ImageLayout::ShaderReadOnly => vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        }
    }
}

/// A descriptor's type in a set layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum DescriptorKind {
    StorageBuffer,
    StorageImage,
    SampledImage,
    Sampler,
}

impl DescriptorKind {
    fn vk(self) -> vk::DescriptorType {
        match self {
            DescriptorKind::StorageBuffer => vk::DescriptorType::STORAGE_BUFFER,
            DescriptorKind::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
            DescriptorKind::SampledImage => vk::DescriptorType::SAMPLED_IMAGE,
            DescriptorKind::Sampler => vk::DescriptorType::SAMPLER,
        }
    }
}

impl NativeBinding {
    pub(crate) fn kind(&self) -> DescriptorKind {
        match self {
            NativeBinding::Buffer(_) => DescriptorKind::StorageBuffer,
            NativeBinding::Image {
                kind: ImageKind::Storage,
                ..
            } => DescriptorKind::StorageImage,
            NativeBinding::Image {
                kind: ImageKind::Sampled,
                ..
            } => DescriptorKind::SampledImage,
            NativeBinding::Sampler(_) => DescriptorKind::Sampler,
        }
    }
}

/// The Vulkan image view behind `view`, to record into a descriptor set: the caller keeps `view` alive as
/// long as the set.
fn raw_view(view: &wgpu::TextureView) -> Result<vk::ImageView, String> {
    // SAFETY: the hal view is only read for its handle, while `view` (and so the handle) is alive; the
    // caller's set keeps the view alive (`SetPool`'s invariants).
    unsafe { view.as_hal::<wgpu::hal::api::Vulkan>() }
        .map(|v| unsafe { v.raw_handle() })
        .ok_or_else(|| "a bound texture view is not a Vulkan image view".to_string())
}

/// One kernel of a [`NativeGraph`]: its pipeline and what its descriptor set binds, binding by binding.
pub(crate) struct NativeKernel {
    pub of: KernelOf,
    /// Kernels of equal code share one pipeline, and an update's graph the graph's before it.
    pub pipeline: Arc<NativePipeline>,
    pub bindings: Vec<NativeBinding>,
    /// The buffer and byte offset of its three `u32` workgroup counts, for an indirect dispatch (a gated
    /// member's are its gate's arguments).
    pub indirect: Option<(wgpu::Buffer, u64)>,
}

/// How the kernels of a [`NativeGraph`] get the graph's parameters.
#[derive(Debug, Clone)]
pub(crate) enum NativeParams {
    /// The graph has none.
    None,
    /// Push constants of this many bytes, recorded into the command buffers: new values record them again.
    PushConstants(u32),
    /// A uniform buffer bound as set 1, binding 0 (the kernels' `@group(1) @binding(0)`), which the caller
    /// writes before a replay: new values record nothing.
    Uniform(wgpu::Buffer),
}

/// What the native graphs of one baked graph share, kept across its updates: the device, how the
/// parameters reach the kernels (push constants, or the parameter buffer's set layout), the storage-buffer
/// set layouts (one per number of bindings, so a descriptor set fits every pipeline of its count), and the
/// `VkPipelineCache` every pipeline is created through: where the driver keeps compiled code in it, a
/// pipeline that one update dropped and a later one needs again is not compiled from scratch (llvmpipe
/// showed no difference).
///
/// Invariants the `unsafe` blocks rely on:
/// - every Vulkan object here was made on `raw`, the `VkDevice` behind `device`, which this struct keeps
///   alive (a `wgpu::Device` clone);
/// - every [`NativePipeline`], [`SetPool`] and [`NativeGraph`] made with it holds an `Arc` of it, so its
///   layouts and cache are destroyed after every object made with them;
/// - what several threads may do at once through it (bake makes pipelines in parallel) is what Vulkan
///   allows: create objects on one device, and create pipelines through one `VkPipelineCache`, which
///   Vulkan synchronises itself as it is made without `VK_PIPELINE_CACHE_CREATE_EXTERNALLY_SYNCHRONIZED_BIT`;
///   the set layouts are behind a mutex.
pub(crate) struct NativeShared {
    device: wgpu::Device,
    raw: ash::Device,
    family: u32,
    /// The size of the push-constant range (0: parameters in a buffer, or none).
    push_size: u32,
    /// With a parameter buffer: its set layout, set 1 of every pipeline layout (else null).
    params_layout: vk::DescriptorSetLayout,
    /// Set 0's layouts, by their descriptors' types, binding by binding.
    set_layouts: Mutex<HashMap<Vec<DescriptorKind>, vk::DescriptorSetLayout>>,
    cache: vk::PipelineCache,
    /// What the device was opened with that decides how naga writes SPIR-V for it.
    spirv_features: SpirvFeatures,
}

impl std::fmt::Debug for NativeShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeShared")
            .field("push_size", &self.push_size)
            .finish_non_exhaustive()
    }
}

/// The features of a device that decide how naga writes SPIR-V for it, each decided as wgpu-hal decides it for
/// its own pipelines, so that a kernel behaves the same on either recorder.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SpirvFeatures {
    /// `shaderZeroInitializeWorkgroupMemory` (Vulkan 1.3, or `VK_KHR_zero_initialize_workgroup_memory`): the
    /// driver zeroes workgroup memory itself, as WGSL asks at the start of every workgroup. Where it does not,
    /// naga's SPIR-V has the workgroup's first invocation store zeros over every workgroup variable, element
    /// by element: for a tile of 1024 that was a thousand stores by one invocation in every workgroup, and
    /// llvmpipe took 10-20 s to compile such a kernel.
    pub(crate) zero_init_workgroup: bool,
    /// `robustBufferAccess2` (`VK_EXT_robustness2`): the driver reads zeros and drops writes outside a
    /// binding's range, so naga leaves buffer indices unchecked, as wgpu-hal does on such a device. Without
    /// it naga clamps each index to the binding (`Restrict`), as wgpu-hal does too.
    pub(crate) robust_buffer_access2: bool,
}

impl SpirvFeatures {
    /// What `device` was opened with: wgpu-hal enables both features wherever the physical device offers them
    /// (and their extensions where it needs them), so this asks the physical device the same way.
    fn of(device: &wgpu::hal::vulkan::Device) -> Self {
        // `vkGetPhysicalDeviceFeatures2` is Vulkan 1.1's: below that, neither.
        if device.shared_instance().instance_api_version() < vk::API_VERSION_1_1 {
            return Self::default();
        }
        let instance = device.shared_instance().raw_instance();
        let physical = device.raw_physical_device();
        let extensions = device.enabled_device_extensions();
        let zero_init_extension =
            extensions.contains(&ash::khr::zero_initialize_workgroup_memory::NAME);
        let robustness2_extension = extensions.contains(&ash::ext::robustness2::NAME);
        let mut zero_init = vk::PhysicalDeviceZeroInitializeWorkgroupMemoryFeatures::default();
        let mut robustness2 = vk::PhysicalDeviceRobustness2FeaturesEXT::default();
        // SAFETY: `physical` is the physical device `device` was opened on, of `instance` (Vulkan 1.1 or
        // later, checked above), both alive while `device` is; the queries only write into the structs
        // passed, which outlive the calls. The robustness2 struct is chained only where its extension is
        // enabled, as wgpu-hal chains it.
        let api_version = unsafe {
            let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut zero_init);
            if robustness2_extension {
                features = features.push_next(&mut robustness2);
            }
            instance.get_physical_device_features2(physical, &mut features);
            instance
                .get_physical_device_properties(physical)
                .api_version
        };
        Self {
            zero_init_workgroup: (api_version >= vk::API_VERSION_1_3 || zero_init_extension)
                && zero_init.shader_zero_initialize_workgroup_memory == vk::TRUE,
            robust_buffer_access2: robustness2_extension
                && robustness2.robust_buffer_access2 == vk::TRUE,
        }
    }
}

impl NativeShared {
    /// The shared objects of native graphs on `device` whose kernels get the parameters as `params` says;
    /// `None` when `device` is not a Vulkan device.
    pub(crate) fn new(
        device: &wgpu::Device,
        params: &NativeParams,
    ) -> Option<Result<Arc<Self>, String>> {
        // SAFETY: the hal device is only read here (its raw handle and queue family), while `device` is alive;
        // the cloned `ash::Device` is a function table over the same `VkDevice`, which `NativeShared` keeps
        // alive with a `wgpu::Device` clone (see the struct's invariants).
        let (raw, family, spirv_features) = {
            let hal = unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }?;
            (
                hal.raw_device().clone(),
                hal.queue_family_index(),
                SpirvFeatures::of(&hal),
            )
        };
        let mut shared = NativeShared {
            device: device.clone(),
            raw,
            family,
            spirv_features,
            push_size: match params {
                NativeParams::PushConstants(size) => *size,
                _ => 0,
            },
            params_layout: vk::DescriptorSetLayout::null(),
            set_layouts: Mutex::new(HashMap::new()),
            cache: vk::PipelineCache::null(),
        };
        // On an error `Drop` destroys what was made.
        Some(shared.make(params).map(|()| Arc::new(shared)))
    }

    fn make(&mut self, params: &NativeParams) -> Result<(), String> {
        // SAFETY: `self.raw` is a live device (struct invariant); the create-infos are fully initialised and
        // borrow data alive for the calls; each object is stored at once for `Drop`.
        unsafe {
            self.cache = self
                .raw
                .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
                .map_err(vk_err("pipeline cache"))?;
            if matches!(params, NativeParams::Uniform(_)) {
                let binding = [vk::DescriptorSetLayoutBinding::default()
                    .binding(0)
                    .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)];
                self.params_layout = self
                    .raw
                    .create_descriptor_set_layout(
                        &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
                        None,
                    )
                    .map_err(vk_err("parameter set layout"))?;
            }
        }
        Ok(())
    }

    /// The device's features that decide how naga writes SPIR-V for it.
    pub(crate) fn spirv_features(&self) -> SpirvFeatures {
        self.spirv_features
    }

    /// Whether kernels that get the parameters as `params` says fit these layouts.
    pub(crate) fn fits(&self, params: &NativeParams) -> bool {
        let uniform = self.params_layout != vk::DescriptorSetLayout::null();
        match params {
            NativeParams::None => !uniform && self.push_size == 0,
            NativeParams::PushConstants(size) => !uniform && self.push_size == *size,
            NativeParams::Uniform(_) => uniform,
        }
    }

    /// The set layout of descriptors of `kinds`, binding by binding, made the first time it is asked for.
    fn set_layout(&self, kinds: &[DescriptorKind]) -> Result<vk::DescriptorSetLayout, String> {
        let mut layouts = self
            .set_layouts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&layout) = layouts.get(kinds) {
            return Ok(layout);
        }
        let entries: Vec<vk::DescriptorSetLayoutBinding<'_>> = kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(kind.vk())
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        // SAFETY: `self.raw` is a live device (struct invariant); the create-info borrows `entries`, alive for
        // the call; the layout is stored at once for `Drop`.
        let layout = unsafe {
            self.raw.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&entries),
                None,
            )
        }
        .map_err(vk_err("descriptor set layout"))?;
        layouts.insert(kinds.to_vec(), layout);
        Ok(layout)
    }
}

impl Drop for NativeShared {
    fn drop(&mut self) {
        let layouts = self
            .set_layouts
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // SAFETY: every object made with these was dropped before (each holds an `Arc` of `self`: struct
        // invariants); each was made on `self.raw` and is destroyed once (null handles are ignored).
        unsafe {
            for &layout in layouts.values().chain([&self.params_layout]) {
                self.raw.destroy_descriptor_set_layout(layout, None);
            }
            self.raw.destroy_pipeline_cache(self.cache, None);
        }
    }
}

/// One compute pipeline with its shader module and pipeline layout, shared (`Arc`) by the native graphs that
/// bind it: the kernels of equal code in one graph, and the graphs of successive updates, so an update
/// builds a pipeline only for code it has not got.
///
/// Invariants the `unsafe` blocks rely on:
/// - its objects were made on `shared`'s device, which the `Arc` keeps alive, with `shared`'s layouts;
/// - it is recorded only into command buffers of a [`NativeGraph`] that holds an `Arc` of it, and a graph
///   waits for the last submission that executes them before it lets its `Arc`s go (`NativeGraph`'s `Drop`):
///   when the last `Arc` goes, no pending submission uses the pipeline.
pub(crate) struct NativePipeline {
    shared: Arc<NativeShared>,
    shader: vk::ShaderModule,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    /// Its bindings' descriptor types: its descriptor sets are of `shared`'s layout of these.
    kinds: Vec<DescriptorKind>,
}

impl std::fmt::Debug for NativePipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativePipeline")
            .field("kinds", &self.kinds)
            .finish_non_exhaustive()
    }
}

impl NativePipeline {
    /// The pipeline of `spirv`'s entry point `entry`, which binds descriptors of `kinds` as set 0 (and
    /// reads the parameters as `shared` says).
    pub(crate) fn new(
        shared: &Arc<NativeShared>,
        spirv: &[u32],
        entry: &str,
        kinds: Vec<DescriptorKind>,
    ) -> Result<Arc<Self>, String> {
        let entry = std::ffi::CString::new(entry)
            .map_err(|_| "an entry point name holds a NUL".to_string())?;
        let set_layout = shared.set_layout(&kinds)?;
        let raw = &shared.raw;
        // On an error `Drop` destroys what was made (null handles are ignored).
        let mut made = NativePipeline {
            shared: shared.clone(),
            shader: vk::ShaderModule::null(),
            layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            kinds,
        };
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(shared.push_size)];
        let with_params = [set_layout, shared.params_layout];
        let set_layouts = if shared.params_layout == vk::DescriptorSetLayout::null() {
            &with_params[..1]
        } else {
            &with_params[..]
        };
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(set_layouts);
        if shared.push_size > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        // SAFETY: `raw` is `shared`'s live device (its invariants); every create-info is fully initialised
        // and borrows data that outlives the call; each object is stored in `made` at once, so its `Drop`
        // destroys it whatever fails later.
        unsafe {
            made.shader = raw
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(spirv), None)
                .map_err(vk_err("shader module"))?;
            made.layout = raw
                .create_pipeline_layout(&layout_info, None)
                .map_err(vk_err("pipeline layout"))?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(made.shader)
                .name(&entry);
            let info = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(made.layout);
            let pipelines = raw
                .create_compute_pipelines(shared.cache, &[info], None)
                .map_err(|(_, e)| format!("Vulkan: compute pipeline: {e}"))?;
            made.pipeline = pipelines
                .first()
                .copied()
                .ok_or_else(|| "Vulkan: compute pipeline: none made".to_string())?;
        }
        Ok(Arc::new(made))
    }
}

impl Drop for NativePipeline {
    fn drop(&mut self) {
        let raw = &self.shared.raw;
        // SAFETY: no pending submission uses the pipeline (struct invariants); each object was made on
        // `raw` and is destroyed once (null handles are ignored).
        unsafe {
            raw.destroy_pipeline(self.pipeline, None);
            raw.destroy_pipeline_layout(self.layout, None);
            raw.destroy_shader_module(self.shader, None);
        }
    }
}

/// A descriptor pool and the buffers its sets name, shared (`Arc`) by the native graphs that bind its sets:
/// an update's graph takes the sets of the graph before it that bind the same buffers.
///
/// Invariants the `unsafe` blocks rely on:
/// - the pool was made on `shared`'s device, which the `Arc` keeps alive, and its sets with `shared`'s layouts;
/// - `buffers` and `views` keep every buffer and texture view its sets name alive as long as the pool;
/// - `samplers` are its own, made on `shared`'s device, named only by its sets, and destroyed with it;
/// - its sets are written only before any command buffer records them, and recorded only into command
///   buffers of a [`NativeGraph`] that holds an `Arc` of the pool, which waits for the last submission that
///   executes them before it lets the `Arc` go: when the last `Arc` goes, no pending submission uses them.
struct SetPool {
    shared: Arc<NativeShared>,
    pool: vk::DescriptorPool,
    buffers: Vec<wgpu::Buffer>,
    views: Vec<wgpu::TextureView>,
    samplers: Vec<vk::Sampler>,
}

impl SetPool {
    /// A pool with room for `sets` sets of the descriptors `kinds` lists (each once per use), and one
    /// uniform one.
    fn new(
        shared: &Arc<NativeShared>,
        sets: u32,
        kinds: impl Iterator<Item = DescriptorKind>,
    ) -> Result<Self, String> {
        let mut counts: HashMap<DescriptorKind, u32> = HashMap::new();
        for kind in kinds {
            *counts.entry(kind).or_default() += 1;
        }
        let mut sizes = vec![
            vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::UNIFORM_BUFFER)
                .descriptor_count(1),
        ];
        sizes.extend(counts.into_iter().map(|(kind, count)| {
            vk::DescriptorPoolSize::default()
                .ty(kind.vk())
                .descriptor_count(count)
        }));
        // SAFETY: `shared.raw` is a live device (its invariants); the create-info borrows `sizes`, alive for
        // the call.
        let pool = unsafe {
            shared.raw.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(sets)
                    .pool_sizes(&sizes),
                None,
            )
        }
        .map_err(vk_err("descriptor pool"))?;
        Ok(SetPool {
            shared: shared.clone(),
            pool,
            buffers: Vec::new(),
            views: Vec::new(),
            samplers: Vec::new(),
        })
    }

    /// A Vulkan sampler of `ty`, as wgpu makes one from the portable recorder's descriptor (one level: the
    /// level's filter nearest, levels of detail 0 to 32, no anisotropy, no comparison), kept until the pool
    /// goes.
    fn sampler(&mut self, ty: graph_core::texture::SamplerType) -> Result<vk::Sampler, String> {
        use graph_core::texture::{SamplerAddress, SamplerFilter};
        let filter = match ty.filter {
            SamplerFilter::Nearest => vk::Filter::NEAREST,
            SamplerFilter::Linear => vk::Filter::LINEAR,
        };
        let address = match ty.address {
            SamplerAddress::Clamp => vk::SamplerAddressMode::CLAMP_TO_EDGE,
            SamplerAddress::Repeat => vk::SamplerAddressMode::REPEAT,
            SamplerAddress::Mirror => vk::SamplerAddressMode::MIRRORED_REPEAT,
        };
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(filter)
            .min_filter(filter)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(address)
            .address_mode_v(address)
            .address_mode_w(address)
            .min_lod(0.0)
            .max_lod(32.0);
        // SAFETY: `shared.raw` is a live device (struct invariants); the create-info is fully initialised
        // with no extension chain; the sampler is stored at once, for `Drop`.
        let sampler =
            unsafe { self.shared.raw.create_sampler(&info, None) }.map_err(vk_err("sampler"))?;
        self.samplers.push(sampler);
        Ok(sampler)
    }

    /// A set of `shared`'s layout of `bindings`' descriptor types over `bindings`, binding by binding; the
    /// caller counted it in the pool's room.
    fn binding_set(&mut self, bindings: &[NativeBinding]) -> Result<vk::DescriptorSet, String> {
        let kinds: Vec<DescriptorKind> = bindings.iter().map(NativeBinding::kind).collect();
        let layout = self.shared.set_layout(&kinds)?;
        let set = self.allocate(layout, "descriptor set")?;
        let mut buffer_infos = Vec::with_capacity(bindings.len());
        let mut image_infos = Vec::with_capacity(bindings.len());
        for binding in bindings {
            match binding {
                // A slice lies within its buffer, and its offset is a multiple of the device's
                // `minStorageBufferOffsetAlignment` (whole buffers start at 0; the memory plan aligns heap
                // offsets to wgpu's `min_storage_buffer_offset_alignment`, which is that limit), as a
                // descriptor's range must be.
                NativeBinding::Buffer(slice) => {
                    buffer_infos.push([vk::DescriptorBufferInfo::default()
                        .buffer(raw_buffer(&slice.buffer)?)
                        .offset(slice.offset)
                        .range(slice.size)])
                }
                NativeBinding::Image { view, layout, .. } => {
                    image_infos.push([vk::DescriptorImageInfo::default()
                        .image_view(raw_view(view)?)
                        .image_layout(layout.vk())])
                }
                &NativeBinding::Sampler(ty) => {
                    let sampler = self.sampler(ty)?;
                    image_infos.push([vk::DescriptorImageInfo::default().sampler(sampler)])
                }
            }
        }
        let (mut next_buffer, mut next_image) = (buffer_infos.iter(), image_infos.iter());
        let mut writes = Vec::with_capacity(bindings.len());
        for (i, binding) in bindings.iter().enumerate() {
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(i as u32)
                .descriptor_type(binding.kind().vk());
            let write = match binding {
                NativeBinding::Buffer(_) => next_buffer.next().map(|info| write.buffer_info(info)),
                NativeBinding::Image { .. } | NativeBinding::Sampler(_) => {
                    next_image.next().map(|info| write.image_info(info))
                }
            };
            writes.extend(write);
        }
        // SAFETY: `set` was just allocated, so no command buffer records it yet; every write names a live
        // buffer, image view or sampler, kept alive in `self.buffers`, `self.views` and `self.samplers` as
        // long as the pool (struct invariants), a buffer range within its buffer (above), and an image in the
        // layout the recorder keeps it in whenever a command buffer that binds the set runs
        // (`NativeBinding::Image`).
        unsafe { self.shared.raw.update_descriptor_sets(&writes, &[]) };
        for binding in bindings {
            match binding {
                NativeBinding::Buffer(slice) => self.buffers.push(slice.buffer.clone()),
                NativeBinding::Image { view, .. } => self.views.push(view.clone()),
                NativeBinding::Sampler(_) => {}
            }
        }
        Ok(set)
    }

    /// The parameter buffer's set, of `shared`'s parameter layout; the pool has room for one.
    fn params_set(&mut self, buffer: &wgpu::Buffer) -> Result<vk::DescriptorSet, String> {
        let set = self.allocate(self.shared.params_layout, "parameter descriptor set")?;
        let info = [vk::DescriptorBufferInfo::default()
            .buffer(raw_buffer(buffer)?)
            .offset(0)
            .range(vk::WHOLE_SIZE)];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
            .buffer_info(&info);
        // SAFETY: as in `binding_set`.
        unsafe { self.shared.raw.update_descriptor_sets(&[write], &[]) };
        self.buffers.push(buffer.clone());
        Ok(set)
    }

    /// One descriptor set of `layout` from the pool, whose room the caller has counted.
    fn allocate(
        &self,
        layout: vk::DescriptorSetLayout,
        what: &'static str,
    ) -> Result<vk::DescriptorSet, String> {
        let layouts = [layout];
        // SAFETY: the pool and the layout are live objects of `shared.raw` (struct invariants); a pool out of
        // room is an error, not undefined behaviour.
        let sets = unsafe {
            self.shared.raw.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(self.pool)
                    .set_layouts(&layouts),
            )
        }
        .map_err(vk_err(what))?;
        sets.first()
            .copied()
            .ok_or_else(|| format!("Vulkan: {what}: none allocated"))
    }
}

impl Drop for SetPool {
    fn drop(&mut self) {
        // SAFETY: no pending submission uses its sets (struct invariants); destroying the pool frees them,
        // and then nothing names its samplers, each destroyed once.
        unsafe {
            self.shared.raw.destroy_descriptor_pool(self.pool, None);
            for &sampler in &self.samplers {
                self.shared.raw.destroy_sampler(sampler, None);
            }
        }
    }
}

/// A descriptor set of a shared [`SetPool`].
#[derive(Clone)]
struct SharedSet {
    /// Held, never read: the set lives as long as its pool.
    _pool: Arc<SetPool>,
    set: vk::DescriptorSet,
}

/// A baked graph's GPU work as Vulkan secondary command buffers, one per segment (a GPU partition's dispatches
/// between its copies, uploads, readbacks and interop tasks, which wgpu records), recorded once (and again only when
/// the parameters or a dispatch size change) and executed from wgpu's command encoder at each replay. Its
/// pipelines and descriptor sets are shared with the graphs of the baked graph's updates before and after it.
///
/// Invariants the `unsafe` blocks rely on:
/// - every Vulkan object here was made on `raw`, the `VkDevice` behind `device` (`shared`'s), which this
///   struct keeps alive (a `wgpu::Device` clone) and outlives them: `Drop` waits for `last`, then destroys
///   them, then lets go of the shared pipelines and descriptor pools, which other graphs may still hold;
/// - the buffers the descriptor sets name are kept alive by their pools, the indirect arguments' by
///   `buffers`, for as long as the command buffers that record them;
/// - the query pool is replaced, and its results read, only when no submission that writes it is pending
///   (`last` is waited for first);
/// - a command buffer is reset and recorded only when no submission that executes it is pending (`last` and
///   `last_direct` are waited for first), and is recorded with `SIMULTANEOUS_USE`, so replays in flight may
///   share it; a primary one holds the same commands as its segment's secondary one, recorded with it;
/// - each recording begins with a barrier after all earlier commands' memory writes and ends with one before
///   all later commands, so what wgpu records before and after it (uploads, copies, maps) sees every write.
pub(crate) struct NativeGraph {
    device: wgpu::Device,
    raw: ash::Device,
    shared: Arc<NativeShared>,
    /// Every pipeline the kernels bind, each once.
    pipelines: Vec<Arc<NativePipeline>>,
    /// The descriptor sets, one per list of bindings some kernel binds: what the next update's graph takes
    /// where its kernels bind the same.
    sets_by_bindings: HashMap<Vec<NativeBinding>, SharedSet>,
    /// Per node: its pipeline, its descriptor set, and its indirect arguments' buffer and offset.
    sets: Vec<Option<(usize, vk::DescriptorSet, Option<IndirectArgs>)>>,
    /// Per block: its gate's pipeline, descriptor set and workgroups.
    gates: Vec<Option<(usize, vk::DescriptorSet, u32)>>,
    /// Per node: the pipeline and descriptor set of the check of its indirect counts.
    checks: Vec<Option<(usize, vk::DescriptorSet)>>,
    /// With a parameter buffer: the buffer and its descriptor set (set 1 of every pipeline layout).
    params_set: Option<(wgpu::Buffer, SharedSet)>,
    command_pool: vk::CommandPool,
    /// One secondary command buffer per segment.
    segments: Vec<vk::CommandBuffer>,
    /// With direct submission: one primary command buffer per segment, holding the segment's commands.
    primaries: Vec<vk::CommandBuffer>,
    /// The queue of direct submissions, if the device has one.
    direct: Option<Arc<DirectQueue>>,
    /// The indirect arguments' buffers.
    buffers: Vec<wgpu::Buffer>,
    /// The size of the push-constant range (0: parameters in a buffer, or none).
    push_size: u32,
    /// Timestamp queries for profiled recordings, and how many the pool holds; made at the first profile.
    queries: vk::QueryPool,
    query_capacity: u32,
    /// How many descriptor sets it made (the rest it took from the graph before it).
    pub(crate) sets_built: usize,
    /// The wgpu submission that last executed the command buffers.
    pub(crate) last: Option<wgpu::SubmissionIndex>,
    /// The timeline value of the last direct submission of them.
    last_direct: Option<u64>,
}

impl std::fmt::Debug for NativeGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeGraph")
            .field("pipelines", &self.pipelines.len())
            .field("segments", &self.segments.len())
            .finish_non_exhaustive()
    }
}

impl NativeGraph {
    /// Descriptor sets and one secondary command buffer per segment for `kernels`, made with `shared`, whose
    /// kernels read the parameters as `params` says (as `shared` was made for). The descriptor sets of
    /// `previous` (the graph an update replaces) that bind the same buffers are taken rather than made. Not
    /// recorded yet: see [`NativeGraph::record`].
    pub(crate) fn new(
        shared: &Arc<NativeShared>,
        (node_count, block_count): (usize, usize),
        kernels: Vec<NativeKernel>,
        params: NativeParams,
        segments: usize,
        previous: Option<&NativeGraph>,
        direct: Option<Arc<DirectQueue>>,
    ) -> Result<Self, String> {
        if !shared.fits(&params) {
            return Err("the native pipelines were made for other parameters".into());
        }
        let mut graph = NativeGraph {
            device: shared.device.clone(),
            raw: shared.raw.clone(),
            shared: shared.clone(),
            pipelines: Vec::new(),
            sets_by_bindings: HashMap::new(),
            sets: vec![None; node_count],
            gates: vec![None; block_count],
            checks: vec![None; node_count],
            params_set: None,
            command_pool: vk::CommandPool::null(),
            segments: Vec::new(),
            primaries: Vec::new(),
            direct,
            buffers: Vec::new(),
            push_size: shared.push_size,
            queries: vk::QueryPool::null(),
            query_capacity: 0,
            sets_built: 0,
            last: None,
            last_direct: None,
        };
        // Sets only fit the layouts they were made with: a graph of other layouts gives none.
        let previous = previous.filter(|p| Arc::ptr_eq(&p.shared, shared));
        // On an error the objects made so far are destroyed by `Drop`.
        graph.sets(&kernels, params, previous)?;
        graph.build(kernels, segments)?;
        Ok(graph)
    }

    /// The descriptor sets: `previous`'s that bind the same buffers, the others made in one pool.
    fn sets(
        &mut self,
        kernels: &[NativeKernel],
        params: NativeParams,
        previous: Option<&NativeGraph>,
    ) -> Result<(), String> {
        // The lists of bindings that need a set of their own, each once. (A wgpu handle hashes and compares
        // by its identity, which never changes.)
        let mut new: Vec<&[NativeBinding]> = Vec::new();
        #[allow(clippy::mutable_key_type)]
        let mut listed: HashSet<&[NativeBinding]> = HashSet::new();
        for k in kernels {
            let buffers = k.bindings.as_slice();
            if self.sets_by_bindings.contains_key(buffers) || listed.contains(buffers) {
                continue;
            }
            match previous.and_then(|p| p.sets_by_bindings.get(buffers)) {
                Some(set) => {
                    self.sets_by_bindings.insert(buffers.to_vec(), set.clone());
                }
                None => {
                    listed.insert(buffers);
                    new.push(buffers);
                }
            }
        }
        let params_buffer = match params {
            NativeParams::Uniform(buffer) => Some(buffer),
            _ => None,
        };
        let old_params = previous
            .and_then(|p| p.params_set.as_ref())
            .filter(|(buffer, _)| Some(buffer) == params_buffer.as_ref());
        self.params_set = old_params.cloned();
        let new_params = params_buffer.filter(|_| self.params_set.is_none());
        let sets = new.len() + usize::from(new_params.is_some());
        if sets == 0 {
            return Ok(());
        }
        let kinds = new.iter().flat_map(|b| b.iter().map(NativeBinding::kind));
        let mut pool = SetPool::new(&self.shared, sets as u32, kinds)?;
        let mut made = Vec::with_capacity(new.len());
        for bindings in new {
            made.push((bindings, pool.binding_set(bindings)?));
        }
        let params_set = match &new_params {
            Some(buffer) => Some(pool.params_set(buffer)?),
            None => None,
        };
        let pool = Arc::new(pool);
        for (buffers, set) in made {
            let shared = SharedSet {
                _pool: pool.clone(),
                set,
            };
            self.sets_by_bindings.insert(buffers.to_vec(), shared);
        }
        if let (Some(buffer), Some(set)) = (new_params, params_set) {
            self.params_set = Some((buffer, SharedSet { _pool: pool, set }));
        }
        self.sets_built = sets;
        Ok(())
    }

    /// Each kernel's pipeline and set in the tables the recording reads, and the command buffers.
    fn build(&mut self, kernels: Vec<NativeKernel>, segments: usize) -> Result<(), String> {
        for k in &kernels {
            let p = match self
                .pipelines
                .iter()
                .position(|p| Arc::ptr_eq(p, &k.pipeline))
            {
                Some(p) => p,
                None => {
                    self.pipelines.push(k.pipeline.clone());
                    self.pipelines.len() - 1
                }
            };
            let set = self
                .sets_by_bindings
                .get(k.bindings.as_slice())
                .map(|s| s.set)
                .ok_or_else(|| format!("{:?} has no descriptor set", k.of))?;
            let indirect = match &k.indirect {
                Some((buffer, offset)) => {
                    self.buffers.push(buffer.clone());
                    Some((raw_buffer(buffer)?, *offset))
                }
                None => None,
            };
            let slot = match k.of {
                KernelOf::Node(node) => self.sets.get_mut(node as usize).map(|s| {
                    *s = Some((p, set, indirect));
                }),
                KernelOf::Gate(block, workgroups) => self.gates.get_mut(block as usize).map(|g| {
                    *g = Some((p, set, workgroups));
                }),
                KernelOf::Check(node) => self.checks.get_mut(node as usize).map(|c| {
                    *c = Some((p, set));
                }),
            };
            if slot.is_none() {
                return Err(format!("{:?} is outside the graph", k.of));
            }
        }

        // SAFETY: `self.raw` is a live device (struct invariant); the pool and its command buffers are stored
        // at once for `Drop`.
        unsafe {
            self.command_pool = self
                .raw
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(self.shared.family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(vk_err("command pool"))?;
            if segments > 0 {
                self.segments = self
                    .raw
                    .allocate_command_buffers(
                        &vk::CommandBufferAllocateInfo::default()
                            .command_pool(self.command_pool)
                            .level(vk::CommandBufferLevel::SECONDARY)
                            .command_buffer_count(segments as u32),
                    )
                    .map_err(vk_err("command buffers"))?;
                if self.direct.is_some() {
                    self.primaries = self
                        .raw
                        .allocate_command_buffers(
                            &vk::CommandBufferAllocateInfo::default()
                                .command_pool(self.command_pool)
                                .level(vk::CommandBufferLevel::PRIMARY)
                                .command_buffer_count(segments as u32),
                        )
                        .map_err(vk_err("command buffers"))?;
                }
            }
        }
        Ok(())
    }
    /// A query pool of at least `count` timestamp queries, for profiled recordings. The caller has waited for
    /// `last`.
    pub(crate) fn reserve_queries(&mut self, count: u32) -> Result<(), String> {
        if count <= self.query_capacity {
            return Ok(());
        }
        // SAFETY: no pending submission writes the old pool (the caller waited for `last`), and no command
        // buffer that names it is executed again before it is recorded again (`NativeReplay` forgets a
        // profiled recording); the new pool is stored at once for `Drop`.
        unsafe {
            self.raw.destroy_query_pool(self.queries, None);
            self.queries = vk::QueryPool::null();
            self.query_capacity = 0;
            self.queries = self
                .raw
                .create_query_pool(
                    &vk::QueryPoolCreateInfo::default()
                        .query_type(vk::QueryType::TIMESTAMP)
                        .query_count(count),
                    None,
                )
                .map_err(vk_err("timestamp query pool"))?;
        }
        self.query_capacity = count;
        Ok(())
    }

    /// The first `count` timestamps of the query pool, in ticks, once the profiled replay that wrote them
    /// has finished (the caller waited for it).
    pub(crate) fn read_queries(&self, count: u32) -> Result<Vec<u64>, String> {
        if count > self.query_capacity {
            return Err(format!(
                "{count} timestamps asked for, the pool holds {}",
                self.query_capacity
            ));
        }
        let mut ticks = vec![0u64; count as usize];
        if count == 0 {
            return Ok(ticks);
        }
        // SAFETY: the pool is live and holds `count` queries (checked above), each written by the finished
        // replay; `ticks` has room for `count` 64-bit results. Without WAIT, a query never written is
        // NOT_READY, an error, not a hang.
        unsafe {
            self.raw.get_query_pool_results(
                self.queries,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64,
            )
        }
        .map_err(vk_err("timestamp results"))?;
        Ok(ticks)
    }

    /// Records segment `segment`: for each level, a barrier when it has hazards, then each
    /// dispatch (`(node, workgroups)`), with `params` as push constants when they are (ignored with a
    /// parameter buffer); with `direct`, into its primary command buffer too (a segment that a direct
    /// submission may submit: one of a partition of segments alone). The caller has waited for `last`.
    ///
    /// With `first_query`, a profiled recording: it writes [`queries_of`] timestamps from that query on
    /// (the caller reserved them), and says which time each dispatch. A level's first timestamp is written
    /// once everything before has finished its compute work, so after the level's barrier: when the level may
    /// start. Each dispatch's is written once it and everything before it has: dispatches of one level may
    /// overlap, and a timestamp cannot tell which of them finished last.
    pub(crate) fn record(
        &self,
        segment: usize,
        levels: &[RecordedLevel],
        params: &[u8],
        first_query: Option<u32>,
        direct: bool,
    ) -> Result<Vec<TimedDispatch>, String> {
        let Some(&cb) = self.segments.get(segment) else {
            return Err(format!("no command buffer for segment {segment}"));
        };
        if let Some(first) = first_query
            && first + queries_of(levels) > self.query_capacity
        {
            return Err(format!(
                "segment {segment} needs timestamps {first}.. beyond the pool's {}",
                self.query_capacity
            ));
        }
        // No pending submission executes `cb` (the caller waited for `last`).
        let timed = self.record_into(cb, true, levels, params, first_query)?;
        // A direct submission's primary command buffer holds the same commands itself: executing the
        // secondary one from it cost 0.5-2.8 us more per replay on the H100 (the benchmark's fused shapes,
        // two rounds each way in one run). No pending submission executes it either (the caller waited for
        // the last direct one).
        if let Some(&primary) = self.primaries.get(segment).filter(|_| direct) {
            self.record_into(primary, false, levels, params, first_query)?;
        }
        Ok(timed)
    }

    /// Resets `cb` (a `secondary` command buffer or a primary one, which no pending submission executes),
    /// records `levels` into it and ends it.
    fn record_into(
        &self,
        cb: vk::CommandBuffer,
        secondary: bool,
        levels: &[RecordedLevel],
        params: &[u8],
        first_query: Option<u32>,
    ) -> Result<Vec<TimedDispatch>, String> {
        let inheritance = vk::CommandBufferInheritanceInfo::default();
        let mut begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE);
        if secondary {
            begin = begin.inheritance_info(&inheritance);
        }
        // SAFETY: no pending submission executes `cb` (the caller's contract), so it may be reset and
        // recorded.
        unsafe {
            self.raw
                .reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())
                .map_err(vk_err("reset"))?;
            self.raw
                .begin_command_buffer(cb, &begin)
                .map_err(vk_err("begin"))?;
        }
        let timed = self.record_commands(cb, levels, params, first_query)?;
        // SAFETY: `cb` is recording.
        unsafe { self.raw.end_command_buffer(cb) }.map_err(vk_err("end"))?;
        Ok(timed)
    }

    /// Records `levels` into `cb`, which is recording: see [`NativeGraph::record`].
    fn record_commands(
        &self,
        cb: vk::CommandBuffer,
        levels: &[RecordedLevel],
        params: &[u8],
        first_query: Option<u32>,
    ) -> Result<Vec<TimedDispatch>, String> {
        let mut timed = Vec::new();
        let mut next_query = first_query.unwrap_or(0);
        let timestamp = |query: u32| {
            // SAFETY: `cb` is recording; the query is in the pool (checked by `record`) and was reset at the
            // start of this recording.
            unsafe {
                self.raw.cmd_write_timestamp(
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    self.queries,
                    query,
                )
            }
        };
        let barrier = |src_stage, src, dst_stage, dst| {
            // SAFETY: `cb` is recording (the caller began it and ends it after).
            unsafe { memory_barrier(&self.raw, cb, (src_stage, src), (dst_stage, dst)) }
        };
        // Every handle recorded below is alive as long as `self` (struct invariants).
        // A segment without dispatches (one before a trailing readback) has no queries: none is reset, since
        // Vulkan asks even an empty reset to start inside the pool, and its first would be the pool's end.
        let count = queries_of(levels);
        if let Some(first) = first_query.filter(|_| count > 0) {
            // SAFETY: `cb` is recording; the queries are in the pool (checked by `record`).
            unsafe {
                self.raw
                    .cmd_reset_query_pool(cb, self.queries, first, count)
            };
        }
        // After everything before (wgpu's uploads and copies, the parameter buffer's write, earlier
        // segments, host writes).
        barrier(
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::AccessFlags::MEMORY_WRITE,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::SHADER_READ
                | vk::AccessFlags::SHADER_WRITE
                | vk::AccessFlags::UNIFORM_READ,
        );
        let mut bound_pipeline = None;
        for (hazards, steps) in levels {
            if *hazards {
                barrier(
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::SHADER_READ,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                );
            }
            let level_start = next_query;
            if first_query.is_some() && steps.iter().any(|s| matches!(s, Recorded::Dispatch(..))) {
                timestamp(level_start);
                next_query += 1;
            }
            for &step in steps {
                // What the step dispatches: a node's kernel, after the check of its indirect counts if
                // it has one, or a gate.
                let mut runs = [None, None];
                match step {
                    Recorded::Dispatch(node, counts) => {
                        let Some(&Some((p, set, indirect))) = self.sets.get(node as usize) else {
                            return Err(format!("node {node} has no native kernel"));
                        };
                        if let Some(&Some((check, check_set))) = self.checks.get(node as usize) {
                            runs[0] = Some(Run::writing_args(check, check_set, [1, 1, 1]));
                        }
                        runs[1] = Some(Run {
                            pipeline: p,
                            set,
                            indirect,
                            counts,
                            writes_args: false,
                        });
                    }
                    Recorded::Gate(block) => match self.gates.get(block as usize) {
                        Some(&Some((p, set, workgroups))) => {
                            runs[0] = Some(Run::writing_args(p, set, [workgroups, 1, 1]));
                        }
                        // A block without a flag (a plain `repeat`) has no gate.
                        Some(None) => continue,
                        None => return Err(format!("block {block} is outside the graph")),
                    },
                }
                for run in runs.into_iter().flatten() {
                    if run.writes_args {
                        // The arguments it writes were read by the dispatch they were last written for
                        // (at DRAW_INDIRECT, which a source stage of COMPUTE_SHADER includes).
                        barrier(
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::AccessFlags::SHADER_WRITE,
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                        );
                    }
                    self.dispatch(cb, &run, params, &mut bound_pipeline);
                    if run.writes_args {
                        // Its arguments, visible to the indirect reads after it (at DRAW_INDIRECT, ahead of
                        // the compute stage). Only this barrier names that stage: on the H100 level barriers
                        // that also did cost about as much again as the dispatch after each (a chain of 100
                        // took 640-680 us instead of 350-390).
                        barrier(
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::AccessFlags::SHADER_WRITE,
                            vk::PipelineStageFlags::COMPUTE_SHADER
                                | vk::PipelineStageFlags::DRAW_INDIRECT,
                            vk::AccessFlags::SHADER_READ
                                | vk::AccessFlags::SHADER_WRITE
                                | vk::AccessFlags::INDIRECT_COMMAND_READ,
                        );
                    }
                }
                match step {
                    Recorded::Dispatch(node, _) if first_query.is_some() => {
                        timestamp(next_query);
                        timed.push(TimedDispatch {
                            node,
                            start_query: level_start,
                            end_query: next_query,
                        });
                        next_query += 1;
                    }
                    Recorded::Dispatch(..) | Recorded::Gate(_) => {}
                }
            }
        }
        // Before everything after (wgpu's copies and maps, later segments).
        barrier(
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::SHADER_WRITE,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
        );
        Ok(timed)
    }

    /// Submits segments `segments` through the runtime's own queue (held locked by `guard`), one primary
    /// command buffer each; returns the timeline value that says they finished.
    pub(crate) fn submit_direct(
        &mut self,
        guard: &mut DirectGuard<'_>,
        segments: &[usize],
    ) -> Result<u64, String> {
        let buffers: Option<Vec<vk::CommandBuffer>> = segments
            .iter()
            .map(|&s| self.primaries.get(s).copied())
            .collect();
        let buffers = buffers.ok_or("the graph has no command buffers of its own to submit")?;
        // The command buffers are recorded (the caller recorded them before the replay) and live until
        // `Drop`, which waits for the value returned here.
        let value = guard.submit_raw(&buffers)?;
        self.last_direct = Some(value);
        Ok(value)
    }

    /// Blocks until the last direct submission of the command buffers finished (before they are recorded
    /// again, or destroyed).
    pub(crate) fn wait_direct(&mut self) -> Result<(), String> {
        match (self.last_direct.take(), &self.direct) {
            (Some(value), Some(direct)) => direct.wait(value),
            _ => Ok(()),
        }
    }

    /// Records `run` into `cb`: its pipeline (unless `bound` already is), its descriptor sets, the push
    /// constants `params` if the graph has them, and the dispatch.
    fn dispatch(&self, cb: vk::CommandBuffer, run: &Run, params: &[u8], bound: &mut Option<usize>) {
        let p = run.pipeline;
        let pipeline = &self.pipelines[p];
        let params_set = self.params_set.as_ref().map(|(_, s)| s.set);
        let with_params = [run.set, params_set.unwrap_or(run.set)];
        let sets = if params_set.is_some() {
            &with_params[..]
        } else {
            &with_params[..1]
        };
        let [x, y, z] = run.counts;
        // SAFETY: `cb` is recording (`record_into` began it, a secondary or a primary command buffer, and
        // `record_commands` records into it); the set is of `shared`'s layout for the
        // pipeline's number of bindings, set 0 of its layout (the parameter set's layout is set 1 of every
        // layout), and the graph holds both (`Arc`s) as long as its command buffers; `params` is the
        // size of the push-constant range (checked at bake); an indirect buffer is alive with `self` and holds
        // three `u32`s at its offset (the program's, the gates' and the checks' layouts), made visible to the
        // indirect read by a barrier after what wrote them.
        unsafe {
            if *bound != Some(p) {
                self.raw
                    .cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline.pipeline);
                *bound = Some(p);
            }
            self.raw.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                pipeline.layout,
                0,
                sets,
                &[],
            );
            if self.push_size > 0 {
                self.raw.cmd_push_constants(
                    cb,
                    pipeline.layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    params,
                );
            }
            match run.indirect {
                Some((args, offset)) => self.raw.cmd_dispatch_indirect(cb, args, offset),
                None => self.raw.cmd_dispatch(cb, x, y, z),
            }
        }
    }

    /// Executes segment `segment`'s command buffer in `encoder`, a wgpu command encoder of the replay;
    /// `false` when wgpu has no Vulkan command buffer to give (an encoder of a lost or destroyed device).
    pub(crate) fn execute(&self, encoder: &mut wgpu::CommandEncoder, segment: usize) -> bool {
        let Some(&cb) = self.segments.get(segment) else {
            return true;
        };
        // SAFETY: `as_hal_mut` hands out wgpu's open Vulkan command buffer, a primary one of the same device
        // and queue family; `cb` is a recorded secondary command buffer of ours, recorded with
        // SIMULTANEOUS_USE and alive until `Drop` (which waits for the device). Its barriers order it after
        // and before what wgpu records around it.
        unsafe {
            encoder.as_hal_mut::<wgpu::hal::api::Vulkan, _, _>(|hal| match hal {
                Some(hal) => {
                    self.raw.cmd_execute_commands(hal.raw_handle(), &[cb]);
                    true
                }
                None => false,
            })
        }
    }
}

impl Drop for NativeGraph {
    fn drop(&mut self) {
        // The same for the runtime's own submissions of them (a lost device has none left to wait for).
        let _ = self.wait_direct();
        // The device may still run the command buffers: wait for the last submission that executes them
        // (none: they never ran, and nothing waits for other graphs' work).
        if let Some(last) = self.last.take() {
            let _ = self.device.poll(wgpu::PollType::Wait {
                submission_index: Some(last),
                timeout: None,
            });
        }
        // SAFETY: nothing pending uses these objects any more (waited above: every submission executing them
        // is at or before `last`); each was made on `self.raw` and is destroyed once (null handles are
        // ignored by Vulkan). The shared pipelines and descriptor pools go with the fields, after this wait:
        // each is destroyed when the last graph that holds it lets it go.
        unsafe {
            self.raw.destroy_command_pool(self.command_pool, None);
            self.raw.destroy_query_pool(self.queries, None);
        }
    }
}

/// How long [`Marker::wait`] spins before it leaves the wait to wgpu. A replay that takes longer costs at
/// most this much CPU on top of a blocking wait. On a CPU device (llvmpipe) it yields between looks, so as
/// not to take a core from the device's own threads.
const SPIN_LIMIT: std::time::Duration = std::time::Duration::from_millis(1);

/// A word in host-visible memory that the GPU writes at the end of each native submission, after a barrier
/// behind all earlier work on the queue. The host sees a submission finish by reading it, tens of
/// microseconds before the submission's fence or semaphore signals, which is what waiting for wgpu's
/// submission index waits for (on the H100, the word after 13-18 us, the fence after 35-51 us:
/// `benches/submission_floor.rs`).
///
/// Invariants the `unsafe` blocks rely on:
/// - `buffer` and `memory` were made on `raw`, the `VkDevice` behind `device`, which this struct keeps
///   alive; `Drop` waits for `last`, the last submission that writes the word, before destroying them;
/// - `word` points at the start of `memory`, mapped for the struct's whole life (host-coherent, 4-byte
///   aligned, as `vkMapMemory` returns it): the host only reads it, after the one write that initialises it.
pub(crate) struct Marker {
    device: wgpu::Device,
    raw: ash::Device,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    word: std::ptr::NonNull<u32>,
    /// Whether waiting yields the thread between looks (on a CPU device).
    yields: bool,
    /// The value the next submission writes.
    next: std::sync::atomic::AtomicU32,
    /// The last submission that writes the word.
    last: std::sync::Mutex<Option<wgpu::SubmissionIndex>>,
}

// SAFETY: `word` is the only field that is not `Send` and `Sync` by itself: it points at memory this struct
// owns and keeps mapped (struct invariants), which any thread may read with volatile loads.
unsafe impl Send for Marker {}
// SAFETY: as for `Send`: shared references only read the word; the counter and `last` synchronise themselves.
unsafe impl Sync for Marker {}

impl std::fmt::Debug for Marker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Marker").finish_non_exhaustive()
    }
}

/// Whether the word `seen` shows that the submission that writes `value` finished: values count up, each
/// submission's past its predecessor's, and wrap (`0` is the word before any submission).
pub(crate) fn reached(seen: u32, value: u32) -> bool {
    seen.wrapping_sub(value) < 1 << 31
}

impl Marker {
    /// A marker on `device`; `None` when it is not a Vulkan device.
    pub(crate) fn new(device: &wgpu::Device) -> Option<Result<Marker, String>> {
        // SAFETY: the hal device is only read (its function tables and physical device) while `device` is
        // alive; the cloned `ash::Device` is kept alive by the `wgpu::Device` clone the marker holds.
        let (raw, properties) = unsafe {
            let hal = device.as_hal::<wgpu::hal::api::Vulkan>()?;
            let properties = hal
                .shared_instance()
                .raw_instance()
                .get_physical_device_memory_properties(hal.raw_physical_device());
            (hal.raw_device().clone(), properties)
        };
        let info = vk::BufferCreateInfo::default()
            .size(4)
            .usage(vk::BufferUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: `raw` is a live device; `info` has no extension chain. On an error below the buffer is
        // destroyed before it is used.
        let buffer = unsafe { raw.create_buffer(&info, None) }.map_err(vk_err("marker buffer"));
        let buffer = match buffer {
            Ok(buffer) => buffer,
            Err(e) => return Some(Err(e)),
        };
        let mut marker = Marker {
            device: device.clone(),
            raw,
            buffer,
            memory: vk::DeviceMemory::null(),
            word: std::ptr::NonNull::dangling(),
            yields: device.adapter_info().device_type == wgpu::DeviceType::Cpu,
            next: std::sync::atomic::AtomicU32::new(1),
            last: std::sync::Mutex::new(None),
        };
        // On an error `Drop` destroys what was made (nothing was submitted).
        Some(marker.bind(&properties).map(|()| marker))
    }

    /// Gives the buffer host-visible, host-coherent memory, maps it and writes `0` in it.
    fn bind(&mut self, properties: &vk::PhysicalDeviceMemoryProperties) -> Result<(), String> {
        // SAFETY: `self.buffer` is a live buffer of `self.raw`.
        let needs = unsafe { self.raw.get_buffer_memory_requirements(self.buffer) };
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let kind = properties
            .memory_types_as_slice()
            .iter()
            .enumerate()
            .position(|(i, t)| {
                needs.memory_type_bits & (1 << i) != 0 && t.property_flags.contains(wanted)
            });
        let Some(kind) = kind else {
            return Err("no host-visible, host-coherent memory for the marker".into());
        };
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(needs.size)
            .memory_type_index(kind as u32);
        // SAFETY: a plain allocation of a memory type the device lists; stored at once for `Drop`, bound to
        // the unbound buffer it was sized for, then mapped whole (host-visible memory, mapped once).
        unsafe {
            self.memory = self
                .raw
                .allocate_memory(&info, None)
                .map_err(vk_err("marker memory"))?;
            self.raw
                .bind_buffer_memory(self.buffer, self.memory, 0)
                .map_err(vk_err("marker memory binding"))?;
            let mapped = self
                .raw
                .map_memory(self.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .map_err(vk_err("marker mapping"))?;
            self.word = std::ptr::NonNull::new(mapped.cast::<u32>())
                .ok_or_else(|| "Vulkan mapped the marker at null".to_string())?;
            // Nothing has been submitted that writes the word yet.
            self.word.as_ptr().write_volatile(0);
        }
        Ok(())
    }

    /// Records, at the end of `encoder` (a command buffer of the next submission), a barrier behind every
    /// earlier command on the queue and a write of the next value; returns that value, or `None` when the
    /// encoder has no Vulkan command buffer (a lost device).
    pub(crate) fn record(&self, encoder: &mut wgpu::CommandEncoder) -> Option<u32> {
        use std::sync::atomic::Ordering;
        // `0` is the word before any submission: skip it when the counter wraps.
        let mut value = self.next.fetch_add(1, Ordering::Relaxed);
        if value == 0 {
            value = self.next.fetch_add(1, Ordering::Relaxed);
        }
        use vk::{AccessFlags as Access, PipelineStageFlags as Stage};
        // SAFETY: `as_hal_mut` hands out wgpu's open primary command buffer of the same device; the commands
        // name only our buffer, which wgpu never sees and which lives until every submission that writes it
        // finished (`Drop` waits for `last`, which `submitted` sets).
        unsafe {
            encoder.as_hal_mut::<wgpu::hal::api::Vulkan, _, _>(|hal| {
                let cb = hal?.raw_handle();
                let raw = &self.raw;
                let transfer = (Stage::TRANSFER, Access::TRANSFER_WRITE);
                memory_barrier(
                    raw,
                    cb,
                    (Stage::ALL_COMMANDS, Access::MEMORY_WRITE),
                    transfer,
                );
                raw.cmd_fill_buffer(cb, self.buffer, 0, 4, value);
                memory_barrier(raw, cb, transfer, (Stage::HOST, Access::HOST_READ));
                Some(value)
            })
        }
    }

    /// The last submission that writes the word (a panic elsewhere while it was held leaves it valid).
    fn last(&self) -> std::sync::MutexGuard<'_, Option<wgpu::SubmissionIndex>> {
        self.last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The submission that carries the last recorded write.
    pub(crate) fn submitted(&self, index: wgpu::SubmissionIndex) {
        *self.last() = Some(index);
    }

    /// Spins until the word shows that the submission that writes `value` finished (`true`), for at most
    /// [`SPIN_LIMIT`] (`false`: wait for the submission another way).
    pub(crate) fn wait(&self, value: u32) -> bool {
        let start = std::time::Instant::now();
        loop {
            // SAFETY: `word` points at mapped, host-coherent memory the marker owns (struct invariants); the
            // GPU writes it whole (a 4-byte fill), so a volatile load sees an old value or the new one.
            let seen = unsafe { self.word.as_ptr().read_volatile() };
            if reached(seen, value) {
                // What the host does next comes after the load that saw the work finish.
                std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
                return true;
            }
            if start.elapsed() > SPIN_LIMIT {
                return false;
            }
            if self.yields {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        // A pending submission may still write the word: wait for the last one.
        if let Some(last) = self.last().take() {
            let _ = self.device.poll(wgpu::PollType::Wait {
                submission_index: Some(last),
                timeout: None,
            });
        }
        // SAFETY: no pending submission writes the buffer (waited above); both objects were made on
        // `self.raw` and are destroyed once; unmapping happens with the free (null handles are ignored).
        unsafe {
            self.raw.destroy_buffer(self.buffer, None);
            self.raw.free_memory(self.memory, None);
        }
    }
}

/// The priorities of the queues [`open_device`] asks for: wgpu's, and the runtime's second one.
static TWO_QUEUES: [f32; 2] = [1.0, 1.0];

/// Opens `adapter`'s Vulkan device as `request_device` would, with two additions: two queues of wgpu's queue
/// family when `second_queue` is asked for and the family has two (wgpu uses the first, the runtime the
/// second), and `VK_EXT_external_memory_host` where the device offers it and can import host memory into a
/// transfer buffer (on Vulkan 1.1 or later, where the external memory it extends is core), so that a transfer
/// between two GPUs can go through host memory both import ([`HostMemory`]), with `VK_EXT_queue_family_foreign`
/// beside it where offered (the queue family that hands such memory to another physical device,
/// [`share_family`]). `None` when the adapter is not a Vulkan adapter. Returns the device, and whether it has
/// the second queue.
pub(crate) fn open_device(
    adapter: &wgpu::Adapter,
    desc: &wgpu::DeviceDescriptor<'_>,
    second_queue: bool,
) -> Option<Result<(wgpu::Device, wgpu::Queue, bool), String>> {
    // SAFETY: the hal adapter is only read (its queue families, extensions and properties) and asked to open
    // a device, as `request_device` asks it; the device it opens is handed to wgpu at once, which owns it
    // from then on.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    let physical = hal.raw_physical_device();
    // SAFETY: queries of the adapter's physical device, alive with `hal`; the Vulkan 1.1 query runs only
    // where both the instance and the device are 1.1 or later; its structs outlive it.
    let (families, host_memory, foreign) = unsafe {
        let families = instance.get_physical_device_queue_family_properties(physical);
        let api = instance
            .get_physical_device_properties(physical)
            .api_version
            .min(hal.shared_instance().instance_api_version());
        let extensions = instance
            .enumerate_device_extension_properties(physical)
            .unwrap_or_default();
        let offers = |name: &std::ffi::CStr| {
            extensions
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(name))
        };
        let offered = offers(ash::ext::external_memory_host::NAME);
        let importable = offered && api >= vk::API_VERSION_1_1 && {
            let info = vk::PhysicalDeviceExternalBufferInfo::default()
                .usage(HOST_MEMORY_USAGE)
                .handle_type(vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT);
            let mut properties = vk::ExternalBufferProperties::default();
            instance.get_physical_device_external_buffer_properties(
                physical,
                &info,
                &mut properties,
            );
            properties
                .external_memory_properties
                .external_memory_features
                .contains(vk::ExternalMemoryFeatureFlags::IMPORTABLE)
        };
        let foreign = importable && offers(ash::ext::queue_family_foreign::NAME);
        (families, importable, foreign)
    };
    // wgpu-hal opens family 0 (`open_with_callback`); a second queue only where that family has two.
    let two = second_queue && families.first().is_some_and(|f| f.queue_count >= 2);
    let callback = move |args: wgpu::hal::vulkan::CreateDeviceCallbackArgs<'_, '_, '_>| {
        if let Some(info) = args.queue_create_infos.first_mut()
            && two
        {
            *info = info.queue_priorities(&TWO_QUEUES);
        }
        let mut enable = |name: &'static std::ffi::CStr| {
            if !args.extensions.contains(&name) {
                args.extensions.push(name);
            }
        };
        if host_memory {
            enable(ash::ext::external_memory_host::NAME);
        }
        if foreign {
            enable(ash::ext::queue_family_foreign::NAME);
        }
    };
    // SAFETY: the features and limits are the adapter's own (what `request_device` would check them against);
    // the callback only raises the queue count of the family wgpu opens, within what the family offers, and
    // adds extensions the device offers, which need no feature (their `VK_KHR_external_memory` is core from
    // Vulkan 1.1, checked above).
    let open = unsafe {
        hal.open_with_callback(
            desc.required_features,
            &desc.required_limits,
            &desc.memory_hints,
            Some(Box::new(callback)),
        )
    };
    let open = match open {
        Ok(open) => open,
        Err(e) => return Some(Err(format!("opening the Vulkan device: {e}"))),
    };
    drop(hal);
    // SAFETY: `open` was just opened from this adapter's hal adapter, with the descriptor's features and
    // limits, and nothing else holds it.
    let made = unsafe { adapter.create_device_from_hal(open, desc) };
    Some(
        made.map(|(device, queue)| (device, queue, two))
            .map_err(|e| e.to_string()),
    )
}

/// The runtime's own submissions to a Vulkan queue, ordered against wgpu's by a timeline semaphore.
///
/// Every submission to the device goes through [`DirectQueue::lock`]: wgpu's (through
/// [`DirectGuard::submit_wgpu`]) and the runtime's command buffers (through [`DirectGuard::submit_raw`]).
/// Each signals the timeline's next value (what a host's wait for it reads). On a second queue each also
/// waits for the value of the submission before it, so all of them run in one order, as on one queue; on
/// wgpu's queue, submission order and the first and last barriers of the runtime's command buffers order
/// them, and the lock is the external synchronisation Vulkan requires of submissions to one queue, which
/// wgpu gives only its own.
///
/// Invariants the `unsafe` blocks rely on:
/// - `raw`, `queue` and `timeline` belong to the `VkDevice` behind `device`, which this struct keeps alive;
/// - `queue` is submitted to only while `order` is locked (wgpu's submissions too, when it is wgpu's queue);
/// - every value waited for was signalled by a submission made before, under the lock: no wait comes
///   before its signal; the values signalled grow in submission order, and on one queue without waits they
///   are signalled in that order (each signal's first scope holds every command submitted before it; Mesa's
///   and NVIDIA's queues run batches in order, and the validation layer, which checks a timeline's signals,
///   reports nothing in CI);
/// - `Drop` waits for the last value signalled before it destroys the semaphore, and no pending wgpu
///   submission still names it (a wgpu submission that did not reach Vulkan has its semaphores taken back).
pub(crate) struct DirectQueue {
    /// Keeps the `VkDevice` alive.
    _device: wgpu::Device,
    raw: ash::Device,
    queue: vk::Queue,
    on: DirectOn,
    timeline: vk::Semaphore,
    /// The lock of every submission, and the timeline's last value a submission signals.
    order: Mutex<u64>,
    /// The ordering rules a test turned off, to see it catch the fault ([`OrderingFault`] bits).
    faults: std::sync::atomic::AtomicU8,
    /// Whether waiting yields the thread between looks (on a CPU device).
    yields: bool,
}

impl std::fmt::Debug for DirectQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectQueue")
            .field("on", &self.on)
            .finish_non_exhaustive()
    }
}

impl DirectQueue {
    /// Direct submission on `device`'s queue `on` says; `None` when `device` is not a Vulkan device or has no
    /// timeline semaphores (Vulkan 1.2).
    pub(crate) fn new(device: &wgpu::Device, on: DirectOn) -> Option<Result<Self, String>> {
        // SAFETY: the hal device is read for its handles while `device` is alive; the cloned `ash::Device`
        // is kept alive by the `wgpu::Device` clone the struct holds.
        let (raw, queue, timelines) = unsafe {
            let hal = device.as_hal::<wgpu::hal::api::Vulkan>()?;
            let instance = hal.shared_instance().raw_instance();
            let physical = hal.raw_physical_device();
            let version = instance
                .get_physical_device_properties(physical)
                .api_version;
            let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut v12);
            instance.get_physical_device_features2(physical, &mut features);
            let timelines = version >= vk::API_VERSION_1_2 && v12.timeline_semaphore == vk::TRUE;
            let raw = hal.raw_device().clone();
            let queue = match on {
                DirectOn::WgpuQueue => hal.raw_queue(),
                DirectOn::SecondQueue => raw.get_device_queue(hal.queue_family_index(), 1),
            };
            (raw, queue, timelines)
        };
        // wgpu-hal enables timeline semaphores wherever the device has them.
        if !timelines {
            return None;
        }
        let mut kind = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut kind);
        // SAFETY: a live device with timeline semaphores enabled (wgpu-hal enables the feature where the
        // device has it, checked above); the semaphore is stored at once for `Drop`.
        let timeline = match unsafe { raw.create_semaphore(&info, None) } {
            Ok(timeline) => timeline,
            Err(e) => return Some(Err(vk_err("timeline semaphore")(e))),
        };
        Some(Ok(DirectQueue {
            _device: device.clone(),
            raw,
            queue,
            on,
            timeline,
            order: Mutex::new(0),
            faults: std::sync::atomic::AtomicU8::new(0),
            yields: device.adapter_info().device_type == wgpu::DeviceType::Cpu,
        }))
    }

    /// Which queue the runtime submits to.
    pub(crate) fn on(&self) -> DirectOn {
        self.on
    }

    /// Turns an ordering rule off, for a test to see that it catches the fault.
    pub(crate) fn plant(&self, fault: OrderingFault) {
        self.faults
            .fetch_or(fault as u8, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a test turned this rule off.
    pub(crate) fn planted(&self, fault: OrderingFault) -> bool {
        self.faults.load(std::sync::atomic::Ordering::Relaxed) & fault as u8 != 0
    }

    /// The lock every submission to the device goes through, held until the guard is dropped.
    pub(crate) fn lock(&self) -> DirectGuard<'_> {
        DirectGuard {
            direct: self,
            last: self
                .order
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        }
    }

    /// The timeline's last value a submission signals: once it is reached, everything submitted so far has
    /// finished.
    pub(crate) fn last(&self) -> u64 {
        *self.lock().last
    }

    /// The timeline's value now.
    fn value(&self) -> Result<u64, String> {
        // SAFETY: a live timeline semaphore of `raw` (struct invariants).
        unsafe { self.raw.get_semaphore_counter_value(self.timeline) }
            .map_err(vk_err("reading the timeline"))
    }

    /// Blocks until the submission that signals `value` finished: reads the timeline in a loop for at most
    /// [`SPIN_LIMIT`] (yielding between looks on a CPU device), then blocks in Vulkan.
    pub(crate) fn wait(&self, value: u64) -> Result<(), String> {
        let start = std::time::Instant::now();
        while start.elapsed() <= SPIN_LIMIT {
            if self.value()? >= value {
                return Ok(());
            }
            if self.yields {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        let semaphores = [self.timeline];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        // SAFETY: the semaphore is live, and `value` was signalled by a submission made before (the
        // values this struct hands out are those of submissions made).
        unsafe { self.raw.wait_semaphores(&info, u64::MAX) }.map_err(vk_err("waiting"))
    }
}

/// The lock of a [`DirectQueue`]: submissions go through it.
pub(crate) struct DirectGuard<'a> {
    direct: &'a DirectQueue,
    last: std::sync::MutexGuard<'a, u64>,
}

impl DirectGuard<'_> {
    /// Whether every submission made so far has finished (`false` if the timeline cannot be read).
    pub(crate) fn finished(&self) -> bool {
        self.direct.value().is_ok_and(|v| v >= *self.last)
    }

    /// Submits `buffers` through wgpu's queue, after every earlier submission and before every later one.
    pub(crate) fn submit_wgpu(
        &mut self,
        queue: &wgpu::Queue,
        buffers: impl IntoIterator<Item = wgpu::CommandBuffer>,
    ) -> wgpu::SubmissionIndex {
        let (mut last, next) = (*self.last, *self.last + 1);
        // A planted fault leaves wgpu's submission out of the timeline's order, on one side: it must then
        // signal nothing either, as a value signalled out of order is undefined behaviour.
        let (no_wait, no_signal) = (
            self.direct.planted(OrderingFault::WorkBeforeEarlierReplays),
            self.direct.planted(OrderingFault::WorkBeforeEarlierReplays)
                || self.direct.planted(OrderingFault::ReplayBeforeEarlierWork),
        );
        // On one queue, submission order and the replays' first and last barriers order everything: a wait
        // there would only cost (Mesa's llvmpipe blocks the submitting thread until it is met).
        if no_wait || self.direct.on == DirectOn::WgpuQueue {
            last = 0;
        }
        let timeline = self.direct.timeline;
        // SAFETY: the hal queue is used only to stage semaphores for wgpu's next submission, the one below,
        // made under the lock (struct invariants); `last` was signalled by a submission made before.
        let hal = unsafe { queue.as_hal::<wgpu::hal::api::Vulkan>() };
        if let Some(hal) = &hal {
            if last > 0 {
                hal.add_wait_semaphore(timeline, Some(last), vk::PipelineStageFlags::ALL_COMMANDS);
            }
            if !no_signal {
                hal.add_signal_semaphore(timeline, Some(next));
            }
        }
        let index = queue.submit(buffers);
        if let Some(hal) = &hal {
            // A submission that wgpu refused never reached Vulkan: its semaphores are still staged. Take them
            // back, so that no later submission waits for a value nothing will signal.
            let unsent = hal.remove_signal_semaphore(timeline);
            hal.remove_wait_semaphore(timeline);
            if !unsent && !no_signal {
                *self.last = next;
            }
        }
        index
    }

    /// Submits primary command buffers of the runtime's own, recorded for the queue's family, to the runtime's
    /// queue, after every earlier submission and before every later one; returns the timeline value that
    /// says they finished.
    ///
    /// The command buffers must be fully recorded, alive until that value is reached, and name only objects
    /// alive as long ([`NativeGraph`]'s invariants).
    pub(crate) fn submit_raw(&mut self, buffers: &[vk::CommandBuffer]) -> Result<u64, String> {
        let (mut last, next) = (*self.last, *self.last + 1);
        let direct = self.direct;
        if direct.on == DirectOn::WgpuQueue
            || direct.planted(OrderingFault::ReplayBeforeEarlierWork)
        {
            last = 0;
        }
        let waits = [direct.timeline];
        let wait_values = [last];
        let stages = [vk::PipelineStageFlags::ALL_COMMANDS];
        let signals = [direct.timeline];
        let signal_values = [next];
        let waiting = usize::from(last > 0);
        let mut values = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&wait_values[..waiting])
            .signal_semaphore_values(&signal_values);
        let info = vk::SubmitInfo::default()
            .wait_semaphores(&waits[..waiting])
            .wait_dst_stage_mask(&stages[..waiting])
            .command_buffers(buffers)
            .signal_semaphores(&signals)
            .push_next(&mut values);
        // SAFETY: the queue is submitted to under the lock (struct invariants); the command buffers are the
        // caller's, recorded and alive as this function requires; `last` was signalled by a submission made
        // before, and `next` is past every value signalled so far.
        unsafe {
            direct
                .raw
                .queue_submit(direct.queue, &[info], vk::Fence::null())
        }
        .map_err(vk_err("submitting"))?;
        *self.last = next;
        Ok(next)
    }
}

impl Drop for DirectQueue {
    fn drop(&mut self) {
        let last = *self
            .order
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // No submission may be pending that signals the semaphore (a lost device has none left to wait for).
        let _ = self.wait(last);
        // SAFETY: every submission that names the semaphore finished (waited above) or never reached Vulkan
        // (taken back: struct invariants); made on `self.raw`, destroyed once.
        unsafe { self.raw.destroy_semaphore(self.timeline, None) };
    }
}

/// The usage of a buffer over imported host memory: copied into on one device, out of on another.
const HOST_MEMORY_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::TRANSFER_SRC.as_raw() | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);

/// Whether `device` imports host memory: a Vulkan device opened with `VK_EXT_external_memory_host`
/// ([`open_device`] enables it where the device can import host memory into a transfer buffer).
pub(crate) fn imports_host_memory(device: &wgpu::Device) -> bool {
    enabled(device, ash::ext::external_memory_host::NAME)
}

/// Whether `device` is a Vulkan device opened with extension `name`.
fn enabled(device: &wgpu::Device, name: &std::ffi::CStr) -> bool {
    // SAFETY: the hal device is only read (its enabled extensions) while `device` is alive.
    unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }
        .is_some_and(|hal| hal.enabled_device_extensions().contains(&name))
}

/// The alignment `device` asks of host memory it imports (`minImportedHostPointerAlignment`), a power of
/// two; an error where it does not import host memory.
pub(crate) fn host_import_alignment(device: &wgpu::Device) -> Result<u64, String> {
    if !imports_host_memory(device) {
        return Err("the device does not import host memory (VK_EXT_external_memory_host)".into());
    }
    // SAFETY: the hal device is only read (its instance and physical device) while `device` is alive; the
    // query writes only into the structs passed, which outlive it (Vulkan 1.1: `open_device` enables the
    // extension only there).
    let alignment = unsafe {
        let Some(hal) = device.as_hal::<wgpu::hal::api::Vulkan>() else {
            return Err("not a Vulkan device".into());
        };
        let mut host = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
        let mut properties = vk::PhysicalDeviceProperties2::default().push_next(&mut host);
        hal.shared_instance()
            .raw_instance()
            .get_physical_device_properties2(hal.raw_physical_device(), &mut properties);
        host.min_imported_host_pointer_alignment
    };
    match alignment.is_power_of_two() {
        true => Ok(alignment),
        false => Err(format!(
            "the driver gave {alignment} for the alignment of imported host memory"
        )),
    }
}

/// Host memory that several Vulkan devices import (`VK_EXT_external_memory_host`), each as a buffer of its
/// own ([`HostMemory::import`]): what one device copies into it, another copies out, and the host copies
/// nothing. Two GPUs of one machine share no memory that wgpu knows of; both reach the host's.
///
/// Invariants the `unsafe` blocks rely on:
/// - `ptr` is an allocation of `layout` (zeroed, so a device never reads undefined bytes), freed only by
///   `Drop`; `layout`'s size and alignment are multiples of every importing device's
///   `minImportedHostPointerAlignment` ([`HostMemory::new`] takes the largest, [`HostMemory::import`]
///   checks it);
/// - every import holds an `Arc` of the memory until the device's buffer and memory object over it are
///   destroyed (the buffer's drop callback, which wgpu runs once no submission uses the buffer), so the
///   allocation outlives every device's view of it;
/// - the host never reads or writes the bytes: only device copies, ordered by the runtime's waits, do.
pub(crate) struct HostMemory {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

// SAFETY: the memory is a plain allocation that the host never touches through `ptr` after zeroing it (the
// struct's invariants); the pointer is only passed to Vulkan, from any thread.
unsafe impl Send for HostMemory {}
// SAFETY: as for `Send`: shared references only pass the pointer to Vulkan.
unsafe impl Sync for HostMemory {}

impl std::fmt::Debug for HostMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostMemory")
            .field("bytes", &self.layout.size())
            .finish_non_exhaustive()
    }
}

impl HostMemory {
    /// At least `bytes` of zeroed host memory, its address and size multiples of `alignment` (a power of
    /// two: the largest [`host_import_alignment`] of the devices that will import it).
    pub(crate) fn new(bytes: u64, alignment: u64) -> Result<Arc<HostMemory>, String> {
        if !alignment.is_power_of_two() {
            return Err(format!("an alignment of {alignment} bytes"));
        }
        let size = bytes.max(1).div_ceil(alignment) * alignment;
        let layout = usize::try_from(size)
            .ok()
            .zip(usize::try_from(alignment).ok())
            .and_then(|(size, align)| std::alloc::Layout::from_size_align(size, align).ok())
            .ok_or_else(|| {
                format!("{bytes} bytes of host memory are more than this host can hold")
            })?;
        // SAFETY: `layout` has a non-zero size (at least one alignment's worth).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = std::ptr::NonNull::new(ptr)
            .ok_or_else(|| format!("the host has no {size} bytes for a transfer between GPUs"))?;
        Ok(Arc::new(HostMemory { ptr, layout }))
    }

    /// A buffer of `device` over the first `bytes` of the memory (`COPY_SRC | COPY_DST`), which keeps the
    /// memory alive. `device` must be one of the devices [`HostMemory::new`] was given.
    pub(crate) fn import(
        self: &Arc<Self>,
        device: &wgpu::Device,
        bytes: u64,
    ) -> Result<wgpu::Buffer, String> {
        if bytes == 0 || bytes > self.layout.size() as u64 {
            return Err(format!(
                "a buffer of {bytes} bytes over {} bytes of host memory",
                self.layout.size()
            ));
        }
        if !(self.layout.align() as u64).is_multiple_of(host_import_alignment(device)?) {
            return Err("the memory was not aligned for this device".into());
        }
        // SAFETY: the hal device is only read (its functions, instance and physical device) while `device`
        // is alive; the `ash::Device` clone goes into the buffer's drop callback, which wgpu runs before the
        // device is destroyed (its buffer holds the device).
        let (raw, instance, physical) = unsafe {
            let Some(hal) = device.as_hal::<wgpu::hal::api::Vulkan>() else {
                return Err("not a Vulkan device".into());
            };
            (
                hal.raw_device().clone(),
                hal.shared_instance().raw_instance().clone(),
                hal.raw_physical_device(),
            )
        };
        let handle = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
        let info = vk::BufferCreateInfo::default()
            .size(bytes)
            .usage(HOST_MEMORY_USAGE)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .push_next(&mut external);
        // SAFETY: `raw` is a live device; `info` and its chain outlive the call.
        let buffer =
            unsafe { raw.create_buffer(&info, None) }.map_err(vk_err("imported buffer"))?;
        // Destroys what was made so far when a step below fails.
        let discard = |memory: vk::DeviceMemory, e: String| {
            // SAFETY: the buffer and memory (null until allocated) were made here on `raw`, nothing submitted
            // uses them, and each is destroyed once.
            unsafe {
                raw.destroy_buffer(buffer, None);
                raw.free_memory(memory, None);
            }
            e
        };
        let ext = ash::ext::external_memory_host::Device::new(&instance, &raw);
        let mut pointer = vk::MemoryHostPointerPropertiesEXT::default();
        // SAFETY: the extension is enabled on `raw` (`host_import_alignment` checked it); `ptr` is a live,
        // suitably aligned allocation (the struct's invariants); `pointer` outlives the call.
        let queried = unsafe {
            (ext.fp().get_memory_host_pointer_properties_ext)(
                raw.handle(),
                handle,
                self.ptr.as_ptr().cast_const().cast(),
                &mut pointer,
            )
        };
        if queried != vk::Result::SUCCESS {
            let why = vk_err("host pointer properties")(queried);
            return Err(discard(vk::DeviceMemory::null(), why));
        }
        // SAFETY: `buffer` is a live buffer of `raw`; the properties query only reads the physical device.
        let (needs, properties) = unsafe {
            (
                raw.get_buffer_memory_requirements(buffer),
                instance.get_physical_device_memory_properties(physical),
            )
        };
        let usable = needs.memory_type_bits & pointer.memory_type_bits;
        // Host-coherent only: the memory is never mapped, so nothing could flush or invalidate it; one
        // device's writes reach the other's reads through the host domain, by barriers and waits alone.
        let coherent = vk::MemoryPropertyFlags::HOST_COHERENT;
        let types = properties.memory_types_as_slice();
        let kind = (0..types.len())
            .find(|&i| usable & (1 << i) != 0 && types[i].property_flags.contains(coherent));
        let Some(kind) = kind else {
            let why = "no host-coherent memory type of the device takes both the buffer and the host memory";
            return Err(discard(vk::DeviceMemory::null(), why.into()));
        };
        if needs.size > self.layout.size() as u64 {
            let why = format!(
                "the buffer needs {} bytes of the {} imported",
                needs.size,
                self.layout.size()
            );
            return Err(discard(vk::DeviceMemory::null(), why));
        }
        let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
            .handle_type(handle)
            .host_pointer(self.ptr.as_ptr().cast());
        let allocate = vk::MemoryAllocateInfo::default()
            .allocation_size(self.layout.size() as u64)
            .memory_type_index(kind as u32)
            .push_next(&mut import);
        // SAFETY: an import of the whole allocation, whose size and address are multiples of the device's
        // alignment (the struct's invariants), into a memory type the host pointer allows; bound at offset 0
        // to the unbound buffer, which it is large enough for (checked above).
        let memory = unsafe { raw.allocate_memory(&allocate, None) }
            .map_err(vk_err("importing host memory"))
            .map_err(|e| discard(vk::DeviceMemory::null(), e))?;
        // SAFETY: as above.
        unsafe { raw.bind_buffer_memory(buffer, memory, 0) }
            .map_err(vk_err("binding imported host memory"))
            .map_err(|e| discard(memory, e))?;
        let keep = self.clone();
        let release = Box::new(move || {
            // SAFETY: wgpu runs this once, when its buffer is dropped and no submission uses it; the buffer
            // and memory were made on `raw` for it alone. The host memory is freed after them (`keep`).
            unsafe {
                raw.destroy_buffer(buffer, None);
                raw.free_memory(memory, None);
            }
            drop(keep);
        });
        // SAFETY: the buffer is bound to memory the drop callback frees with it; wgpu never maps it (its usage
        // has no `MAP_*`).
        let hal = unsafe { wgpu::hal::vulkan::Buffer::from_raw_externally_owned(buffer, release) };
        let desc = wgpu::BufferDescriptor {
            label: Some("host memory shared by two GPUs"),
            size: bytes,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        };
        // SAFETY: `hal` is a buffer of `device`'s Vulkan device, of `desc`'s size and of usages that cover
        // `desc`'s, bound to memory.
        Ok(unsafe { device.create_buffer_from_hal::<wgpu::hal::api::Vulkan>(hal, &desc) })
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with `layout`; every device's view of it is gone (each holds an `Arc`).
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// `device`'s physical device's UUID and its driver's (Vulkan 1.1, which importing host memory needs).
fn device_ids(device: &wgpu::Device) -> Option<([u8; 16], [u8; 16])> {
    if !imports_host_memory(device) {
        return None;
    }
    // SAFETY: the hal device is only read (its instance and physical device) while `device` is alive; the
    // query (Vulkan 1.1, which `open_device` checked before enabling host memory) writes only into the
    // structs passed, which outlive it.
    unsafe {
        let hal = device.as_hal::<wgpu::hal::api::Vulkan>()?;
        let mut ids = vk::PhysicalDeviceIDProperties::default();
        let mut properties = vk::PhysicalDeviceProperties2::default().push_next(&mut ids);
        hal.shared_instance()
            .raw_instance()
            .get_physical_device_properties2(hal.raw_physical_device(), &mut properties);
        Some((ids.device_uuid, ids.driver_uuid))
    }
}

/// The special queue family through which `a` and `b`, two devices that import host memory, hand memory both
/// import to each other (Vulkan's queue family ownership transfer): `VK_QUEUE_FAMILY_EXTERNAL` where their
/// physical devices and drivers are one (two devices of one adapter), `VK_QUEUE_FAMILY_FOREIGN_EXT` between
/// two physical devices that both enable `VK_EXT_queue_family_foreign`; `None` where neither holds, and the
/// copies are ordered by memory barriers and host waits alone (Vulkan leaves the contents such a transfer
/// brings undefined there; buffers have no layout to lose, and the drivers measured keep them).
pub(crate) fn share_family(a: &wgpu::Device, b: &wgpu::Device) -> Option<u32> {
    let (ids_a, ids_b) = (device_ids(a)?, device_ids(b)?);
    if ids_a == ids_b {
        Some(vk::QUEUE_FAMILY_EXTERNAL)
    } else if [a, b]
        .iter()
        .all(|d| enabled(d, ash::ext::queue_family_foreign::NAME))
    {
        Some(vk::QUEUE_FAMILY_FOREIGN_EXT)
    } else {
        None
    }
}

/// Which side of a transfer's copy an ownership barrier of [`share_barrier`] stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Before the copy: the buffers are acquired from the special queue family (the other device released
    /// them, or the memory is new) for the copy's access.
    Acquire,
    /// After the copy: the buffers are released to the special queue family once the copy's access is done,
    /// and (for a copy that wrote them) every transfer write is made available to the host.
    Release,
}

/// Records into `encoder`, which holds only raw commands, one side of Vulkan's queue family ownership
/// transfer of `buffers` (memory that another device imports too, [`HostMemory`]) between this device's
/// queue family and `special` (the pair's [`share_family`]; with `None`, no ownership transfer), around a
/// copy of `access` (`TRANSFER_WRITE` on the sending device, `TRANSFER_READ` on the receiving one) submitted
/// between an acquire and a release. A release after a write also makes the write available to the host,
/// from where the other device's submission makes it visible: the fence the host waits for does not do that
/// alone. `false` where `encoder` is not a Vulkan encoder, or has no command buffer (a lost device).
pub(crate) fn share_barrier(
    device: &wgpu::Device,
    encoder: &mut wgpu::CommandEncoder,
    buffers: &[&wgpu::Buffer],
    (side, special): (Side, Option<u32>),
    access: vk::AccessFlags,
) -> bool {
    // SAFETY: the hal device is only read (its function table and queue family) while `device` is alive.
    let Some((raw, family)) = (unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() })
        .map(|hal| (hal.raw_device().clone(), hal.queue_family_index()))
    else {
        return false;
    };
    let Ok(handles) = buffers
        .iter()
        .map(|b| raw_buffer(b))
        .collect::<Result<Vec<_>, _>>()
    else {
        return false;
    };
    use vk::{AccessFlags as Access, PipelineStageFlags as Stage};
    // The ownership side: per buffer, from the special family to this device's, or back (none without one).
    let (families, src, dst) = match side {
        Side::Acquire => (
            (special, Some(family)),
            (Stage::TOP_OF_PIPE, Access::empty()),
            (Stage::TRANSFER, access),
        ),
        Side::Release => (
            (Some(family), special),
            (Stage::TRANSFER, access),
            (Stage::BOTTOM_OF_PIPE, Access::empty()),
        ),
    };
    let barriers: Vec<vk::BufferMemoryBarrier<'_>> = match families {
        (Some(from), Some(to)) => handles
            .iter()
            .map(|&buffer| {
                vk::BufferMemoryBarrier::default()
                    .src_access_mask(src.1)
                    .dst_access_mask(dst.1)
                    .src_queue_family_index(from)
                    .dst_queue_family_index(to)
                    .buffer(buffer)
                    .offset(0)
                    .size(vk::WHOLE_SIZE)
            })
            .collect(),
        _ => Vec::new(),
    };
    let to_host = side == Side::Release && access.contains(Access::TRANSFER_WRITE);
    // SAFETY: `as_hal_mut` hands out wgpu's open command buffer of `device`'s encoder, which wgpu uses for no
    // command of its own (the caller's contract); the barriers name buffers of `device` that the caller keeps
    // alive until the submission finished (`staging::Shared` holds them).
    unsafe {
        encoder
            .as_hal_mut::<wgpu::hal::api::Vulkan, _, _>(|hal| {
                let cb = hal?.raw_handle();
                if !barriers.is_empty() {
                    raw.cmd_pipeline_barrier(
                        cb,
                        src.0,
                        dst.0,
                        vk::DependencyFlags::empty(),
                        &[],
                        &barriers,
                        &[],
                    );
                }
                if to_host {
                    memory_barrier(
                        &raw,
                        cb,
                        (Stage::TRANSFER, Access::TRANSFER_WRITE),
                        (Stage::HOST, Access::HOST_READ),
                    );
                }
                Some(())
            })
            .is_some()
    }
}

/// What the Vulkan driver offers for moving memory between the devices of `devices` without the host
/// copies a transfer makes today: their physical device groups (peer memory within a group), and per device
/// whether it offers importing host memory (`VK_EXT_external_memory_host`, with the alignment it asks) and
/// exporting or importing memory as a file descriptor (`VK_KHR_external_memory_fd`, which needs one device
/// UUID on both sides) or a dma-buf, and the foreign queue family (`VK_EXT_queue_family_foreign`); whether
/// the device was opened with each (by wgpu, or by the runtime's [`open_device`]); and whether the devices'
/// UUIDs differ. Words for a benchmark to print; `None` where a device is not Vulkan.
pub(crate) fn external_memory_report(devices: &[&wgpu::Device]) -> Option<String> {
    let mut lines = Vec::new();
    let mut uuids = Vec::new();
    for (i, device) in devices.iter().enumerate() {
        // SAFETY: the hal device is only read (its instance, physical device and enabled extensions) while
        // `device` is alive; the queries write only into the structs and vectors passed, which outlive them.
        let line = unsafe {
            let hal = device.as_hal::<wgpu::hal::api::Vulkan>()?;
            let instance = hal.shared_instance().raw_instance();
            let physical = hal.raw_physical_device();
            let offered: Vec<String> = instance
                .enumerate_device_extension_properties(physical)
                .unwrap_or_default()
                .iter()
                .filter_map(|e| e.extension_name_as_c_str().ok())
                .map(|name| name.to_string_lossy().into_owned())
                .collect();
            let enabled = hal.enabled_device_extensions();
            let mut ids = vk::PhysicalDeviceIDProperties::default();
            let mut host = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
            let has_host = offered.iter().any(|e| e == "VK_EXT_external_memory_host");
            let mut properties = vk::PhysicalDeviceProperties2::default().push_next(&mut ids);
            if has_host {
                properties = properties.push_next(&mut host);
            }
            instance.get_physical_device_properties2(physical, &mut properties);
            uuids.push(ids.device_uuid);
            let mut groups = String::new();
            if i == 0 {
                let count = instance.enumerate_physical_device_groups_len().unwrap_or(0);
                let mut found = vec![vk::PhysicalDeviceGroupProperties::default(); count];
                if instance
                    .enumerate_physical_device_groups(&mut found)
                    .is_ok()
                {
                    let sizes: Vec<String> = found
                        .iter()
                        .map(|g| g.physical_device_count.to_string())
                        .collect();
                    groups = format!(
                        "physical device groups of this instance: {} (devices in each: {})\n",
                        found.len(),
                        sizes.join(", ")
                    );
                }
            }
            let state = |name: &str| {
                let on = enabled.iter().any(|e| e.to_string_lossy() == name);
                match (offered.iter().any(|e| e == name), on) {
                    (true, true) => "offered, enabled",
                    (true, false) => "offered, not enabled",
                    (false, _) => "not offered",
                }
            };
            format!(
                "{groups}device {i}: VK_EXT_external_memory_host {} (host pointers aligned to {} bytes), \
                 VK_EXT_queue_family_foreign {}, VK_KHR_external_memory_fd {}, \
                 VK_EXT_external_memory_dma_buf {}",
                state("VK_EXT_external_memory_host"),
                host.min_imported_host_pointer_alignment,
                state("VK_EXT_queue_family_foreign"),
                state("VK_KHR_external_memory_fd"),
                state("VK_EXT_external_memory_dma_buf"),
            )
        };
        lines.push(line);
    }
    let distinct = uuids.windows(2).all(|w| w[0] != w[1]);
    lines.push(format!(
        "device UUIDs {} (opaque file descriptors import only where they are one)",
        if distinct { "differ" } else { "are the same" }
    ));
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::reached;

    #[test]
    fn a_marker_value_is_reached_by_itself_and_later_values_only() {
        // Before any submission the word is 0: no value is reached.
        assert!(!reached(0, 1));
        assert!(!reached(0, 7));
        for value in [1u32, 2, 1000, u32::MAX - 2, u32::MAX] {
            assert!(reached(value, value), "{value}");
            assert!(reached(value.wrapping_add(3), value), "{value} + 3");
            assert!(!reached(value.wrapping_sub(1), value), "{value} - 1");
        }
        // Across the wrap (0 is skipped): 1 comes after u32::MAX.
        assert!(reached(1, u32::MAX));
        assert!(!reached(u32::MAX, 1));
    }
}
