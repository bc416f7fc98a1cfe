//! Bake (SYCL's `finalize`): everything a replay needs is created once here, the bound buffers are checked,
//! and the graph becomes a plan of prebuilt steps.

use std::borrow::Cow;
use std::collections::HashMap;

use graph_core::desc::{DispatchDesc, GraphDesc, OpDesc, PartitionDesc};
use graph_core::ir::{AccessMode, ParamsStorage, Role};

use crate::buffer::AnyBuffer;
use crate::error::Error;
use crate::gpu::Gpu;
use crate::replay::{DispatchSize, Partition, Plan, Step};

/// The buffers of a baked graph: external ones bound by the caller, owned ones created here.
pub(crate) struct BoundBuffers {
    pub buffers: Vec<wgpu::Buffer>,
    pub lens: Vec<u32>,
}

/// Checks each external buffer against its declaration and creates the owned ones.
pub(crate) fn bind_buffers(
    gpu: &Gpu,
    desc: &GraphDesc,
    bound: &[(u32, &AnyBuffer)],
) -> Result<BoundBuffers, Error> {
    let graph = || desc.name.to_string();
    let limits = gpu.device().limits();
    let mut buffers = Vec::with_capacity(desc.buffers.len());
    let mut lens = Vec::with_capacity(desc.buffers.len());
    for (index, b) in desc.buffers.iter().enumerate() {
        if b.role == Role::Owned {
            let len = b.len.unwrap_or(1);
            let size = u64::from(len) * u64::from(b.elem.size());
            check_binding_size(desc, index as u32, size, &limits)?;
            buffers.push(gpu.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(&b.name),
                size,
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

/// The usages the graph needs of buffer `index`: storage for kernels, copy source/destination for copies and
/// host tasks.
fn needed_usage(desc: &GraphDesc, index: u32) -> wgpu::BufferUsages {
    let mut usage = wgpu::BufferUsages::empty();
    for node in desc.nodes.iter() {
        match &node.op {
            OpDesc::Kernel(k) if k.bindings.iter().any(|b| b.buffer == index) => {
                usage |= wgpu::BufferUsages::STORAGE
            }
            &OpDesc::Copy { src, .. } if src == index => usage |= wgpu::BufferUsages::COPY_SRC,
            &OpDesc::Copy { dst, .. } if dst == index => usage |= wgpu::BufferUsages::COPY_DST,
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
    desc: &GraphDesc,
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
    let mut pipeline_index: HashMap<(String, &str, Vec<AccessMode>), usize> = HashMap::new();
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

    for (n, node) in desc.nodes.iter().enumerate() {
        let step = match &node.op {
            OpDesc::Kernel(k) => {
                check_workgroup_size(desc, n, k.workgroup_size, &device.limits())?;
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
                let key = (source, &*k.entry, modes);
                let pipeline = match pipeline_index.get(&key) {
                    Some(&i) => i,
                    None => {
                        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                            label: Some(&node.name),
                            source: wgpu::ShaderSource::Wgsl(Cow::Owned(key.0.clone())),
                        });
                        pipelines.push(device.create_compute_pipeline(
                            &wgpu::ComputePipelineDescriptor {
                                label: Some(&node.name),
                                layout: Some(pipeline_layout),
                                module: &module,
                                entry_point: Some(&k.entry),
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
                    label: Some(&node.name),
                    layout: bind_layout,
                    entries: &entries,
                });
                let size = match &k.dispatch {
                    DispatchDesc::BufferLen(b) => DispatchSize::Fixed(element_dispatch(
                        desc,
                        n,
                        bound.lens[*b as usize],
                        k.workgroup_size[0],
                        k.foldable,
                        max_workgroups,
                    )?),
                    DispatchDesc::Threads(dims) => {
                        DispatchSize::Threads(dims.clone(), k.workgroup_size)
                    }
                    DispatchDesc::Workgroups(dims) => DispatchSize::Workgroups(dims.clone()),
                };
                dispatch_count += 1;
                Some(Step::Dispatch {
                    node: n,
                    pipeline,
                    bind_group,
                    size,
                    slot: dispatch_count - 1,
                })
            }
            &OpDesc::Copy { src, dst } => {
                let (src, dst) = (src as usize, dst as usize);
                // A copy writes the whole of its destination, which is what the graph's ordering assumes.
                if bound.lens[src] != bound.lens[dst] {
                    return Err(Error::BufferLength {
                        graph: desc.name.to_string(),
                        buffer: desc.buffers[dst].name.to_string(),
                        expected: format!(
                            "exactly {} (the length of `{}`, which node `{}` copies into it whole)",
                            bound.lens[src], desc.buffers[src].name, node.name
                        ),
                        actual: bound.lens[dst].into(),
                    });
                }
                Some(Step::Copy {
                    src,
                    dst,
                    size: u64::from(bound.lens[src]) * u64::from(desc.buffers[src].elem.size()),
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
