//! Dispatch sizes: what a replay computes before it records (each kernel's workgroup counts for the current
//! parameters and bound lengths, checked; see [`crate::program::resolve_dispatches`]), and the portable
//! recorder's kernel objects. Nothing here allocates or looks anything up by name.

#![forbid(unsafe_code)]

use graph_core::desc::{GraphDesc, SizeDesc};
use graph_core::size::{SizeError, SizeStep, evaluate};

use crate::error::Error;

/// How many workgroups a dispatch runs.
#[derive(Debug, Clone)]
pub(crate) enum DispatchSize {
    /// Decided at bake time.
    Fixed([u32; 3]),
    /// Invocations from the parameters and buffer lengths, rounded up to the workgroup size (the second).
    Threads([SizeDesc; 3], [u32; 3]),
    Workgroups([SizeDesc; 3]),
    /// Read by the GPU from the first three `u32`s of this buffer (an indirect dispatch).
    Indirect(u32),
}

/// Why a dispatch's size is refused at replay.
#[derive(Debug)]
pub(crate) enum SizeProblem {
    /// A size expression failed (overflow, division by zero), with its text.
    Expression(String, SizeError),
    /// Past the device's per-dimension limit.
    TooLarge([u32; 3]),
}

impl SizeProblem {
    /// The error naming the graph and node `node` of `desc`, whose size this is; `limit` is the device's
    /// workgroups per dimension.
    pub(crate) fn into_error(self, desc: &GraphDesc, node: usize, limit: u32) -> Error {
        let graph = desc.name.to_string();
        let node = desc.nodes.get(node).map_or("?", |n| &*n.name).to_string();
        match self {
            SizeProblem::TooLarge(workgroups) => Error::DispatchTooLarge {
                graph,
                node,
                workgroups,
                limit,
            },
            SizeProblem::Expression(expression, e) => Error::DispatchSize {
                graph,
                node,
                expression,
                reason: e.to_string(),
            },
        }
    }
}

/// A kernel node's objects for the portable recorder.
#[derive(Debug)]
pub(crate) struct KernelStep {
    /// Index into [`Kernels::pipelines`], which is its entry of the program's kernel table.
    pub pipeline: usize,
    pub bind_group: wgpu::BindGroup,
    /// The bind group's access modes and buffers, binding by binding: an update reuses it when they are the
    /// same.
    pub modes: Vec<graph_core::ir::AccessMode>,
    pub buffers: Vec<crate::slice::Slice>,
    /// The texture views bound in place of buffers, binding by binding (`None` for buffers).
    pub views: Vec<Option<wgpu::TextureView>>,
    /// The samplers bound in place of buffers, binding by binding (`None` for the rest).
    pub samplers: Vec<Option<wgpu::Sampler>>,
}

/// The portable recorder's pipelines, one per entry of the program's kernel table, and its bind groups by
/// node index (`None` for nodes that dispatch no kernel).
#[derive(Debug)]
pub(crate) struct Kernels {
    pub pipelines: Vec<wgpu::ComputePipeline>,
    pub nodes: Vec<Option<KernelStep>>,
}

impl DispatchSize {
    /// The size itself, or, when it reads no parameter, its workgroups for `lens`, computed and checked
    /// against `limit` now: a size that is the same at every replay is refused once, where it is set (at
    /// bake, or by the update that set it), rather than by every replay after.
    pub(crate) fn fixed_if_constant(self, lens: &[u32], limit: u32) -> Result<Self, SizeProblem> {
        let dims = match &self {
            DispatchSize::Threads(dims, _) | DispatchSize::Workgroups(dims) => dims,
            DispatchSize::Fixed(_) | DispatchSize::Indirect(_) => return Ok(self),
        };
        let reads_params = dims
            .iter()
            .any(|d| d.steps.iter().any(|s| matches!(s, SizeStep::Param(_))));
        if reads_params {
            return Ok(self);
        }
        let workgroups = self.workgroups(&[], lens)?;
        if workgroups.iter().any(|&d| d > limit) {
            return Err(SizeProblem::TooLarge(workgroups));
        }
        Ok(DispatchSize::Fixed(workgroups))
    }

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
            // Not known on the host: the recorder dispatches from the buffer (1s mark it as work to record).
            DispatchSize::Indirect(_) => Ok([1; 3]),
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
