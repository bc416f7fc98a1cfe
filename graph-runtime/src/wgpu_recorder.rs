//! The portable recorder: a replay's partitions as wgpu command buffers. wgpu tracks every buffer use and
//! places its own barriers, so the program's hazards are not needed here. Consecutive dispatches share one
//! compute pass; a pipeline is set only when it changes.

#![forbid(unsafe_code)]

use graph_core::plan::Transfer;

use crate::error::Error;
use crate::gate::Gates;
use crate::gpu::Gpu;
use crate::params::ParamsTransport;
use crate::profile::Timestamps;
use crate::program::{Op, Program, Segment};
use crate::recorder::Recorder;
use crate::replay::{DispatchSize, Kernels};
use crate::transfer::TransferBuffers;
use crate::wait::{Work, WorkOf};

pub(crate) struct WgpuRecorder<'a> {
    gpu: &'a Gpu,
    program: &'a Program,
    kernels: &'a Kernels,
    params: &'a ParamsTransport,
    /// This replay's parameter block.
    bytes: &'a [u8],
    /// The graph's buffers, and what uploads and readbacks copy from and to.
    transfers: TransferBuffers<'a>,
    gates: Option<&'a Gates>,
    /// The open compute pass. It holds the encoder locked: it is ended (dropped) before the encoder is used,
    /// and it is declared before the encoder so that a recorder dropped mid-partition (a replay that failed
    /// while recording) ends the pass before it drops the encoder.
    pass: Option<wgpu::ComputePass<'static>>,
    encoder: Option<wgpu::CommandEncoder>,
    pipeline: Option<usize>,
    /// A profiled replay's queries: each dispatch then gets a pass of its own, timed.
    timestamps: Option<&'a mut Timestamps>,
    /// Whether a partition's command buffer is kept back rather than submitted: held here until the replay
    /// is known to have recorded without error (`held`), or handed to the queue before a host phase waits.
    defer: bool,
    pub(crate) held: Vec<wgpu::CommandBuffer>,
}

impl<'a> WgpuRecorder<'a> {
    pub(crate) fn new(
        gpu: &'a Gpu,
        (program, kernels): (&'a Program, &'a Kernels),
        params: &'a ParamsTransport,
        bytes: &'a [u8],
        transfers: TransferBuffers<'a>,
        (gates, timestamps): (Option<&'a Gates>, Option<&'a mut Timestamps>),
        defer: bool,
    ) -> Self {
        WgpuRecorder {
            gpu,
            program,
            kernels,
            params,
            bytes,
            transfers,
            gates,
            pass: None,
            encoder: None,
            pipeline: None,
            timestamps,
            defer,
            held: Vec::new(),
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

    /// Node `node`'s kernel with these workgroup counts (none of them zero).
    fn dispatch(&mut self, node: u32, [x, y, z]: [u32; 3]) {
        let (program, kernels, params, bytes, buffers) = (
            self.program,
            self.kernels,
            self.params,
            self.bytes,
            self.transfers.buffers,
        );
        let Some(kernel) = kernels.nodes.get(node as usize).and_then(Option::as_ref) else {
            return;
        };
        if x == 0 || y == 0 || z == 0 {
            return;
        }
        let gated = self.gates.and_then(|g| {
            let slot = program.gates.slot(node)?;
            Some((g.args(), u64::from(slot) * 12))
        });
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
        let size = program.nodes.get(node as usize).and_then(Option::as_ref);
        match size.map(|n| &n.size) {
            // A member of a gated block: the counts its gate wrote (zeros when its flag is 0).
            _ if gated.is_some() => {
                if let Some((args, offset)) = gated {
                    pass.dispatch_workgroups_indirect(args, offset);
                }
            }
            // The counts are on the GPU, written by an earlier node.
            Some(&DispatchSize::Indirect(b)) => {
                if let Some(args) = buffers.get(b as usize) {
                    pass.dispatch_workgroups_indirect(&args.buffer, args.offset);
                }
            }
            _ => pass.dispatch_workgroups(x, y, z),
        }
        if timed {
            self.end_pass();
        }
    }

    fn gate(&mut self, block: u32) {
        let (Some(gates), Some(gate)) = (self.gates, self.program.gates.gate(block)) else {
            return;
        };
        let params = self.params;
        // The gate's pipeline and group 0 replace the kernels': the next dispatch sets them again.
        self.pipeline = None;
        let Some(pass) = self.open_pass(None) else {
            return;
        };
        gates.record(pass, block, gate.workgroups);
        params.begin_pass(pass);
    }
}

impl Recorder for WgpuRecorder<'_> {
    type Submitted = Work;

    fn begin(&mut self) {
        self.end_pass();
        self.encoder = Some(
            self.gpu
                .device()
                .create_command_encoder(&Default::default()),
        );
    }

    fn segment(&mut self, _: usize, segment: &Segment, workgroups: &[[u32; 3]]) {
        // wgpu's own tracking orders every use it sees: the levels' hazards are not needed here.
        for op in segment.levels.iter().flat_map(|l| &l.ops) {
            match *op {
                Op::Dispatch(node) => {
                    let counts = workgroups.get(node as usize).copied();
                    // No workgroups (an inactive alternative, a size of zero): nothing to record.
                    match counts {
                        Some(counts) if !counts.contains(&0) => self.dispatch(node, counts),
                        _ => {}
                    }
                }
                Op::Gate(block) => self.gate(block),
            }
        }
    }

    fn copy(&mut self, src: u32, src_offset: u64, dst: u32, dst_offset: u64, bytes: u64) {
        self.end_pass();
        if let Some(encoder) = &mut self.encoder {
            self.transfers
                .copy(encoder, (src, src_offset), (dst, dst_offset), bytes);
        }
    }

    fn upload(&mut self, t: Transfer) {
        self.end_pass();
        if let Some(encoder) = &mut self.encoder {
            self.transfers.upload(encoder, t);
        }
    }

    fn readback(&mut self, t: Transfer) {
        self.end_pass();
        if let Some(encoder) = &mut self.encoder {
            self.transfers.readback(encoder, t);
        }
    }

    fn submit(&mut self) -> Result<Work, Error> {
        self.end_pass();
        let encoder = self.encoder.take().unwrap_or_else(|| {
            self.gpu
                .device()
                .create_command_encoder(&Default::default())
        });
        if self.defer {
            self.held.push(encoder.finish());
            return Ok(Work(WorkOf::Deferred));
        }
        Ok(self.gpu.queue().submit([encoder.finish()]).into())
    }

    fn wait(&mut self, submitted: Work) -> Result<(), Error> {
        let work = self.to_await(submitted);
        self.gpu.wait_for(work)
    }

    fn to_await(&mut self, submitted: Work) -> Option<Work> {
        // A host phase waits for what came before it: what is held goes to the queue first.
        for buffer in self.held.drain(..) {
            self.gpu.queue().defer(buffer);
        }
        Some(submitted)
    }

    /// The partition's command encoder, with no compute pass open.
    fn with_encoder(
        &mut self,
        record: &mut dyn FnMut(&mut wgpu::CommandEncoder) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.end_pass();
        match &mut self.encoder {
            Some(encoder) => record(encoder),
            None => Ok(()),
        }
    }
}
