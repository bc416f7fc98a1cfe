//! The graph model shared by the `graph!` macro and the runtime.
//!
//! ### Note: semver-exempt API
//!
//! graph-core is the shared model of the `graph!` macro (graph-macros) and the runtime (graph-runtime), and
//! what the kernel library's build script checks its kernels with. Its API is theirs: it is not stable and
//! follows no semver guarantee, so any release may change it. Applications use `graph_runtime`, which
//! re-exports what they need; its paths are the stable entry points to what lives here: the builder
//! (`graph_runtime::GraphBuilder`, [`builder`]), the description (`graph_runtime::GraphDesc` and
//! `graph_runtime::desc`, [`desc`]), the IR and its words (`graph_runtime::ir`, [`ir`]), saved graphs
//! (`graph_runtime::file`, [`mod@file`]), and describing a declared graph
//! (`graph_runtime::pipeline::describe_graph`, [`describe_graph`]).
//!
//! A graph is declared as an [`ir::Graph`] (the macro lowers its syntax to one; a run-time builder can build
//! one directly), checked by [`check::check`] into a [`check::CheckedGraph`], and described for the runtime
//! by a [`desc::GraphDesc`]. Problems are [`Diagnostic`]s that point at abstract [`Loc`]ations, which the
//! macro renders as spans and the runtime as messages. This crate has no `syn` and no `wgpu`.
//!
//! What is checked:
//! - names: unknown or duplicate nodes, buffers and parameters, with "did you mean" suggestions;
//! - types: parameters are 32-bit scalars or vectors or `f16` ones, elements those or `u8`/`u16` (held
//!   packed); the parameter block fits 128 bytes of push constants unless the graph opts into a uniform
//!   buffer;
//! - topology: every cycle with its path; in explicit-only mode, every data race; reads of graph-owned
//!   buffers that nothing wrote before; inputs written; outputs never written;
//! - WGSL: each kernel composed with its declarations and validated by naga, its entry point chosen, its
//!   declared accesses matched against what the entry point really does.

#![forbid(unsafe_code)]

pub mod builder;
pub mod check;
pub mod cycles;
pub mod deps;
pub mod desc;
pub mod describe;
pub mod diagnostic;
pub mod dot;
pub mod file;
pub mod file_spans;
pub mod fill;
pub mod flatten;
pub mod fusion;
mod fusion_parts;
pub mod ir;
pub mod layout;
pub mod library;
pub mod memory;
pub mod names;
pub mod pipeline;
pub mod placement;
pub mod plan;
pub mod render;
pub mod schedule;
pub mod size;
pub mod size_parse;
pub mod split;
pub mod stencil;
pub mod stencil_kernel;
pub mod subgraph;
pub mod texture;
pub mod topology;
pub mod types;
pub mod wgsl;

pub use check::{CheckedGraph, check};
pub use describe::describe;
pub use diagnostic::{Diagnostic, Loc};
pub use pipeline::{GraphErrors, describe_graph};
