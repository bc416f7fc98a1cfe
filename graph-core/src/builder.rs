//! The run-time builder, for graphs known only at run time (SYCL's explicit graph API): the same IR the
//! macro lowers to, built by calls, checked by the same checks and described by the same function.
//!
//! Nothing is checked while building, so the calls cannot fail; [`GraphBuilder::build`] reports every
//! mistake at once, as [`GraphErrors`] whose messages are the compile errors' and whose locations are words.
//!
//! ```
//! use graph_core::builder::{GraphBuilder, KernelSpec};
//! use graph_core::library::Library;
//!
//! let mut b = GraphBuilder::new("Twice");
//! b.param("n", "u32").inout("x", "f32");
//! b.kernel(
//!     "twice",
//!     KernelSpec::wgsl(
//!         "@compute @workgroup_size(64)
//!          fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
//!              if (gid.x < params.n) { x[gid.x] = 2.0 * x[gid.x]; }
//!          }",
//!     )
//!     .read_write("x")
//!     .threads(&["params.n"]),
//! );
//! let desc = b.build(&Library::EMPTY).expect("a good graph");
//! assert_eq!(desc.nodes.len(), 1);
//! ```

use crate::desc::GraphDesc;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{
    Access, AccessMode, Buffer, DispatchSpec, EdgeMode, ElementRange, ExplicitEdge, Graph, Kernel,
    KernelArg, KernelSource, Node, NodeKind, Param, ParamsStorage, Role, WorkgroupLimits,
};
use crate::library::Library;
use crate::pipeline::{GraphErrors, describe_graph_with};
use crate::size::SizeExpr;
use crate::size_parse::{parse_size, parse_slice};
use crate::subgraph::Subgraphs;

/// A graph under construction.
#[derive(Debug, Clone, Default)]
pub struct GraphBuilder {
    graph: Graph,
    /// Mistakes found while building (a size expression that does not parse), by node: reported by `build`
    /// with the checks' own.
    early: Vec<Diagnostic>,
    /// The children of subgraph nodes, by the name the nodes give.
    subgraphs: Subgraphs,
}

/// A kernel written in WGSL, with its accesses and dispatch size.
#[derive(Debug, Clone)]
pub struct KernelSpec {
    kernel: Kernel,
    /// Size expressions that did not parse: (dimension, message).
    bad_sizes: Vec<(usize, String)>,
    /// Override values that did not parse, as messages.
    bad_overrides: Vec<String>,
}

impl KernelSpec {
    /// A kernel with this WGSL, which sees the buffers it declares (by name) and `params`.
    pub fn wgsl(text: impl Into<String>) -> Self {
        KernelSpec {
            kernel: Kernel {
                accesses: Vec::new(),
                source: KernelSource::Wgsl {
                    text: text.into(),
                    file: None,
                },
                entry: None,
                dispatch: DispatchSpec::Auto,
                args: Vec::new(),
                overrides: Vec::new(),
            },
            bad_sizes: Vec::new(),
            bad_overrides: Vec::new(),
        }
    }

    /// A kernel whose WGSL is in the file at `path` (the macro's `file("..")`); messages name the file.
    pub fn wgsl_file(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)?;
        Ok(KernelSpec::wgsl(text).in_file(path.display().to_string()))
    }

    /// Says the WGSL was read from `file`, which messages then name (what [`KernelSpec::wgsl_file`] gives,
    /// for text read already).
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        if let KernelSource::Wgsl { file: named, .. } = &mut self.kernel.source {
            *named = Some(file.into());
        }
        self
    }

    fn access(mut self, buffer: &str, mode: AccessMode) -> Self {
        self.kernel.accesses.push(Access {
            binding: buffer.to_string(),
            buffer: buffer.to_string(),
            mode,
        });
        self
    }

    /// Binds the graph's `buffer` under another name, `binding`, the name the WGSL sees it by, with access
    /// `mode`: what lets one kernel's text run over different buffers (an eager stream's calls record this
    /// way).
    pub fn bind(mut self, binding: &str, buffer: &str, mode: AccessMode) -> Self {
        self.kernel.accesses.push(Access {
            binding: binding.to_string(),
            buffer: buffer.to_string(),
            mode,
        });
        self
    }

    /// Declares `buffer` read.
    pub fn read(self, buffer: &str) -> Self {
        self.access(buffer, AccessMode::Read)
    }

    /// Declares `buffer` overwritten without being read.
    pub fn write(self, buffer: &str) -> Self {
        self.access(buffer, AccessMode::Write)
    }

    pub fn read_write(self, buffer: &str) -> Self {
        self.access(buffer, AccessMode::ReadWrite)
    }

    /// The entry point, when the WGSL has several.
    pub fn entry(mut self, name: &str) -> Self {
        self.kernel.entry = Some(name.to_string());
        self
    }

    /// Invocations per dimension (1 to 3), as size expressions: `"params.n"`, `"x.len() / 2"`.
    pub fn threads(mut self, dims: &[&str]) -> Self {
        self.bad_sizes.clear();
        self.kernel.dispatch = DispatchSpec::Threads(self.sizes(dims));
        self
    }

    /// Workgroups per dimension (1 to 3), as size expressions.
    pub fn workgroups(mut self, dims: &[&str]) -> Self {
        self.bad_sizes.clear();
        self.kernel.dispatch = DispatchSpec::Workgroups(self.sizes(dims));
        self
    }

    /// Workgroup counts read on the GPU from the first three `u32`s of `buffer`, which an earlier node writes
    /// (the macro's `workgroups(indirect: args)`).
    pub fn indirect(mut self, buffer: &str) -> Self {
        self.bad_sizes.clear();
        self.kernel.dispatch = DispatchSpec::Indirect(buffer.to_string());
        self
    }

    /// The value of the WGSL's `override NAME: u32;` (or `i32`), as a size expression over buffer lengths and
    /// literals, evaluated at bake and at each update: `set_override("tile", "x.len() / 64")` (the macro's
    /// `overrides(tile: x.len() / 64)`). A `var<workgroup>` array sized by it is checked against the
    /// device's workgroup memory at bake.
    pub fn set_override(mut self, name: &str, value: &str) -> Self {
        let value = parse_size(value).unwrap_or_else(|e| {
            self.bad_overrides.push(format!(
                "the value `{value}` of override `{name}` cannot be read: {e}"
            ));
            SizeExpr::Literal(1)
        });
        self.kernel.overrides.push(crate::ir::KernelOverride {
            name: name.to_string(),
            value,
        });
        self
    }

    /// Sizes already built as expressions.
    pub fn dispatch(mut self, dispatch: DispatchSpec) -> Self {
        self.bad_sizes.clear();
        self.kernel.dispatch = dispatch;
        self
    }

    fn sizes(&mut self, dims: &[&str]) -> Vec<SizeExpr> {
        dims.iter()
            .enumerate()
            .map(|(d, text)| {
                parse_size(text).unwrap_or_else(|e| {
                    self.bad_sizes
                        .push((d, format!("the size `{text}` cannot be read: {e}")));
                    SizeExpr::Literal(1)
                })
            })
            .collect()
    }
}

impl GraphBuilder {
    pub fn new(name: impl Into<String>) -> Self {
        GraphBuilder {
            graph: Graph {
                name: name.into(),
                ..Graph::default()
            },
            early: Vec::new(),
            subgraphs: Subgraphs::new(),
        }
    }

    /// A builder that continues a declared graph (one loaded from a file, say), whose subgraph nodes find
    /// their children in `subgraphs`.
    pub fn from_graph(graph: Graph, subgraphs: Subgraphs) -> Self {
        GraphBuilder {
            graph,
            early: Vec::new(),
            subgraphs,
        }
    }

    /// The children of the subgraph nodes so far, by the name each node gives.
    pub fn subgraphs(&self) -> &Subgraphs {
        &self.subgraphs
    }

    /// The graph as declared so far.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// A parameter of WGSL type `ty` (`f32`, `vec2<u32>`..), in the block every kernel sees as `params`.
    pub fn param(&mut self, name: &str, ty: &str) -> &mut Self {
        self.graph.params.push(Param {
            name: name.to_string(),
            ty: ty.to_string(),
        });
        self
    }

    /// A buffer of element type `elem`; `len` fixes its length (required for graph-owned buffers).
    pub fn buffer(&mut self, name: &str, elem: &str, role: Role, len: Option<u64>) -> &mut Self {
        self.graph.buffers.push(Buffer {
            name: name.to_string(),
            elem: elem.to_string(),
            len,
            role,
        });
        self
    }

    /// An external buffer the graph only reads, of any length.
    pub fn input(&mut self, name: &str, elem: &str) -> &mut Self {
        self.buffer(name, elem, Role::Input, None)
    }

    /// An external buffer the graph writes, of any length.
    pub fn output(&mut self, name: &str, elem: &str) -> &mut Self {
        self.buffer(name, elem, Role::Output, None)
    }

    /// An external buffer the graph reads and writes, of any length.
    pub fn inout(&mut self, name: &str, elem: &str) -> &mut Self {
        self.buffer(name, elem, Role::InOut, None)
    }

    /// A graph-owned buffer of `len` elements.
    pub fn owned(&mut self, name: &str, elem: &str, len: u64) -> &mut Self {
        self.buffer(name, elem, Role::Owned, Some(len))
    }

    /// A texture of type `ty`: `texture_2d<rgba8unorm>` (kernels that read it bind it as a sampled texture,
    /// and `textureLoad` it or sample it with a [`sampler`](Self::sampler); kernels that write it bind it as
    /// a storage texture) or `texture_storage_2d<r32float, write>` (kernels bind it as storage with that access only);
    /// 1d, 2d, 2d_array or 3d. A size may follow the format: texels (`texture_2d<rgba16float; 512, 512>`,
    /// width, height, then layers or depth) or another texture's (`texture_2d<r32float; frame>`). A
    /// graph-owned texture needs one, since bake makes it; an external texture's is checked at bake. A
    /// graph-owned texture may be sized by `u32` parameters instead (`texture_2d<rgba8unorm; params.w,
    /// params.h>`), made again when a replay's parameters give another size. Kernels of WGSL, fills, copies,
    /// uploads, readbacks, host and interop tasks and subgraphs (bound to a texture of the child of the same
    /// type) use textures.
    pub fn texture(&mut self, name: &str, ty: &str, role: Role) -> &mut Self {
        self.buffer(name, ty, role, None)
    }

    /// A sampler of type `ty`: `sampler<linear, clamp>` (filter `nearest` or `linear`, address mode `clamp`,
    /// `repeat` or `mirror`). The graph makes it at bake; kernels declare it `read` and sample textures with
    /// it (`textureSampleLevel(t, s, uv, 0.0)`), a `linear` one only textures of a filterable format.
    pub fn sampler(&mut self, name: &str, ty: &str) -> &mut Self {
        self.buffer(name, ty, Role::Owned, None)
    }

    fn node(&mut self, name: &str, kind: NodeKind) -> &mut Self {
        self.graph.nodes.push(Node {
            name: name.to_string(),
            kind,
        });
        self
    }

    /// A kernel written in WGSL.
    pub fn kernel(&mut self, name: &str, spec: KernelSpec) -> &mut Self {
        let node = self.graph.nodes.len();
        for message in spec
            .bad_sizes
            .iter()
            .map(|(_, m)| m)
            .chain(&spec.bad_overrides)
        {
            self.early
                .push(Diagnostic::new(Loc::Dispatch(node), message.clone()));
        }
        self.node(name, NodeKind::Kernel(spec.kernel))
    }

    /// A kernel of the library, by path (`scale`, `reduce::sum_partials`), with its bindings
    /// (`("data", "y")`) and arguments as WGSL of the argument's type (`("alpha", "params.a")`).
    pub fn library(
        &mut self,
        name: &str,
        path: &str,
        bindings: &[(&str, &str)],
        args: &[(&str, &str)],
    ) -> &mut Self {
        let kernel = Kernel {
            accesses: bindings
                .iter()
                .map(|&(binding, buffer)| Access {
                    binding: binding.to_string(),
                    buffer: buffer.to_string(),
                    // The library fixes the mode; this one is not read.
                    mode: AccessMode::Read,
                })
                .collect(),
            source: KernelSource::Library(path.to_string()),
            entry: None,
            dispatch: DispatchSpec::Auto,
            args: args
                .iter()
                .map(|&(name, value)| KernelArg {
                    name: name.to_string(),
                    wgsl: value.to_string(),
                })
                .collect(),
            overrides: Vec::new(),
        };
        self.node(name, NodeKind::Kernel(kernel))
    }

    /// Copies `src` into `dst`, of one element type; each is a buffer (`"x"`, the whole of it) or a slice of
    /// one as Rust writes it (`"x[4..]"`, `"x[2..x.len() - 2]"`), the two of one length.
    pub fn copy(&mut self, name: &str, src: &str, dst: &str) -> &mut Self {
        let node = self.graph.nodes.len();
        let (src, src_range) = self.slice(node, 0, src);
        let (dst, dst_range) = self.slice(node, 1, dst);
        self.node(
            name,
            NodeKind::Copy {
                src,
                dst,
                src_range,
                dst_range,
            },
        )
    }

    /// Sets every element of `dst` (a buffer, or a slice of one: `"x[1..x.len() - 1]"`) to `value`, WGSL of
    /// its element type (`0.0`, `params.k`).
    pub fn fill(&mut self, name: &str, dst: &str, value: &str) -> &mut Self {
        let node = self.graph.nodes.len();
        let (dst, range) = self.slice(node, 0, dst);
        self.node(
            name,
            NodeKind::Fill {
                dst,
                value: value.to_string(),
                range,
            },
        )
    }

    /// Host data written into `dst` (a buffer, or a slice of one) at this point of each replay; the app gives
    /// the data between replays, and a replay without it is an error.
    pub fn upload(&mut self, name: &str, dst: &str) -> &mut Self {
        let node = self.graph.nodes.len();
        let (dst, range) = self.slice(node, 0, dst);
        self.node(name, NodeKind::Upload { dst, range })
    }

    /// `src` (a buffer, or a slice of one) copied to the host at this point of each replay, for the app to
    /// read once that replay finished.
    pub fn readback(&mut self, name: &str, src: &str) -> &mut Self {
        let node = self.graph.nodes.len();
        let (src, range) = self.slice(node, 0, src);
        self.node(name, NodeKind::Readback { src, range })
    }

    /// A buffer or a slice of one, read from text; what cannot be read is a diagnostic at the access.
    fn slice(&mut self, node: usize, index: usize, text: &str) -> (String, Option<ElementRange>) {
        parse_slice(text).unwrap_or_else(|e| {
            self.early.push(Diagnostic::new(
                Loc::Access { node, index },
                format!("the slice `{text}` cannot be read: {e}"),
            ));
            let name = text.split('[').next().unwrap_or(text).trim().to_string();
            (name, None)
        })
    }

    /// A host task over the buffers it declares, given its closure after bake.
    pub fn host(&mut self, name: &str, accesses: &[(&str, AccessMode)]) -> &mut Self {
        let accesses = by_own_name(accesses);
        self.node(name, NodeKind::Host { accesses })
    }

    /// An interop task over the buffers it declares: a closure, given after bake, that records its own wgpu
    /// work with the partition's command encoder.
    pub fn interop(&mut self, name: &str, accesses: &[(&str, AccessMode)]) -> &mut Self {
        let accesses = by_own_name(accesses);
        self.node(name, NodeKind::Interop { accesses })
    }

    /// Another graph as one node (SYCL's subgraph node): `bindings` gives each external buffer of `child` a
    /// buffer of this graph, as `(child's buffer, this graph's buffer, access)`, the access being the child's
    /// role (`read` for its inputs, `write` for its outputs, `read_write` for `inout`). The child reads this
    /// graph's parameters of the same names. `build` checks every binding against `child`.
    pub fn subgraph(
        &mut self,
        name: &str,
        child: &GraphDesc,
        bindings: &[(&str, &str, AccessMode)],
    ) -> &mut Self {
        // Children are found by name; two different children of one name get distinct keys.
        let mut key = child.name.to_string();
        let mut n = 1;
        while self.subgraphs.get(&key).is_some_and(|c| **c != *child) {
            n += 1;
            key = format!("{}#{n}", child.name);
        }
        self.subgraphs
            .entry(key.clone())
            .or_insert_with(|| std::sync::Arc::new(child.clone()));
        let accesses = bound_accesses(bindings);
        self.node(
            name,
            NodeKind::Subgraph {
                graph: key,
                accesses,
            },
        )
    }

    /// A group of alternatives (SYCL's dynamic command group): kernel nodes `choices`, added with
    /// [`GraphBuilder::kernel`], of one signature (the same buffers with the same access), of which one runs per
    /// replay (the first after bake; `BakedGraph::select` switches). They order as one node, at the place of
    /// the first declared.
    pub fn alternatives(&mut self, name: &str, choices: &[&str]) -> &mut Self {
        self.graph.alternatives.push(crate::ir::Alternatives {
            name: name.to_string(),
            choices: choices.iter().map(|c| c.to_string()).collect(),
        });
        self
    }

    /// A library subgraph (`reduce_sum`, `scan_inclusive`, ..) as one node, bound as in
    /// [`GraphBuilder::subgraph`]; `build` finds it in its library.
    pub fn library_subgraph(
        &mut self,
        name: &str,
        path: &str,
        bindings: &[(&str, &str, AccessMode)],
    ) -> &mut Self {
        let accesses = bound_accesses(bindings);
        let graph = format!("{}{path}", crate::library::SUBGRAPH_PREFIX);
        self.node(name, NodeKind::Subgraph { graph, accesses })
    }

    /// Nodes added with [`GraphBuilder::kernel`] or [`GraphBuilder::fill`] that run once if the first `u32`
    /// of `flag` is nonzero when the block starts, and otherwise run no workgroups (the macro's
    /// `if name(flag) { .. }`): decided on the GPU, with no host round trip.
    pub fn if_block(&mut self, name: &str, flag: &str, nodes: &[&str]) -> &mut Self {
        self.if_else(name, flag, nodes, &[])
    }

    /// [`GraphBuilder::if_block`] with an `else`: `nodes` run once when the first `u32` of `flag` is nonzero,
    /// `otherwise` once when it is zero (the macro's `if name(flag) { .. } else { .. }`).
    pub fn if_else(
        &mut self,
        name: &str,
        flag: &str,
        nodes: &[&str],
        otherwise: &[&str],
    ) -> &mut Self {
        let kind = crate::ir::BlockKind::If {
            flag: flag.to_string(),
            otherwise: otherwise.iter().map(|n| n.to_string()).collect(),
        };
        self.block(name, kind, nodes)
    }

    /// Arms of nodes, one of which runs once: the arm whose value is the first `u32` of `index` when the
    /// block starts, else the default arm (value `None`), if there is one; the others run no workgroups
    /// (the macro's `switch name(index) { 0 => { .. } 1 => { .. } _ => { .. } }`). Decided on the GPU.
    pub fn switch(
        &mut self,
        name: &str,
        index: &str,
        arms: &[(Option<u32>, &[&str])],
    ) -> &mut Self {
        let kind = crate::ir::BlockKind::Switch {
            index: index.to_string(),
            arms: arms
                .iter()
                .map(|(value, nodes)| crate::ir::SwitchArm {
                    value: *value,
                    nodes: nodes.iter().map(|n| n.to_string()).collect(),
                })
                .collect(),
        };
        self.block(name, kind, &[])
    }

    /// Nodes that run `count` times in each replay; with `flag`, each run only while its first `u32` is
    /// nonzero (a member clears it to stop), decided on the GPU (the macro's
    /// `repeat name(count, while: flag) { .. }`).
    pub fn repeat(
        &mut self,
        name: &str,
        count: u32,
        flag: Option<&str>,
        nodes: &[&str],
    ) -> &mut Self {
        let kind = crate::ir::BlockKind::Repeat {
            count,
            flag: flag.map(str::to_string),
        };
        self.block(name, kind, nodes)
    }

    fn block(&mut self, name: &str, kind: crate::ir::BlockKind, nodes: &[&str]) -> &mut Self {
        self.graph.blocks.push(crate::ir::Block {
            name: name.to_string(),
            kind,
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
        });
        self
    }

    /// A node with no work, a join point for explicit edges (SYCL's empty node).
    pub fn empty(&mut self, name: &str) -> &mut Self {
        self.node(name, NodeKind::Empty {})
    }

    /// A node with no work after every node declared so far that nothing declared so far depends on
    /// (SYCL's `depends_on_all_leaves`); order later nodes after it with explicit edges.
    pub fn barrier(&mut self, name: &str) -> &mut Self {
        self.node(name, NodeKind::Barrier {})
    }

    /// `from` finishes before `to` starts.
    pub fn edge(&mut self, from: &str, to: &str) -> &mut Self {
        self.graph.edges.push(ExplicitEdge {
            from: from.to_string(),
            to: to.to_string(),
        });
        self
    }

    /// Turns edge inference off: only explicit edges order nodes, and conflicting accesses with no path
    /// between them are a race (the macro's `#[explicit_edges]`).
    pub fn explicit_edges_only(&mut self) -> &mut Self {
        self.graph.edge_mode = EdgeMode::ExplicitOnly;
        self
    }

    /// Parameters in a uniform buffer, lifting the 128-byte push-constant budget (`#[uniform_params]`).
    pub fn uniform_params(&mut self) -> &mut Self {
        self.graph.params_storage = ParamsStorage::Uniform;
        self
    }

    /// The device's workgroup limits instead of the portable ones, checked at bake (`#[device_limits]`).
    pub fn device_limits(&mut self) -> &mut Self {
        self.graph.workgroup_limits = WorkgroupLimits::Device;
        self
    }

    /// Gives graph-owned buffer `buffer` memory of its own, shared with no other buffer (`#[no_alias]` on a
    /// buffer; see [`crate::memory`]).
    pub fn no_alias(&mut self, buffer: &str) -> &mut Self {
        self.graph.no_alias.push(buffer.to_string());
        self
    }

    /// Places `node` on GPU `gpu` of the set the graph is baked on (`#[on(gpu)]` on a node; see
    /// [`crate::placement`]); a node not placed is left to the placement pass.
    pub fn on(&mut self, node: &str, gpu: u32) -> &mut Self {
        self.graph.on.push(crate::ir::Placement {
            node: node.to_string(),
            gpu,
        });
        self
    }

    /// Leaves kernel `node` out of the fusion pass (`#[no_fusion]` on a node; see [`crate::fusion`]).
    pub fn no_fusion(&mut self, node: &str) -> &mut Self {
        self.graph.no_fusion.push(node.to_string());
        self
    }

    /// Runs every check and describes the graph; every mistake at once otherwise, never a panic.
    pub fn build(&self, library: &Library) -> Result<GraphDesc, GraphErrors> {
        let checked = describe_graph_with(self.graph.clone(), library, &self.subgraphs);
        if self.early.is_empty() {
            return checked;
        }
        let mut diagnostics = self.early.clone();
        if let Err(e) = checked {
            diagnostics.extend(e.diagnostics);
        }
        Err(GraphErrors {
            graph: Box::new(self.graph.clone()),
            diagnostics,
        })
    }
}

/// A subgraph's accesses: `(child's buffer, this graph's buffer, access)`.
fn bound_accesses(bindings: &[(&str, &str, AccessMode)]) -> Vec<Access> {
    bindings
        .iter()
        .map(|&(binding, buffer, mode)| Access {
            binding: binding.to_string(),
            buffer: buffer.to_string(),
            mode,
        })
        .collect()
}

/// Accesses of a task, each buffer bound by its own name.
fn by_own_name(accesses: &[(&str, AccessMode)]) -> Vec<Access> {
    accesses
        .iter()
        .map(|&(buffer, mode)| Access {
            binding: buffer.to_string(),
            buffer: buffer.to_string(),
            mode,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn twice(spec: KernelSpec) -> GraphBuilder {
        let mut b = GraphBuilder::new("G");
        b.param("n", "u32").inout("x", "f32");
        b.kernel("k", spec.read_write("x"));
        b
    }

    const WGSL: &str = "@compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            if (gid.x < params.n) { x[gid.x] = 2.0 * x[gid.x]; }
        }";

    #[test]
    fn a_size_that_does_not_parse_is_a_diagnostic_at_the_dispatch() {
        let b = twice(KernelSpec::wgsl(WGSL).threads(&["params.n +"]));
        let errors = b.build(&Library::EMPTY).expect_err("refused");
        assert_eq!(errors.diagnostics[0].loc, Loc::Dispatch(0));
        assert!(
            errors.diagnostics[0]
                .message
                .starts_with("the size `params.n +` cannot be read")
        );
    }

    #[test]
    fn a_replaced_size_takes_its_errors_with_it() {
        // Found in review: the first size's parse error outlived the size.
        let b = twice(
            KernelSpec::wgsl(WGSL)
                .threads(&["params.n +"])
                .threads(&["params.n"]),
        );
        assert!(b.build(&Library::EMPTY).is_ok());
    }
}
