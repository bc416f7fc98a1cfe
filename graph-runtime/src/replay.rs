//! Replay: the baked plan encoded in schedule order, one command buffer per GPU partition, one submission each.
//! Nothing here allocates or looks anything up by name.

use graph_core::desc::SizeDesc;
use graph_core::size::{SizeError, evaluate};

/// How many workgroups a dispatch runs.
#[derive(Debug, Clone)]
pub(crate) enum DispatchSize {
    /// Decided at bake time.
    Fixed([u32; 3]),
    /// Invocations from the parameters and buffer lengths, rounded up to the workgroup size (the second).
    Threads([SizeDesc; 3], [u32; 3]),
    Workgroups([SizeDesc; 3]),
}

/// Why a dispatch's size is refused at replay.
#[derive(Debug)]
pub(crate) enum SizeProblem {
    /// A size expression failed (overflow, division by zero), with its text.
    Expression(String, SizeError),
    /// Past the device's per-dimension limit.
    TooLarge([u32; 3]),
}

#[derive(Debug)]
pub(crate) enum Step {
    Dispatch {
        /// The node's index in the description.
        node: usize,
        pipeline: usize,
        bind_group: wgpu::BindGroup,
        size: DispatchSize,
        /// Where this dispatch's workgroup counts for the current replay are kept.
        slot: usize,
    },
    Copy {
        src: usize,
        dst: usize,
        size: u64,
    },
}

#[derive(Debug)]
pub(crate) enum Partition {
    /// Steps level by level.
    Gpu(Vec<Step>),
    /// Host tasks by node index.
    Host(Vec<usize>),
}

/// The baked graph as data over wgpu handles.
#[derive(Debug)]
pub(crate) struct Plan {
    pub pipelines: Vec<wgpu::ComputePipeline>,
    pub partitions: Vec<Partition>,
    /// The parameters' bind group (group 1) in uniform-buffer mode.
    pub uniform_group: Option<wgpu::BindGroup>,
    pub max_workgroups: u32,
    /// Number of dispatch steps (and of workgroup-count slots).
    pub dispatch_count: usize,
}

impl DispatchSize {
    /// The workgroup counts for these parameters and lengths, with checked arithmetic throughout.
    pub(crate) fn workgroups(&self, params: &[u8], lens: &[u32]) -> Result<[u32; 3], SizeProblem> {
        let eval = |dims: &[SizeDesc; 3]| -> Result<[u32; 3], SizeProblem> {
            let mut out = [0; 3];
            for (slot, dim) in out.iter_mut().zip(dims) {
                *slot = evaluate(&dim.steps, params, lens)
                    .map_err(|e| SizeProblem::Expression(dim.text.to_string(), e))?;
            }
            Ok(out)
        };
        match self {
            DispatchSize::Fixed(w) => Ok(*w),
            DispatchSize::Workgroups(dims) => eval(dims),
            DispatchSize::Threads(dims, wg) => {
                let t = eval(dims)?;
                // Workgroup sizes are at least 1: the description was validated at bake.
                Ok([
                    t[0].div_ceil(wg[0].max(1)),
                    t[1].div_ceil(wg[1].max(1)),
                    t[2].div_ceil(wg[2].max(1)),
                ])
            }
        }
    }
}

/// Workgroup counts of every dispatch for these parameters, into `workgroups` (by slot), each checked against
/// the device limit before anything is encoded, so a bad size fails the replay whole.
pub(crate) fn resolve_dispatches(
    plan: &Plan,
    params: &[u8],
    lens: &[u32],
    workgroups: &mut [[u32; 3]],
) -> Result<(), (usize, SizeProblem)> {
    for partition in &plan.partitions {
        let Partition::Gpu(steps) = partition else {
            continue;
        };
        for step in steps {
            if let Step::Dispatch {
                node, size, slot, ..
            } = step
            {
                let w = size.workgroups(params, lens).map_err(|p| (*node, p))?;
                if w.iter().any(|&d| d > plan.max_workgroups) {
                    return Err((*node, SizeProblem::TooLarge(w)));
                }
                workgroups[*slot] = w;
            }
        }
    }
    Ok(())
}

/// Encodes one GPU partition: consecutive dispatches share one compute pass; copies sit between passes.
/// `immediates`: whether `params` goes in push constants. A pipeline is set only when it changes.
pub(crate) fn encode_partition(
    encoder: &mut wgpu::CommandEncoder,
    plan: &Plan,
    steps: &[Step],
    buffers: &[wgpu::Buffer],
    params: &[u8],
    immediates: bool,
    workgroups: &[[u32; 3]],
) {
    let mut i = 0;
    while i < steps.len() {
        match &steps[i] {
            Step::Copy { src, dst, size } => {
                encoder.copy_buffer_to_buffer(&buffers[*src], 0, &buffers[*dst], 0, *size);
                i += 1;
            }
            Step::Dispatch { .. } => {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: None,
                });
                if let Some(group) = &plan.uniform_group {
                    pass.set_bind_group(1, group, &[]);
                }
                let mut current = None;
                while let Some(Step::Dispatch {
                    pipeline,
                    bind_group,
                    slot,
                    ..
                }) = steps.get(i)
                {
                    let [x, y, z] = workgroups[*slot];
                    if x > 0 && y > 0 && z > 0 {
                        // Push constants are set with the pipeline: wgpu keeps them across dispatches and
                        // clears them only when the pipeline layout changes, which needs a pipeline change.
                        if current != Some(*pipeline) {
                            pass.set_pipeline(&plan.pipelines[*pipeline]);
                            if immediates && !params.is_empty() {
                                pass.set_immediates(0, params);
                            }
                            current = Some(*pipeline);
                        }
                        pass.set_bind_group(0, bind_group, &[]);
                        pass.dispatch_workgroups(x, y, z);
                    }
                    i += 1;
                }
            }
        }
    }
}
