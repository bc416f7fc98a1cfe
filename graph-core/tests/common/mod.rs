//! What graph-core's integration tests share: a one-kernel library (graph-core cannot depend on the
//! `kernels` crate), `scale` as it ships.

#![allow(dead_code, reason = "each test crate uses part of it")]

use graph_core::ir::AccessMode;
use graph_core::library::{Library, LibraryArg, LibraryBinding, LibraryKernel};

pub const SCALE_WGSL: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 64u;
    if (i < arrayLength(&data)) {
        data[i] = alpha() * data[i];
    }
}
";

static SCALE_BINDINGS: [LibraryBinding; 1] = [LibraryBinding {
    name: "data",
    mode: AccessMode::ReadWrite,
    elem: "f32",
    atomic: false,
}];

static SCALE_ARGS: [LibraryArg; 1] = [LibraryArg {
    name: "alpha",
    ty: "f32",
}];

static KERNELS: [LibraryKernel; 1] = [LibraryKernel {
    path: "scale",
    summary: "data[i] = alpha * data[i]",
    bindings: &SCALE_BINDINGS,
    args: &SCALE_ARGS,
    source: SCALE_WGSL,
    pointwise: true,
    dispatch: "one invocation per element of the output",
    sized_by: None,
    per_invocation: 1,
    most_invocations: 0,
    grid: None,
}];

pub static LIBRARY: Library = Library {
    kernels: &KERNELS,
    subgraphs: &[],
};
