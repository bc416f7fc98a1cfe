//! The static description of a checked graph: what `graph!` emits as a `const` and the runtime bakes.
//!
//! Plain data with `'static` slices, so the generated code is a literal the compiler lays out once.

use crate::ir::{AccessMode, ParamsStorage, Role};
use crate::types::ValueType;

/// Computes a dispatch size at replay from the parameter bytes and the bound buffers' lengths (in elements,
/// indexed like [`GraphDesc::buffers`]).
pub type DispatchFn = fn(params: &[u8], buffer_lens: &[u32]) -> [u32; 3];

#[derive(Debug, Clone, Copy)]
pub struct GraphDesc {
    pub name: &'static str,
    pub params: ParamsDesc,
    pub buffers: &'static [BufferDesc],
    pub nodes: &'static [NodeDesc],
    /// Every dependency edge, `[from, to]`, inferred and explicit.
    pub edges: &'static [[u32; 2]],
    pub topological_order: &'static [u32],
    pub levels: &'static [&'static [u32]],
    pub partitions: &'static [PartitionDesc],
}

#[derive(Debug, Clone, Copy)]
pub struct ParamsDesc {
    /// Size of the block in bytes (0: no parameters).
    pub size: u32,
    pub storage: ParamsStorage,
    pub fields: &'static [ParamFieldDesc],
    /// The WGSL struct declaration (`struct GraphParams { .. }`), empty without parameters.
    pub wgsl_struct: &'static str,
}

#[derive(Debug, Clone, Copy)]
pub struct ParamFieldDesc {
    pub name: &'static str,
    pub ty: ValueType,
    pub offset: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct BufferDesc {
    pub name: &'static str,
    pub elem: ValueType,
    /// Required length in elements, when the declaration fixes one.
    pub len: Option<u32>,
    pub role: Role,
}

#[derive(Debug, Clone, Copy)]
pub struct NodeDesc {
    pub name: &'static str,
    pub op: OpDesc,
}

#[derive(Debug, Clone, Copy)]
pub enum OpDesc {
    Kernel(KernelDesc),
    /// All of `src` into the start of `dst`.
    Copy {
        src: u32,
        dst: u32,
    },
    Host {
        accesses: &'static [AccessDesc],
    },
}

#[derive(Debug, Clone, Copy)]
pub struct AccessDesc {
    pub buffer: u32,
    pub mode: AccessMode,
}

#[derive(Debug, Clone, Copy)]
pub struct KernelDesc {
    /// Binding declarations and, for library kernels, argument functions.
    pub declarations: &'static str,
    /// `fn name() -> T { return T(value); }` for each library argument, in order: `(name, type, value)`.
    pub args: &'static [(&'static str, &'static str, &'static str)],
    /// The kernel's own code.
    pub source: &'static str,
    pub entry: &'static str,
    pub workgroup_size: [u32; 3],
    /// Binding `i` of group 0 is `bindings[i]`.
    pub bindings: &'static [AccessDesc],
    pub dispatch: DispatchDesc,
    /// A one-dimensional dispatch past the device limit may be folded into two dimensions (the kernel
    /// indexes as `gid.x + gid.y * num_workgroups.x * workgroup_size.x`).
    pub foldable: bool,
}

#[derive(Debug, Clone, Copy)]
pub enum DispatchDesc {
    /// One invocation per element of this buffer.
    BufferLen(u32),
    /// Invocations per dimension, rounded up to whole workgroups.
    Threads(DispatchFn),
    Workgroups(DispatchFn),
}

#[derive(Debug, Clone, Copy)]
pub enum PartitionDesc {
    Gpu { levels: &'static [&'static [u32]] },
    Host { nodes: &'static [u32] },
}

impl KernelDesc {
    /// The complete WGSL module for this kernel with parameters in `storage`.
    pub fn compose(&self, params: &ParamsDesc, storage: ParamsStorage) -> String {
        crate::wgsl::compose(
            self.declarations,
            params.wgsl_struct,
            storage,
            self.args,
            self.source,
        )
        .source
    }
}
