//! The graph as the user declared it, before any check: names are still strings.
//!
//! The macro lowers its syntax tree to this, and a run-time builder can build it directly. Every item is
//! addressed by its index, which is also how [`crate::Loc`] points back at it.

use serde::{Deserialize, Serialize};

pub use crate::size::{SizeExpr, SizeOp};

/// How parameters reach the kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamsStorage {
    /// Push constants (`var<immediate>`), the default; the block must fit the portable 128 bytes.
    #[default]
    Immediates,
    /// A uniform buffer, opted in by the graph: lifts the 128-byte budget.
    Uniform,
}

/// Whether edges are inferred from buffer access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeMode {
    /// Read-after-write, write-after-read and write-after-write in declaration order, plus explicit edges.
    #[default]
    Inferred,
    /// Only explicit edges; two conflicting accesses with no path between them are a race.
    ExplicitOnly,
}

/// Who provides a buffer and how the graph may use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Bound by the caller at bake time; the graph only reads it.
    Input,
    /// Bound by the caller; the graph writes it.
    Output,
    /// Bound by the caller; the graph reads and writes it.
    #[serde(rename = "inout")]
    InOut,
    /// Created by the graph at bake time, invisible to the caller.
    Owned,
}

impl Role {
    pub const fn is_external(self) -> bool {
        !matches!(self, Role::Owned)
    }

    pub const fn keyword(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::InOut => "inout",
            Role::Owned => "graph-owned",
        }
    }
}

/// How a node touches a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessMode {
    Read,
    /// Overwrites without reading what was there.
    Write,
    ReadWrite,
}

impl AccessMode {
    /// What a node that makes both accesses makes: the same one, or reads and writes.
    pub fn joined(self, other: AccessMode) -> AccessMode {
        match self == other {
            true => self,
            false => AccessMode::ReadWrite,
        }
    }

    pub const fn reads(self) -> bool {
        matches!(self, AccessMode::Read | AccessMode::ReadWrite)
    }

    pub const fn writes(self) -> bool {
        matches!(self, AccessMode::Write | AccessMode::ReadWrite)
    }

    pub const fn keyword(self) -> &'static str {
        match self {
            AccessMode::Read => "read",
            AccessMode::Write => "write",
            AccessMode::ReadWrite => "read_write",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub name: String,
    /// The WGSL type as written; checked, not trusted.
    #[serde(rename = "type")]
    pub ty: String,
}

/// A buffer of the graph, a texture or a sampler. In a graph file a buffer's element type is its `elem`, a
/// texture's type its `texture` and a sampler's its `sampler` (format 2; format 1 wrote a texture's type as
/// its `elem`, which still reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "BufferEntry", into = "BufferEntry")]
pub struct Buffer {
    pub name: String,
    /// The element type as written; or, for a texture, its type (`texture_2d<rgba8unorm>`, with its size
    /// where it has one: see [`crate::texture`]), which makes it a texture; or a sampler's type
    /// (`sampler<linear, clamp>`), which makes it a sampler.
    pub elem: String,
    /// `Some(n)` for `[T; n]`, `None` for `[T]` (length known at bake time).
    pub len: Option<u64>,
    pub role: Role,
}

/// A [`Buffer`] as a graph file writes it: `elem` for a buffer, `texture` for a texture, `sampler` for a
/// sampler.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BufferEntry {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    elem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    texture: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sampler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    len: Option<u64>,
    role: Role,
}

impl TryFrom<BufferEntry> for Buffer {
    type Error = String;

    fn try_from(entry: BufferEntry) -> Result<Self, String> {
        let name = crate::names::escaped(&entry.name);
        let given = [
            entry.elem.is_some(),
            entry.texture.is_some(),
            entry.sampler.is_some(),
        ];
        if given.iter().filter(|&&g| g).count() > 1 {
            return Err(format!(
                "`{name}` has more than one of `elem`, `texture` and `sampler`: a buffer has an `elem`, a texture \
                 a `texture`, a sampler a `sampler`"
            ));
        }
        let elem = match (entry.elem, entry.texture, entry.sampler) {
            (Some(elem), _, _) => elem,
            (_, Some(texture), _) if crate::texture::TextureType::is_texture_text(&texture) => {
                texture
            }
            (_, Some(texture), _) => {
                return Err(format!(
                    "the `texture` of `{name}` is `{}`, which is no texture type: write `texture_2d<rgba8unorm>`, \
                     `texture_storage_2d<r32float, write>`.., or give a buffer its `elem`",
                    crate::names::escaped(&texture)
                ));
            }
            (_, _, Some(sampler)) if crate::texture::SamplerType::is_sampler_text(&sampler) => {
                sampler
            }
            (_, _, Some(sampler)) => {
                return Err(format!(
                    "the `sampler` of `{name}` is `{}`, which is no sampler type: write `sampler<linear, clamp>`",
                    crate::names::escaped(&sampler)
                ));
            }
            (None, None, None) => {
                return Err(format!(
                    "`{name}` has neither an `elem` (a buffer's element type), a `texture` (a texture's type) \
                     nor a `sampler` (a sampler's type)"
                ));
            }
        };
        Ok(Buffer {
            name: entry.name,
            elem,
            len: entry.len,
            role: entry.role,
        })
    }
}

impl From<Buffer> for BufferEntry {
    fn from(b: Buffer) -> Self {
        let texture = crate::texture::TextureType::is_texture_text(&b.elem);
        let sampler = crate::texture::SamplerType::is_sampler_text(&b.elem);
        BufferEntry {
            name: b.name,
            elem: (!texture && !sampler).then(|| b.elem.clone()),
            texture: texture.then(|| b.elem.clone()),
            sampler: sampler.then_some(b.elem),
            len: b.len,
            role: b.role,
        }
    }
}

/// A buffer as one node sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Access {
    /// The name the kernel's WGSL uses; for inline kernels and host tasks, the buffer's own name. For library
    /// kernels the library fixes the mode, and `mode` here is ignored. A graph file may leave it out when it
    /// is the buffer's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub binding: String,
    pub buffer: String,
    pub mode: AccessMode,
}

/// Where a kernel's WGSL comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelSource {
    /// Written in the graph (as tokens) or read from a `.wgsl` file (`file` holds its path for messages).
    Wgsl {
        #[serde(default)]
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    },
    /// A kernel of the `kernels` library, by path (`scale`, `reduce::sum_partials`).
    Library(String),
}

/// How many invocations a kernel runs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DispatchSpec {
    /// One invocation per element of the first buffer the kernel writes.
    #[default]
    Auto,
    /// `threads(x[, y[, z]])`: invocations per dimension, rounded up to whole workgroups.
    Threads(Vec<SizeExpr>),
    /// `workgroups(x[, y[, z]])`: workgroup counts per dimension.
    Workgroups(Vec<SizeExpr>),
    /// `workgroups(indirect: args)`: the counts are the first three `u32`s of buffer `args`, written on the
    /// GPU by an earlier node (an indirect dispatch).
    Indirect(String),
}

impl DispatchSpec {
    /// The size expressions, one per dimension given.
    pub fn dims(&self) -> &[SizeExpr] {
        match self {
            DispatchSpec::Auto | DispatchSpec::Indirect(_) => &[],
            DispatchSpec::Threads(dims) | DispatchSpec::Workgroups(dims) => dims,
        }
    }

    /// The clause's keyword, for messages.
    pub fn keyword(&self) -> &'static str {
        match self {
            DispatchSpec::Auto => "",
            DispatchSpec::Threads(_) => "threads",
            DispatchSpec::Workgroups(_) | DispatchSpec::Indirect(_) => "workgroups",
        }
    }
}

/// Which workgroup sizes a graph's kernels may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkgroupLimits {
    /// WebGPU's defaults, which every backend offers: 256 invocations in x and y, 64 in z, 256 in all.
    #[default]
    Portable,
    /// Whatever the device offers, checked at bake (`#[device_limits]`).
    Device,
}

/// A value for one of a kernel's WGSL `override` constants: a size expression over buffer lengths and literals
/// (no parameters), evaluated at bake and again at each update (`overrides(tile: x.len() / 64)`), so that a
/// `var<workgroup>` array can be sized by what is bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelOverride {
    pub name: String,
    pub value: SizeExpr,
}

/// A value given to a library kernel's argument, as WGSL text (`params.a`, `2.0`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelArg {
    pub name: String,
    #[serde(rename = "value")]
    pub wgsl: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kernel {
    pub accesses: Vec<Access>,
    pub source: KernelSource,
    /// The entry point, when the user chose one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    #[serde(default, skip_serializing_if = "is_auto")]
    pub dispatch: DispatchSpec,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<KernelArg>,
    /// Values of the WGSL's `override` constants (see [`KernelOverride`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<KernelOverride>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Kernel(Kernel),
    /// Copies `src` (or a range of it) into `dst` (or a range of it) of the same length, like Rust's
    /// `dst[..].copy_from_slice(&src[..])`.
    Copy {
        src: String,
        dst: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        src_range: Option<ElementRange>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dst_range: Option<ElementRange>,
    },
    /// Sets every element of `dst` (or of a range of it) to `value`, WGSL text of the buffer's element type
    /// (`0.0`, `params.k`).
    Fill {
        dst: String,
        value: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        range: Option<ElementRange>,
    },
    /// Host data written into `dst` (or a range of it) at this point of each replay: the app gives the data
    /// between replays, and a replay without it is an error.
    Upload {
        dst: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        range: Option<ElementRange>,
    },
    /// `src` (or a range of it) copied to the host at this point of each replay, for the app to read once
    /// that replay finished.
    Readback {
        src: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        range: Option<ElementRange>,
    },
    /// A Rust closure run on the host between GPU partitions.
    Host {
        accesses: Vec<Access>,
    },
    /// A Rust closure given the native wgpu objects (device, queue, the partition's command encoder and the
    /// declared buffers), recording its own wgpu work in order with the graph (Codeplay's `interop_task`).
    Interop {
        accesses: Vec<Access>,
    },
    /// No work: a join point that orders what its edges say (SYCL's empty node).
    Empty {},
    /// No work, after every node declared before it that nothing declared before it depends on (SYCL's
    /// `depends_on_all_leaves`): what runs after it, through explicit edges, runs after all of them.
    Barrier {},
    /// Another graph as one node (SYCL's subgraph node): each access binds the child's external buffer
    /// `binding` to this graph's `buffer`, with the access the child makes. The child reads this graph's
    /// parameters of the same names.
    Subgraph {
        /// The child as written: a Rust type path in `graph!`, a graph file's path (relative to this file) in
        /// a graph file, the name it was added under in the builder.
        graph: String,
        accesses: Vec<Access>,
    },
}

/// `buffer[start..end]` in elements, as Rust writes a slice: a bound left out is the buffer's start or end.
/// Bounds are fixed when the graph is baked: literals and buffer lengths, never parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElementRange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<SizeExpr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<SizeExpr>,
}

impl ElementRange {
    pub fn new(start: Option<SizeExpr>, end: Option<SizeExpr>) -> Self {
        ElementRange { start, end }
    }

    /// The bounds that are written: start first.
    pub fn bounds(&self) -> [Option<&SizeExpr>; 2] {
        [self.start.as_ref(), self.end.as_ref()]
    }
}

/// In a graph file, the kind is a key beside the name: `{"name": "c", "copy": {"src": "a", "dst": "b"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    #[serde(flatten)]
    pub kind: NodeKind,
}

impl Node {
    /// Every buffer access of the node, in declaration order; a copy reads `src` and writes `dst`.
    pub fn accesses(&self) -> Vec<Access> {
        match &self.kind {
            NodeKind::Kernel(k) => k.accesses.clone(),
            NodeKind::Host { accesses }
            | NodeKind::Interop { accesses }
            | NodeKind::Subgraph { accesses, .. } => accesses.clone(),
            NodeKind::Empty {} | NodeKind::Barrier {} => Vec::new(),
            NodeKind::Fill { dst, .. } | NodeKind::Upload { dst, .. } => vec![Access {
                binding: "dst".into(),
                buffer: dst.clone(),
                mode: AccessMode::Write,
            }],
            NodeKind::Readback { src, .. } => vec![Access {
                binding: "src".into(),
                buffer: src.clone(),
                mode: AccessMode::Read,
            }],
            NodeKind::Copy { src, dst, .. } => vec![
                Access {
                    binding: "src".into(),
                    buffer: src.clone(),
                    mode: AccessMode::Read,
                },
                Access {
                    binding: "dst".into(),
                    buffer: dst.clone(),
                    mode: AccessMode::Write,
                },
            ],
        }
    }

    /// The accesses a node lists itself (kernels and host tasks); copies and fills have theirs implied.
    pub fn listed_accesses_mut(&mut self) -> Option<&mut Vec<Access>> {
        match &mut self.kind {
            NodeKind::Kernel(k) => Some(&mut k.accesses),
            NodeKind::Host { accesses }
            | NodeKind::Interop { accesses }
            | NodeKind::Subgraph { accesses, .. } => Some(accesses),
            NodeKind::Copy { .. }
            | NodeKind::Fill { .. }
            | NodeKind::Upload { .. }
            | NodeKind::Readback { .. }
            | NodeKind::Empty {}
            | NodeKind::Barrier {} => None,
        }
    }

    /// The size expressions a node writes, by slot (how [`crate::Loc::SizeTerm`] numbers them): a kernel's
    /// dispatch dimensions; a copy's source start and end, then its destination's; a fill's, upload's or
    /// readback's start and end.
    /// A bound left out is `None`.
    pub fn size_slots(&self) -> Vec<Option<&SizeExpr>> {
        fn range(r: &Option<ElementRange>) -> [Option<&SizeExpr>; 2] {
            r.as_ref().map_or([None, None], ElementRange::bounds)
        }
        match &self.kind {
            // The dispatch's dimensions, then the overrides' values.
            NodeKind::Kernel(k) => k
                .dispatch
                .dims()
                .iter()
                .chain(k.overrides.iter().map(|o| &o.value))
                .map(Some)
                .collect(),
            NodeKind::Copy {
                src_range,
                dst_range,
                ..
            } => [range(src_range), range(dst_range)].concat(),
            NodeKind::Fill { range: r, .. }
            | NodeKind::Upload { range: r, .. }
            | NodeKind::Readback { range: r, .. } => range(r).to_vec(),
            _ => Vec::new(),
        }
    }

    /// What size slot `slot` of this node is, in words: `dimension x of the size`, `the end of the source
    /// range`.
    pub fn size_slot_words(&self, slot: usize) -> String {
        let bound = ["start", "end"][slot % 2];
        match &self.kind {
            NodeKind::Copy { .. } => {
                let side = if slot < 2 { "source" } else { "destination" };
                format!("the {bound} of the {side} range")
            }
            NodeKind::Fill { .. } | NodeKind::Upload { .. } | NodeKind::Readback { .. } => {
                format!("the {bound} of the range")
            }
            NodeKind::Kernel(k)
                if slot
                    .checked_sub(k.dispatch.dims().len())
                    .is_some_and(|at| at < k.overrides.len()) =>
            {
                let name = &k.overrides[slot - k.dispatch.dims().len()].name;
                format!("the value of override `{name}`")
            }
            _ => {
                let dim = ["x", "y", "z"]
                    .get(slot)
                    .map_or_else(|| slot.to_string(), |axis| axis.to_string());
                format!("dimension {dim} of the size")
            }
        }
    }

    pub const fn is_host(&self) -> bool {
        matches!(self.kind, NodeKind::Host { .. })
    }
}

impl NodeKind {
    /// The kind's word, for messages: `kernel`, `copy`, `host`..
    pub fn keyword(&self) -> &'static str {
        match self {
            NodeKind::Kernel(_) => "kernel",
            NodeKind::Copy { .. } => "copy",
            NodeKind::Fill { .. } => "fill",
            NodeKind::Upload { .. } => "upload",
            NodeKind::Readback { .. } => "readback",
            NodeKind::Host { .. } => "host",
            NodeKind::Interop { .. } => "interop",
            NodeKind::Empty {} => "empty",
            NodeKind::Barrier {} => "barrier",
            NodeKind::Subgraph { .. } => "subgraph",
        }
    }
}

/// Kernel nodes of which exactly one runs per replay, switchable after bake without re-baking (SYCL's dynamic
/// command group). Each choice binds what it needs; the group acts as one node for ordering that accesses what
/// any choice accesses: edges to or from one are edges to or from all, at the place of the first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alternatives {
    pub name: String,
    /// Kernel nodes by name; the first is active after bake.
    pub choices: Vec<String>,
}

/// Nodes that run under control of the GPU, without a host round trip: once if a flag is set (`if`, with an
/// `else` for when it is not), once in the arm a value picks (`switch`), or up to a number of times, stopping
/// early when a flag clears (`repeat`). The flag or value is the first `u32` of a buffer, written on the GPU;
/// the members (kernels, fills, copies and subgraphs of them) order as one node with the rest of the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Block {
    pub name: String,
    #[serde(flatten)]
    pub kind: BlockKind,
    /// The member nodes, by name: an `if`'s when its flag is set, a `repeat`'s body. A `switch` keeps its
    /// nodes in its arms, and has none here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
}

/// One arm of a `switch`: the value that picks it (`None`: the default arm, `_`), and its nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchArm {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// Runs its nodes once when `flag[0] != 0`, else the nodes of `otherwise` (the `else` branch) once; what
    /// does not run dispatches no workgroups.
    If {
        flag: String,
        #[serde(rename = "else", default, skip_serializing_if = "Vec::is_empty")]
        otherwise: Vec<String>,
    },
    /// Runs the nodes of the arm whose value is `index[0]` once, or the default arm's when none is; the
    /// others dispatch no workgroups.
    Switch { index: String, arms: Vec<SwitchArm> },
    /// Runs `count` times; with `flag`, each iteration only while `flag[0] != 0` (a member clears it to stop).
    Repeat {
        count: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flag: Option<String>,
    },
}

impl BlockKind {
    /// The buffer whose first `u32` decides: an `if`'s or a `repeat .. while`'s flag, a `switch`'s value.
    pub fn flag(&self) -> Option<&str> {
        match self {
            BlockKind::If { flag, .. } => Some(flag),
            BlockKind::Switch { index, .. } => Some(index),
            BlockKind::Repeat { flag, .. } => flag.as_deref(),
        }
    }

    pub fn keyword(&self) -> &'static str {
        match self {
            BlockKind::If { .. } => "if",
            BlockKind::Switch { .. } => "switch",
            BlockKind::Repeat { .. } => "repeat",
        }
    }
}

impl Block {
    /// Every member with the branch it runs in: an `if`'s nodes 0 and its `else`'s 1; a `switch`'s explicit
    /// arms 0, 1, .. in order and its default arm the number of explicit arms; a `repeat`'s nodes 0.
    pub fn members(&self) -> Vec<(u32, &str)> {
        let own = self.nodes.iter().map(|n| (0, n.as_str()));
        match &self.kind {
            BlockKind::If { otherwise, .. } => own
                .chain(otherwise.iter().map(|n| (1, n.as_str())))
                .collect(),
            BlockKind::Repeat { .. } => own.collect(),
            BlockKind::Switch { arms, .. } => {
                let explicit = arms.iter().filter(|a| a.value.is_some()).count() as u32;
                let mut next = 0;
                let mut members: Vec<(u32, &str)> = own.collect();
                for arm in arms {
                    let branch = match arm.value {
                        Some(_) => {
                            next += 1;
                            next - 1
                        }
                        None => explicit,
                    };
                    members.extend(arm.nodes.iter().map(|n| (branch, n.as_str())));
                }
                members
            }
        }
    }

    /// The values of a `switch`'s explicit arms, in order (branch `i` runs when the value is `values[i]`);
    /// empty for other blocks.
    pub fn case_values(&self) -> Vec<u32> {
        match &self.kind {
            BlockKind::Switch { arms, .. } => arms.iter().filter_map(|a| a.value).collect(),
            _ => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitEdge {
    pub from: String,
    pub to: String,
}

/// One `graph!` block.
/// In a graph file, everything but the name may be left out when empty or the default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<Param>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buffers: Vec<Buffer>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<Node>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edges: Vec<ExplicitEdge>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<Alternatives>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<Block>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub edge_mode: EdgeMode,
    #[serde(default, skip_serializing_if = "is_default")]
    pub params_storage: ParamsStorage,
    #[serde(default, skip_serializing_if = "is_default")]
    pub workgroup_limits: WorkgroupLimits,
    /// Kernels the fusion pass leaves alone, by name (`#[no_fusion]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_fusion: Vec<String>,
    /// Graph-owned buffers that keep memory of their own, shared with no other buffer, by name
    /// (`#[no_alias]`; see [`crate::memory`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_alias: Vec<String>,
    /// Nodes placed on a GPU of the set the graph is baked on (`#[on(1)]`; see [`crate::placement`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on: Vec<Placement>,
}

/// A node placed on a GPU of a set, by the GPU's index in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    pub node: String,
    pub gpu: u32,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

fn is_auto(dispatch: &DispatchSpec) -> bool {
    *dispatch == DispatchSpec::Auto
}
