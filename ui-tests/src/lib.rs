//! Fixtures live under `tests/`. This library holds what the pass fixtures share: the check that bake keeps
//! the promise of a graph's `FUSED` constant (issue 19, point 8), which each pass fixture's `main` runs on
//! the machine's adapter (trybuild runs those programs).

#![forbid(unsafe_code)]

use graph_runtime::wgpu::{BufferDescriptor, BufferUsages};
use graph_runtime::{AnyBuffer, Baked, Error, Gpu, TaskGraph};

/// The length given to an external buffer the graph declares without one, in a graph that declares none.
const UNDECLARED_LEN: u32 = 4096;

/// Bakes `G` (through `Baked::with_buffers`, with a zeroed buffer of every external buffer's type and
/// declared length; where none is declared, the longest the graph declares, which a buffer copied whole
/// into a declared one must match, or `UNDECLARED_LEN`) and checks what it fused: bake declined no group,
/// and each group of `promised` (the graph's `FUSED`) runs inside one fused kernel
/// (`Baked::check_fused`). `Err` says what was promised and what bake did.
pub fn fused_as_promised<G: TaskGraph>(promised: &[&[G::Node]]) -> Result<(), String> {
    let gpu = Gpu::new_blocking().map_err(|e| e.to_string())?;
    let baked = bake::<G>(&gpu).map_err(|e| e.to_string())?;
    let declined = baked.untyped().fusion_declined();
    if !declined.is_empty() {
        return Err(format!(
            "{}: bake declined {declined:?}",
            G::DESCRIPTION.name
        ));
    }
    baked.check_fused(promised).map_err(|e| e.to_string())
}

fn bake<G: TaskGraph>(gpu: &Gpu) -> Result<Baked<G>, Error> {
    let desc = G::DESCRIPTION;
    let longest = desc.buffers.iter().filter_map(|b| b.len).max();
    let mut buffers = Vec::new();
    for (index, b) in desc.buffers.iter().enumerate() {
        if !b.role.is_external() {
            continue;
        }
        let len = b.len.or(longest).unwrap_or(UNDECLARED_LEN);
        let buffer = gpu.device().create_buffer(&BufferDescriptor {
            label: Some(&b.name),
            size: u64::from(len.max(1)) * u64::from(b.elem.size()),
            usage: BufferUsages::STORAGE
                | BufferUsages::COPY_SRC
                | BufferUsages::COPY_DST
                | BufferUsages::INDIRECT,
            mapped_at_creation: false,
        });
        buffers.push((index as u32, AnyBuffer::from_wgpu(gpu, buffer, b.elem)?));
    }
    let indexed: Vec<(u32, &AnyBuffer)> = buffers.iter().map(|(i, b)| (*i, b)).collect();
    Baked::with_buffers(gpu, &indexed)
}
