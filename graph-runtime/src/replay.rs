//! Replay: the baked plan encoded in schedule order, one command buffer per GPU partition, one submission.
//! Nothing here allocates or looks anything up by name.

use graph_core::desc::DispatchFn;

/// How many workgroups a dispatch runs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum DispatchSize {
    /// Decided at bake time.
    Fixed([u32; 3]),
    /// Invocations from the parameters, rounded up to the workgroup size.
    Threads(DispatchFn, [u32; 3]),
    Workgroups(DispatchFn),
}

#[derive(Debug)]
pub(crate) enum Step {
    Dispatch {
        node: &'static str,
        pipeline: usize,
        bind_group: wgpu::BindGroup,
        size: DispatchSize,
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
}

impl DispatchSize {
    pub(crate) fn workgroups(self, params: &[u8], lens: &[u32]) -> [u32; 3] {
        match self {
            DispatchSize::Fixed(w) => w,
            DispatchSize::Workgroups(f) => f(params, lens),
            DispatchSize::Threads(f, wg) => {
                let t = f(params, lens);
                [
                    t[0].div_ceil(wg[0].max(1)),
                    t[1].div_ceil(wg[1].max(1)),
                    t[2].div_ceil(wg[2].max(1)),
                ]
            }
        }
    }
}

/// Encodes one GPU partition: consecutive dispatches share one compute pass; copies sit between passes.
/// `immediates` is the parameter block when it goes in push constants.
pub(crate) fn encode_partition(
    encoder: &mut wgpu::CommandEncoder,
    plan: &Plan,
    steps: &[Step],
    buffers: &[wgpu::Buffer],
    params: &[u8],
    immediates: bool,
    lens: &[u32],
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
                while let Some(Step::Dispatch {
                    pipeline,
                    bind_group,
                    size,
                    ..
                }) = steps.get(i)
                {
                    let [x, y, z] = size.workgroups(params, lens);
                    if x > 0 && y > 0 && z > 0 {
                        pass.set_pipeline(&plan.pipelines[*pipeline]);
                        pass.set_bind_group(0, bind_group, &[]);
                        if immediates && !params.is_empty() {
                            pass.set_immediates(0, params);
                        }
                        pass.dispatch_workgroups(x, y, z);
                    }
                    i += 1;
                }
            }
        }
    }
}
