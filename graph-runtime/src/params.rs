//! Parameter transport, in one place: where the parameter block lives on this device (push constants, or a
//! uniform buffer when the device has no immediates, the block is too large for them, or the graph asks),
//! what the pipeline layouts declare for it, and how each replay gets it there.

#![forbid(unsafe_code)]

use graph_core::desc::GraphDesc;
use graph_core::ir::ParamsStorage;

use crate::gpu::Gpu;
use crate::queue::GpuQueue;

/// How a baked graph's parameters reach its kernels.
#[derive(Debug)]
pub(crate) struct ParamsTransport {
    storage: ParamsStorage,
    /// Size of the block in bytes (0: no parameters).
    size: u32,
    /// The fallback's buffer, with its layout and bind group (group 1); `None` with push constants or
    /// without parameters.
    uniform: Option<UniformParams>,
}

#[derive(Debug)]
struct UniformParams {
    layout: wgpu::BindGroupLayout,
    buffer: wgpu::Buffer,
    group: wgpu::BindGroup,
    /// The bytes last written to `buffer`: rewritten only on change.
    written: Vec<u8>,
}

impl ParamsTransport {
    /// Decides where `desc`'s parameters go on `gpu`, and creates the uniform buffer when that is where.
    pub(crate) fn new(gpu: &Gpu, desc: &GraphDesc) -> Self {
        let size = desc.params.size;
        let fits = size <= gpu.max_immediate_size();
        let storage = match desc.params.storage {
            ParamsStorage::Immediates if fits => ParamsStorage::Immediates,
            _ => ParamsStorage::Uniform,
        };
        let uniform = (storage == ParamsStorage::Uniform && size > 0).then(|| uniform(gpu, size));
        ParamsTransport {
            storage,
            size,
            uniform,
        }
    }

    pub(crate) fn storage(&self) -> ParamsStorage {
        self.storage
    }

    /// The push-constant range every pipeline layout declares.
    pub(crate) fn immediate_size(&self) -> u32 {
        match self.storage {
            ParamsStorage::Immediates => self.size,
            ParamsStorage::Uniform => 0,
        }
    }

    /// The layout of bind group 1, which pipelines declare in uniform-buffer mode.
    pub(crate) fn group_layout(&self) -> Option<&wgpu::BindGroupLayout> {
        self.uniform.as_ref().map(|u| &u.layout)
    }

    /// Before a replay records: the uniform buffer gets `params` when they changed (a queued write, ordered
    /// before the replay's submission).
    pub(crate) fn before_replay(&mut self, queue: &GpuQueue, params: &[u8]) {
        if let Some(u) = &mut self.uniform
            && u.written.as_slice() != params
        {
            queue.write_buffer(&u.buffer, 0, params);
            u.written.clear();
            u.written.extend_from_slice(params);
        }
    }

    /// At the start of a compute pass: the uniform buffer's bind group.
    pub(crate) fn begin_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        if let Some(u) = &self.uniform {
            pass.set_bind_group(1, &u.group, &[]);
        }
    }

    /// After a pipeline is set: the push constants. wgpu keeps them across dispatches and clears them only
    /// when the pipeline layout changes, which needs a pipeline change, so this is enough.
    pub(crate) fn after_pipeline(&self, pass: &mut wgpu::ComputePass<'_>, params: &[u8]) {
        if self.storage == ParamsStorage::Immediates && !params.is_empty() {
            pass.set_immediates(0, params);
        }
    }
}

fn uniform(gpu: &Gpu, size: u32) -> UniformParams {
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
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("graph params"),
        layout: &layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: buffer.as_entire_binding(),
        }],
    });
    UniformParams {
        layout,
        buffer,
        group,
        written: Vec::with_capacity(size as usize),
    }
}
