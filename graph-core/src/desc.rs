//! The description of a checked graph: the one value every front door produces and the runtime bakes.
//!
//! Plain, owned data (serde-serializable) made by [`crate::describe::describe`] from a checked graph. Its text
//! and lists are `Cow<'static, _>`, so that the same type is both a value built at run time (the builder, a
//! graph file) and a constant laid out by the compiler (the macro bakes the value into tokens of borrowed
//! data, which const evaluation can read).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::deps::Hazard;
use crate::ir::{AccessMode, ParamsStorage, Role};
use crate::size::SizeStep;
use crate::types::ValueType;

/// Text of a description: borrowed in generated constants, owned in values built at run time.
pub type Text = Cow<'static, str>;
/// A list of a description, borrowed or owned like [`Text`].
pub type List<T> = Cow<'static, [T]>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphDesc {
    pub name: Text,
    pub params: ParamsDesc,
    pub buffers: List<BufferDesc>,
    pub nodes: List<NodeDesc>,
    /// Every dependency edge, inferred and explicit, with why it exists.
    pub edges: List<EdgeDesc>,
    pub topological_order: List<u32>,
    pub levels: List<List<u32>>,
    pub partitions: List<PartitionDesc>,
    /// Groups of nodes under GPU control (`if`, `repeat`), each contiguous in the schedule.
    #[serde(default)]
    pub blocks: List<BlockDesc>,
}

/// Nodes under GPU control: see [`crate::ir::Block`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDesc {
    pub name: Text,
    /// How many times it runs at most: 1 for an `if`.
    pub count: u32,
    /// The buffer whose first `u32` gates each run (`if`, `repeat .. while`).
    pub flag: Option<u32>,
    /// Its member nodes (kernels), in topological order.
    pub nodes: List<u32>,
    /// The branch each member runs in, by its place in `nodes`: an `if`'s nodes 0 and its `else`'s 1, a
    /// `switch`'s arms by their place (its default arm's branch is the number of its `cases`). Empty when
    /// every member runs in branch 0 (an `if` without `else`, a `repeat`).
    #[serde(default)]
    pub branches: List<u32>,
    /// A `switch`'s arm values: branch `i` runs when the first `u32` of `flag` is `cases[i]`, branch
    /// `cases.len()` (the default arm) when it is none of them. `None`: the flag decides, branch 0 when it is
    /// nonzero and branch 1 when it is zero.
    #[serde(default)]
    pub cases: Option<List<u32>>,
}

impl BlockDesc {
    /// The branch member `nodes[at]` runs in.
    pub fn branch(&self, at: usize) -> u32 {
        self.branches.get(at).copied().unwrap_or(0)
    }
}

/// The child of a subgraph node whose description the front door does not have: the macro's, which writes
/// the child's `DESCRIPTION` in its place (the checks of its bindings are constants it generates).
pub static UNRESOLVED: GraphDesc = GraphDesc {
    name: Cow::Borrowed("<unresolved>"),
    params: ParamsDesc {
        size: 0,
        storage: ParamsStorage::Immediates,
        fields: Cow::Borrowed(&[]),
        wgsl_struct: Cow::Borrowed(""),
    },
    buffers: Cow::Borrowed(&[]),
    nodes: Cow::Borrowed(&[]),
    edges: Cow::Borrowed(&[]),
    topological_order: Cow::Borrowed(&[]),
    levels: Cow::Borrowed(&[]),
    partitions: Cow::Borrowed(&[]),
    blocks: Cow::Borrowed(&[]),
};

/// A description made at run time, to bake.
impl From<GraphDesc> for Cow<'static, GraphDesc> {
    fn from(desc: GraphDesc) -> Self {
        Cow::Owned(desc)
    }
}

/// A generated description, baked without a copy.
impl From<&'static GraphDesc> for Cow<'static, GraphDesc> {
    fn from(desc: &'static GraphDesc) -> Self {
        Cow::Borrowed(desc)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamsDesc {
    /// Size of the block in bytes (0: no parameters).
    pub size: u32,
    pub storage: ParamsStorage,
    pub fields: List<ParamFieldDesc>,
    /// The WGSL struct declaration (`struct GraphParams { .. }`), empty without parameters.
    pub wgsl_struct: Text,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamFieldDesc {
    pub name: Text,
    pub ty: ValueType,
    pub offset: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferDesc {
    pub name: Text,
    pub elem: ValueType,
    /// Required length in elements, when the declaration fixes one.
    pub len: Option<u32>,
    pub role: Role,
    /// A graph-owned buffer that keeps memory of its own (`#[no_alias]`, [`crate::memory`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_alias: bool,
    /// A texture, not a buffer: its declared type as [`crate::texture::TextureType`] writes it
    /// (`texture_2d<rgba8unorm>`). Its `elem` is then its texels' `vec4`, and it has no `len`: its size is the
    /// bound texture's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texture: Option<Text>,
    /// A texture's declared size: a graph-owned texture's always, an external one's where its declaration
    /// has one (bake checks the bound texture against it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texture_size: Option<TextureSizeDesc>,
    /// A sampler, not a buffer: its declared type as [`crate::texture::SamplerType`] writes it
    /// (`sampler<linear, clamp>`). It is graph-owned, made at bake, read by kernels only; its `elem` is a
    /// `u32` that stands for nothing, and it has no `len`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampler: Option<Text>,
}

/// A texture's size in a description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextureSizeDesc {
    /// Texels along width, height, and layers or depth; 1 past the dimension's count.
    Texels([u32; 3]),
    /// The size of texture `.0` (an index into [`GraphDesc::buffers`]) of the same dimension.
    Like(u32),
    /// Per axis texels or a `u32` parameter, 1 past the dimension's count: a graph-owned texture the runtime
    /// makes again when a replay's parameters give it another size.
    Params([AxisSizeDesc; 3]),
}

/// A texture's size along one axis in a description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AxisSizeDesc {
    Texels(u32),
    /// The `u32` at this byte offset of the parameter block.
    Param(u32),
}

impl AxisSizeDesc {
    /// The texels along the axis with the parameter block `params`; `None` where the offset is outside it
    /// (a description that bypassed [`GraphDesc::validate`]).
    pub fn texels(self, params: &[u8]) -> Option<u32> {
        match self {
            AxisSizeDesc::Texels(n) => Some(n),
            AxisSizeDesc::Param(offset) => {
                let start = offset as usize;
                let word = params.get(start..start.checked_add(4)?)?;
                Some(u32::from_ne_bytes(word.try_into().ok()?))
            }
        }
    }
}

impl BufferDesc {
    /// The texture's parsed type, when this is a texture whose type parses (a checked description's always
    /// does: [`GraphDesc::validate`]).
    pub fn texture_type(&self) -> Option<crate::texture::TextureType> {
        crate::texture::TextureType::parse(self.texture.as_deref()?).ok()
    }

    /// The sampler's parsed type, when this is a sampler whose type parses (a checked description's always
    /// does: [`GraphDesc::validate`]).
    pub fn sampler_type(&self) -> Option<crate::texture::SamplerType> {
        crate::texture::SamplerType::parse(self.sampler.as_deref()?).ok()
    }

    /// Whether this is a buffer: no texture and no sampler.
    pub fn is_buffer(&self) -> bool {
        self.texture.is_none() && self.sampler.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeDesc {
    pub name: Text,
    pub op: OpDesc,
    /// The GPU of a [`crate::placement`] the node was placed on (`#[on(1)]`, `GraphBuilder::on`), by its index
    /// in the set it is baked on; `None` leaves it to the placement pass. A one-GPU bake ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<u32>,
}

// Not boxed: generated descriptions are constants, and a `Box` cannot be made in a constant.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpDesc {
    /// A compute kernel; fills are kernels too.
    Kernel(KernelDesc),
    /// `src[src_range]` into `dst[dst_range]`, ranges of one length.
    Copy {
        src: u32,
        dst: u32,
        src_range: RangeDesc,
        dst_range: RangeDesc,
    },
    /// Host data into `range` of `buffer`, given between replays.
    Upload {
        buffer: u32,
        range: RangeDesc,
    },
    /// `range` of `buffer` to the host, read once the replay finished.
    Readback {
        buffer: u32,
        range: RangeDesc,
    },
    Host {
        accesses: List<AccessDesc>,
    },
    /// A closure recording its own wgpu work with the partition's encoder, over these buffers.
    Interop {
        accesses: List<AccessDesc>,
    },
    /// No work, only ordering: an empty node or a barrier.
    Empty,
    /// Another graph as one node (flattened into its parent at bake, see [`crate::flatten`]): its roots run
    /// after this node's predecessors, this node's successors after its leaves.
    Subgraph {
        /// The child as the parent names it: a Rust type path (`graph!`), a graph file, a builder's name.
        path: Text,
        /// The child's description: a `graph!` child's `DESCRIPTION`, or a built or loaded one.
        graph: Cow<'static, GraphDesc>,
        /// The child's external buffers, each bound to one of the parent's.
        bindings: List<SubgraphBinding>,
    },
}

/// One external buffer of a subgraph's child, bound to a buffer of the parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubgraphBinding {
    /// The child's name for it.
    pub name: Text,
    /// The parent's buffer.
    pub buffer: u32,
    /// The access the child makes, as the parent declared it (checked against the child's role).
    pub mode: AccessMode,
}

impl OpDesc {
    /// A word for the kind of node, for messages and drawings.
    pub fn kind(&self) -> &'static str {
        match self {
            OpDesc::Kernel(_) => "kernel",
            OpDesc::Copy { .. } => "copy",
            OpDesc::Upload { .. } => "upload",
            OpDesc::Readback { .. } => "readback",
            OpDesc::Host { .. } => "host",
            OpDesc::Interop { .. } => "interop",
            OpDesc::Empty => "empty",
            OpDesc::Subgraph { .. } => "subgraph",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessDesc {
    pub buffer: u32,
    pub mode: AccessMode,
}

/// Why `to` waits for `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeDesc {
    pub from: u32,
    pub to: u32,
    pub origin: EdgeOriginDesc,
}

impl EdgeDesc {
    /// The edge as four numbers, `[from, to, origin, buffer]`: origin 0 for [`EdgeOriginDesc::Explicit`],
    /// 1 for [`EdgeOriginDesc::Leaf`] (buffer 0), and 2, 3, 4 for an edge inferred on `buffer` from a read
    /// after a write, a write after a read, a write after a write. Code that writes a description out as
    /// Rust (the `graph!` macro) writes a graph's edges as these: one array of integers is far less for the
    /// compiler to check than thousands of struct and enum expressions.
    pub fn to_words(&self) -> [u32; 4] {
        let (origin, buffer) = match self.origin {
            EdgeOriginDesc::Explicit => (0, 0),
            EdgeOriginDesc::Leaf => (1, 0),
            EdgeOriginDesc::Inferred { buffer, hazard } => match hazard {
                Hazard::ReadAfterWrite => (2, buffer),
                Hazard::WriteAfterRead => (3, buffer),
                Hazard::WriteAfterWrite => (4, buffer),
            },
        };
        [self.from, self.to, origin, buffer]
    }

    /// The edge [`EdgeDesc::to_words`] wrote. An origin past 4 is no edge: it panics, which in a constant
    /// is a compile error.
    pub const fn from_words(words: [u32; 4]) -> EdgeDesc {
        let [from, to, origin, buffer] = words;
        let origin = match origin {
            0 => EdgeOriginDesc::Explicit,
            1 => EdgeOriginDesc::Leaf,
            2 => EdgeOriginDesc::Inferred {
                buffer,
                hazard: Hazard::ReadAfterWrite,
            },
            3 => EdgeOriginDesc::Inferred {
                buffer,
                hazard: Hazard::WriteAfterRead,
            },
            4 => EdgeOriginDesc::Inferred {
                buffer,
                hazard: Hazard::WriteAfterWrite,
            },
            _ => panic!("an edge's origin is a number from 0 to 4"),
        };
        EdgeDesc { from, to, origin }
    }
}

/// Each of `words` as the edge it stands for ([`EdgeDesc::from_words`]), evaluated where a constant needs
/// it: `const EDGES: [EdgeDesc; 2] = edges_from_words(&[[0, 1, 2, 0], [1, 2, 0, 0]]);`.
pub const fn edges_from_words<const N: usize>(words: &[[u32; 4]; N]) -> [EdgeDesc; N] {
    let mut edges = [EdgeDesc {
        from: 0,
        to: 0,
        origin: EdgeOriginDesc::Explicit,
    }; N];
    let mut i = 0;
    while i < N {
        edges[i] = EdgeDesc::from_words(words[i]);
        i += 1;
    }
    edges
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EdgeOriginDesc {
    /// Written by the user (`a -> b`, or a builder's edge).
    Explicit,
    /// Inferred from the accesses of both nodes to `buffer`.
    Inferred { buffer: u32, hazard: Hazard },
    /// `from` was a leaf when the barrier `to` was declared.
    Leaf,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelDesc {
    /// Binding declarations and, for library kernels, argument functions.
    pub declarations: Text,
    /// A function `fn name() -> ty { return value; }` for each library argument, in order.
    pub args: List<KernelArgDesc>,
    /// The kernel's own code.
    pub source: Text,
    pub entry: Text,
    /// The literal sizes of the workgroup; 0 along an axis an `override` sizes, which bake computes from
    /// the module with the kernel's `overrides` (and checks against the device).
    pub workgroup_size: [u32; 3],
    /// Binding `i` of group 0 is `bindings[i]`.
    pub bindings: List<AccessDesc>,
    pub dispatch: DispatchDesc,
    /// A one-dimensional dispatch past the device limit may be folded into two dimensions (the kernel
    /// indexes as `gid.x + gid.y * num_workgroups.x * workgroup_size.x`).
    pub foldable: bool,
    /// A fill of part of binding 0: evaluated at bake, checked against the bound length and given to the
    /// kernel as the pipeline constants `range_start` and `range_end`.
    pub range: Option<RangeDesc>,
    /// A choice of a group of alternatives: only the group's active choice runs.
    pub alternative: Option<AlternativeDesc>,
    /// Each invocation touches only its own elements and texels, and no other invocation of its launch
    /// touches them: proved from naga's IR (library kernels: and marked so), so the fusion pass may merge
    /// it with others of its extent ([`crate::fusion`]).
    pub pointwise: bool,
    /// Each invocation inside the extent reads within this many elements of its own index and writes its own
    /// element whatever the data, proved from naga's IR: a chain of such kernels fuses by overlapped tiling
    /// ([`crate::fusion`]). `None` when not proved.
    #[serde(default)]
    pub reach: Option<u32>,
    /// An image kernel: a library one ([`crate::library::GridShape`]), whose invocations share nothing, or one
    /// the image-neighbourhood proof found ([`crate::wgsl::grid`]). When its reach on the image is known, a
    /// chain of such kernels fuses by 2-D overlapped tiling. `None` for every other kernel.
    #[serde(default)]
    pub grid: Option<GridDesc>,
    /// Left alone by the fusion pass (`#[no_fusion]` on the node or its graph).
    pub no_fusion: bool,
    /// Values of the kernel's WGSL `override` constants, each a size program over buffer lengths (no
    /// parameters), evaluated when the graph is baked and at each update.
    #[serde(default)]
    pub overrides: List<OverrideDesc>,
}

/// One `override` constant's value ([`KernelDesc::overrides`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverrideDesc {
    /// What the pipeline's constants name it by: its `@id`, or its name.
    pub key: Text,
    pub value: SizeDesc,
}

/// An image kernel ([`KernelDesc::grid`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridDesc {
    /// How far it reads: pixels at most `reach[0]` columns and `reach[1]` rows from its own, clamped into the
    /// image; `None` when an argument it depends on is not a literal (a parameter's value is not known when
    /// the graph is fused).
    pub reach: Option<[u32; 2]>,
    /// A kernel of the user's that the proof found position-free: the parameters it reads the image's width
    /// and height from (`params.NAME`), which a tiled group replaces with its arrays' sizes in its code, to
    /// run it in the tile's coordinates. `None` for a library kernel, sized by its `width` and `height`
    /// arguments, run in the tile's coordinates too ([`crate::stencil_kernel`]).
    #[serde(default)]
    pub image: Option<[Cow<'static, str>; 2]>,
}

impl KernelDesc {
    /// Whether this is the built-in fill (its code is [`crate::fill`]'s): its extent is its buffer or its
    /// range, one invocation per element, never a dispatch size of its own.
    pub fn is_fill(&self) -> bool {
        *self.source == *crate::fill::WGSL || *self.source == *crate::fill::RANGE_WGSL
    }
}

/// A kernel's place in a group of alternatives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlternativeDesc {
    pub group: Text,
    /// Its position among the group's choices; choice 0 is active after bake.
    pub choice: u32,
}

/// `start..end` in elements of a buffer, as programs over buffer lengths and literals, evaluated at bake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeDesc {
    pub start: SizeDesc,
    pub end: SizeDesc,
}

impl RangeDesc {
    /// Whether this is all of buffer `buffer`: `0..buffer.len()`.
    pub fn is_whole(&self, buffer: u32) -> bool {
        *self.start.steps == [SizeStep::Literal(0)] && *self.end.steps == [SizeStep::Len(buffer)]
    }
}

/// A library kernel's argument, as the function the kernel calls for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelArgDesc {
    pub name: Text,
    /// The WGSL type the library declares.
    pub ty: Text,
    /// The WGSL value the graph gives.
    pub value: Text,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DispatchDesc {
    /// One invocation per element of this buffer.
    BufferLen(u32),
    /// Invocations per dimension, rounded up to whole workgroups.
    Threads([SizeDesc; 3]),
    /// Workgroups per dimension.
    Workgroups([SizeDesc; 3]),
    /// Workgroups per dimension read by the GPU from the first three `u32`s of this buffer.
    Indirect(u32),
}

/// One dimension of a dispatch size: a postfix program over the parameters and buffer lengths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeDesc {
    /// The expression as the user wrote it, for messages.
    pub text: Text,
    pub steps: List<SizeStep>,
}

impl SizeDesc {
    /// A dimension the user did not give.
    pub const ONE: SizeDesc = SizeDesc {
        text: Cow::Borrowed("1"),
        steps: Cow::Borrowed(&[SizeStep::Literal(1)]),
    };

    /// `name.len().div_ceil(divisor)`, `name` the buffer at index `buffer`.
    pub fn len_div_ceil(buffer: u32, name: &str, divisor: u32) -> SizeDesc {
        SizeDesc {
            text: format!("{name}.len().div_ceil({divisor})").into(),
            steps: vec![
                SizeStep::Len(buffer),
                SizeStep::Literal(divisor),
                SizeStep::Op(crate::size::SizeOp::DivCeil),
            ]
            .into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PartitionDesc {
    Gpu { levels: List<List<u32>> },
    Host { nodes: List<u32> },
}

impl KernelDesc {
    /// The complete WGSL module for this kernel with parameters in `storage`.
    pub fn compose(&self, params: &ParamsDesc, storage: ParamsStorage) -> String {
        let mut module = self.compose_body(params);
        module.push_str(crate::wgsl::params_declaration(
            storage,
            !params.wgsl_struct.is_empty(),
        ));
        module
    }

    /// The kernel's module without the parameter variable: the same for every parameter storage, so a
    /// runtime composes it once and appends the one line [`crate::wgsl::params_declaration`] gives for the
    /// storage each of its pipelines reads (WGSL declarations may come in any order).
    pub fn compose_body(&self, params: &ParamsDesc) -> String {
        let args: Vec<(&str, &str, &str)> = self
            .args
            .iter()
            .map(|a| (&*a.name, &*a.ty, &*a.value))
            .collect();
        let f16_params: Vec<(&str, ValueType)> = params
            .fields
            .iter()
            .filter(|f| f.ty.is_f16())
            .map(|f| (&*f.name, f.ty))
            .collect();
        crate::wgsl::compose(
            &self.declarations,
            &params.wgsl_struct,
            &f16_params,
            None,
            &args,
            &self.source,
        )
        .source
    }
}

/// The largest parameter block a description may declare: WebGPU's default limit on a uniform buffer
/// binding, which every backend offers (the checks hold push constants to 128 bytes, and a
/// `#[uniform_params]` block to this).
pub const MAX_PARAMS_BYTES: u32 = 64 * 1024;

/// Why a description cannot be baked: one that did not come from the checks (a hand-written `TaskGraph`)
/// and breaks an invariant they guarantee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidDescription(pub String);

impl std::fmt::Display for InvalidDescription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidDescription {}

macro_rules! ensure {
    ($cond:expr, $($why:tt)*) => {
        if !$cond {
            return Err(InvalidDescription(format!($($why)*)));
        }
    };
}

impl GraphDesc {
    /// What makes the graph need a device with `SHADER_F16`: its first buffer of `f16` elements, else its
    /// first kernel whose module enables `f16`; `None` when nothing does. (A subgraph's child counts once
    /// flattened.)
    pub fn needs_f16(&self) -> Option<String> {
        if let Some(b) = self
            .buffers
            .iter()
            .find(|b| b.texture.is_none() && b.sampler.is_none() && b.elem.is_f16())
        {
            return Some(format!("buffer `{}` holds `{}`", b.name, b.elem));
        }
        if let Some(f) = self.params.fields.iter().find(|f| f.ty.is_f16()) {
            return Some(format!("parameter `{}` is `{}`", f.name, f.ty));
        }
        self.nodes.iter().find_map(|n| match &n.op {
            OpDesc::Kernel(k)
                if k.declarations.contains("enable f16") || k.source.contains("enable f16") =>
            {
                Some(format!("kernel `{}` enables `f16`", n.name))
            }
            _ => None,
        })
    }

    /// Checks every index and every invariant the runtime relies on, so that baking a description that did
    /// not come from the checks is an error rather than a panic or a wrong schedule. `params_size` is the size
    /// of the Rust parameter block that goes with it.
    pub fn validate(&self, params_size: usize) -> Result<(), InvalidDescription> {
        self.validate_params(params_size)?;
        let buffers = self.buffers.len();
        for b in self.buffers.iter() {
            if let Some(text) = &b.sampler {
                crate::texture::SamplerType::parse(text).map_err(|e| {
                    InvalidDescription(format!("sampler `{}` is `{text}`: {e}", b.name))
                })?;
                ensure!(
                    b.role == Role::Owned
                        && b.len.is_none()
                        && b.texture.is_none()
                        && b.texture_size.is_none()
                        && b.elem == crate::types::ValueType::U32,
                    "sampler `{}` must be graph-owned, with no length, no texture and a `u32` for its elements",
                    b.name
                );
                continue;
            }
            ensure!(
                b.role.is_external() || b.len.is_some() || b.texture.is_some(),
                "graph-owned buffer `{}` has no length",
                b.name
            );
            ensure!(b.len != Some(0), "buffer `{}` has length 0", b.name);
            if let Some(text) = &b.texture {
                let texture = crate::texture::TextureType::parse(text).map_err(|e| {
                    InvalidDescription(format!("texture `{}` is `{text}`: {e}", b.name))
                })?;
                ensure!(
                    b.len.is_none() && b.elem == texture.texel_type(),
                    "texture `{}` must have no length and texels `{}`",
                    b.name,
                    texture.texel_type()
                );
                ensure!(
                    b.role.is_external() || b.texture_size.is_some(),
                    "graph-owned texture `{}` has no size",
                    b.name
                );
            } else {
                ensure!(
                    b.texture_size.is_none(),
                    "buffer `{}` has a texture's size",
                    b.name
                );
            }
        }
        self.validate_texture_sizes()?;
        for (i, node) in self.nodes.iter().enumerate() {
            self.validate_op(i, node, buffers)?;
            self.validate_texture_uses(i, node)?;
        }
        let nodes = self.nodes.len();
        for &EdgeDesc { from, to, origin } in self.edges.iter() {
            if let EdgeOriginDesc::Inferred { buffer, .. } = origin {
                ensure!(
                    (buffer as usize) < buffers,
                    "edge {from} -> {to} is inferred from buffer {buffer} of {buffers}"
                );
            }
            ensure!(
                (from as usize) < nodes && (to as usize) < nodes && from != to,
                "edge {from} -> {to} does not join two nodes of the {nodes}"
            );
        }
        let position = once_each(&self.topological_order, nodes, "the topological order")?;
        for &EdgeDesc { from, to, .. } in self.edges.iter() {
            ensure!(
                position[from as usize] < position[to as usize],
                "the topological order puts node {to} before node {from}, which it depends on"
            );
        }
        let level = once_each_in_groups(self.levels.iter().map(|l| &**l), nodes, "the levels")?;
        for &EdgeDesc { from, to, .. } in self.edges.iter() {
            ensure!(
                level[from as usize] < level[to as usize],
                "node {to} is not in a later level than node {from}, which it depends on"
            );
        }
        self.validate_partitions(nodes)?;
        self.validate_blocks(nodes, buffers)
    }

    /// Each block gates with a `u32` buffer, runs at least once, and holds kernels of one block only.
    fn validate_blocks(&self, nodes: usize, buffers: usize) -> Result<(), InvalidDescription> {
        let mut owner = vec![None; nodes];
        for (b, block) in self.blocks.iter().enumerate() {
            ensure!(
                block.count >= 1,
                "block `{}` runs {} times",
                block.name,
                block.count
            );
            if let Some(flag) = block.flag {
                ensure!(
                    (flag as usize) < buffers
                        && self.buffers[flag as usize].elem == crate::types::ValueType::U32,
                    "block `{}` is gated by buffer {flag}, which is no `u32` buffer",
                    block.name
                );
            }
            let branched = !block.branches.is_empty() || block.cases.is_some();
            ensure!(
                block.branches.is_empty() || block.branches.len() == block.nodes.len(),
                "block `{}` gives {} branches for {} nodes",
                block.name,
                block.branches.len(),
                block.nodes.len()
            );
            ensure!(
                !branched || (block.count == 1 && block.flag.is_some()),
                "block `{}` has branches but is no `if` or `switch`",
                block.name
            );
            let last = block.cases.as_ref().map_or(1, |c| c.len() as u32);
            ensure!(
                block.branches.iter().all(|&b| b <= last),
                "block `{}` has a branch past its last ({last})",
                block.name
            );
            if let Some(cases) = &block.cases {
                ensure!(
                    cases.len() <= crate::check::MAX_ARMS,
                    "block `{}` has {} arms",
                    block.name,
                    cases.len()
                );
                for (i, v) in cases.iter().enumerate() {
                    ensure!(
                        !cases[..i].contains(v),
                        "block `{}` has two arms for {v}",
                        block.name
                    );
                }
            }
            for &n in block.nodes.iter() {
                let slot = owner.get_mut(n as usize);
                ensure!(
                    slot.as_ref().is_some_and(|s| s.is_none()),
                    "node {n} is in block `{}` and another, or out of range",
                    block.name
                );
                ensure!(
                    matches!(
                        self.nodes[n as usize].op,
                        OpDesc::Kernel(_) | OpDesc::Copy { .. } | OpDesc::Subgraph { .. }
                    ),
                    "block `{}` holds node `{}`, which is no kernel, copy or subgraph of them",
                    block.name,
                    self.nodes[n as usize].name
                );
                if let Some(slot) = slot {
                    *slot = Some(b);
                }
            }
        }
        Ok(())
    }

    fn validate_params(&self, params_size: usize) -> Result<(), InvalidDescription> {
        let size = self.params.size;
        ensure!(
            size.is_multiple_of(4) && size <= MAX_PARAMS_BYTES,
            "the parameter block is {size} bytes; a block is a multiple of 4 bytes, at most {MAX_PARAMS_BYTES}"
        );
        ensure!(
            size as usize == params_size,
            "the parameter block is {size} bytes, but its Rust type is {params_size}"
        );
        for f in self.params.fields.iter() {
            ensure!(
                f.offset % 4 == 0
                    && f.offset
                        .checked_add(f.ty.in_params().size())
                        .is_some_and(|end| end <= size),
                "parameter `{}` at byte {} does not fit the {size}-byte block",
                f.name,
                f.offset
            );
        }
        Ok(())
    }

    /// Every texture size is at least a texel along each dimension, or another texture's of the same
    /// dimension, whose sizes lead to texels or to an external texture without going round.
    fn validate_texture_sizes(&self) -> Result<(), InvalidDescription> {
        for b in self.buffers.iter() {
            let mut at = b;
            let mut steps = 0;
            while let Some(TextureSizeDesc::Like(next)) = at.texture_size {
                let next = self.buffers.get(next as usize);
                let same_dim = |n: &BufferDesc| {
                    n.texture.is_some()
                        && n.texture_type().map(|t| t.dim) == at.texture_type().map(|t| t.dim)
                };
                let Some(next) = next.filter(|n| same_dim(n)) else {
                    return Err(InvalidDescription(format!(
                        "texture `{}` is sized like no texture of its dimension",
                        at.name
                    )));
                };
                at = next;
                steps += 1;
                // A chain longer than the buffers goes round.
                ensure!(
                    steps <= self.buffers.len(),
                    "texture `{}` is sized by itself, through other textures",
                    b.name
                );
            }
            match at.texture_size {
                Some(TextureSizeDesc::Texels(texels)) => {
                    ensure!(
                        !texels.contains(&0),
                        "texture `{}` has a size of 0",
                        at.name
                    )
                }
                Some(TextureSizeDesc::Params(axes)) => {
                    ensure!(
                        at.role == Role::Owned,
                        "texture `{}` is bound from outside, and sized by parameters",
                        at.name
                    );
                    let count = at.texture_type().map_or(3, |t| t.dim.extent_count());
                    for (axis, size) in axes.iter().enumerate() {
                        match *size {
                            AxisSizeDesc::Texels(n) => ensure!(
                                n != 0 && (axis < count || n == 1),
                                "texture `{}` has a size of {n} along axis {axis}",
                                at.name
                            ),
                            AxisSizeDesc::Param(offset) => ensure!(
                                axis < count && self.u32_param_at(offset),
                                "texture `{}` is sized along axis {axis} by byte {offset} of the parameters, \
                                 which is no `u32` of its size",
                                at.name
                            ),
                        }
                    }
                }
                _ => ensure!(
                    at.texture.is_none() || at.role.is_external(),
                    "texture `{}` is sized by graph-owned texture `{}`, which has no size",
                    b.name,
                    at.name
                ),
            }
        }
        Ok(())
    }

    /// Kernels bind textures, none sized by a texture's length (it has none); copies, uploads and readbacks
    /// move whole textures, outside blocks; host and interop tasks get them; subgraphs bind them.
    fn validate_texture_uses(
        &self,
        index: usize,
        node: &NodeDesc,
    ) -> Result<(), InvalidDescription> {
        let texture = |b: u32| {
            self.buffers
                .get(b as usize)
                .is_some_and(|b| b.texture.is_some())
        };
        let name = &*node.name;
        let in_block = self
            .blocks
            .iter()
            .any(|b| b.nodes.contains(&(index as u32)));
        let moves = |ranges: &[(u32, &RangeDesc)]| -> Result<(), InvalidDescription> {
            for &(b, range) in ranges {
                if texture(b) {
                    ensure!(
                        range.is_whole(b) && !in_block,
                        "{} `{name}` moves part of a texture, or under GPU control",
                        node.op.kind()
                    );
                }
            }
            Ok(())
        };
        match &node.op {
            OpDesc::Kernel(k) => {
                if let DispatchDesc::BufferLen(b) = k.dispatch {
                    ensure!(
                        !texture(b),
                        "kernel `{name}` is sized by a texture's length"
                    );
                }
            }
            OpDesc::Copy {
                src,
                dst,
                src_range,
                dst_range,
            } => moves(&[(*src, src_range), (*dst, dst_range)])?,
            OpDesc::Upload { buffer, range } | OpDesc::Readback { buffer, range } => {
                moves(&[(*buffer, range)])?
            }
            // A host task reads and writes a texture's texels; a subgraph's are checked against the child's
            // textures with the binding (`crate::subgraph`); an interop task gets the wgpu texture.
            OpDesc::Host { .. }
            | OpDesc::Subgraph { .. }
            | OpDesc::Interop { .. }
            | OpDesc::Empty => {}
        }
        self.validate_sampler_uses(node)
    }

    /// Kernels read samplers; nothing else uses one.
    fn validate_sampler_uses(&self, node: &NodeDesc) -> Result<(), InvalidDescription> {
        let sampler = |b: u32| {
            self.buffers
                .get(b as usize)
                .is_some_and(|b| b.sampler.is_some())
        };
        let used: Vec<(u32, Option<AccessMode>)> = match &node.op {
            OpDesc::Kernel(k) => k
                .bindings
                .iter()
                .map(|b| (b.buffer, Some(b.mode)))
                .collect(),
            OpDesc::Copy { src, dst, .. } => vec![(*src, None), (*dst, None)],
            OpDesc::Upload { buffer, .. } | OpDesc::Readback { buffer, .. } => {
                vec![(*buffer, None)]
            }
            OpDesc::Host { accesses } | OpDesc::Interop { accesses } => {
                accesses.iter().map(|a| (a.buffer, None)).collect()
            }
            OpDesc::Subgraph { bindings, .. } => {
                bindings.iter().map(|b| (b.buffer, None)).collect()
            }
            OpDesc::Empty => Vec::new(),
        };
        ensure!(
            used.into_iter()
                .all(|(b, mode)| !sampler(b) || mode == Some(AccessMode::Read)),
            "{} `{}` uses a sampler, which only kernels may, reading it",
            node.op.kind(),
            node.name
        );
        Ok(())
    }

    fn validate_op(
        &self,
        index: usize,
        node: &NodeDesc,
        buffers: usize,
    ) -> Result<(), InvalidDescription> {
        let name = &*node.name;
        let in_range = |b: u32| (b as usize) < buffers;
        match &node.op {
            OpDesc::Kernel(k) => {
                for (i, a) in k.bindings.iter().enumerate() {
                    ensure!(
                        in_range(a.buffer),
                        "kernel `{name}` binds buffer {} of {buffers}",
                        a.buffer
                    );
                    ensure!(
                        !k.bindings[..i].iter().any(|b| b.buffer == a.buffer),
                        "kernel `{name}` binds buffer `{}` twice",
                        self.buffers[a.buffer as usize].name
                    );
                }
                ensure!(!k.entry.is_empty(), "kernel `{name}` has no entry point");
                for (i, o) in k.overrides.iter().enumerate() {
                    ensure!(
                        !o.key.is_empty() && !k.overrides[..i].iter().any(|p| p.key == o.key),
                        "kernel `{name}` gives override `{}` no name, or twice",
                        o.key
                    );
                    self.validate_fixed_size(name, &o.value, buffers)?;
                }
                if let Some(range) = &k.range {
                    ensure!(
                        !k.bindings.is_empty(),
                        "kernel `{name}` fills a range of no buffer"
                    );
                    self.validate_range(name, range, buffers)?;
                    self.validate_words(name, k.bindings[0].buffer, range)?;
                }
                match &k.dispatch {
                    &DispatchDesc::BufferLen(b) => {
                        ensure!(
                            in_range(b),
                            "kernel `{name}` is sized by buffer {b} of {buffers}"
                        )
                    }
                    DispatchDesc::Threads(dims) | DispatchDesc::Workgroups(dims) => {
                        for dim in dims {
                            self.validate_size(name, dim, buffers)?;
                        }
                    }
                    &DispatchDesc::Indirect(b) => {
                        ensure!(
                            in_range(b)
                                && self.buffers[b as usize].elem == crate::types::ValueType::U32,
                            "kernel `{name}` reads its workgroup counts from buffer {b}, which is no `u32` buffer"
                        )
                    }
                }
            }
            OpDesc::Copy {
                src,
                dst,
                src_range,
                dst_range,
            } => {
                let (src, dst) = (*src, *dst);
                ensure!(
                    in_range(src) && in_range(dst) && src != dst,
                    "copy `{name}` joins buffers {src} and {dst} of {buffers}"
                );
                self.validate_range(name, src_range, buffers)?;
                self.validate_range(name, dst_range, buffers)?;
                self.validate_words(name, src, src_range)?;
                self.validate_words(name, dst, dst_range)?;
                let (s, d) = (&self.buffers[src as usize], &self.buffers[dst as usize]);
                // A texture's copy moves texels or bytes: the runtime checks its sizes at bake.
                ensure!(
                    s.elem == d.elem || s.texture.is_some() || d.texture.is_some(),
                    "copy `{name}` moves `{}` into `{}`",
                    s.elem,
                    d.elem
                );
            }
            OpDesc::Upload { buffer, range } | OpDesc::Readback { buffer, range } => {
                ensure!(
                    in_range(*buffer),
                    "`{name}` moves buffer {buffer} of {buffers}"
                );
                self.validate_range(name, range, buffers)?;
                self.validate_words(name, *buffer, range)?;
            }
            OpDesc::Host { accesses } | OpDesc::Interop { accesses } => {
                for a in accesses.iter() {
                    ensure!(
                        in_range(a.buffer),
                        "host task `{name}` uses buffer {} of {buffers}",
                        a.buffer
                    );
                }
            }
            OpDesc::Empty => {}
            OpDesc::Subgraph {
                graph, bindings, ..
            } => {
                graph.validate(graph.params.size as usize).map_err(|e| {
                    InvalidDescription(format!(
                        "subgraph `{name}`'s graph `{}`: {}",
                        graph.name, e.0
                    ))
                })?;
                for b in bindings.iter() {
                    ensure!(
                        in_range(b.buffer),
                        "subgraph `{name}` binds buffer {} of {buffers}",
                        b.buffer
                    );
                }
                let index = index as u32;
                for b in 0..bindings.len() as u32 {
                    crate::subgraph::check_described_binding(self, index, b)
                        .map_err(|m| InvalidDescription(m.to_string()))?;
                }
                crate::subgraph::check_described_node(self, index)
                    .map_err(|m| InvalidDescription(m.to_string()))?;
            }
        }
        Ok(())
    }

    /// A range reads no parameter: it is evaluated once, at bake.
    /// A range of a buffer whose elements are smaller than a word (`u8`, `u16`, `f16`) is the whole buffer:
    /// the GPU copies and fills whole words (the checks refuse the rest).
    fn validate_words(
        &self,
        name: &str,
        buffer: u32,
        range: &RangeDesc,
    ) -> Result<(), InvalidDescription> {
        let Some(b) = self.buffers.get(buffer as usize) else {
            return Ok(());
        };
        ensure!(
            b.texture.is_some() || b.elem.size() % 4 == 0 || range.is_whole(buffer),
            "`{name}` moves a range of `{}`, whose `{}` elements are smaller than a word",
            b.name,
            b.elem
        );
        Ok(())
    }

    fn validate_range(
        &self,
        node: &str,
        range: &RangeDesc,
        buffers: usize,
    ) -> Result<(), InvalidDescription> {
        // A texture's whole range (`validate_texture_uses` allows no other) reads its length, which it has
        // none of: the runtime moves the whole texture instead.
        let texture_whole = self
            .buffers
            .iter()
            .enumerate()
            .any(|(b, desc)| desc.texture.is_some() && range.is_whole(b as u32));
        if texture_whole {
            return Ok(());
        }
        for bound in [&range.start, &range.end] {
            self.validate_fixed_size(node, bound, buffers)?;
        }
        Ok(())
    }

    /// A size fixed at bake (a range's bound, an override's value): well formed, over existing buffers, and
    /// reading no parameter.
    fn validate_fixed_size(
        &self,
        node: &str,
        bound: &SizeDesc,
        buffers: usize,
    ) -> Result<(), InvalidDescription> {
        {
            self.validate_size(node, bound, buffers)?;
            ensure!(
                !bound.steps.iter().any(|s| matches!(s, SizeStep::Param(_))),
                "the size `{}` of `{node}` reads a parameter, but it is fixed at bake",
                bound.text
            );
        }
        Ok(())
    }

    /// Whether the parameter block holds a `u32` (a field or a component of one) at byte `offset`.
    fn u32_param_at(&self, offset: u32) -> bool {
        self.params.fields.iter().any(|f| {
            f.ty.scalar == crate::types::Scalar::U32
                && offset >= f.offset
                && offset < f.offset + f.ty.in_params().size()
                && (offset - f.offset).is_multiple_of(4)
        })
    }

    /// A size program is one well-formed expression that fits the evaluation stack and reads only `u32`
    /// parameters and existing buffers.
    fn validate_size(
        &self,
        node: &str,
        size: &SizeDesc,
        buffers: usize,
    ) -> Result<(), InvalidDescription> {
        let depth = crate::size::stack_depth(&size.steps);
        ensure!(
            depth.is_some_and(|d| d <= crate::size::MAX_STACK),
            "the size `{}` of `{node}` is not a well-formed expression",
            size.text
        );
        for step in size.steps.iter() {
            match *step {
                SizeStep::Param(offset) => {
                    ensure!(
                        self.u32_param_at(offset),
                        "the size `{}` of `{node}` reads byte {offset} of the parameters, which is no `u32`",
                        size.text
                    );
                }
                SizeStep::Len(b) => ensure!(
                    (b as usize) < buffers && self.buffers[b as usize].texture.is_none(),
                    "the size `{}` of `{node}` reads the length of buffer {b} of {buffers}, which is none \
                     or a texture",
                    size.text
                ),
                SizeStep::Extent { texture, axis } => {
                    let dim = self
                        .buffers
                        .get(texture as usize)
                        .and_then(BufferDesc::texture_type)
                        .map(|t| t.dim);
                    ensure!(
                        dim.is_some_and(|d| crate::texture::has_axis(d, axis)),
                        "the size `{}` of `{node}` reads the {} of buffer {texture} of {buffers}, which is no \
                         texture that has one",
                        size.text,
                        axis.method()
                    )
                }
                SizeStep::Literal(_) | SizeStep::Op(_) => {}
            }
        }
        Ok(())
    }

    /// This description with the size each texture in `extents` has (width, height, and layers or depth;
    /// `None` where it is not known) written in place of every dispatch size's read of it: what bake does
    /// once the textures are bound, since a texture's size only changes with a rebind, which bakes again.
    pub fn with_texture_extents(&self, extents: &[Option<[u32; 3]>]) -> Cow<'_, GraphDesc> {
        let reads = |size: &SizeDesc| {
            size.steps
                .iter()
                .any(|s| matches!(s, SizeStep::Extent { .. }))
        };
        let dims = |d: &DispatchDesc| match d {
            DispatchDesc::Threads(dims) | DispatchDesc::Workgroups(dims) => dims.iter().any(reads),
            _ => false,
        };
        let any = self
            .nodes
            .iter()
            .any(|n| matches!(&n.op, OpDesc::Kernel(k) if dims(&k.dispatch)));
        if !any {
            return Cow::Borrowed(self);
        }
        let substitute = |size: &SizeDesc| {
            let steps: Vec<SizeStep> = size
                .steps
                .iter()
                .map(|&step| match step {
                    SizeStep::Extent { texture, axis } => extents
                        .get(texture as usize)
                        .copied()
                        .flatten()
                        .map_or(step, |e| SizeStep::Literal(e[axis.index()])),
                    other => other,
                })
                .collect();
            SizeDesc {
                text: size.text.clone(),
                steps: steps.into(),
            }
        };
        let mut desc = self.clone();
        for node in desc.nodes.to_mut() {
            if let OpDesc::Kernel(k) = &mut node.op
                && let DispatchDesc::Threads(dims) | DispatchDesc::Workgroups(dims) =
                    &mut k.dispatch
            {
                *dims = dims.clone().map(|d| substitute(&d));
            }
        }
        Cow::Owned(desc)
    }

    /// Every node in exactly one partition of its kind, and no edge that runs backwards across or within them.
    fn validate_partitions(&self, nodes: usize) -> Result<(), InvalidDescription> {
        let mut place = vec![None; nodes];
        for (p, partition) in self.partitions.iter().enumerate() {
            let groups: Vec<&[u32]> = match partition {
                PartitionDesc::Gpu { levels } => levels.iter().map(|l| &**l).collect(),
                // A host phase runs its tasks one after another: each is its own step.
                PartitionDesc::Host { nodes } => nodes.chunks(1).collect(),
            };
            for (step, group) in groups.iter().enumerate() {
                for &n in *group {
                    let slot = place.get_mut(n as usize);
                    ensure!(
                        slot.as_ref().is_some_and(|s| s.is_none()),
                        "node {n} is not in exactly one partition"
                    );
                    let is_host = matches!(self.nodes[n as usize].op, OpDesc::Host { .. });
                    ensure!(
                        is_host == matches!(partition, PartitionDesc::Host { .. }),
                        "node `{}` is in a partition of the other kind",
                        self.nodes[n as usize].name
                    );
                    if let Some(slot) = slot {
                        *slot = Some((p, step));
                    }
                }
            }
        }
        let place: Vec<(usize, usize)> = place
            .into_iter()
            .enumerate()
            .map(|(n, p)| {
                p.ok_or_else(|| InvalidDescription(format!("node {n} is in no partition")))
            })
            .collect::<Result<_, _>>()?;
        for &EdgeDesc { from, to, .. } in self.edges.iter() {
            ensure!(
                place[from as usize] < place[to as usize],
                "the partitions run node {to} before node {from}, which it depends on"
            );
        }
        Ok(())
    }
}

/// The position of each of `0..count` in `order`, which must hold each exactly once.
fn once_each(order: &[u32], count: usize, what: &str) -> Result<Vec<usize>, InvalidDescription> {
    once_each_in_groups(order.chunks(1), count, what)
}

/// The group of each of `0..count` across `groups`, which must hold each exactly once.
fn once_each_in_groups<'a>(
    groups: impl Iterator<Item = &'a [u32]>,
    count: usize,
    what: &str,
) -> Result<Vec<usize>, InvalidDescription> {
    let mut found = vec![usize::MAX; count];
    for (g, group) in groups.enumerate() {
        for &n in group {
            let slot = found.get_mut(n as usize);
            ensure!(
                slot.as_ref().is_some_and(|s| **s == usize::MAX),
                "{what} must hold each node once, but node {n} is repeated or out of range"
            );
            if let Some(slot) = slot {
                *slot = g;
            }
        }
    }
    if let Some(missing) = found.iter().position(|&g| g == usize::MAX) {
        return Err(InvalidDescription(format!(
            "{what} must hold each node once, but leave out node {missing}"
        )));
    }
    Ok(found)
}

// ---------------------------------------------------------------------------------------------------------
// Descriptions written as data. The `graph!` macro writes a description as a Rust constant; for a graph of
// thousands of nodes, thousands of struct, enum and borrow expressions cost the compiler seconds to check,
// where arrays of plain values and one call of these functions, evaluated where the constant is, cost little.

/// `lists` consecutive slices of `flat`, the `i`-th `lens[i]` long: `[&[a], &[b, c]]` from `&[a, b, c]`
/// and `&[1, 2]`. Panics (a compile error in a constant) when `flat` is shorter than the lengths add up to.
pub const fn split_lists<T, const N: usize>(
    flat: &'static [T],
    lens: &[u32; N],
) -> [&'static [T]; N] {
    let mut lists: [&'static [T]; N] = [&[]; N];
    let mut rest = flat;
    let mut i = 0;
    while i < N {
        let (head, tail) = rest.split_at(lens[i] as usize);
        lists[i] = head;
        rest = tail;
        i += 1;
    }
    lists
}

/// The items of `from` at positions `at`, in that order. Panics (a compile error in a constant) at a
/// position past `from`'s end, and on an empty `from`: an empty list is written as `[]`.
pub const fn pick<T: Copy, const N: usize, const M: usize>(
    from: &[T; N],
    at: [usize; M],
) -> [T; M] {
    let mut picked = [from[0]; M];
    let mut i = 0;
    while i < M {
        picked[i] = from[at[i]];
        i += 1;
    }
    picked
}

/// [`split_lists`], each list a borrowed [`List`], as a description holds its levels.
pub const fn split_cow_lists<const N: usize>(
    flat: &'static [u32],
    lens: &[u32; N],
) -> [List<u32>; N] {
    const EMPTY: List<u32> = Cow::Borrowed(&[]);
    let slices = split_lists(flat, lens);
    let mut lists = [EMPTY; N];
    let mut i = 0;
    while i < N {
        // Each place holds a borrowed empty list: nothing to drop, which a constant could not.
        std::mem::forget(std::mem::replace(&mut lists[i], Cow::Borrowed(slices[i])));
        i += 1;
    }
    lists
}

/// The nodes named `names[i]` doing `ops[i]`.
pub const fn nodes_from<const N: usize>(
    names: [&'static str; N],
    ops: [OpDesc; N],
) -> [NodeDesc; N] {
    const EMPTY: NodeDesc = NodeDesc {
        name: Cow::Borrowed(""),
        op: OpDesc::Empty,
        on: None,
    };
    let mut ops = ops;
    let mut nodes = [EMPTY; N];
    let mut i = 0;
    while i < N {
        let op = std::mem::replace(&mut ops[i], OpDesc::Empty);
        let node = NodeDesc {
            name: Cow::Borrowed(names[i]),
            op,
            on: None,
        };
        // What is replaced is `EMPTY`, which owns nothing.
        std::mem::forget(std::mem::replace(&mut nodes[i], node));
        i += 1;
    }
    // Every op was taken, leaving `OpDesc::Empty`s, which own nothing.
    std::mem::forget(ops);
    nodes
}

/// `nodes` with each `(node, gpu)` of `placed` placed on its GPU ([`NodeDesc::on`]): the generated description
/// of a graph with `#[on(..)]` items, so a graph without them costs the compiler nothing more.
pub const fn placed<const N: usize>(
    mut nodes: [NodeDesc; N],
    placed: &[(u32, u32)],
) -> [NodeDesc; N] {
    let mut i = 0;
    while i < placed.len() {
        nodes[placed[i].0 as usize].on = Some(placed[i].1);
        i += 1;
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of edge comes back from its words as it was, inside a constant too.
    #[test]
    fn edges_survive_their_words() {
        let edges = [
            EdgeDesc {
                from: 0,
                to: 1,
                origin: EdgeOriginDesc::Explicit,
            },
            EdgeDesc {
                from: 1,
                to: 7,
                origin: EdgeOriginDesc::Leaf,
            },
            EdgeDesc {
                from: 2,
                to: 3,
                origin: EdgeOriginDesc::Inferred {
                    buffer: 5,
                    hazard: Hazard::ReadAfterWrite,
                },
            },
            EdgeDesc {
                from: 3,
                to: 4,
                origin: EdgeOriginDesc::Inferred {
                    buffer: 6,
                    hazard: Hazard::WriteAfterRead,
                },
            },
            EdgeDesc {
                from: 4,
                to: u32::MAX,
                origin: EdgeOriginDesc::Inferred {
                    buffer: u32::MAX,
                    hazard: Hazard::WriteAfterWrite,
                },
            },
        ];
        let words: Vec<[u32; 4]> = edges.iter().map(EdgeDesc::to_words).collect();
        let back: Vec<EdgeDesc> = words.iter().map(|w| EdgeDesc::from_words(*w)).collect();
        assert_eq!(back, edges);
        const IN_A_CONSTANT: [EdgeDesc; 2] = edges_from_words(&[[3, 4, 3, 6], [0, 1, 0, 0]]);
        assert_eq!(IN_A_CONSTANT, [edges[3], edges[0]]);
    }

    /// Lists and nodes written as data come back as the values they stand for, in constants too.
    #[test]
    fn lists_and_nodes_are_rebuilt_from_their_data() {
        const FLAT: [u32; 4] = [7, 8, 9, 10];
        const LISTS: [&[u32]; 3] = split_lists(&FLAT, &[1, 0, 3]);
        assert_eq!(LISTS, [&[7][..], &[][..], &[8, 9, 10][..]]);
        const PICKED: [u32; 3] = pick(&FLAT, [3, 0, 3]);
        assert_eq!(PICKED, [10, 7, 10]);
        const COWS: [List<u32>; 2] = split_cow_lists(&FLAT, &[3, 1]);
        assert_eq!(
            COWS,
            [Cow::Borrowed(&[7, 8, 9][..]), Cow::Borrowed(&[10][..])]
        );
        const NODES: [NodeDesc; 2] = nodes_from(
            ["a", "b"],
            [
                OpDesc::Host {
                    accesses: Cow::Borrowed(&[AccessDesc {
                        buffer: 3,
                        mode: AccessMode::Read,
                    }]),
                },
                OpDesc::Empty,
            ],
        );
        assert_eq!(NODES[0].name, "a");
        assert_eq!(
            NODES[0].op,
            OpDesc::Host {
                accesses: Cow::Borrowed(&[AccessDesc {
                    buffer: 3,
                    mode: AccessMode::Read,
                }]),
            }
        );
        assert_eq!((&*NODES[1].name, &NODES[1].op), ("b", &OpDesc::Empty));
    }

    #[test]
    #[should_panic]
    fn lengths_past_the_flat_list_are_refused() {
        let flat: &'static [u32] = &[1, 2];
        let _ = split_lists(flat, &[1, 2]);
    }

    #[test]
    #[should_panic(expected = "an edge's origin is a number from 0 to 4")]
    fn an_origin_past_four_is_no_edge() {
        let _ = EdgeDesc::from_words([0, 1, 5, 0]);
    }
}
