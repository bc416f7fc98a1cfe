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
//! # Where things are
//!
//! The crate's root holds what an application uses: [`Gpu`] and its [`Buffer`]s, [`graph!`] and the
//! [`GraphBuilder`], the baked graph ([`Baked`], [`BakedGraph`]) and its replays ([`Submission`],
//! [`Finished`]), host and interop tasks ([`HostContext`], [`InteropContext`]), updates, profiles and
//! [`Error`]. The layers beneath are modules:
//!
//! - [`ir`]: the graph as declared, and its words (access modes, buffer roles, dispatch sizes, value types);
//! - [`desc`]: the parts of a [`GraphDesc`], the checked graph;
//! - [`mod@file`]: saved graphs;
//! - [`pipeline`]: the steps from a declared graph to a baked one (describe, flatten, fuse), for tools;
//! - [`mod@env`]: the environment variables the runtime reads; [`validation`]: validation mode;
//! - [`example`]: what `graph!` generates, documented; [`kernels`]: the kernel library; [`wgpu`]: the wgpu
//!   this crate is built on, for an application's own wgpu work.
//!
//! # The language
//!
//! - `params { name: type, .. }`: 32-bit scalars or vectors (`f32`, `u32`, `vec2<f32>`..), or `f16` and its
//!   vectors (kernels read an `f16`; the block holds the `f32` of its value, a [`HalfParam`]), laid out as
//!   the WGSL block `params` that every kernel sees; at most 128 bytes unless the graph is
//!   `#[uniform_params]`.
//! - `buffers { name: [T] = input | output | inout, name: [T; N] }`: external buffers the caller binds
//!   (run-time or fixed length), and graph-owned ones (no role; fixed length).
//! - `kernel name(buf: read | write | read_write, ..) [threads(x, y, z) | workgroups(..)] [entry(f)] { WGSL }`,
//!   or `.. file("path.wgsl");` relative to the crate's manifest. The macro declares the listed buffers as
//!   storage arrays of their access and `params`; `write` means "overwrites" (no read of old contents).
//!   Without `threads`/`workgroups`, one invocation runs per element of the first written buffer.
//! - Dispatch sizes are `u32` expressions over `params.NAME` (a `u32` parameter, or `params.NAME.x` of a
//!   `u32` vector), `BUF.len()`, integer literals, `+ - * /`, `.div_ceil(..)`, `.min(..)`, `.max(..)` and
//!   parentheses. They are checked at compile time (a part that is constant is computed there) and computed
//!   at each replay with checked arithmetic: an overflow, a negative difference or a division by zero is an
//!   [`Error::DispatchSize`], never a wrapped, too-small dispatch.
//! - `workgroups(indirect: args)`: the workgroup counts are the first three elements of `args` (`[u32; 3]` or
//!   longer), written on the GPU by an earlier node, read by the GPU (an indirect dispatch, with no host
//!   round trip). The kernel reads `args` for edge inference; a graph-owned `args` no earlier node writes,
//!   or one that is not `u32`, is a compile error.
//! - `kernel name = kernels::path(binding: buffer, arg: value, ..);`: a library kernel. An argument is WGSL of
//!   the argument's type, exactly: a parameter of another type is a compile error, not a conversion.
//! - `fill name(buf = value);` sets every element of `buf`, of any element type, to `value`, WGSL of that type
//!   (`0.0`, `params.k`, `vec2<u32>(1u, 2u)`; for a `u8` or `u16` buffer a `u32`, whose low bits it writes);
//!   `fill name(buf[start..end] = value);` sets a range (not of a `u8`, `u16` or `f16` buffer, whose ranges
//!   could end inside a word).
//! - `copy name(src -> dst);` copies the whole of `src` into `dst`, of the same element type and length;
//!   either side may be a range, written as a Rust slice (`x[1..]`, `x[..n.len()]`, `x[2..x.len() - 2]`),
//!   and the two sides have one length, as with `copy_from_slice`. Range bounds are literals and buffer
//!   lengths (no parameters: a range is fixed at bake), checked at compile time where the lengths are
//!   declared and at bake otherwise ([`Error::BufferLength`] or [`Error::Bake`]).
//! - `upload name(buf);` (or a range, `buf[..4]`): host data written into `buf` at this point of each replay,
//!   in the replay's own submission. Give it between replays with [`Baked::upload`] and the typed handle
//!   `Graph::UPLOADS.name` (`g.upload(G::UPLOADS.bias, &data)?`); a replay takes its data, and a replay
//!   without data is [`Error::UploadMissing`], never stale data. An upload into an `input` is a compile error.
//! - `readback name(buf);` (or a range): `buf` copied out at this point of each replay, into buffers of that
//!   replay alone. Once the replay's [`Submission`] is waited for, read it from the [`Finished`] that `wait`
//!   returns: `g.replay()?.wait()?.read(G::READBACKS.name)?`, one replay's data even with several in flight.
//!   A readback of a buffer that no earlier node writes is a compile error.
//! - `host name(buf: read | write | read_write, ..);`: a closure run between GPU partitions, once the GPU work
//!   before it has finished, that reads and writes the buffers it declared. Given with [`Baked::on_host`]
//!   and `Graph::HOSTS.name`, it receives the node's generated typed context: a method per declared buffer,
//!   of its element type (`h.grid()?` reads `grid` if declared `read` or `read_write`,
//!   `h.write_grid(&data)?` replaces it if declared `write` or `read_write`), so reading a buffer the task
//!   did not declare is a compile error. Given with the task's name instead (`g.on_host("name", ..)`), it
//!   receives the untyped [`HostContext`] (buffers by name, checked at run time), as builder and file graphs
//!   have. A panic in a task is the replay's [`Error::HostTaskPanicked`]; an error it returns,
//!   [`Error::HostTask`] with the graph's and the task's names (its own errors go in with [`Error::task`]:
//!   `.map_err(Error::task)?`).
//! - `interop name(buf: read | write | read_write, ..);`: a closure given with [`Baked::on_interop`]
//!   (`g.on_interop(GraphInterop::Name, ..)`), which receives the device, the queue, the command encoder of
//!   its GPU partition and the buffers it declared ([`InteropContext`]), and records its own wgpu work in
//!   order with the graph (Codeplay's `interop_task`): how a third-party wgpu library joins a graph. A panic
//!   in it is the replay's [`Error::InteropTaskPanicked`]; an error it returns, [`Error::InteropTask`].
//! - `empty name;`: a node with no work, a join point for explicit edges (SYCL's empty node).
//!   `barrier name;`: a node with no work after every node declared before it that nothing declared before it
//!   depends on (SYCL's `depends_on_all_leaves`); later nodes follow it through explicit edges.
//! - `subgraph name = Child(child_buffer: buffer: read | write | read_write, ..);`: another `graph!` graph as
//!   one node, each of its external buffers bound to one of this graph's (`buffer: mode` when the names are
//!   the same), with the access its role implies; it reads this graph's parameters of the same names. The
//!   bindings are checked against `Child::DESCRIPTION` by const evaluation, so a missing or unknown buffer,
//!   another element type or length, an access the child does not allow, or a parameter this graph lacks is a
//!   compile error at the binding. `kernels::reduce::sum(..)` and the other library subgraphs are children
//!   too. At bake the child is flattened into the graph ([`pipeline::flatten`]): its nodes named
//!   `name.node`, its roots after this node's predecessors, this node's successors after its leaves. Host
//!   tasks inside a child are given closures by that name (`g.on_host("name.task", ..)`, [`Baked::on_host`]).
//! - `alternatives name { kernel a ..; kernel b ..; }`: kernels, each binding what it needs, of which one runs
//!   per replay, the first after bake; they order as one node accessing what any of them accesses. [`Baked::select`] switches to another after bake (`g.select(GraphChoice::Scharr)?`), without
//!   re-baking; replays already submitted keep their choice (SYCL's dynamic command group).
//! - `if name(flag) { kernel ..; fill ..; copy ..; }` runs its kernels, fills and copies once when `flag[0] != 0` (a `u32`
//!   buffer written earlier, on the GPU), else they run no workgroups; `repeat name(count) { .. }` runs them
//!   `count` times in each replay, and `repeat name(count, while: flag) { .. }` each time only while the flag
//!   is set (a member clears it to stop). Decided on the GPU, with no host round trip: before each run a
//!   gate kernel writes the members' workgroup counts (or zeros) as indirect-dispatch arguments. A block
//!   orders as one node with the rest of the graph (a copy in a block runs as a kernel over 32-bit words, so
//!   its gate can skip it, and a subgraph's nodes join the block); transfers, host tasks and nested blocks
//!   cannot be inside one, and a flag that is not `u32`, or graph-owned and never set before, is a compile error.
//!   `if name(flag) { .. } else { .. }` runs the `else` nodes when the flag is 0, and
//!   `switch name(index) { 0 => { .. } 1 => { .. } _ => { .. } }` the arm whose value `index[0]` is (or the
//!   default arm `_`); one gate per block picks the branch and zeroes the others' arguments.
//! - Explicit edges `a -> b -> c;`.
//! - `#[explicit_edges]` turns inference off: conflicting accesses must be ordered by edges, or it is a
//!   compile error (a data race). `#[device_limits]` lifts the portable workgroup-size limits (256 in x and
//!   y, 64 in z, 256 in all) to the device's own, checked at bake.
//!
//! For `pub graph Name`, the macro generates `Name` (with `Name::bake`, `NODE_COUNT`, `NODES`,
//! `TOPOLOGICAL_ORDER`, `LEVELS`, `FUSED`, `DESCRIPTION`, and the handles `UPLOADS`, `READBACKS` and
//! `HOSTS`), `NameParams` (the `#[repr(C)]` parameter block), `NameBuffers<'a>` (the external buffers),
//! `NameNode` (the node enum, with `name()` and `index()`) and beside it an enum of the nodes of each role
//! the typed API takes: `NameKernel` ([`Baked::set_dispatch`]), `NameChoice` ([`Baked::select`]),
//! `NameRanged` (fills declared with a range, uploads and readbacks: [`Baked::set_range`]), `NameCopy`
//! ([`Baked::set_copy_ranges`]) and `NameInterop` ([`Baked::on_interop`]), each variant named as in
//! `NameNode` (`node()` gives it); a role the graph has no node of is an enum without variants. See
//! [`example`] for a graph's generated items. They live in a hidden module, re-exported: a second graph of
//! one name in a module is one error.
//!
//! Every typed handle belongs to its graph and its role, so a mistake with one does not compile: another
//! graph's `UPLOADS`, `READBACKS` or `HOSTS` handle (`Upload<Name, T>`, `Readback<Name, T>`, a [`HostNode`]
//! of `Graph = Name`), or a node of the wrong kind (`g.select(NameNode::Twice)` where `twice` is no choice:
//! `select` takes a `NameChoice`). A `Baked<Name>`'s replay is a [`Submission<Name>`], whose
//! [`Finished<Name>`] reads only `Name`'s readbacks. A [`BakedGraph`] is typed by no graph: its replays'
//! [`Finished`] reads by name, or with a handle checked at run time to be of this graph (the graph's and
//! the node's names; another graph's is an [`Error::TransferData`] naming both).
//!
//! # Graphs known at run time, and saved graphs
//!
//! Every graph becomes one value, a [`GraphDesc`]: `graph!` makes it at compile time, the [`GraphBuilder`]
//! at run time, and a saved graph file when it is loaded ([`file::load`], then
//! [`pipeline::describe_graph`]). The same checks run for all three and report the same messages
//! ([`GraphErrors`] renders each with its location in words); [`BakedGraph`] bakes any of them, with buffers
//! and parameters by name, and `Baked<G>` is its typed layer for `graph!` graphs.
//!
//! ```
//! use graph_runtime::{BakedGraph, Gpu, GraphBuilder, KernelSpec, LIBRARY};
//!
//! # fn main() -> Result<(), graph_runtime::Error> {
//! let mut b = GraphBuilder::new("Twice");
//! b.param("n", "u32").inout("x", "f32");
//! let kernel = KernelSpec::wgsl(
//!     "@compute @workgroup_size(64)
//!      fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
//!          if (gid.x < params.n) { x[gid.x] = 2.0 * x[gid.x]; }
//!      }",
//! );
//! b.kernel("twice", kernel.read_write("x").threads(&["params.n"]));
//! let desc = b.build(&LIBRARY)?;
//!
//! let gpu = Gpu::new_blocking()?;
//! let x = gpu.buffer_from_slice(&[1.5f32; 100])?;
//! let mut g = BakedGraph::bake(&gpu, desc, &[("x", x.as_any())])?;
//! g.set_param("n", 100u32)?;
//! g.replay()?.wait()?;
//! assert_eq!(x.read_blocking()?[99], 3.0);
//! # Ok(())
//! # }
//! ```
//!
//! A saved graph is the graph as declared, in JSON with a format version (see [`mod@file`]); the `graph`
//! binary of the `examples` crate checks, draws ([`GraphDesc::to_dot`]) and runs them.
//!
//! # Errors
//!
//! Every fallible call returns an [`Error`]; nothing a caller can get wrong panics. What the device reports
//! while a bake, a replay, a wait or a buffer operation runs (wgpu's validation and out-of-memory errors, and
//! in validation mode the Vulkan layer's messages) is that operation's error and no other's: wgpu's error
//! scopes and the layer's callbacks are per thread, and each operation opens its own on its thread. What the
//! application's own wgpu calls cause, outside any operation, is reported by [`Gpu::check`]. A lost device
//! fails every operation after it with [`Error::DeviceLost`].
//!
//! Buffers belong to the [`Gpu`] they were made on (or its clones): binding one from another `Gpu` is an
//! [`Error::ForeignBuffer`]. Buffer sizes are checked, never wrapped or cut: a length past `u32::MAX`
//! elements or a size past the device's limit is an [`Error::BufferTooLarge`].
//!
//! # Driving the device
//!
//! Native wgpu does GPU bookkeeping (completing maps, reporting a lost device) only inside `Device::poll`
//! (and at each submission). [`Submission::wait`] and [`Buffer::read_blocking`] poll on the calling thread,
//! blocking until their own work is done. A replay through the native recorder without readbacks is waited
//! for sooner: its submission ends by writing a word into host-visible memory, which the wait reads in a loop
//! for up to a millisecond (yielding the thread between looks on a CPU device) before it blocks in wgpu; on
//! the H100 the word is seen tens of microseconds before wgpu's fence signals.
//!
//! Every wait can be awaited instead: `g.replay()?.await` ([`Submission`] is `IntoFuture`), `buffer.read().await`,
//! `texture.read().await`, and [`Baked::replay_async`], which awaits the GPU before each host phase rather than
//! blocking (its host tasks read copies of what they declared, fetched once the GPU work before them
//! finished). Each future is woken once, when its result is there: natively by the `Gpu`'s driver thread
//! (started by the first future), which runs the blocking wait; so they work under any executor and never
//! spin.
//!
//! # The web
//!
//! The crate builds for `wasm32-unknown-unknown` with wgpu's WebGPU backend: `Gpu::new().await`, then the same
//! graphs, baked the same way, replayed and awaited (the browser completes the work from its event loop).
//! There is no blocking there: [`Gpu::wait_for`] and everything made of it ([`Submission::wait`],
//! [`Buffer::read_blocking`], [`Baked::replay`] of a graph with host tasks) is an
//! [`Error::Wait`] naming what to await instead, and `Gpu::new_blocking` does not exist. WebGPU has no push
//! constants: parameters go through the uniform buffer. The native recorder and direct submission are
//! Vulkan's, so the portable recorder replays every graph. The browser reports device errors
//! asynchronously, so the runtime opens no error scope there: what the device says about a bake or a replay
//! is reported by the next awaited replay or read (and [`Gpu::check`]). The tests in `tests/web.rs` run in
//! headless Chromium on WebGPU (`cargo xtask test --web`).
//!
//! # Validation mode
//!
//! With `GRAPH_RUNTIME_VALIDATION=1` (or [`validation::enable`]), wgpu's validation and the Khronos
//! validation layer are on, and each layer message fails the operation that caused it. A `Gpu` in validation
//! mode first plants a real validation error and refuses to start unless the layer reports it: a missing
//! layer fails loudly instead of validating nothing. Outside validation mode the layer is not loaded, even
//! in debug builds (where wgpu would load it by default), since nothing would read its messages.

// Every module but `native` forbids `unsafe` itself; `native` is where the Vulkan calls and their invariants
// are gathered, and nothing else may add any.
#![deny(unsafe_code)]
// On the web wgpu's objects are neither `Send` nor `Sync` (a page's one thread owns them); the `Arc`s that
// share them between threads on native targets are only shared pointers there.
#![cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]

// Generated code names `::graph_runtime`; this lets the crate's own example graph use the macro too.
extern crate self as graph_runtime;

mod bake;
mod baked;
mod baked_graph;
mod baked_state;
mod buffer;
mod completion;
#[cfg(not(target_arch = "wasm32"))]
mod driver;
mod element;
mod error;
pub mod example;
mod gate;
mod gpu;
#[cfg(not(target_arch = "wasm32"))]
mod gpus;
mod host;
mod interop;
// The native path (Vulkan), everywhere but the web; there, `no_native` stands in for both modules.
#[cfg(not(target_arch = "wasm32"))]
#[allow(unsafe_code)]
mod native;
#[cfg(target_arch = "wasm32")]
#[path = "no_native.rs"]
mod native;
#[cfg(not(target_arch = "wasm32"))]
mod native_recorder;
#[cfg(target_arch = "wasm32")]
use native as native_recorder;
mod nesting;
mod params;
mod profile;
mod program;
mod queue;
mod readback;
mod recorder;
mod replay;
mod scope;
mod slice;
#[cfg(not(target_arch = "wasm32"))]
mod staging;
mod stream;
mod task_graph;
mod texture;
mod transfer;
mod update;
pub mod validation;
mod wait;
mod wgpu_recorder;

// The root holds what an application uses; the other layers are in the modules below.
pub use baked::{Baked, HostTarget};
pub use baked_graph::BakedGraph;
pub use baked_state::UpdateReport;
pub use buffer::{AnyBuffer, Buffer};
pub use element::{Element, HalfParam, ParamValue};
pub use error::Error;
pub use gpu::Gpu;
#[cfg(not(target_arch = "wasm32"))]
pub use gpus::{Gpus, GpusFinished, GpusGraph, GpusSubmission};
pub use graph_core::GraphErrors;
pub use graph_core::builder::{GraphBuilder, KernelSpec};
pub use graph_core::desc::GraphDesc;
/// One move of buffers between two GPUs of a [`GpusGraph`]'s replay.
pub use graph_core::split::Transfer as GpuTransfer;
pub use graph_macros::graph;
/// The element type of `f16` buffers on the host (the `half` crate's, which naga and wgpu use too).
pub use half::f16;
pub use host::{HostContext, HostNode, HostTask};
pub use interop::{InteropContext, InteropTask};
pub use profile::{DispatchTime, Profile};
pub use queue::GpuQueue;
pub use readback::ReadFuture;
pub use recorder::NativeParamsIn;
#[cfg(not(target_arch = "wasm32"))]
pub use staging::TransferPath;
pub use stream::{
    HostCall, InteropCall, KernelCall, LibraryCall, Recorded, Recording, Stream, StreamBuffer,
    StreamHostContext, StreamInteropContext,
};
pub use task_graph::{AnyGraph, GraphNode, TaskGraph};
pub use texture::{Texture, wgpu_dimension, wgpu_format};
pub use transfer::{Finished, Readback, Texels, Upload};
pub use update::Dispatch;
pub use wait::{Replaying, Submission, Work};
pub use wgpu;

/// The kernel library `graph!` reads as `kernels::..`, with CPU references.
pub use kernels;
/// The library the macro checks `kernels::..` against: give it to [`GraphBuilder::build`] and
/// [`pipeline::describe_graph`] so that built and loaded graphs mean the same by the same words.
pub use kernels::LIBRARY;

/// The graph as declared, before any check: what the builder builds and a graph file holds, and its words
/// (access modes, buffer roles, dispatch sizes, value types, where parameters go).
pub mod ir {
    pub use graph_core::ir::*;
    pub use graph_core::types::{Scalar, ValueType};
}

/// The parts of a [`GraphDesc`], the checked graph as one owned value.
pub use graph_core::desc;

/// Saved graphs: the graph as declared, in JSON with a format version, and the `.wgsl` files beside it.
pub use graph_core::file;

/// Transient memory: where bake placed each graph-owned buffer ([`BakedGraph::memory_plan`]).
pub use graph_core::memory;

/// The steps between a declared graph and a baked one, for tools that look inside: describing, flattening
/// subgraphs, fusing, ranges, drawing.
pub mod pipeline {
    pub use graph_core::dot::Detail;
    pub use graph_core::flatten::flatten;
    pub use graph_core::fusion::{self, Declined, FusedGroup};
    pub use graph_core::pipeline::{describe_graph, describe_graph_with};
    pub use graph_core::placement::{self, place};
    pub use graph_core::plan::{evaluate_range, plan};
    pub use graph_core::split::{self, split};
    pub use graph_core::stencil;
    pub use graph_core::subgraph::Subgraphs;
}

/// The environment variables the runtime reads.
pub mod env {
    pub use crate::gpu::{ADAPTER_ENV, SUBMIT_ENV};
    pub use crate::recorder::RECORDER_ENV;
    #[doc(inline)]
    pub use crate::validation::VALIDATION_ENV;
}

/// What generated code reaches; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::baked::Baked;
    pub use crate::buffer::{AnyBuffer, Buffer};
    pub use crate::element::HalfParam;
    pub use crate::error::Error;
    pub use crate::gpu::Gpu;
    pub use crate::host::ContextKey;
    pub use crate::host::{HostContext, HostNode};
    pub use crate::nesting::{
        AtBottom, Below, Bottom, Child, Contains, Found, Inner, MaxDepth, Outer, STUB_DESCRIPTION,
        Subgraph, any_too_deep, at_bottom, below, check_subgraph_binding, check_subgraph_node,
        child_description, step,
    };
    pub use crate::queue::OrderingFault;
    pub use crate::task_graph::{GraphNode, TaskGraph};
    pub use crate::texture::Texture;
    pub use crate::transfer::{Readback, Texels, Upload};
    pub use bytemuck;
    pub use graph_core::{deps, desc, ir, memory, size, subgraph, types};
    pub use half::f16;
}
