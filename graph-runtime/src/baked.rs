//! A baked graph: bake once, change parameters, replay many times.

use std::marker::PhantomData;

use graph_core::desc::OpDesc;
use graph_core::ir::ParamsStorage;

use crate::bake::{BoundBuffers, bind_buffers, build_plan, params_storage};
use crate::buffer::AnyBuffer;
use crate::host::{HostContext, HostTask};
use crate::replay::{Partition, Plan, encode_partition, resolve_dispatches};
use crate::task_graph::TaskGraph;
use crate::{Error, Gpu};

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

/// A replay on its way: wait for it, or drop it and let it finish on its own.
#[derive(Debug)]
#[must_use = "a replay runs without waiting; call `wait` to know when it finished and whether it failed"]
pub struct Submission {
    gpu: Gpu,
    index: Option<wgpu::SubmissionIndex>,
}

impl Submission {
    /// Blocks until this replay finished on the GPU; reports any device error.
    pub fn wait(self) -> Result<(), Error> {
        self.gpu.wait_for(self.index)
    }

    /// The wgpu submission of the replay's last GPU partition, for waiting on it together with other work
    /// through [`Gpu::wait_for`]. `None` when the replay ended with host tasks (everything before them has
    /// finished) or had no GPU work; waiting on `None` waits for all work on the device.
    pub fn into_index(self) -> Option<wgpu::SubmissionIndex> {
        self.index
    }
}

impl<G: TaskGraph> Baked<G> {
    /// Bakes the graph with the caller's buffers. The generated `bake` calls this.
    pub fn new(gpu: &Gpu, buffers: &G::Buffers<'_>) -> Result<Self, Error> {
        Self::with_buffers(gpu, &G::bind(buffers))
    }

    /// Bakes with buffers given by declaration index, untyped: each is checked for element type, length and
    /// usage.
    pub fn with_buffers(gpu: &Gpu, buffers: &[(u32, &AnyBuffer)]) -> Result<Self, Error> {
        let desc = G::DESCRIPTION;
        gpu.check()?;
        let storage = params_storage(gpu, desc);
        let scope = gpu.device().push_error_scope(wgpu::ErrorFilter::Validation);
        let oom_scope = gpu
            .device()
            .push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let built = (|| {
            let bound = bind_buffers(gpu, desc, buffers)?;
            let uniform = (storage == ParamsStorage::Uniform && desc.params.size > 0)
                .then(|| uniform_params(gpu, desc.params.size));
            let plan = build_plan(gpu, desc, &bound, storage, uniform.as_ref())?;
            Ok::<_, Error>((bound, uniform, plan))
        })();
        let oom = pollster::block_on(oom_scope.pop());
        let invalid = pollster::block_on(scope.pop());
        if let Some(e) = oom {
            return Err(Error::OutOfMemory(e.to_string()));
        }
        if let Some(e) = invalid {
            return Err(Error::Bake {
                graph: desc.name,
                reason: e.to_string(),
            });
        }
        let (bound, uniform, plan) = built?;
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
        match G::DESCRIPTION.nodes.get(index).map(|n| n.op) {
            Some(graph_core::desc::OpDesc::Host { .. }) => {
                self.host_tasks[index] = Some(Box::new(task));
                Ok(self)
            }
            _ => Err(Error::NotANode(format!("{node:?} (not a host task)"))),
        }
    }

    /// Runs the graph once: one command buffer per GPU partition, one submission each; returns without
    /// waiting unless the graph has host tasks, which must wait for the partition before them.
    pub fn replay(&mut self) -> Result<Submission, Error> {
        self.gpu.check()?;
        let desc = G::DESCRIPTION;
        let params = bytemuck::bytes_of(&self.params);
        let immediates = self.storage == ParamsStorage::Immediates;
        resolve_dispatches(&self.plan, params, &self.bound.lens, &mut self.workgroups).map_err(
            |(node, workgroups)| Error::DispatchTooLarge {
                graph: desc.name,
                node,
                workgroups,
                limit: self.plan.max_workgroups,
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
                    self.gpu.wait_for(last.take())?;
                    for &n in nodes {
                        let OpDesc::Host { accesses } = desc.nodes[n].op else {
                            continue;
                        };
                        let context = HostContext {
                            gpu: &self.gpu,
                            buffers: &self.bound.buffers,
                            lens: &self.bound.lens,
                            desc,
                            node: desc.nodes[n].name,
                            accesses,
                        };
                        if let Some(task) = self.host_tasks[n].as_mut() {
                            task(&context)?;
                        }
                    }
                }
            }
        }
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
