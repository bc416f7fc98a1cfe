//! Every check of a graph, as small `check_*` functions over one [`Checker`], and the checked result.
//!
//! The checks run in order, each on whatever the earlier ones could resolve: an unknown name drops only the
//! reference that used it, so every independent mistake is reported in one run.

mod alternatives;
mod blocks;
mod fusion;
mod identifiers;
mod indirect;
mod kernels;
mod layout;
mod library;
mod memory;
mod placement;
mod ranges;
mod resolve;
mod roles;
mod sizes;
mod subgraphs;
mod textures;
mod topology;
mod values;

pub use blocks::{CheckedBlock, MAX_ARMS, MAX_REPEAT};
pub use ranges::CheckedRange;
use resolve::Space;
use roles::verb;
pub use subgraphs::Children;

use crate::deps::{BufferAccess, Edge};
use crate::desc::TextureSizeDesc;
use crate::diagnostic::{Diagnostic, Diagnostics, Loc};
use crate::ir::{Graph, NodeKind};
use crate::layout::ParamsLayout;
use crate::library::{Library, LibraryKernel};
use crate::names::NameTable;
use crate::schedule::Schedule;
use crate::size::SizeStep;
use crate::texture::{SamplerType, TextureSize, TextureType};
use crate::types::ValueType;

/// A graph that passed every check, with everything codegen and bake need.
#[derive(Debug, Clone)]
pub struct CheckedGraph {
    pub graph: Graph,
    pub params: ParamsLayout,
    /// Element type of each buffer (a texture's texels' `vec4`).
    pub buffer_types: Vec<ValueType>,
    /// Per buffer, its type where it is a texture.
    pub textures: Vec<Option<TextureType>>,
    /// Per buffer, its type where it is a sampler.
    pub samplers: Vec<Option<SamplerType>>,
    /// Per buffer, its size where it is a texture whose declaration sizes it.
    pub texture_sizes: Vec<Option<TextureSizeDesc>>,
    pub nodes: Vec<CheckedNode>,
    pub edges: Vec<Edge>,
    pub schedule: Schedule,
    pub blocks: Vec<CheckedBlock>,
}

#[derive(Debug, Clone)]
pub enum CheckedNode {
    Kernel(CheckedKernel),
    /// `src_range` of its source into `dst_range` of its destination.
    Copy {
        src_range: CheckedRange,
        dst_range: CheckedRange,
    },
    /// Host data into `range` of its buffer, at each replay.
    Upload {
        range: CheckedRange,
    },
    /// `range` of its buffer to the host, at each replay.
    Readback {
        range: CheckedRange,
    },
    Host {
        accesses: Vec<BufferAccess>,
    },
    /// A closure recording its own wgpu work, in a GPU partition.
    Interop {
        accesses: Vec<BufferAccess>,
    },
    /// An empty node or a barrier: no work, only ordering.
    Empty,
    /// Another graph as one node: `bindings` pairs each of the child's buffers (by name) with this graph's.
    Subgraph {
        path: String,
        /// The child, where this front door has it (`None` in the macro, see [`Children`]).
        child: Option<std::sync::Arc<crate::desc::GraphDesc>>,
        bindings: Vec<(String, BufferAccess)>,
    },
}

/// A kernel whose WGSL validated against its bindings and parameters.
#[derive(Debug, Clone)]
pub struct CheckedKernel {
    /// Binding `i` of group 0: the buffer and its declared access.
    pub bindings: Vec<BufferAccess>,
    /// Generated binding declarations (the parameter struct comes from the layout).
    pub declarations: String,
    /// Library arguments as `(name, WGSL type, WGSL value)`.
    pub args: Vec<(String, String, String)>,
    /// The kernel's own WGSL.
    pub source: String,
    /// Values of its `override` constants: the name a pipeline gives each (its `@id` or name), and its size
    /// program over buffer lengths.
    pub overrides: Vec<(String, SizeProgram)>,
    pub entry: String,
    pub workgroup_size: [u32; 3],
    pub dispatch: CheckedDispatch,
    /// Each invocation touches only its own elements and texels, no other invocation's (the pointwise proof
    /// over this workgroup and dispatch; a library kernel's metadata too).
    pub pointwise: bool,
    /// A neighbourhood kernel's reach (see [`crate::wgsl`]'s neighbourhood proof): reads within it of its own
    /// index, writes only its own, whatever the data.
    pub reach: Option<u32>,
    /// A library image kernel's neighbourhood, its reach known ([`crate::desc::KernelDesc::grid`]).
    pub grid: Option<crate::desc::GridDesc>,
    /// The kernel indexes elements as `gid.x + gid.y * num_workgroups.x * workgroup_size.x` (library kernels),
    /// so a one-dimensional dispatch past the per-dimension limit may be folded into two dimensions.
    pub foldable: bool,
    /// A fill of part of its buffer (binding 0): the range, passed to the kernel as pipeline constants.
    pub range: Option<CheckedRange>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckedDispatch {
    /// One invocation per element of this buffer.
    BufferLen(usize),
    /// Invocations per dimension given (1 to 3), rounded up to whole workgroups.
    Threads(Vec<SizeProgram>),
    /// Workgroups per dimension given (1 to 3).
    Workgroups(Vec<SizeProgram>),
    /// Workgroups read on the GPU from the first three elements of this `u32` buffer.
    Indirect(usize),
}

impl CheckedDispatch {
    /// Along each axis, whether the dispatch is one (a literal 1, or not given) whatever the parameters and
    /// lengths: a buffer's length runs along the first axis only, an indirect dispatch along any.
    pub fn one_along(&self) -> [bool; 3] {
        let literal_one = |sizes: &[SizeProgram], axis: usize| {
            sizes
                .get(axis)
                .is_none_or(|s| s.steps == [SizeStep::Literal(1)])
        };
        match self {
            CheckedDispatch::BufferLen(_) => [false, true, true],
            CheckedDispatch::Threads(sizes) | CheckedDispatch::Workgroups(sizes) => {
                [0, 1, 2].map(|axis| literal_one(sizes, axis))
            }
            CheckedDispatch::Indirect(_) => [false; 3],
        }
    }
}

/// One dimension of a dispatch size, resolved: its text for messages and its postfix program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeProgram {
    pub text: String,
    pub steps: Vec<SizeStep>,
}

/// Checks `graph` against `library`, with no child graphs (a subgraph node is an error); every problem
/// found, or the checked graph.
pub fn check(graph: Graph, library: &Library) -> Result<CheckedGraph, Vec<Diagnostic>> {
    let none = crate::subgraph::Subgraphs::new();
    let children = Children {
        given: &none,
        const_evaluated: false,
    };
    check_with(graph, library, children)
}

/// Checks `graph` against `library`, its subgraph nodes against `children`.
pub fn check_with(
    graph: Graph,
    library: &Library,
    children: Children<'_>,
) -> Result<CheckedGraph, Vec<Diagnostic>> {
    // Resolve: every name to an index (the name tables are built by `new`), before any check runs.
    let mut c = Checker::new(&graph, library);
    c.resolve_accesses();
    c.resolve_indirect_dispatches();
    c.resolve_explicit_edges();
    // Check, each on what the earlier ones resolved.
    c.check_wgsl_names();
    c.check_identifiers();
    c.check_param_types();
    c.check_params_budget();
    c.check_buffer_types();
    c.check_owned_buffers_have_a_length();
    c.check_texture_sizes();
    // Before any check that reads a node's buffers: what may not use a texture no longer sees it.
    c.check_texture_uses();
    c.check_library_bindings();
    // After the library fixed its kernels' access modes: alternatives compare them.
    c.check_alternatives();
    c.check_blocks();
    c.check_no_fusion();
    c.check_placement();
    c.check_no_alias();
    c.check_copies();
    c.check_ranges();
    c.check_inputs_are_not_written();
    c.check_outputs_are_written();
    c.check_indirect_dispatches();
    let subgraphs = c.check_subgraphs(children);
    let edges = c.dependency_edges();
    c.check_cycles(&edges);
    let schedule = c.check_schedule(&edges);
    let kernels = c.check_kernels();
    c.check_texture_dispatches(&kernels);
    let (diags, result) = c.finish(edges, schedule, kernels, subgraphs);
    if diags.is_empty()
        && let Some(checked) = result
    {
        return Ok(checked);
    }
    let mut list = diags.into_vec();
    if list.is_empty() {
        list.push(Diagnostic::new(Loc::Graph, "graph could not be checked"));
    }
    Err(list)
}

struct Checker<'g> {
    graph: &'g Graph,
    library: &'g Library,
    diags: Diagnostics,
    params: NameTable<'g>,
    buffers: NameTable<'g>,
    nodes: NameTable<'g>,
    /// `None` where the type was refused.
    param_types: Vec<Option<ValueType>>,
    /// A texture's stands for its texels (`vec4` of its format's scalar, [`TextureType::texel_type`]).
    buffer_types: Vec<Option<ValueType>>,
    /// Per buffer, its texture type where it is a texture (`texture_2d<rgba8unorm>`), once parsed.
    textures: Vec<Option<TextureType>>,
    /// Per buffer, its sampler type where it is a sampler (`sampler<linear, clamp>`), once parsed.
    samplers: Vec<Option<SamplerType>>,
    /// Per buffer, the size its texture declaration gives, as written (`check_buffer_types`), then resolved
    /// (`check_texture_sizes`).
    declared_texture_sizes: Vec<Option<TextureSize>>,
    texture_sizes: Vec<Option<TextureSizeDesc>>,
    /// Per node, per access (in the node's order): the resolved access, `None` where the name was unknown.
    accesses: Vec<Vec<Option<BufferAccess>>>,
    /// The library kernel of each library node, once found and bound without error.
    library_kernels: Vec<Option<&'static LibraryKernel>>,
    explicit: Vec<(usize, usize, usize)>,
    /// Per node, the ranges of a copy (source, destination) or fill (its buffer), once checked; `None`
    /// where a bound was refused.
    ranges: Vec<Option<Vec<CheckedRange>>>,
    /// Names refused for WGSL: kernels using them are not validated (naga would only repeat the error).
    badly_named_buffers: Vec<usize>,
    badly_named_params: bool,
    /// Nodes that bind a buffer by a name refused (see `check_identifiers`): their WGSL is not validated.
    badly_named_bindings: Vec<usize>,
    /// The choices of each group of alternatives, resolved.
    groups: Vec<Vec<usize>>,
    /// Per node, the buffer an indirect dispatch reads its workgroup counts from, resolved.
    indirect: Vec<Option<usize>>,
    /// Blocks under GPU control, resolved.
    blocks: Vec<CheckedBlock>,
}

impl<'g> Checker<'g> {
    fn new(graph: &'g Graph, library: &'g Library) -> Self {
        let mut diags = Diagnostics::default();
        // Names must be unique per kind; a repeat is reported where it is repeated.
        let params = NameTable::build(
            "parameter",
            graph.params.iter().map(|p| p.name.as_str()),
            Loc::Param,
            &mut diags,
        );
        let buffers = NameTable::build(
            "buffer",
            graph.buffers.iter().map(|b| b.name.as_str()),
            Loc::Buffer,
            &mut diags,
        );
        let nodes = NameTable::build(
            "node",
            graph.nodes.iter().map(|n| n.name.as_str()),
            Loc::Node,
            &mut diags,
        );
        Checker {
            graph,
            library,
            diags,
            params,
            buffers,
            nodes,
            param_types: Vec::new(),
            buffer_types: Vec::new(),
            textures: vec![None; graph.buffers.len()],
            samplers: vec![None; graph.buffers.len()],
            declared_texture_sizes: vec![None; graph.buffers.len()],
            texture_sizes: vec![None; graph.buffers.len()],
            accesses: Vec::new(),
            library_kernels: vec![None; graph.nodes.len()],
            explicit: Vec::new(),
            ranges: Vec::new(),
            badly_named_buffers: Vec::new(),
            badly_named_params: false,
            badly_named_bindings: Vec::new(),
            groups: Vec::new(),
            indirect: Vec::new(),
            blocks: Vec::new(),
        }
    }

    fn finish(
        self,
        edges: Vec<Edge>,
        schedule: Option<Schedule>,
        kernels: Vec<Option<CheckedKernel>>,
        subgraphs: Vec<Option<std::sync::Arc<crate::desc::GraphDesc>>>,
    ) -> (Diagnostics, Option<CheckedGraph>) {
        let params = self.params_layout();
        let buffer_types: Option<Vec<ValueType>> = self.buffer_types.iter().copied().collect();
        let nodes: Option<Vec<CheckedNode>> = self
            .graph
            .nodes
            .iter()
            .zip(kernels)
            .zip(&self.accesses)
            .zip(&self.ranges)
            .zip(subgraphs)
            .map(
                |((((node, kernel), accesses), ranges), child)| match &node.kind {
                    NodeKind::Kernel(_) | NodeKind::Fill { .. } => kernel.map(CheckedNode::Kernel),
                    NodeKind::Copy { .. } => match ranges.as_deref()? {
                        [src, dst] => Some(CheckedNode::Copy {
                            src_range: src.clone(),
                            dst_range: dst.clone(),
                        }),
                        _ => None,
                    },
                    NodeKind::Upload { .. } => Some(CheckedNode::Upload {
                        range: ranges.as_ref()?.first()?.clone(),
                    }),
                    NodeKind::Readback { .. } => Some(CheckedNode::Readback {
                        range: ranges.as_ref()?.first()?.clone(),
                    }),
                    NodeKind::Empty {} | NodeKind::Barrier {} => Some(CheckedNode::Empty),
                    NodeKind::Host { .. } => accesses
                        .iter()
                        .copied()
                        .collect::<Option<Vec<_>>>()
                        .map(|accesses| CheckedNode::Host { accesses }),
                    NodeKind::Interop { .. } => accesses
                        .iter()
                        .copied()
                        .collect::<Option<Vec<_>>>()
                        .map(|accesses| CheckedNode::Interop { accesses }),
                    NodeKind::Subgraph {
                        graph: path,
                        accesses: listed,
                    } => listed
                        .iter()
                        .zip(accesses)
                        .map(|(a, r)| r.map(|r| (a.binding.clone(), r)))
                        .collect::<Option<Vec<_>>>()
                        .map(|bindings| CheckedNode::Subgraph {
                            path: path.clone(),
                            child,
                            bindings,
                        }),
                },
            )
            .collect();
        let checked = match (buffer_types, nodes, schedule) {
            (Some(buffer_types), Some(nodes), Some(schedule)) => Some(CheckedGraph {
                graph: self.graph.clone(),
                params,
                buffer_types,
                textures: self.textures.clone(),
                samplers: self.samplers.clone(),
                texture_sizes: self.texture_sizes.clone(),
                nodes,
                edges,
                schedule,
                blocks: self.blocks.clone(),
            }),
            _ => None,
        };
        (self.diags, checked)
    }
}
