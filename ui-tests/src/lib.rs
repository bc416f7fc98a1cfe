//! Fixtures live under `tests/`. This library holds what the pass fixtures share: the check that bake keeps
//! the promise of a graph's `FUSED` constant (issue 19, point 8), which each pass fixture's `main` runs on
//! the machine's adapter (trybuild runs those programs).

#![forbid(unsafe_code)]

use graph_runtime::wgpu::{BufferDescriptor, BufferUsages};
use graph_runtime::{AnyBuffer, BakedGraph, Error, Gpu, TaskGraph};

/// The length given to an external buffer the graph declares without one, in a graph that declares none.
const UNDECLARED_LEN: u32 = 4096;

/// Bakes `G` (its description, through the untyped bake, with a zeroed buffer of every external buffer's
/// type and declared length; where none is declared, the longest the graph declares, which a buffer copied
/// whole into a declared one must match, or `UNDECLARED_LEN`) and checks what it fused:
/// bake declined no group, and each group of `promised` (the graph's `FUSED`) runs inside one fused kernel.
/// `Err` says what was promised and what bake did.
pub fn fused_as_promised<G: TaskGraph>(promised: &[&[G::Node]]) -> Result<(), String> {
    let gpu = Gpu::new_blocking().map_err(|e| e.to_string())?;
    let baked = bake(&gpu, G::DESCRIPTION).map_err(|e| e.to_string())?;
    let name = &G::DESCRIPTION.name;
    if !baked.fusion_declined().is_empty() {
        return Err(format!(
            "{name}: bake declined {:?}",
            baked.fusion_declined()
        ));
    }
    for group in promised {
        let members: Vec<u32> = group.iter().map(|&n| G::node_index(n) as u32).collect();
        let kept = baked
            .fused()
            .iter()
            .any(|f| members.iter().all(|m| f.members.contains(m)));
        if !kept {
            return Err(format!(
                "{name}: `FUSED` promised the nodes {members:?} in one kernel, bake fused {:?}",
                baked.fused()
            ));
        }
    }
    Ok(())
}

fn bake(gpu: &Gpu, desc: &'static graph_runtime::GraphDesc) -> Result<BakedGraph, Error> {
    let longest = desc.buffers.iter().filter_map(|b| b.len).max();
    let mut buffers = Vec::new();
    for b in desc.buffers.iter().filter(|b| b.role.is_external()) {
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
        buffers.push((&*b.name, AnyBuffer::from_wgpu(gpu, buffer, b.elem)?));
    }
    let named: Vec<(&str, &AnyBuffer)> = buffers.iter().map(|(n, b)| (*n, b)).collect();
    BakedGraph::bake(gpu, desc, &named)
}
