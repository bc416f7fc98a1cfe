//! The portable recorder: a replay's partitions as wgpu command buffers. wgpu tracks every buffer use and
//! places its own barriers, so the plan's hazards are not needed here. Consecutive dispatches share one
//! compute pass; a pipeline is set only when it changes.

use graph_core::plan::{BufferHazard, Transfer};

use crate::error::Error;
use crate::gate::Gates;
use crate::gpu::Gpu;
use crate::params::ParamsTransport;
use crate::profile::Timestamps;
use crate::recorder::Recorder;
use crate::replay::{DispatchSize, Kernels};
use crate::transfer::Uploads;

pub(crate) struct WgpuRecorder<'a> {
    gpu: &'a Gpu,
    kernels: &'a Kernels,
    buffers: &'a [wgpu::Buffer],
    params: &'a ParamsTransport,
    /// This replay's parameter block.
    bytes: &'a [u8],
    uploads: &'a Uploads,
    gates: Option<&'a Gates>,
    /// This replay's readback buffers, by node.
    readbacks: &'a [Option<wgpu::Buffer>],
    /// The open compute pass. It holds the encoder locked: it is ended (dropped) before the encoder is used,
    /// and it is declared before the encoder so that a recorder dropped mid-partition (a replay that failed
    /// while recording) ends the pass before it drops the encoder.
    pass: Option<wgpu::ComputePass<'static>>,
    encoder: Option<wgpu::CommandEncoder>,
    pipeline: Option<usize>,
    /// A profiled replay's queries: each dispatch then gets a pass of its own, timed.
    timestamps: Option<&'a mut Timestamps>,
}

impl<'a> WgpuRecorder<'a> {
    pub(crate) fn new(
        gpu: &'a Gpu,
        kernels: &'a Kernels,
        buffers: &'a [wgpu::Buffer],
        params: &'a ParamsTransport,
        bytes: &'a [u8],
        (uploads, readbacks): (&'a Uploads, &'a [Option<wgpu::Buffer>]),
        (gates, timestamps): (Option<&'a Gates>, Option<&'a mut Timestamps>),
    ) -> Self {
        WgpuRecorder {
            gpu,
            kernels,
            buffers,
            params,
            bytes,
            uploads,
            gates,
            readbacks,
            pass: None,
            encoder: None,
            pipeline: None,
            timestamps,
        }
    }

    /// The open compute pass, opened (with the parameters bound) if there is none; `timed`: node `timed`'s
    /// dispatch in a profiled replay, whose pass (the caller ended the one before) writes its timestamps.
    fn open_pass(&mut self, timed: Option<u32>) -> Option<&mut wgpu::ComputePass<'static>> {
        if let Some(node) = timed.filter(|_| self.pass.is_none()) {
            let writes = self.timestamps.as_mut().and_then(|t| t.writes(node));
            let encoder = self.encoder.as_mut()?;
            let mut pass = encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: None,
                    timestamp_writes: writes,
                })
                .forget_lifetime();
            self.params.begin_pass(&mut pass);
            self.pass = Some(pass);
        }
        if self.pass.is_none() {
            let encoder = self.encoder.as_mut()?;
            let mut pass = encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor::default())
                .forget_lifetime();
            self.params.begin_pass(&mut pass);
            self.pass = Some(pass);
        }
        self.pass.as_mut()
    }

    fn end_pass(&mut self) {
        self.pass = None;
        self.pipeline = None;
    }

    /// Gives `record` the partition's command encoder, with no compute pass open (an interop task).
    pub(crate) fn with_encoder(
        &mut self,
        record: impl FnOnce(&mut wgpu::CommandEncoder) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.end_pass();
        match &mut self.encoder {
            Some(encoder) => record(encoder),
            None => Ok(()),
        }
    }
}

impl Recorder for WgpuRecorder<'_> {
    type Submitted = wgpu::SubmissionIndex;

    fn begin(&mut self) {
        self.end_pass();
        self.encoder = Some(
            self.gpu
                .device()
                .create_command_encoder(&Default::default()),
        );
    }

    fn barrier(&mut self, _: &[BufferHazard]) {
        // wgpu's own tracking orders every use it sees.
    }

    fn dispatch(&mut self, node: u32, [x, y, z]: [u32; 3]) {
        let (kernels, params, bytes, buffers) =
            (self.kernels, self.params, self.bytes, self.buffers);
        let Some(kernel) = kernels.nodes.get(node as usize).and_then(Option::as_ref) else {
            return;
        };
        if x == 0 || y == 0 || z == 0 {
            return;
        }
        let gated = self
            .gates
            .and_then(|g| g.slot(node).map(|slot| (g.args(), u64::from(slot) * 12)));
        let timed = self.timestamps.is_some();
        if timed {
            // Each dispatch of a profiled replay in a pass of its own (which starts with no pipeline set).
            self.end_pass();
        }
        let current = self.pipeline;
        self.pipeline = Some(kernel.pipeline);
        let Some(pass) = self.open_pass(timed.then_some(node)) else {
            return;
        };
        if current != Some(kernel.pipeline) {
            pass.set_pipeline(&kernels.pipelines[kernel.pipeline]);
            params.after_pipeline(pass, bytes);
        }
        pass.set_bind_group(0, &kernel.bind_group, &[]);
        match kernel.size {
            // A member of a gated block: the counts its gate wrote (zeros when its flag is 0).
            _ if gated.is_some() => {
                if let Some((args, offset)) = gated {
                    pass.dispatch_workgroups_indirect(args, offset);
                }
            }
            // The counts are on the GPU, written by an earlier node.
            DispatchSize::Indirect(b) => {
                if let Some(args) = buffers.get(b as usize) {
                    pass.dispatch_workgroups_indirect(args, 0);
                }
            }
            _ => pass.dispatch_workgroups(x, y, z),
        }
        if timed {
            self.end_pass();
        }
    }

    fn gate(&mut self, block: u32) {
        let Some(gates) = self.gates else {
            return;
        };
        let params = self.params;
        // The gate's pipeline and group 0 replace the kernels': the next dispatch sets them again.
        self.pipeline = None;
        let Some(pass) = self.open_pass(None) else {
            return;
        };
        gates.record(pass, block);
        params.begin_pass(pass);
    }

    fn copy(&mut self, src: u32, src_offset: u64, dst: u32, dst_offset: u64, bytes: u64) {
        self.end_pass();
        if let Some(encoder) = &mut self.encoder {
            encoder.copy_buffer_to_buffer(
                &self.buffers[src as usize],
                src_offset,
                &self.buffers[dst as usize],
                dst_offset,
                bytes,
            );
        }
    }

    fn upload(&mut self, t: Transfer) {
        self.end_pass();
        if let (Some(encoder), Some(staging)) = (&mut self.encoder, self.uploads.staging(t.node)) {
            encoder.copy_buffer_to_buffer(
                staging,
                0,
                &self.buffers[t.buffer as usize],
                t.offset,
                t.bytes,
            );
        }
    }

    fn readback(&mut self, t: Transfer) {
        self.end_pass();
        let target = self.readbacks.get(t.node as usize).and_then(Option::as_ref);
        if let (Some(encoder), Some(target)) = (&mut self.encoder, target) {
            encoder.copy_buffer_to_buffer(
                &self.buffers[t.buffer as usize],
                t.offset,
                target,
                0,
                t.bytes,
            );
        }
    }

    fn submit(&mut self) -> Result<wgpu::SubmissionIndex, Error> {
        self.end_pass();
        let encoder = self.encoder.take().unwrap_or_else(|| {
            self.gpu
                .device()
                .create_command_encoder(&Default::default())
        });
        Ok(self.gpu.queue().submit([encoder.finish()]))
    }

    fn wait(&mut self, submitted: wgpu::SubmissionIndex) -> Result<(), Error> {
        self.gpu.wait_for(Some(submitted))
    }
}
