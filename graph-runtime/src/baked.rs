//! A baked graph: bake once, change parameters, replay many times.

use std::marker::PhantomData;

use graph_core::ir::ParamsStorage;

use crate::bake::{BoundBuffers, bind_buffers, build_plan, params_storage};
use crate::buffer::AnyBuffer;
use crate::replay::{Partition, Plan, encode_partition, resolve_dispatches};
use crate::task_graph::TaskGraph;
use crate::{Error, Gpu};

/// A host task: runs on the CPU between GPU partitions, with access to the graph's buffers.
pub type HostTask = Box<dyn FnMut(&HostContext<'_>) -> Result<(), Error> + Send>;

/// What a host task sees: the graph's buffers, readable and writable by declaration index.
#[derive(Debug)]
pub struct HostContext<'a> {
    gpu: &'a Gpu,
    buffers: &'a [wgpu::Buffer],
    desc: &'static graph_core::desc::GraphDesc,
}

impl HostContext<'_> {
    /// Reads buffer `name` (which the host task must declare) back to the host.
    pub fn read<T: crate::Element>(&self, name: &str) -> Result<Vec<T>, Error> {
        let index = self.index(name)?;
        let b = &self.desc.buffers[index];
        if b.elem != T::TYPE {
            return Err(Error::BufferType {
                graph: self.desc.name,
                buffer: b.name,
                expected: b.elem.wgsl(),
                actual: T::TYPE.wgsl(),
            });
        }
        crate::Buffer::<T>::from_wgpu(self.gpu, self.buffers[index].clone()).read_blocking()
    }

    fn index(&self, name: &str) -> Result<usize, Error> {
        self.desc
            .buffers
            .iter()
            .position(|b| b.name == name)
            .ok_or_else(|| Error::NotANode(name.to_string()))
    }
}

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

    /// The wgpu submission of the replay's last partition (`None` if it had no GPU work), for waiting on
    /// it together with other work through [`Gpu::wait_for`].
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
        if let Some((_, buffer)) = &self.uniform {
            self.gpu.queue().write_buffer(buffer, 0, params);
        }
        let mut last = None;
        for partition in &self.plan.partitions {
            match partition {
                Partition::Gpu(steps) => {
                    let mut encoder =
                        self.gpu
                            .device()
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some(desc.name),
                            });
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
                        let context = HostContext {
                            gpu: &self.gpu,
                            buffers: &self.bound.buffers,
                            desc,
                        };
                        let task = self.host_tasks[n].as_mut().ok_or(Error::HostTaskMissing {
                            graph: desc.name,
                            node: desc.nodes[n].name,
                        })?;
                        task(&context)?;
                    }
                }
            }
        }
        Ok(Submission {
            gpu: self.gpu.clone(),
            index: last,
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
