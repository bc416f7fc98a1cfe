//! Blocks under GPU control (`if`/`else`, `switch`, `repeat .. while`): before each run of a gated block, a
//! one-dispatch gate kernel reads the block's flag, picks the branch it selects (an `if`'s nodes when it is
//! nonzero, its `else`'s when zero; a `switch`'s arm of that value, or its default arm), and copies the
//! workgroup counts of that branch's members (computed on the host at each replay, like every size) into
//! indirect-dispatch arguments, zeros for every other member; the members then dispatch indirectly from those
//! arguments. A member that does not run is one empty indirect dispatch: no host round trip.

#![forbid(unsafe_code)]

use std::borrow::Cow;

use graph_core::desc::GraphDesc;

use crate::gpu::Gpu;
use crate::program::{GateEntry, GateTable};
use crate::queue::GpuQueue;

/// The gate over one block's words: the branch the flag picks (a `switch`: the arm whose value it is, else
/// the default arm, numbered `cases`; otherwise 0 when the flag is nonzero, 1 when zero), then
/// `args[first + i] = counts[first + i]` for the slots whose member runs in that branch, 0 for the rest. The
/// counts buffer holds, after the `branches_at` count words, each slot's branch, then the arm values.
pub(crate) const GATE_WGSL: &str = "
@group(0) @binding(0) var<storage, read> flag: array<u32>;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read_write> args: array<u32>;
override first: u32 = 0u;
override words: u32 = 0u;
override branches_at: u32 = 0u;
override switch_block: bool = false;
override cases_at: u32 = 0u;
override cases: u32 = 0u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < words) {
        let value = flag[0];
        var branch = select(1u, 0u, value != 0u);
        if (switch_block) {
            branch = cases;
            for (var i = 0u; i < cases; i = i + 1u) {
                if (counts[cases_at + i] == value) {
                    branch = i;
                    break;
                }
            }
        }
        let word = first + gid.x;
        let runs = counts[branches_at + word / 3u] == branch;
        args[word] = select(0u, counts[word], runs);
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
    /// Over `slots` slots, the counts buffer followed by `fixed` words (see [`GateTable::fixed`]).
    fn new(device: &wgpu::Device, slots: u32, fixed: usize) -> Self {
        let size = u64::from(slots) * 12;
        let counts = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("gate counts"),
            size: size + fixed as u64 * 4,
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
            None => Shared::new(device, table.count, table.fixed.len()),
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
                        gate_pipeline(device, &shared, name, (gate, table.count * 3))
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
            words: std::iter::repeat_n(0, table.count as usize * 3)
                .chain(table.fixed.iter().copied())
                .collect(),
        };
        (Some(gates), built)
    }

    /// What gated members dispatch from: their slots' arguments.
    pub(crate) fn args(&self) -> &wgpu::Buffer {
        &self.shared.args
    }

    /// The buffers block `block`'s gate binds (the flag, the counts, the arguments), if it has a flag: the
    /// native recorder records the gate as a dispatch of its own over them.
    #[cfg(not(target_arch = "wasm32"))]
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

/// Block `name`'s gate pipeline over its words, the slots' branches starting at word `branches_at`.
fn gate_pipeline(
    device: &wgpu::Device,
    shared: &Shared,
    name: &str,
    (gate, branches_at): (GateEntry, u32),
) -> wgpu::ComputePipeline {
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(name),
        layout: Some(&shared.pipeline_layout),
        module: &shared.module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &gate_constants(gate, branches_at),
            ..Default::default()
        },
        cache: None,
    })
}

/// The override constants of `gate`'s pipeline ([`GATE_WGSL`]), the slots' branches starting at word
/// `branches_at` of the counts buffer: both recorders make it from these.
pub(crate) fn gate_constants(gate: GateEntry, branches_at: u32) -> [(&'static str, f64); 6] {
    [
        ("first", f64::from(gate.first)),
        ("words", f64::from(gate.words)),
        ("branches_at", f64::from(branches_at)),
        ("switch_block", f64::from(u8::from(gate.switch))),
        ("cases_at", f64::from(gate.cases_at)),
        ("cases", f64::from(gate.cases)),
    ]
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
