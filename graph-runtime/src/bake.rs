//! Bake (SYCL's `finalize`): the bound buffers are checked and the graph is compiled into its executable
//! program ([`crate::program`]); here too are the portable recorder's pipelines and bind groups for a
//! program, which `BakedState` makes only where that recorder replays.

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::collections::HashMap;

use graph_core::desc::{DispatchDesc, GraphDesc, OpDesc};
use graph_core::fusion::{Declined, FusedGroup, Fusion, ValidModules, fuse_with, widen_with};
use graph_core::ir::{AccessMode, Role};

use crate::buffer::AnyBuffer;
use crate::error::Error;
use crate::gpu::Gpu;
use crate::params::ParamsTransport;
use crate::program::{DeviceLimits, MemoryOptions, Program, in_block};
use crate::replay::{KernelStep, Kernels};
use crate::slice::Slice;
use crate::texture::{Texture, view_dimension, wgpu_format};
use graph_core::memory::MemoryPlan;
use graph_core::texture::{SampleKind, SamplerAddress, SamplerFilter, SamplerType, TextureType};

/// The buffers of a baked graph: external ones bound by the caller, owned ones created here, in the graph's
/// transient heap or apart (`Program::memory`).
pub(crate) struct BoundBuffers {
    pub buffers: Vec<Slice>,
    pub lens: Vec<u32>,
    /// The heaps the placed owned buffers are ranges of (`MemoryPlan::heaps`).
    pub heaps: Vec<wgpu::Buffer>,
    /// What every buffer fusion keeps in registers, and every texture's slot among the buffers, is bound
    /// to, if there is one: nothing reads it.
    pub placeholder: Option<wgpu::Buffer>,
    /// Each texture's view, by buffer index (`None` for buffers): what a kernel binds in its place.
    pub views: Vec<Option<wgpu::TextureView>>,
    /// Each texture, bound or graph-owned, by buffer index: what copies, uploads and readbacks move.
    pub textures: Vec<Option<Texture>>,
    /// Each sampler, by buffer index, with the type it was made of (an update keeps one of the same type).
    pub samplers: Vec<Option<(SamplerType, wgpu::Sampler)>>,
}

/// The placeholder's bytes: one element of the largest element type (`vec4<f32>`).
const PLACEHOLDER_BYTES: u64 = 16;

/// The usages of every buffer the graph owns, heap included: any step may bind, copy or dispatch from it.
const OWNED_USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST)
    .union(wgpu::BufferUsages::INDIRECT);

/// The length of each buffer: an owned one's declared length (checked against the device's binding limit),
/// an external one's bound length, checked against its declaration (element type, length, usage, device)
/// with the external buffer itself. `registers`: the owned buffers fusion keeps in registers.
fn bind_externals(
    gpu: &Gpu,
    desc: &GraphDesc,
    bound: &[(u32, &AnyBuffer)],
    textures: &[Option<Texture>],
    registers: &[u32],
) -> Result<Externals, Error> {
    let graph = || desc.name.to_string();
    let limits = gpu.device().limits();
    let mut buffers = Vec::with_capacity(desc.buffers.len());
    let mut lens = Vec::with_capacity(desc.buffers.len());
    let mut views = Vec::with_capacity(desc.buffers.len());
    for (index, b) in desc.buffers.iter().enumerate() {
        let texture = b.texture_type();
        views.push(match texture {
            Some(ty) => bind_texture(gpu, desc, index, ty, textures)?,
            None => None,
        });
        if texture.is_some() || b.sampler.is_some() {
            // No length: nothing sizes by a texture's (the description's checks), and a sampler has none.
            buffers.push(None);
            lens.push(0);
            continue;
        }
        if b.role == Role::Owned {
            let len = b.len.unwrap_or(1);
            let elements = match registers.contains(&(index as u32)) {
                true => 1,
                false => len,
            };
            check_binding_size(desc, index as u32, owned_size(b, elements), &limits)?;
            buffers.push(None);
            lens.push(len);
            continue;
        }
        let Some((_, any)) = bound.iter().find(|(i, _)| *i as usize == index) else {
            return Err(Error::MissingBuffer {
                graph: graph(),
                buffer: b.name.to_string(),
            });
        };
        // Checked by the runtime's own identity: wgpu calls the devices of two instances equal.
        if any.gpu().id() != gpu.id() {
            return Err(Error::ForeignBuffer {
                graph: graph(),
                buffer: b.name.to_string(),
            });
        }
        if any.elem() != b.elem {
            return Err(Error::BufferType {
                graph: graph(),
                buffer: b.name.to_string(),
                expected: b.elem.wgsl(),
                actual: any.elem().wgsl(),
            });
        }
        match b.len {
            Some(n) if any.len() != n => {
                return Err(Error::BufferLength {
                    graph: graph(),
                    buffer: b.name.to_string(),
                    expected: format!("exactly {n}"),
                    actual: any.len().into(),
                });
            }
            None if any.is_empty() => {
                return Err(Error::BufferLength {
                    graph: graph(),
                    buffer: b.name.to_string(),
                    expected: "at least 1".into(),
                    actual: 0,
                });
            }
            _ => {}
        }
        let needed = needed_usage(desc, index as u32);
        let missing = needed - any.wgpu().usage();
        if !missing.is_empty() {
            return Err(Error::BufferUsage {
                graph: graph(),
                buffer: b.name.to_string(),
                missing: missing
                    .iter_names()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>()
                    .join(" | "),
            });
        }
        check_binding_size(desc, index as u32, any.wgpu().size(), &limits)?;
        buffers.push(Some(Slice::whole(any.wgpu().clone())));
        lens.push(any.len());
    }
    check_aliasing(desc, &buffers)?;
    check_texture_aliasing(desc, textures)?;
    Ok(Externals {
        buffers,
        lens,
        views,
        textures: textures.to_vec(),
    })
}

/// The external buffers bound, by index (`None` for owned buffers and textures), every buffer's length
/// (0 for a texture), and each texture's view.
struct Externals {
    buffers: Vec<Option<Slice>>,
    lens: Vec<u32>,
    views: Vec<Option<wgpu::TextureView>>,
    textures: Vec<Option<Texture>>,
}

/// The view of the texture bound to texture `index` (of type `ty`), once it is checked against the
/// declaration and against how the graph's kernels bind it; none where no kernel binds it (a texture only
/// copied needs no usage a view asks for).
fn bind_texture(
    gpu: &Gpu,
    desc: &GraphDesc,
    index: usize,
    ty: graph_core::texture::TextureType,
    textures: &[Option<Texture>],
) -> Result<Option<wgpu::TextureView>, Error> {
    let name = &desc.buffers[index].name;
    let Some(texture) = textures.get(index).and_then(Option::as_ref) else {
        return Err(Error::TextureMismatch {
            graph: desc.name.to_string(),
            texture: name.to_string(),
            reason: "no texture was bound for it".into(),
        });
    };
    let (sampled, storage) = crate::texture::texture_uses(desc, index, ty);
    texture.check(gpu, &desc.name, name, ty, sampled, storage)?;
    // wgpu's GL backend makes a 1-D texture a 2-D one, and a kernel read only zeros from it here
    // (`one_dimensional_textures_load_and_store`, on llvmpipe's GL): refused rather than wrong.
    if ty.dim == graph_core::texture::TextureDim::D1 && gpu.backend() == Some(wgpu::Backend::Gl) {
        return Err(Error::TextureMismatch {
            graph: desc.name.to_string(),
            texture: name.to_string(),
            reason: "wgpu's GL backend does not read 1-D textures right (a kernel read zeros); declare it \
                     `texture_2d<..>` of height 1"
                .into(),
        });
    }
    // The same backend binds a 3-D storage texture's first slice only: a fill of a 3-D texture wrote depth 0
    // and left the rest (`a_fill_sets_every_texel_of_each_dimension`, on llvmpipe's GL).
    let d3 = ty.dim == graph_core::texture::TextureDim::D3;
    if d3 && storage && gpu.backend() == Some(wgpu::Backend::Gl) {
        return Err(Error::TextureMismatch {
            graph: desc.name.to_string(),
            texture: name.to_string(),
            reason: "wgpu's GL backend binds only the first slice of a 3-D storage texture (a fill wrote depth \
                     0 alone); write it as a `texture_2d_array<..>`, one layer per slice"
                .into(),
        });
    }
    // And a view of some of a 2-D texture's layers read nothing here: a kernel bound to layer 2 of 3 left
    // its output unwritten (`a_mip_level_or_a_layer_of_a_texture_binds_as_the_graph_declares`, llvmpipe's GL).
    if (sampled || storage) && texture.some_layers() && gpu.backend() == Some(wgpu::Backend::Gl) {
        return Err(Error::TextureMismatch {
            graph: desc.name.to_string(),
            texture: name.to_string(),
            reason: "wgpu's GL backend does not bind some of a texture's layers (a kernel bound to one read \
                     nothing); bind a texture of those layers alone, or all of them as a `texture_2d_array<..>`"
                .into(),
        });
    }
    Ok((sampled || storage).then(|| texture.view(ty.dim)))
}

/// The owned buffers as `memory` places them: ranges of its heaps, or buffers of their own (for those fusion
/// keeps in registers, in `registers`, one element of a placeholder they share). `previous`'s heaps and owned
/// buffers are kept where their size is unchanged (an update keeps what the graph owns).
fn bind_owned(
    gpu: &Gpu,
    desc: &GraphDesc,
    externals: Externals,
    memory: &MemoryPlan,
    previous: Option<&BoundBuffers>,
    registers: &[u32],
) -> BoundBuffers {
    let Externals {
        buffers: externals,
        lens,
        views,
        textures,
    } = externals;
    let create = |label: &str, size: u64| {
        gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: OWNED_USAGE,
            mapped_at_creation: false,
        })
    };
    let heaps: Vec<wgpu::Buffer> = memory
        .heaps
        .iter()
        .enumerate()
        .map(|(h, &bytes)| {
            previous
                .and_then(|p| p.heaps.get(h).cloned())
                .filter(|old| old.size() == bytes)
                .unwrap_or_else(|| create(&format!("{} transient heap {h}", desc.name), bytes))
        })
        .collect();
    let samplers = make_samplers(gpu, desc, previous);
    let textured = textures.iter().any(Option::is_some) || samplers.iter().any(Option::is_some);
    let placeholder = (!registers.is_empty() || textured).then(|| {
        previous
            .and_then(|p| p.placeholder.clone())
            .unwrap_or_else(|| {
                create(
                    &format!("{} registers' placeholder", desc.name),
                    PLACEHOLDER_BYTES,
                )
            })
    });
    let mut buffers = Vec::with_capacity(desc.buffers.len());
    for (index, (external, b)) in externals.into_iter().zip(desc.buffers.iter()).enumerate() {
        if let Some(external) = external {
            buffers.push(external);
            continue;
        }
        // A texture or a sampler: kernels bind its view or it, and its place among the buffers is the
        // placeholder's.
        let image = textures[index].is_some() || samplers[index].is_some();
        if let (true, Some(placeholder)) = (image, &placeholder) {
            buffers.push(Slice {
                buffer: placeholder.clone(),
                offset: 0,
                size: PLACEHOLDER_BYTES,
            });
            continue;
        }
        // Kept in registers by fusion: nothing reads the buffer, bound to one element of the placeholder
        // so that indices stay those of the description. Its length stays the declared one, for sizes.
        if let (true, Some(placeholder)) = (registers.contains(&(index as u32)), &placeholder) {
            buffers.push(Slice {
                buffer: placeholder.clone(),
                offset: 0,
                size: owned_size(b, 1),
            });
            continue;
        }
        let size = owned_size(b, lens[index]);
        let placed = memory.placements.get(index).copied().flatten();
        if let Some((place, heap)) = placed.and_then(|p| Some((p, heaps.get(p.heap as usize)?))) {
            buffers.push(Slice {
                buffer: heap.clone(),
                offset: place.offset,
                size,
            });
            continue;
        }
        // A buffer of its own before (not the placeholder, not a range of a heap), of this size.
        let kept = previous.and_then(|p| {
            let old = p.buffers.get(index)?;
            let shared =
                p.placeholder.as_ref() == Some(&old.buffer) || p.heaps.contains(&old.buffer);
            (!shared && old.offset == 0 && old.buffer.size() == size && old.size == size)
                .then_some(old)
        });
        match kept {
            Some(old) => buffers.push(old.clone()),
            None => buffers.push(Slice::whole(create(&b.name, size))),
        }
    }
    BoundBuffers {
        buffers,
        lens,
        heaps,
        placeholder,
        views,
        textures,
        samplers,
    }
}

/// A sampler for each of the graph's: the previous build's where it was made of the same type (so that an
/// update keeps the bind groups that bind it), else a new one.
fn make_samplers(
    gpu: &Gpu,
    desc: &GraphDesc,
    previous: Option<&BoundBuffers>,
) -> Vec<Option<(SamplerType, wgpu::Sampler)>> {
    desc.buffers
        .iter()
        .enumerate()
        .map(|(index, b)| {
            let ty = b.sampler_type()?;
            let kept = previous
                .and_then(|p| p.samplers.get(index)?.clone())
                .filter(|(old, _)| *old == ty);
            Some(kept.unwrap_or_else(|| (ty, create_sampler(gpu, &b.name, ty))))
        })
        .collect()
}

/// A wgpu sampler of `ty`: its filter for magnifying and minifying (textures have one level), its address
/// mode along every axis.
fn create_sampler(gpu: &Gpu, name: &str, ty: SamplerType) -> wgpu::Sampler {
    let filter = match ty.filter {
        SamplerFilter::Nearest => wgpu::FilterMode::Nearest,
        SamplerFilter::Linear => wgpu::FilterMode::Linear,
    };
    let address = match ty.address {
        SamplerAddress::Clamp => wgpu::AddressMode::ClampToEdge,
        SamplerAddress::Repeat => wgpu::AddressMode::Repeat,
        SamplerAddress::Mirror => wgpu::AddressMode::MirrorRepeat,
    };
    gpu.device().create_sampler(&wgpu::SamplerDescriptor {
        label: Some(name),
        address_mode_u: address,
        address_mode_v: address,
        address_mode_w: address,
        mag_filter: filter,
        min_filter: filter,
        ..Default::default()
    })
}

/// Bytes of `elements` elements of owned buffer `b`.
fn owned_size(b: &graph_core::desc::BufferDesc, elements: u32) -> u64 {
    b.elem.buffer_bytes(u64::from(elements))
}

/// The device has what the graph's modules use: `SHADER_F16` for `f16` (checked here, before any module is
/// made, so the error says why rather than what wgpu's shader compiler found).
fn check_features(gpu: &Gpu, desc: &GraphDesc) -> Result<(), Error> {
    let has_f16 = gpu.device().features().contains(wgpu::Features::SHADER_F16);
    match desc.needs_f16() {
        Some(why) if !has_f16 => Err(Error::Unsupported {
            graph: desc.name.to_string(),
            what: format!(
                "{why}, and this device was made without `Features::SHADER_F16` (`Gpu::new` asks for it \
                 where the adapter offers it): bake it on a device with `f16`, or use `f32`"
            ),
        }),
        _ => Ok(()),
    }
}

/// Each buffer the caller binds is one of the graph's external buffers, bound once: a second binding of one
/// buffer would otherwise be ignored (or replace the first) without a word.
pub(crate) fn check_bindings(desc: &GraphDesc, bound: &[(u32, &AnyBuffer)]) -> Result<(), Error> {
    for (i, &(index, _)) in bound.iter().enumerate() {
        let declared = desc.buffers.get(index as usize);
        let Some(b) = declared.filter(|b| b.role.is_external()) else {
            let name = declared.map_or_else(|| format!("#{index}"), |b| b.name.to_string());
            let known = desc
                .buffers
                .iter()
                .filter(|b| b.role.is_external())
                .map(|b| format!("`{}`", b.name));
            return Err(crate::error::unknown(desc, "external buffer", &name, known));
        };
        if bound[..i].iter().any(|&(other, _)| other == index) {
            return Err(Error::BoundTwice {
                graph: desc.name.to_string(),
                buffer: b.name.to_string(),
            });
        }
    }
    Ok(())
}

/// A buffer a kernel binds fits the device's storage-binding limit.
fn check_binding_size(
    desc: &GraphDesc,
    index: u32,
    size: u64,
    limits: &wgpu::Limits,
) -> Result<(), Error> {
    let limit = limits.max_storage_buffer_binding_size;
    let bound_by_a_kernel = desc.nodes.iter().any(
        |n| matches!(&n.op, OpDesc::Kernel(k) if k.bindings.iter().any(|b| b.buffer == index)),
    );
    if bound_by_a_kernel && size > limit {
        let b = &desc.buffers[index as usize];
        return Err(Error::BufferTooLarge {
            elements: size / u64::from(b.elem.size()),
            elem: b.elem.wgsl(),
            reason: format!(
                "graph `{}` binds `{}` to a kernel, and its {size} bytes are over this device's limit of {limit} \
                 bytes per storage binding",
                desc.name, b.name
            ),
        });
    }
    Ok(())
}

/// Two external buffers may share memory only when the graph only reads both.
fn check_aliasing(desc: &GraphDesc, buffers: &[Option<Slice>]) -> Result<(), Error> {
    for (i, a) in desc.buffers.iter().enumerate() {
        for (j, b) in desc.buffers.iter().enumerate().skip(i + 1) {
            let written = a.role != Role::Input || b.role != Role::Input;
            let same = match (&buffers[i], &buffers[j]) {
                (Some(x), Some(y)) => x.buffer == y.buffer,
                _ => false,
            };
            if a.role.is_external() && b.role.is_external() && written && same {
                return Err(Error::AliasedBuffers {
                    graph: desc.name.to_string(),
                    first: a.name.to_string(),
                    second: b.name.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Two textures may be one wgpu texture only when the graph only reads both, as for buffers.
fn check_texture_aliasing(desc: &GraphDesc, textures: &[Option<Texture>]) -> Result<(), Error> {
    let bound = |i: usize| textures.get(i).and_then(Option::as_ref);
    for i in 0..desc.buffers.len() {
        for j in i + 1..desc.buffers.len() {
            let (Some(a), Some(b)) = (bound(i), bound(j)) else {
                continue;
            };
            let written =
                desc.buffers[i].role != Role::Input || desc.buffers[j].role != Role::Input;
            if written && a.wgpu() == b.wgpu() {
                return Err(Error::TextureMismatch {
                    graph: desc.name.to_string(),
                    texture: desc.buffers[j].name.to_string(),
                    reason: format!(
                        "it is the texture bound to `{}` too, and the graph writes one of them; the graph's \
                         ordering assumes distinct names are distinct memory",
                        desc.buffers[i].name
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The usages the graph needs of buffer `index`: storage for kernels, copy source/destination for copies,
/// uploads, readbacks and host tasks.
fn needed_usage(desc: &GraphDesc, index: u32) -> wgpu::BufferUsages {
    let mut usage = wgpu::BufferUsages::empty();
    for (n, node) in desc.nodes.iter().enumerate() {
        match &node.op {
            OpDesc::Kernel(k) if k.dispatch == DispatchDesc::Indirect(index) => {
                usage |= wgpu::BufferUsages::INDIRECT;
                if k.bindings.iter().any(|b| b.buffer == index) {
                    usage |= wgpu::BufferUsages::STORAGE;
                }
            }
            OpDesc::Kernel(k) if k.bindings.iter().any(|b| b.buffer == index) => {
                usage |= wgpu::BufferUsages::STORAGE
            }
            // A copy in a block runs as a kernel over the buffers as storage.
            &OpDesc::Copy { src, dst, .. }
                if (src == index || dst == index) && in_block(desc, n) =>
            {
                usage |= wgpu::BufferUsages::STORAGE
            }
            &OpDesc::Copy { src, .. } if src == index => usage |= wgpu::BufferUsages::COPY_SRC,
            &OpDesc::Copy { dst, .. } if dst == index => usage |= wgpu::BufferUsages::COPY_DST,
            &OpDesc::Upload { buffer, .. } if buffer == index => {
                usage |= wgpu::BufferUsages::COPY_DST
            }
            &OpDesc::Readback { buffer, .. } if buffer == index => {
                usage |= wgpu::BufferUsages::COPY_SRC
            }
            OpDesc::Host { accesses } => {
                for a in accesses.iter().filter(|a| a.buffer == index) {
                    if a.mode.reads() {
                        usage |= wgpu::BufferUsages::COPY_SRC;
                    }
                    if a.mode.writes() {
                        usage |= wgpu::BufferUsages::COPY_DST;
                    }
                }
            }
            _ => {}
        }
    }
    usage
}

/// A pipeline's identity: its module, entry point, access modes and pipeline constants (a fill's range, as
/// bits).
type PipelineKey = (String, String, LayoutKey, Vec<u64>);

/// A bind group layout's identity: binding by binding, the access mode, the texture's type where the
/// binding is a texture and the sampler's where it is a sampler.
type LayoutKey = (
    Vec<AccessMode>,
    Vec<Option<TextureType>>,
    Vec<Option<SamplerType>>,
);

/// The layouts and pipelines of a baked graph, kept across updates: an update compiles only the kernels whose
/// code changed, and every pipeline and bind group shares one set of layouts.
#[derive(Default, Clone)]
pub(crate) struct KernelCache {
    layouts: HashMap<LayoutKey, (wgpu::BindGroupLayout, wgpu::PipelineLayout)>,
    pipelines: HashMap<PipelineKey, wgpu::ComputePipeline>,
}

/// How many GPU objects a build created (the rest it reused): what an update cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Built {
    pub pipelines: usize,
    pub bind_groups: usize,
}

/// The portable recorder's objects for `program`: a wgpu pipeline per entry of its kernel table, a bind group
/// per node that dispatches one. A pipeline already in `cache`, and a bind group of `previous` over the same
/// buffers, are reused.
pub(crate) fn build_kernels(
    gpu: &Gpu,
    program: &Program,
    bound: &BoundBuffers,
    params: &ParamsTransport,
    cache: &mut KernelCache,
    previous: Option<&Kernels>,
) -> (Kernels, Built) {
    let device = gpu.device();
    let mut built = Built::default();
    let mut keys = Vec::with_capacity(program.kernels.len());
    let mut pipelines = Vec::with_capacity(program.kernels.len());
    for entry in &program.kernels {
        let layout_key: LayoutKey = (
            entry.modes.clone(),
            entry.textures.clone(),
            entry.samplers.clone(),
        );
        let (_, pipeline_layout) = cache
            .layouts
            .entry(layout_key.clone())
            .or_insert_with(|| layouts_for(device, &layout_key, params));
        let key: PipelineKey = (
            entry.module(params.storage()),
            entry.entry.clone(),
            layout_key,
            entry.constants.iter().map(|(_, v)| v.to_bits()).collect(),
        );
        let pipeline = match cache.pipelines.get(&key) {
            Some(pipeline) => pipeline.clone(),
            None => {
                built.pipelines += 1;
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&entry.label),
                    source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(&key.0)),
                });
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&entry.label),
                    layout: Some(pipeline_layout),
                    module: &module,
                    entry_point: Some(&entry.entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &entry.constant_pairs(),
                        ..Default::default()
                    },
                    cache: None,
                });
                cache.pipelines.insert(key.clone(), pipeline.clone());
                pipeline
            }
        };
        keys.push(key);
        pipelines.push(pipeline);
    }
    // Only the pipelines in use stay cached: updates do not accumulate them.
    let in_use: std::collections::HashSet<&PipelineKey> = keys.iter().collect();
    cache.pipelines.retain(|key, _| in_use.contains(key));

    let mut nodes = Vec::with_capacity(program.nodes.len());
    for (n, node) in program.nodes.iter().enumerate() {
        let Some(node) = node else {
            nodes.push(None);
            continue;
        };
        let entry = &program.kernels[node.kernel];
        let buffers: Vec<Slice> = node
            .buffers
            .iter()
            .map(|&b| bound.buffers[b as usize].clone())
            .collect();
        let views: Vec<Option<wgpu::TextureView>> = node
            .buffers
            .iter()
            .map(|&b| bound.views.get(b as usize).cloned().flatten())
            .collect();
        let samplers: Vec<Option<wgpu::Sampler>> = node
            .buffers
            .iter()
            .map(|&b| Some(bound.samplers.get(b as usize)?.as_ref()?.1.clone()))
            .collect();
        // The same layout, buffers, textures and samplers: the previous bind group serves.
        let reusable = previous
            .and_then(|p| p.nodes.get(n)?.as_ref())
            .filter(|old| {
                old.modes == entry.modes
                    && old.buffers == buffers
                    && old.views == views
                    && old.samplers == samplers
            })
            .map(|old| old.bind_group.clone());
        let bind_group = match reusable {
            Some(group) => group,
            None => {
                built.bind_groups += 1;
                let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
                    .iter()
                    .zip(views.iter().zip(&samplers))
                    .enumerate()
                    .map(|(i, (b, (view, sampler)))| wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: match (view, sampler) {
                            (Some(view), _) => wgpu::BindingResource::TextureView(view),
                            (None, Some(sampler)) => wgpu::BindingResource::Sampler(sampler),
                            (None, None) => b.binding(),
                        },
                    })
                    .collect();
                let layout_key = (
                    entry.modes.clone(),
                    entry.textures.clone(),
                    entry.samplers.clone(),
                );
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&entry.label),
                    layout: &cache.layouts[&layout_key].0,
                    entries: &entries,
                })
            }
        };
        nodes.push(Some(KernelStep {
            pipeline: node.kernel,
            bind_group,
            modes: entry.modes.clone(),
            buffers,
            views,
            samplers,
        }));
    }
    (Kernels { pipelines, nodes }, built)
}

/// The bind group layout of one combination of access modes, and the pipeline layout around it (with the
/// parameters' push-constant range or uniform group).
fn layouts_for(
    device: &wgpu::Device,
    (modes, textures, samplers): &LayoutKey,
    params: &ParamsTransport,
) -> (wgpu::BindGroupLayout, wgpu::PipelineLayout) {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = modes
        .iter()
        .zip(textures.iter().zip(samplers))
        .enumerate()
        .map(|(i, (m, (texture, sampler)))| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: match (texture, sampler) {
                (Some(texture), _) => texture_binding(texture, *m),
                (None, Some(sampler)) => wgpu::BindingType::Sampler(match sampler.filtering() {
                    true => wgpu::SamplerBindingType::Filtering,
                    false => wgpu::SamplerBindingType::NonFiltering,
                }),
                (None, None) => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage {
                        read_only: *m == AccessMode::Read,
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
            },
            count: None,
        })
        .collect();
    let bind_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &entries,
    });
    let mut groups = vec![Some(&bind_layout)];
    if let Some(uniform) = params.group_layout() {
        groups.push(Some(uniform));
    }
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &groups,
        immediate_size: params.immediate_size(),
    });
    (bind_layout, pipeline_layout)
}

/// How a kernel declaring `mode` binds a texture of `ty`, as [`TextureType::binding_wgsl`] declares it.
pub(crate) fn texture_binding(ty: &TextureType, mode: AccessMode) -> wgpu::BindingType {
    let view_dimension = view_dimension(ty.dim);
    match (ty.storage, mode) {
        (None, AccessMode::Read) => wgpu::BindingType::Texture {
            sample_type: match ty.format.sample_kind() {
                SampleKind::Float => wgpu::TextureSampleType::Float { filterable: true },
                SampleKind::UnfilterableFloat => {
                    wgpu::TextureSampleType::Float { filterable: false }
                }
                SampleKind::Uint => wgpu::TextureSampleType::Uint,
                SampleKind::Sint => wgpu::TextureSampleType::Sint,
            },
            view_dimension,
            multisampled: false,
        },
        _ => wgpu::BindingType::StorageTexture {
            access: match mode {
                AccessMode::Read => wgpu::StorageTextureAccess::ReadOnly,
                AccessMode::Write => wgpu::StorageTextureAccess::WriteOnly,
                AccessMode::ReadWrite => wgpu::StorageTextureAccess::ReadWrite,
            },
            format: wgpu_format(ty.format),
            view_dimension,
        },
    }
}

/// The most buffers one fused kernel binds, whatever more the device allows. Past it a fused kernel's compile
/// time grows faster than the dispatches it saves are worth: on the H100 (first bake in a process, the
/// driver's disk cache off), a chain of 1000 kernels fused into two kernels of 759 and 241 members took
/// 4.25 s to bake, into 33 of 31 members 0.32 s; the fan of 100 replayed as 4 kernels of 31 members in
/// 27.5-28.8 us, as one of 100 in 26.7-28.0 us, and the tree of 127 as 8 kernels in 50.0-50.2 us, as one in
/// 42.5-43.5 us (`benches/bake_costs.rs`, `docs/performance.md`). The fusion pass joins the groups the
/// macro's `FUSED` promised (within 8 buffers) whole, so every promise holds under the larger limit.
pub(crate) const FUSED_MAX_BINDINGS: usize = 32;

/// What a replay of `desc` over the caller's `externals` needs, but the recorders' objects: the description
/// fused over the buffers' lengths, within the device's binding limit and [`FUSED_MAX_BINDINGS`]
/// ([`graph_core::fusion`], unless its kernels are marked `#[no_fusion]`), the buffers (those fusion keeps in
/// registers get a one-element placeholder) and the executable program. `previous` is the bound buffers of
/// what an update replaces: its owned buffers are reused where they still fit. Fused modules in
/// `valid_modules` are not validated again, and those validated now are added; and where `previous_fusion`
/// was given the same input, its result is taken whole (a rebind of a buffer to one of the same length, the
/// same description again). `params` is the parameter block, which sizes the textures declared by
/// parameters.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_replay(
    gpu: &Gpu,
    desc: &GraphDesc,
    externals: &[(u32, &AnyBuffer)],
    textures: &[Option<Texture>],
    params: &[u8],
    previous: Option<&BoundBuffers>,
    valid_modules: &mut ValidModules,
    previous_fusion: Option<PreviousFusion<'_>>,
    apart: &[u32],
) -> Result<Replayable, Error> {
    check_features(gpu, desc)?;
    let textures = {
        let _span = tracing::debug_span!("create owned textures").entered();
        let previous = previous.map(|p| p.textures.as_slice());
        crate::texture::complete(gpu, desc, textures, previous, params)?
    };
    let param_extents = crate::texture::param_extents(desc, params);
    // A size that reads a texture's (`t.width()`) reads the bound one's from here on: a texture's size only
    // changes with a rebind, which comes back here.
    let extents: Vec<Option<[u32; 3]>> = textures
        .iter()
        .map(|t| t.as_ref().map(Texture::extent))
        .collect();
    let desc = &*desc.with_texture_extents(&extents);
    let lengths: Vec<Option<u64>> = desc
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| match b.role {
            Role::Owned => Some(u64::from(b.len.unwrap_or(1))),
            _ => externals
                .iter()
                .find(|(index, _)| *index as usize == i)
                .map(|(_, any)| u64::from(any.len())),
        })
        .collect();
    // As many buffers per fused kernel as this device binds for one shader stage, up to the cap.
    let limits = gpu.device().limits();
    let max_bindings = limits
        .max_storage_buffers_per_shader_stage
        .min(limits.max_bindings_per_bind_group) as usize;
    let max_bindings = max_bindings.min(FUSED_MAX_BINDINGS);
    let fusion_input = FusionInput {
        desc: kept_apart(desc, apart),
        lengths,
        max_bindings,
    };
    let lengths = &fusion_input.lengths;
    let fusion = match previous_fusion.filter(|p| *p.input == fusion_input) {
        Some(p) => Fusion {
            desc: Cow::Owned(p.replayed.clone()),
            groups: p.fused.groups.clone(),
            declined: p.fused.declined.clone(),
            widened: p.fused.widened.clone(),
        },
        None => {
            let _span = tracing::debug_span!("fuse", graph = %desc.name).entered();
            let fused = fuse_with(&fusion_input.desc, lengths, max_bindings, valid_modules);
            let fusion = widen_with(fused, lengths, max_bindings, valid_modules);
            for declined in &fusion.declined {
                tracing::warn!(graph = %desc.name, "{declined}");
            }
            fusion
        }
    };
    let registers = fusion.registers();
    let externals = {
        let _span = tracing::debug_span!("bind buffers").entered();
        bind_externals(gpu, desc, externals, &textures, &registers)?
    };
    let program = {
        let _span = tracing::debug_span!("compile program").entered();
        let compile = |alias| {
            let memory = MemoryOptions {
                registers: &registers,
                alias,
            };
            Program::compile(
                &fusion.desc,
                &externals.lens,
                DeviceLimits::from(&limits),
                memory,
            )
        };
        let program = compile(true)?;
        // A heap past the device's largest buffer: each owned buffer in memory of its own, as before.
        let mut program = match program
            .memory
            .heaps
            .iter()
            .any(|&h| h > limits.max_buffer_size)
        {
            true => compile(false)?,
            false => program,
        };
        let not_sized = |t: u32| {
            param_extents
                .get(t as usize)
                .is_some_and(|e| e.is_some_and(|e| e.contains(&0)))
        };
        crate::texture::plan_transfers(
            desc,
            &mut program,
            &externals.textures,
            &externals.lens,
            not_sized,
        )?;
        program
    };
    let bound = {
        let _span = tracing::debug_span!("create owned buffers").entered();
        bind_owned(gpu, desc, externals, &program.memory, previous, &registers)
    };
    Ok(Replayable {
        bound,
        program,
        fused: Fused {
            groups: fusion.groups,
            declined: fusion.declined,
            widened: fusion.widened,
        },
        desc: fusion.desc.into_owned(),
        fusion_input,
        param_extents,
    })
}

/// What a build's fusion pass was given: the description (texture extents written in), the buffers' lengths
/// and the binding limit. The pass depends on nothing else, so a build given an equal input takes the
/// previous result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FusionInput {
    desc: GraphDesc,
    lengths: Vec<Option<u64>>,
    max_bindings: usize,
}

/// `desc` with nodes `apart` (ever turned off, [`crate::BakedGraph::set_enabled`]) left out of the fusion pass
/// (as `#[no_fusion]` leaves them), so that each keeps a dispatch of its own to skip, and the graph-owned
/// buffers they write in memory of their own (as `#[no_alias]` keeps them), so that a skipped write leaves
/// what the buffer held.
fn kept_apart(desc: &GraphDesc, apart: &[u32]) -> GraphDesc {
    let mut desc = desc.clone();
    if apart.is_empty() {
        return desc;
    }
    let mut written = Vec::new();
    for (n, node) in desc.nodes.to_mut().iter_mut().enumerate() {
        if !apart.contains(&(n as u32)) {
            continue;
        }
        match &mut node.op {
            OpDesc::Kernel(k) => {
                k.no_fusion = true;
                written.extend(
                    k.bindings
                        .iter()
                        .filter(|a| a.mode.writes())
                        .map(|a| a.buffer),
                );
            }
            OpDesc::Copy { dst, .. } => written.push(*dst),
            _ => {}
        }
    }
    for b in written {
        if let Some(buffer) = desc.buffers.to_mut().get_mut(b as usize)
            && buffer.role == Role::Owned
        {
            buffer.no_alias = true;
        }
    }
    desc
}

/// The fusion an earlier build made, and from what.
pub(crate) struct PreviousFusion<'a> {
    pub input: &'a FusionInput,
    pub fused: &'a Fused,
    /// The fused description.
    pub replayed: &'a GraphDesc,
}

/// What [`build_replay`] makes.
pub(crate) struct Replayable {
    pub bound: BoundBuffers,
    pub program: Program,
    pub fused: Fused,
    /// The fused description the program was compiled from.
    pub desc: GraphDesc,
    /// What the fusion pass was given.
    pub fusion_input: FusionInput,
    /// The size of each texture that parameters size, by buffer index, with the parameters it was built
    /// with ([`crate::texture::param_extents`]).
    pub param_extents: Vec<Option<[u32; 3]>>,
}

/// What bake fused, and what it could not.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fused {
    pub groups: Vec<FusedGroup>,
    pub declined: Vec<Declined>,
    pub widened: Vec<u32>,
}
