//! Bake (SYCL's `finalize`): everything a replay needs is created once here, the bound buffers are checked,
//! and the graph becomes a plan of prebuilt steps.

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::collections::HashMap;

use graph_core::desc::{DispatchDesc, GraphDesc, OpDesc, SizeDesc};
use graph_core::fusion::{Declined, FusedGroup, fuse};
use graph_core::ir::{AccessMode, Role};
use graph_core::plan::{Plan, PlanError, evaluate_range, plan};

use crate::buffer::AnyBuffer;
use crate::error::Error;
use crate::gpu::Gpu;
use crate::params::ParamsTransport;
use crate::replay::{DispatchSize, KernelStep, Kernels};

/// The buffers of a baked graph: external ones bound by the caller, owned ones created here.
pub(crate) struct BoundBuffers {
    pub buffers: Vec<wgpu::Buffer>,
    pub lens: Vec<u32>,
}

/// Checks each external buffer against its declaration and creates the owned ones (a one-element placeholder
/// for those in `registers`), or keeps `previous`'s owned buffers where their size is unchanged (an update
/// keeps what the graph owns).
fn bind_buffers(
    gpu: &Gpu,
    desc: &GraphDesc,
    bound: &[(u32, &AnyBuffer)],
    previous: Option<&BoundBuffers>,
    registers: &[u32],
) -> Result<BoundBuffers, Error> {
    let graph = || desc.name.to_string();
    let limits = gpu.device().limits();
    let mut buffers = Vec::with_capacity(desc.buffers.len());
    let mut lens = Vec::with_capacity(desc.buffers.len());
    for (index, b) in desc.buffers.iter().enumerate() {
        if b.role == Role::Owned {
            let len = b.len.unwrap_or(1);
            // Kept in registers by fusion: nothing reads the buffer, which holds one element only so that
            // indices stay those of the description. Its length stays the declared one, for sizes.
            let elements = match registers.contains(&(index as u32)) {
                true => 1,
                false => len,
            };
            let size = u64::from(elements) * u64::from(b.elem.size());
            check_binding_size(desc, index as u32, size, &limits)?;
            let kept = previous
                .and_then(|p| p.buffers.get(index))
                .filter(|old| old.size() == size);
            if let Some(old) = kept {
                buffers.push(old.clone());
                lens.push(len);
                continue;
            }
            buffers.push(gpu.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(&b.name),
                size,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::INDIRECT,
                mapped_at_creation: false,
            }));
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
        buffers.push(any.wgpu().clone());
        lens.push(any.len());
    }
    check_aliasing(desc, &buffers)?;
    Ok(BoundBuffers { buffers, lens })
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
fn check_aliasing(desc: &GraphDesc, buffers: &[wgpu::Buffer]) -> Result<(), Error> {
    for (i, a) in desc.buffers.iter().enumerate() {
        for (j, b) in desc.buffers.iter().enumerate().skip(i + 1) {
            let written = a.role != Role::Input || b.role != Role::Input;
            if a.role.is_external() && b.role.is_external() && written && buffers[i] == buffers[j] {
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

/// A pipeline's identity: its module, entry point, access modes and pipeline constants (a fill's range).
type PipelineKey = (String, String, Vec<AccessMode>, Option<(u32, u32)>);

/// The layouts and pipelines of a baked graph, kept across updates: an update compiles only the kernels whose
/// code changed, and every pipeline and bind group shares one set of layouts.
#[derive(Default, Clone)]
pub(crate) struct KernelCache {
    layouts: HashMap<Vec<AccessMode>, (wgpu::BindGroupLayout, wgpu::PipelineLayout)>,
    pipelines: HashMap<PipelineKey, wgpu::ComputePipeline>,
}

/// How many GPU objects a build created (the rest it reused): what an update cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Built {
    pub pipelines: usize,
    pub bind_groups: usize,
}

/// Whether node `index` is a member of a block under GPU control.
fn in_block(desc: &GraphDesc, index: usize) -> bool {
    desc.blocks
        .iter()
        .any(|b| b.nodes.contains(&(index as u32)))
}

/// Pipelines and bind groups for every kernel node. Identical kernels share one pipeline; a pipeline already
/// in `cache`, and a bind group of `previous` over the same buffers, are reused.
fn build_kernels(
    gpu: &Gpu,
    desc: &GraphDesc,
    bound: &BoundBuffers,
    params: &ParamsTransport,
    cache: &mut KernelCache,
    previous: Option<&Kernels>,
) -> Result<(Kernels, Built), Error> {
    let device = gpu.device();
    let limits = device.limits();
    let mut pipelines: Vec<wgpu::ComputePipeline> = Vec::new();
    let mut pipeline_index: HashMap<PipelineKey, usize> = HashMap::new();
    let mut built = Built::default();
    let mut nodes = Vec::with_capacity(desc.nodes.len());
    let max_workgroups = limits.max_compute_workgroups_per_dimension;

    for (n, node) in desc.nodes.iter().enumerate() {
        // A copy under GPU control runs as a kernel, so that its gate can skip it.
        let as_kernel = copy_kernel(desc, n, &bound.lens).map_err(|e| plan_error(desc, e))?;
        let (k, copy_words) = match (&node.op, &as_kernel) {
            (OpDesc::Kernel(k), _) => (k, None),
            (_, Some((k, words))) => (k, Some(*words)),
            _ => {
                nodes.push(None);
                continue;
            }
        };
        check_workgroup_size(desc, n, k.workgroup_size, &limits)?;
        let modes: Vec<AccessMode> = k.bindings.iter().map(|b| b.mode).collect();
        let (bind_layout, pipeline_layout) = cache
            .layouts
            .entry(modes.clone())
            .or_insert_with(|| layouts_for(device, &modes, params));
        // A fill of a range: its bounds, checked by the plan, become pipeline constants.
        let range = match (&k.range, k.bindings.first()) {
            (Some(r), Some(target)) => Some(
                evaluate_range(n as u32, target.buffer, r, &bound.lens)
                    .map_err(|e| plan_error(desc, e))?,
            ),
            _ => None,
        };
        let source = k.compose(&desc.params, params.storage());
        let key = (source, k.entry.to_string(), modes.clone(), range);
        let pipeline = match pipeline_index.get(&key) {
            Some(&i) => i,
            None if cache.pipelines.contains_key(&key) => {
                pipelines.push(cache.pipelines[&key].clone());
                pipeline_index.insert(key, pipelines.len() - 1);
                pipelines.len() - 1
            }
            None => {
                built.pipelines += 1;
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&node.name),
                    source: wgpu::ShaderSource::Wgsl(Cow::Owned(key.0.clone())),
                });
                pipelines.push(
                    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(&node.name),
                        layout: Some(pipeline_layout),
                        module: &module,
                        entry_point: Some(&k.entry),
                        compilation_options: wgpu::PipelineCompilationOptions {
                            constants: &range.map_or(Vec::new(), |(start, end)| {
                                vec![
                                    (graph_core::fill::RANGE_START, f64::from(start)),
                                    (graph_core::fill::RANGE_END, f64::from(end)),
                                ]
                            }),
                            ..Default::default()
                        },
                        cache: None,
                    }),
                );
                cache
                    .pipelines
                    .insert(key.clone(), pipelines[pipelines.len() - 1].clone());
                pipeline_index.insert(key, pipelines.len() - 1);
                pipelines.len() - 1
            }
        };
        let buffers: Vec<wgpu::Buffer> = k
            .bindings
            .iter()
            .map(|b| bound.buffers[b.buffer as usize].clone())
            .collect();
        // The same layout and the same buffers: the previous bind group serves.
        let reusable = previous
            .and_then(|p| p.nodes.get(n)?.as_ref())
            .filter(|old| old.modes == modes && old.buffers == buffers)
            .map(|old| old.bind_group.clone());
        let bind_group = match reusable {
            Some(group) => group,
            None => {
                built.bind_groups += 1;
                let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
                    .iter()
                    .enumerate()
                    .map(|(i, b)| wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: b.as_entire_binding(),
                    })
                    .collect();
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&node.name),
                    layout: bind_layout,
                    entries: &entries,
                })
            }
        };
        let elements = |count: u32| {
            element_dispatch(
                desc,
                n,
                count,
                k.workgroup_size[0],
                k.foldable,
                max_workgroups,
            )
        };
        let size = match (&k.dispatch, range) {
            _ if copy_words.is_some() => DispatchSize::Fixed(elements(copy_words.unwrap_or(0))?),
            (_, Some((start, end))) => DispatchSize::Fixed(elements(end - start)?),
            (DispatchDesc::BufferLen(b), None) => {
                DispatchSize::Fixed(elements(bound.lens[*b as usize])?)
            }
            (DispatchDesc::Threads(dims), None) => {
                DispatchSize::Threads(dims.clone(), k.workgroup_size)
            }
            (DispatchDesc::Workgroups(dims), None) => DispatchSize::Workgroups(dims.clone()),
            (DispatchDesc::Indirect(b), None) => DispatchSize::Indirect(*b),
        }
        .fixed_if_constant(&bound.lens, max_workgroups)
        .map_err(|problem| problem.into_error(desc, n, max_workgroups))?;
        nodes.push(Some(KernelStep {
            pipeline,
            bind_group,
            size,
            modes,
            buffers,
        }));
    }
    // Only the pipelines in use stay cached: updates do not accumulate them.
    cache
        .pipelines
        .retain(|key, _| pipeline_index.contains_key(key));
    let kernels = Kernels {
        pipelines,
        nodes,
        max_workgroups,
    };
    Ok((kernels, built))
}

/// Node `n` as a kernel, if it is a copy in a block under GPU control, with the 32-bit words it moves: the
/// buffers seen as `u32` words (every element type is made of them), the offsets and length constants of
/// its module, so each range is its own pipeline, as a ranged fill's is.
pub(crate) fn copy_kernel(
    desc: &GraphDesc,
    n: usize,
    lens: &[u32],
) -> Result<Option<(graph_core::desc::KernelDesc, u32)>, PlanError> {
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
    let (dst_start, _) = evaluate_range(n as u32, *dst, dst_range, lens)?;
    let words_per = desc.buffers[*src as usize].elem.size() / 4;
    let (from, to, words) = (
        src_start * words_per,
        dst_start * words_per,
        (src_end - src_start) * words_per,
    );
    let declarations = "@group(0) @binding(0) var<storage, read> src: array<u32>;\n\
                        @group(0) @binding(1) var<storage, read_write> dst: array<u32>;\n";
    let source = format!(
        "const FROM: u32 = {from}u;\nconst TO: u32 = {to}u;\nconst WORDS: u32 = {words}u;\n\
         @compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{\n\
         \x20   let i = gid.x + gid.y * groups.x * 64u;\n\
         \x20   if (i < WORDS) {{ dst[TO + i] = src[FROM + i]; }}\n}}\n"
    );
    let kernel = graph_core::desc::KernelDesc {
        pointwise: false,
        no_fusion: true,
        declarations: declarations.into(),
        args: Default::default(),
        source: source.into(),
        entry: "main".into(),
        workgroup_size: [64, 1, 1],
        bindings: vec![
            graph_core::desc::AccessDesc {
                buffer: *src,
                mode: AccessMode::Read,
            },
            graph_core::desc::AccessDesc {
                buffer: *dst,
                mode: AccessMode::Write,
            },
        ]
        .into(),
        // Replaced by the fixed size of its words (see `build_kernels`).
        dispatch: DispatchDesc::Threads([SizeDesc::ONE, SizeDesc::ONE, SizeDesc::ONE]),
        foldable: true,
        range: None,
        alternative: None,
    };
    Ok(Some((kernel, words)))
}

/// The bind group layout of one combination of access modes, and the pipeline layout around it (with the
/// parameters' push-constant range or uniform group).
fn layouts_for(
    device: &wgpu::Device,
    modes: &[AccessMode],
    params: &ParamsTransport,
) -> (wgpu::BindGroupLayout, wgpu::PipelineLayout) {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = modes
        .iter()
        .enumerate()
        .map(|(i, m)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage {
                    read_only: *m == AccessMode::Read,
                },
                has_dynamic_offset: false,
                min_binding_size: None,
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

/// Everything a replay of `desc` over the caller's `externals` needs, built: the description fused over the
/// buffers' lengths and within the device's binding limit ([`graph_core::fusion`], unless its kernels are
/// marked `#[no_fusion]`), the buffers (those fusion keeps in registers get a one-element placeholder), the
/// plan and the kernels. `previous` is what an update replaces: its owned buffers and bind groups are reused
/// where they still fit.
pub(crate) fn build_replay(
    gpu: &Gpu,
    desc: &GraphDesc,
    externals: &[(u32, &AnyBuffer)],
    params: &ParamsTransport,
    cache: &mut KernelCache,
    previous: Option<(&BoundBuffers, &Kernels)>,
) -> Result<Replayable, Error> {
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
    // As many buffers per fused kernel as this device binds for one shader stage.
    let limits = gpu.device().limits();
    let max_bindings = limits
        .max_storage_buffers_per_shader_stage
        .min(limits.max_bindings_per_bind_group) as usize;
    let fusion = {
        let _span = tracing::debug_span!("fuse", graph = %desc.name).entered();
        fuse(desc, &lengths, max_bindings)
    };
    for declined in &fusion.declined {
        tracing::warn!(graph = %desc.name, "{declined}");
    }
    let bound = bind_buffers(
        gpu,
        desc,
        externals,
        previous.map(|(b, _)| b),
        &fusion.registers(),
    )?;
    let plan = plan_replay(&fusion.desc, &bound)?;
    let (kernels, built) = build_kernels(
        gpu,
        &fusion.desc,
        &bound,
        params,
        cache,
        previous.map(|(_, k)| k),
    )?;
    Ok(Replayable {
        bound,
        plan,
        kernels,
        built,
        fused: Fused {
            groups: fusion.groups,
            declined: fusion.declined,
        },
        desc: fusion.desc.into_owned(),
    })
}

/// What [`build_replay`] makes.
pub(crate) struct Replayable {
    pub bound: BoundBuffers,
    pub plan: Plan,
    pub kernels: Kernels,
    pub built: Built,
    pub fused: Fused,
    /// The fused description the plan and kernels were made from.
    pub desc: GraphDesc,
}

/// What bake fused, and what it could not.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fused {
    pub groups: Vec<FusedGroup>,
    pub declined: Vec<Declined>,
}

/// The handle-free plan for the bound lengths; a copy or fill range that does not fit the bound buffers is
/// refused here, naming the buffer.
fn plan_replay(desc: &GraphDesc, bound: &BoundBuffers) -> Result<Plan, Error> {
    plan(desc, &bound.lens).map_err(|e| plan_error(desc, e))
}

fn plan_error(desc: &GraphDesc, error: PlanError) -> Error {
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

/// A kernel's workgroup fits the device (the macro held it to the portable limits unless the graph is
/// `#[device_limits]`).
fn check_workgroup_size(
    desc: &GraphDesc,
    node: usize,
    size: [u32; 3],
    limits: &wgpu::Limits,
) -> Result<(), Error> {
    let per_dim = [
        limits.max_compute_workgroup_size_x,
        limits.max_compute_workgroup_size_y,
        limits.max_compute_workgroup_size_z,
    ];
    let total = limits.max_compute_invocations_per_workgroup;
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

/// The workgroups for one invocation per element, decided at bake. Past the per-dimension limit, a kernel that
/// indexes by `num_workgroups` is folded into two dimensions; any other is an error now rather than at every
/// replay.
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
