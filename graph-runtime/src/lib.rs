//! GPU task graphs declared and checked at compile time, baked once and replayed fast on any GPU wgpu
//! supports.
//!
//! A [`graph!`] block declares a directed acyclic graph of GPU work: WGSL compute kernels (inline, from a
//! `.wgsl` file, or from the [`kernels`] library), copies, fills and host tasks, with the buffers and the
//! parameters they use. The macro infers the edges from buffer access, rejects cycles, races, unknown names
//! and invalid WGSL with compile errors at the right tokens, and generates a typed API. At run time the graph
//! is [baked](Baked::new) once onto a [`Gpu`] and [replayed](Baked::replay) with one submission per replay (per GPU partition, when host tasks split it),
//! parameters passed as push constants.
//!
//! ```
//! use graph_runtime::{graph, Gpu};
//!
//! graph! {
//!     /// y = a*x + y, then y scaled by 2.
//!     pub graph Saxpy {
//!         params { a: f32, n: u32 }
//!         buffers {
//!             x: [f32] = input,
//!             y: [f32] = inout,
//!         }
//!         kernel axpy(x: read, y: read_write) threads(params.n) {
//!             @compute @workgroup_size(64)
//!             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
//!                 let i = gid.x;
//!                 if (i < params.n) { y[i] = params.a * x[i] + y[i]; }
//!             }
//!         }
//!         kernel twice = kernels::scale(data: y, alpha: 2.0);
//!     }
//! }
//!
//! # fn main() -> Result<(), graph_runtime::Error> {
//! let gpu = Gpu::new_blocking()?;
//! let x = gpu.buffer_from_slice(&[1.0f32; 1000])?;
//! let y = gpu.buffer_from_slice(&[2.0f32; 1000])?;
//! let mut g = Saxpy::bake(&gpu, SaxpyBuffers { x: &x, y: &y })?;
//! g.params_mut().a = 3.0;
//! g.params_mut().n = 1000;
//! g.replay()?.wait()?;
//! assert_eq!(y.read_blocking()?[0], 10.0); // (3*1 + 2) * 2
//! # Ok(())
//! # }
//! ```
//!
//! # The language
//!
//! - `params { name: type, .. }`: 32-bit scalars or vectors (`f32`, `u32`, `vec2<f32>`..), laid out as the
//!   WGSL block `params` that every kernel sees; at most 128 bytes unless the graph is `#[uniform_params]`.
//! - `buffers { name: [T] = input | output | inout, name: [T; N] }`: external buffers the caller binds
//!   (run-time or fixed length), and graph-owned ones (no role; fixed length).
//! - `kernel name(buf: read | write | read_write, ..) [threads(x, y, z) | workgroups(..)] [entry(f)] { WGSL }`,
//!   or `.. file("path.wgsl");` relative to the crate's manifest. The macro declares the listed buffers as
//!   storage arrays of their access and `params`; `write` means "overwrites" (no read of old contents).
//!   Without `threads`/`workgroups`, one invocation runs per element of the first written buffer. Sizes are
//!   Rust `u32` expressions over `params.x` and `buf.len()`.
//! - `kernel name = kernels::path(binding: buffer, arg: value, ..);`: a library kernel.
//! - `fill name(buf = value);`, `copy name(src -> dst);`, `host name(buf: read | write | read_write, ..);` (a
//!   closure given with [`Baked::on_host`], which reads and writes the buffers it declared through its
//!   [`HostContext`] between GPU partitions), and explicit edges `a -> b -> c;`.
//! - `#[explicit_edges]` turns inference off: conflicting accesses must be ordered by edges, or it is a
//!   compile error (a data race).
//!
//! For `pub graph Name`, the macro generates `Name` (with `Name::bake`, `NODE_COUNT`, `TOPOLOGICAL_ORDER`,
//! `LEVELS`, `DESCRIPTION`), `NameParams` (the `#[repr(C)]` parameter block), `NameBuffers<'a>` (the external
//! buffers) and `NameNode` (the node enum).

// Generated code names `::graph_runtime`; this lets the crate's own example graph use the macro too.
extern crate self as graph_runtime;

mod bake;
mod baked;
mod buffer;
mod error;
pub mod example;
mod gpu;
mod host;
mod native;
mod readback;
mod replay;
mod scope;
mod task_graph;
pub mod validation;

pub use baked::{Baked, Submission};
pub use buffer::{AnyBuffer, Buffer, Element};
pub use error::Error;
pub use gpu::{ADAPTER_ENV, Gpu};
pub use graph_core::desc;
pub use graph_core::ir::ParamsStorage;
pub use graph_core::types::{Scalar, ValueType};
pub use graph_macros::graph;
pub use host::{HostContext, HostTask};
pub use readback::ReadFuture;
pub use task_graph::TaskGraph;
pub use wgpu;

/// The kernel library `graph!` reads as `kernels::..`, with CPU references.
pub use kernels;

/// What generated code reaches; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::{AnyBuffer, Baked, Buffer, Error, Gpu, TaskGraph};
    pub use bytemuck;
    pub use graph_core::{desc, ir, size, types};

    /// The description of a graph whose checks failed: only seen beside compile errors.
    pub const STUB_DESCRIPTION: desc::GraphDesc = desc::GraphDesc {
        name: "",
        params: desc::ParamsDesc {
            size: 0,
            storage: ir::ParamsStorage::Immediates,
            fields: &[],
            wgsl_struct: "",
        },
        buffers: &[],
        nodes: &[],
        edges: &[],
        topological_order: &[],
        levels: &[],
        partitions: &[],
    };
}
