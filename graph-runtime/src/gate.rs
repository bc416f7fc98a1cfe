//! Blocks under GPU control (`if`, `repeat .. while`): before each run of a gated block, a one-dispatch gate
//! kernel copies its members' workgroup counts (computed on the host at each replay, like every size) into
//! indirect-dispatch arguments, or zeros when the block's flag is 0; the members then dispatch indirectly from
//! those arguments. A skipped run is the gate and one empty indirect dispatch per member: no host round trip.

#![forbid(unsafe_code)]

use std::borrow::Cow;

use graph_core::desc::GraphDesc;

use crate::gpu::Gpu;
use crate::program::{GateEntry, GateTable};
use crate::queue::GpuQueue;

/// The gate: `args[first + i] = flag[0] != 0 ? counts[first + i] : 0` over one block's words.
pub(crate) const GATE_WGSL: &str = "
@group(0) @binding(0) var<storage, read> flag: array<u32>;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read_write> args: array<u32>;
override first: u32 = 0u;
override words: u32 = 0u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < words) {
        args[first + gid.x] = select(0u, counts[first + gid.x], flag[0] != 0u);
    }
}
";

/// One gated block's portable gate.
struct Gate {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    /// The flag's buffer, bound at binding 0.
    flag: wgpu::Buffer,
}

/// The GPU side of a baked graph's gates, laid out by its program's [`GateTable`]: the counts and arguments
/// every gate shares, and each block's portable pipeline and bind group.
pub(crate) struct Gates {
    shared: Shared,
    /// By block: `None` for a block without a flag (a plain `repeat`).
    blocks: Vec<Option<Gate>>,
    /// The layout they were made for.
    table: GateTable,
    /// The counts of this replay, staged.
    words: Vec<u32>,
}

/// What every gate of a graph uses, kept by an update that leaves the gated members' slots as they were.
#[derive(Clone)]
struct Shared {
    /// Three counts per gated member, written by the host at each replay.
    counts: wgpu::Buffer,
    /// What the gates write, and gated members dispatch from.
    args: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    module: wgpu::ShaderModule,
}

impl Shared {
    fn new(device: &wgpu::Device, slots: u32) -> Self {
        let size = u64::from(slots) * 12;
        let counts = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("gate counts"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let args = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("gate arguments"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
            mapped_at_creation: false,
        });
        let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("gate"),
            entries: &[storage(0, true), storage(1, true), storage(2, false)],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("gate"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("gate"),
            source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(GATE_WGSL)),
        });
        Shared {
            counts,
            args,
            layout,
            pipeline_layout,
            module,
        }
    }
}

/// What [`Gates::new`] created: what an update reports beside its kernels'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct GatesBuilt {
    pub pipelines: usize,
    pub bind_groups: usize,
}

impl Gates {
    /// The gates of `table`, laid out for `desc`'s gated blocks, over the bound buffers; `None` when it has
    /// none. With the gates of the graph before an update (`previous`), what did not change is kept: where the
    /// layout is the same, the counts, the arguments and each block's pipeline (the same constants), and a
    /// block's bind group where its flag is the same buffer. The rest is built, and counted.
    pub(crate) fn new(
        gpu: &Gpu,
        desc: &GraphDesc,
        table: &GateTable,
        buffers: &[crate::slice::Slice],
        previous: Option<&Gates>,
    ) -> (Option<Gates>, GatesBuilt) {
        let mut built = GatesBuilt::default();
        if table.count == 0 {
            return (None, built);
        }
        let device = gpu.device();
        let kept = previous.filter(|p| p.table == *table);
        let shared = match kept {
            Some(p) => p.shared.clone(),
            None => Shared::new(device, table.count),
        };
        let blocks = table
            .blocks
            .iter()
            .enumerate()
            .map(|(b, gate)| {
                let gate = (*gate)?;
                // A block's flag is never placed in the heap: the slice is its whole buffer.
                let flag = &buffers.get(gate.flag as usize)?.buffer;
                let name = desc.blocks.get(b).map_or("gate", |block| &*block.name);
                let old = kept.and_then(|p| p.blocks.get(b)?.as_ref());
                let pipeline = match old {
                    Some(old) => old.pipeline.clone(),
                    None => {
                        built.pipelines += 1;
                        gate_pipeline(device, &shared, name, gate)
                    }
                };
                let bind_group = match old {
                    Some(old) if old.flag == *flag => old.bind_group.clone(),
                    _ => {
                        built.bind_groups += 1;
                        gate_bind_group(device, &shared, name, flag)
                    }
                };
                Some(Gate {
                    pipeline,
                    bind_group,
                    flag: flag.clone(),
                })
            })
            .collect();
        let gates = Gates {
            shared,
            blocks,
            table: table.clone(),
            words: vec![0; table.count as usize * 3],
        };
        (Some(gates), built)
    }

    /// What gated members dispatch from: their slots' arguments.
    pub(crate) fn args(&self) -> &wgpu::Buffer {
        &self.shared.args
    }

    /// The buffers block `block`'s gate binds (the flag, the counts, the arguments), if it has a flag: the
    /// native recorder records the gate as a dispatch of its own over them.
    pub(crate) fn buffers(&self, block: u32) -> Option<[&wgpu::Buffer; 3]> {
        let gate = self.blocks.get(block as usize)?.as_ref()?;
        Some([&gate.flag, &self.shared.counts, &self.shared.args])
    }

    /// Writes this replay's counts of every gated member (queued ahead of the replay's submissions).
    pub(crate) fn before_replay(&mut self, queue: &GpuQueue, workgroups: &[[u32; 3]]) {
        for (node, slot) in self.table.slots.iter().enumerate() {
            if let (Some(slot), Some(w)) = (slot, workgroups.get(node)) {
                let at = *slot as usize * 3;
                self.words[at..at + 3].copy_from_slice(w);
            }
        }
        queue.write_buffer(&self.shared.counts, 0, bytemuck::cast_slice(&self.words));
    }

    /// Records block `block`'s gate into `pass`, over `workgroups`; the caller sets its own pipeline and bind
    /// groups again after.
    pub(crate) fn record(&self, pass: &mut wgpu::ComputePass<'_>, block: u32, workgroups: u32) {
        if let Some(Some(gate)) = self.blocks.get(block as usize) {
            pass.set_pipeline(&gate.pipeline);
            pass.set_bind_group(0, &gate.bind_group, &[]);
            pass.dispatch_workgroups(workgroups, 1, 1);
        }
    }
}

/// Block `name`'s gate pipeline over its words.
fn gate_pipeline(
    device: &wgpu::Device,
    shared: &Shared,
    name: &str,
    gate: GateEntry,
) -> wgpu::ComputePipeline {
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(name),
        layout: Some(&shared.pipeline_layout),
        module: &shared.module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &[
                ("first", f64::from(gate.first)),
                ("words", f64::from(gate.words)),
            ],
            ..Default::default()
        },
        cache: None,
    })
}

/// Block `name`'s gate bindings: its flag, and the graph's counts and arguments.
fn gate_bind_group(
    device: &wgpu::Device,
    shared: &Shared,
    name: &str,
    flag: &wgpu::Buffer,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(name),
        layout: &shared.layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: flag.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: shared.counts.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: shared.args.as_entire_binding(),
            },
        ],
    })
}
