//! A baked graph: bake once, change parameters, replay many times.

use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;

use graph_core::desc::{GraphDesc, OpDesc};
use graph_core::ir::ParamsStorage;

use crate::bake::{BoundBuffers, bind_buffers, build_plan, params_storage};
use crate::buffer::AnyBuffer;
use crate::error::Error;
use crate::gpu::Gpu;
use crate::host::{HostContext, HostTask};
use crate::replay::{Partition, Plan, SizeProblem, encode_partition, resolve_dispatches};
use crate::scope::OpScope;
use crate::task_graph::TaskGraph;
use crate::wait::Submission;

/// A graph baked onto a device: replay it as often as needed.
pub struct Baked<G: TaskGraph> {
    gpu: Gpu,
    params: G::Params,
    storage: ParamsStorage,
    uniform: Option<(wgpu::BindGroupLayout, wgpu::Buffer)>,
    bound: BoundBuffers,
    plan: Plan,
    host_tasks: Vec<Option<HostTask>>,
    /// Workgroup counts of each dispatch for the current replay, rewritten in place (no allocation).
    workgroups: Vec<[u32; 3]>,
    /// The parameter bytes last written to the uniform buffer (fallback only): rewritten only on change.
    uniform_written: Vec<u8>,
    _graph: PhantomData<G>,
}

impl<G: TaskGraph> std::fmt::Debug for Baked<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Baked")
            .field("graph", &G::DESCRIPTION.name)
            .field("params", &self.params)
            .field("storage", &self.storage)
            .field("pipelines", &self.plan.pipelines.len())
            .finish_non_exhaustive()
    }
}

impl<G: TaskGraph> Baked<G> {
    /// Bakes the graph with the caller's buffers. The generated `bake` calls this.
    pub fn new(gpu: &Gpu, buffers: &G::Buffers<'_>) -> Result<Self, Error> {
        Self::with_buffers(gpu, &G::bind(buffers))
    }

    /// Bakes with buffers given by declaration index, untyped: each is checked for element type, length and
    /// usage. The description is validated first, so one that did not come from `graph!` is an error rather
    /// than a panic.
    pub fn with_buffers(gpu: &Gpu, buffers: &[(u32, &AnyBuffer)]) -> Result<Self, Error> {
        let desc = G::DESCRIPTION;
        desc.validate(size_of::<G::Params>())
            .map_err(|e| Error::InvalidDescription {
                graph: desc.name,
                reason: e.0,
            })?;
        gpu.check_lost()?;
        let storage = params_storage(gpu, desc);
        let scope = OpScope::enter(gpu);
        let built = (|| {
            let bound = bind_buffers(gpu, desc, buffers)?;
            let uniform = (storage == ParamsStorage::Uniform && desc.params.size > 0)
                .then(|| uniform_params(gpu, desc.params.size));
            let plan = build_plan(gpu, desc, &bound, storage, uniform.as_ref())?;
            Ok::<_, Error>((bound, uniform, plan))
        })();
        let (bound, uniform, plan) = scope.finish_with(built, |reason| Error::Bake {
            graph: desc.name,
            reason,
        })?;
        let mut host_tasks = Vec::new();
        host_tasks.resize_with(desc.nodes.len(), || None);
        Ok(Baked {
            gpu: gpu.clone(),
            params: G::Params::default(),
            storage,
            uniform,
            bound,
            workgroups: vec![[0; 3]; plan.dispatch_count],
            uniform_written: Vec::with_capacity(desc.params.size as usize),
            plan,
            host_tasks,
            _graph: PhantomData,
        })
    }

    /// The parameters the next replay uses.
    pub fn params(&self) -> &G::Params {
        &self.params
    }

    /// Changes parameters for the next replays: a push-constant write, no re-bake.
    pub fn params_mut(&mut self) -> &mut G::Params {
        &mut self.params
    }

    pub fn set_params(&mut self, params: G::Params) {
        self.params = params;
    }

    /// Where the parameters go on this device: push constants, or the uniform-buffer fallback.
    pub fn params_storage(&self) -> ParamsStorage {
        self.storage
    }

    /// Gives a host task its closure.
    pub fn on_host(
        &mut self,
        node: G::Node,
        task: impl FnMut(&HostContext<'_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        let index = G::node_index(node);
        let is_host = matches!(
            G::DESCRIPTION.nodes.get(index).map(|n| &n.op),
            Some(OpDesc::Host { .. })
        );
        match self.host_tasks.get_mut(index) {
            Some(slot) if is_host => {
                *slot = Some(Box::new(task));
                Ok(self)
            }
            _ => Err(Error::NotANode(format!("{node:?} (not a host task)"))),
        }
    }

    /// Runs the graph once: one command buffer per GPU partition, one submission each; returns without
    /// waiting unless the graph has host tasks, which wait for the partition before them. What the device
    /// reports while the replay records and submits is this replay's error.
    pub fn replay(&mut self) -> Result<Submission, Error> {
        self.gpu.check_lost()?;
        let gpu = self.gpu.clone();
        let scope = OpScope::enter(&gpu);
        let submitted = self.submit();
        scope.finish(submitted)
    }

    fn submit(&mut self) -> Result<Submission, Error> {
        let desc = G::DESCRIPTION;
        // A copy: the replay records these bytes while host tasks borrow the graph.
        let params_now = self.params;
        let params = bytemuck::bytes_of(&params_now);
        let immediates = self.storage == ParamsStorage::Immediates;
        resolve_dispatches(&self.plan, params, &self.bound.lens, &mut self.workgroups).map_err(
            |(node, problem)| match problem {
                SizeProblem::TooLarge(workgroups) => Error::DispatchTooLarge {
                    graph: desc.name,
                    node,
                    workgroups,
                    limit: self.plan.max_workgroups,
                },
                SizeProblem::Expression(expression, e) => Error::DispatchSize {
                    graph: desc.name,
                    node,
                    expression,
                    reason: e.to_string(),
                },
            },
        )?;
        // Every host task has its closure before any work is submitted: a replay fails whole or not at all.
        if let Some(missing) = self.missing_host_task() {
            return Err(Error::HostTaskMissing {
                graph: desc.name,
                node: desc.nodes[missing].name,
            });
        }
        if let Some((_, buffer)) = &self.uniform
            && self.uniform_written.as_slice() != params
        {
            self.gpu.queue().write_buffer(buffer, 0, params);
            self.uniform_written.clear();
            self.uniform_written.extend_from_slice(params);
        }
        let mut last = None;
        for partition in &self.plan.partitions {
            match partition {
                Partition::Gpu(steps) => {
                    let mut encoder = self
                        .gpu
                        .device()
                        .create_command_encoder(&Default::default());
                    encode_partition(
                        &mut encoder,
                        &self.plan,
                        steps,
                        &self.bound.buffers,
                        params,
                        immediates,
                        &self.workgroups,
                    );
                    last = Some(self.gpu.queue().submit([encoder.finish()]));
                }
                Partition::Host(nodes) => {
                    // Only this replay's partition before: nothing to wait for when the graph starts here.
                    if let Some(index) = last.take() {
                        self.gpu.wait_for(Some(index))?;
                    }
                    for &n in nodes {
                        run_host_task(desc, &self.gpu, &self.bound, &mut self.host_tasks, n)?;
                    }
                    // A task may have lost the device (or destroyed it): stop before submitting to it.
                    self.gpu.poll_lost()?;
                }
            }
        }
        // What trailing host tasks wrote is queued, not submitted: it goes to the GPU ahead of the next
        // submission (a replay, a read), which is all that can see it. Submitting it here would make waiting
        // for this replay wait for every other graph's work before it on the queue.
        Ok(Submission {
            gpu: self.gpu.clone(),
            index: last,
        })
    }

    fn missing_host_task(&self) -> Option<usize> {
        self.plan.partitions.iter().find_map(|p| match p {
            Partition::Host(nodes) => nodes
                .iter()
                .copied()
                .find(|&n| self.host_tasks[n].is_none()),
            Partition::Gpu(_) => None,
        })
    }

    /// [`Baked::replay`], then waits for it.
    pub fn replay_blocking(&mut self) -> Result<(), Error> {
        self.replay()?.wait()
    }
}

/// Runs host task `n`. A panic in it is caught and becomes this replay's error; the baked graph stays
/// usable, and the next replay runs the task again.
fn run_host_task(
    desc: &'static GraphDesc,
    gpu: &Gpu,
    bound: &BoundBuffers,
    host_tasks: &mut [Option<HostTask>],
    n: usize,
) -> Result<(), Error> {
    let OpDesc::Host { accesses } = desc.nodes[n].op else {
        return Ok(());
    };
    let context = HostContext {
        gpu,
        buffers: &bound.buffers,
        lens: &bound.lens,
        desc,
        node: desc.nodes[n].name,
        accesses,
    };
    let Some(task) = host_tasks.get_mut(n).and_then(Option::as_mut) else {
        return Ok(());
    };
    match std::panic::catch_unwind(AssertUnwindSafe(|| task(&context))) {
        Ok(result) => result,
        Err(payload) => Err(Error::HostTaskPanicked {
            graph: desc.name,
            node: desc.nodes[n].name,
            message: panic_message(payload.as_ref()),
        }),
    }
}

/// The text a panic was raised with, when it has one.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

fn uniform_params(gpu: &Gpu, size: u32) -> (wgpu::BindGroupLayout, wgpu::Buffer) {
    let device = gpu.device();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("graph params"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("graph params"),
        size: u64::from(size.next_multiple_of(16)),
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    (layout, buffer)
}
