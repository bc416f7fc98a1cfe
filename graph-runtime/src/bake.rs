//! Bake (SYCL's `finalize`): everything a replay needs is created once here, the bound buffers are checked,
//! and the graph becomes a plan of prebuilt steps.

use std::borrow::Cow;
use std::collections::HashMap;

use graph_core::desc::{DispatchDesc, GraphDesc, OpDesc, PartitionDesc};
use graph_core::ir::{AccessMode, ParamsStorage, Role};

use crate::buffer::AnyBuffer;
use crate::replay::{DispatchSize, Partition, Plan, Step};
use crate::{Error, Gpu};

/// The buffers of a baked graph: external ones bound by the caller, owned ones created here.
pub(crate) struct BoundBuffers {
    pub buffers: Vec<wgpu::Buffer>,
    pub lens: Vec<u32>,
}

/// Checks each external buffer against its declaration and creates the owned ones.
pub(crate) fn bind_buffers(
    gpu: &Gpu,
    desc: &'static GraphDesc,
    bound: &[(u32, &AnyBuffer)],
) -> Result<BoundBuffers, Error> {
    let graph = desc.name;
    let mut buffers = Vec::with_capacity(desc.buffers.len());
    let mut lens = Vec::with_capacity(desc.buffers.len());
    for (index, b) in desc.buffers.iter().enumerate() {
        if b.role == Role::Owned {
            let len = b.len.unwrap_or(1);
            buffers.push(gpu.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(b.name),
                size: u64::from(len) * u64::from(b.elem.size()),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
            lens.push(len);
            continue;
        }
        let Some((_, any)) = bound.iter().find(|(i, _)| *i as usize == index) else {
            return Err(Error::MissingBuffer {
                graph,
                buffer: b.name,
            });
        };
        if any.elem() != b.elem {
            return Err(Error::BufferType {
                graph,
                buffer: b.name,
                expected: b.elem.wgsl(),
                actual: any.elem().wgsl(),
            });
        }
        match b.len {
            Some(n) if any.len() != n => {
                return Err(Error::BufferLength {
                    graph,
                    buffer: b.name,
                    expected: format!("exactly {n}"),
                    actual: any.len().into(),
                });
            }
            None if any.is_empty() => {
                return Err(Error::BufferLength {
                    graph,
                    buffer: b.name,
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
                graph,
                buffer: b.name,
                missing: missing
                    .iter_names()
                    .map(|(name, _)| name)
                    .collect::<Vec<_>>()
                    .join(" | "),
            });
        }
        if !any.gpu().device().eq(gpu.device()) {
            return Err(Error::Bake {
                graph,
                reason: format!("buffer `{}` belongs to another device", b.name),
            });
        }
        buffers.push(any.wgpu().clone());
        lens.push(any.len());
    }
    check_aliasing(desc, &buffers)?;
    Ok(BoundBuffers { buffers, lens })
}

/// Two external buffers may share memory only when the graph only reads both.
fn check_aliasing(desc: &'static GraphDesc, buffers: &[wgpu::Buffer]) -> Result<(), Error> {
    for (i, a) in desc.buffers.iter().enumerate() {
        for (j, b) in desc.buffers.iter().enumerate().skip(i + 1) {
            let written = a.role != Role::Input || b.role != Role::Input;
            if a.role.is_external() && b.role.is_external() && written && buffers[i] == buffers[j] {
                return Err(Error::AliasedBuffers {
                    graph: desc.name,
                    first: a.name,
                    second: b.name,
                });
            }
        }
    }
    Ok(())
}

/// The usages the graph needs of buffer `index`: storage for kernels, copy source/destination for copies and
/// host tasks.
fn needed_usage(desc: &GraphDesc, index: u32) -> wgpu::BufferUsages {
    let mut usage = wgpu::BufferUsages::empty();
    for node in desc.nodes {
        match node.op {
            OpDesc::Kernel(k) if k.bindings.iter().any(|b| b.buffer == index) => {
                usage |= wgpu::BufferUsages::STORAGE
            }
            OpDesc::Copy { src, .. } if src == index => usage |= wgpu::BufferUsages::COPY_SRC,
            OpDesc::Copy { dst, .. } if dst == index => usage |= wgpu::BufferUsages::COPY_DST,
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

/// Where the parameters live for this bake.
pub(crate) fn params_storage(gpu: &Gpu, desc: &GraphDesc) -> ParamsStorage {
    let fits = desc.params.size <= gpu.max_immediate_size();
    match desc.params.storage {
        ParamsStorage::Immediates if fits => ParamsStorage::Immediates,
        _ => ParamsStorage::Uniform,
    }
}

/// Pipelines, bind groups and the step list, in schedule order. Identical kernels share one pipeline.
pub(crate) fn build_plan(
    gpu: &Gpu,
    desc: &'static GraphDesc,
    bound: &BoundBuffers,
    storage: ParamsStorage,
    uniform: Option<&(wgpu::BindGroupLayout, wgpu::Buffer)>,
) -> Result<Plan, Error> {
    let device = gpu.device();
    let has_params = desc.params.size > 0;
    let immediate_size = if storage == ParamsStorage::Immediates {
        desc.params.size
    } else {
        0
    };
    let mut pipelines: Vec<wgpu::ComputePipeline> = Vec::new();
    let mut pipeline_index: HashMap<(String, &'static str, Vec<AccessMode>), usize> =
        HashMap::new();
    let mut layouts: HashMap<Vec<AccessMode>, (wgpu::BindGroupLayout, wgpu::PipelineLayout)> =
        HashMap::new();
    let mut node_steps: Vec<Option<Step>> = Vec::with_capacity(desc.nodes.len());
    let mut dispatch_count = 0;
    let max_workgroups = device.limits().max_compute_workgroups_per_dimension;
    let uniform_group = uniform.map(|(layout, buffer)| {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("graph params"),
            layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: buffer.as_entire_binding(),
            }],
        })
    });

    for node in desc.nodes {
        let step = match node.op {
            OpDesc::Kernel(k) => {
                let modes: Vec<AccessMode> = k.bindings.iter().map(|b| b.mode).collect();
                let (bind_layout, pipeline_layout) =
                    layouts.entry(modes.clone()).or_insert_with(|| {
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
                        let bgl =
                            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                                label: None,
                                entries: &entries,
                            });
                        let groups: Vec<Option<&wgpu::BindGroupLayout>> =
                            match uniform.filter(|_| has_params) {
                                Some((ul, _)) => vec![Some(&bgl), Some(ul)],
                                None => vec![Some(&bgl)],
                            };
                        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                            label: None,
                            bind_group_layouts: &groups,
                            immediate_size,
                        });
                        (bgl, pl)
                    });
                let source = k.compose(&desc.params, storage);
                let key = (source, k.entry, modes);
                let pipeline = match pipeline_index.get(&key) {
                    Some(&i) => i,
                    None => {
                        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                            label: Some(node.name),
                            source: wgpu::ShaderSource::Wgsl(Cow::Owned(key.0.clone())),
                        });
                        pipelines.push(device.create_compute_pipeline(
                            &wgpu::ComputePipelineDescriptor {
                                label: Some(node.name),
                                layout: Some(pipeline_layout),
                                module: &module,
                                entry_point: Some(k.entry),
                                compilation_options: Default::default(),
                                cache: None,
                            },
                        ));
                        pipeline_index.insert(key, pipelines.len() - 1);
                        pipelines.len() - 1
                    }
                };
                let entries: Vec<wgpu::BindGroupEntry<'_>> = k
                    .bindings
                    .iter()
                    .enumerate()
                    .map(|(i, b)| wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: bound.buffers[b.buffer as usize].as_entire_binding(),
                    })
                    .collect();
                let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(node.name),
                    layout: bind_layout,
                    entries: &entries,
                });
                let size = match k.dispatch {
                    DispatchDesc::BufferLen(b) => DispatchSize::Fixed(element_dispatch(
                        desc,
                        node.name,
                        bound.lens[b as usize],
                        k.workgroup_size[0],
                        k.foldable,
                        max_workgroups,
                    )?),
                    DispatchDesc::Threads(f) => DispatchSize::Threads(f, k.workgroup_size),
                    DispatchDesc::Workgroups(f) => DispatchSize::Workgroups(f),
                };
                dispatch_count += 1;
                Some(Step::Dispatch {
                    node: node.name,
                    pipeline,
                    bind_group,
                    size,
                    slot: dispatch_count - 1,
                })
            }
            OpDesc::Copy { src, dst } => {
                let bytes = |i: u32| {
                    u64::from(bound.lens[i as usize])
                        * u64::from(desc.buffers[i as usize].elem.size())
                };
                if bytes(src) > bytes(dst) {
                    return Err(Error::BufferLength {
                        graph: desc.name,
                        buffer: desc.buffers[dst as usize].name,
                        expected: format!(
                            "at least {} (the length of `{}`, which node `{}` copies into it)",
                            bound.lens[src as usize], desc.buffers[src as usize].name, node.name
                        ),
                        actual: bound.lens[dst as usize].into(),
                    });
                }
                Some(Step::Copy {
                    src: src as usize,
                    dst: dst as usize,
                    size: bytes(src),
                })
            }
            OpDesc::Host { .. } => None,
        };
        node_steps.push(step);
    }

    let partitions = desc
        .partitions
        .iter()
        .map(|p| match p {
            // Within a level, dispatches first and copies after, so a level's kernels share one compute pass.
            PartitionDesc::Gpu { levels } => Partition::Gpu(
                levels
                    .iter()
                    .flat_map(|level| {
                        let mut steps: Vec<Step> = level
                            .iter()
                            .filter_map(|&n| node_steps[n as usize].take())
                            .collect();
                        steps.sort_by_key(|s| matches!(s, Step::Copy { .. }));
                        steps
                    })
                    .collect(),
            ),
            PartitionDesc::Host { nodes } => {
                Partition::Host(nodes.iter().map(|&n| n as usize).collect())
            }
        })
        .collect();
    Ok(Plan {
        pipelines,
        partitions,
        uniform_group,
        max_workgroups,
        dispatch_count,
    })
}

/// The workgroups for one invocation per element, decided at bake. Past the per-dimension limit, a kernel that
/// indexes by `num_workgroups` is folded into two dimensions; any other is an error now rather than at every
/// replay.
fn element_dispatch(
    desc: &GraphDesc,
    node: &'static str,
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
        graph: desc.name,
        node,
        workgroups: [groups, 1, 1],
        limit,
    })
}
