//! The static description of a checked graph: what `graph!` emits as a `const` and the runtime bakes.
//!
//! Plain data with `'static` slices, so the generated code is a literal the compiler lays out once.

use crate::ir::{AccessMode, ParamsStorage, Role};
use crate::size::SizeStep;
use crate::types::ValueType;

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
    /// All of `src` into `dst`, of the same length.
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
    Threads([SizeDesc; 3]),
    /// Workgroups per dimension.
    Workgroups([SizeDesc; 3]),
}

/// One dimension of a dispatch size: a postfix program over the parameters and buffer lengths.
#[derive(Debug, Clone, Copy)]
pub struct SizeDesc {
    /// The expression as the user wrote it, for messages.
    pub text: &'static str,
    pub steps: &'static [SizeStep],
}

impl SizeDesc {
    /// A dimension the user did not give.
    pub const ONE: SizeDesc = SizeDesc {
        text: "1",
        steps: &[SizeStep::Literal(1)],
    };
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

/// Why a description cannot be baked: one that did not come from the checks (a hand-written `TaskGraph`)
/// and breaks an invariant they guarantee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidDescription(pub String);

impl std::fmt::Display for InvalidDescription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

macro_rules! ensure {
    ($cond:expr, $($why:tt)*) => {
        if !$cond {
            return Err(InvalidDescription(format!($($why)*)));
        }
    };
}

impl GraphDesc {
    /// Checks every index and every invariant the runtime relies on, so that baking a description that did
    /// not come from the checks is an error rather than a panic or a wrong schedule. `params_size` is the size
    /// of the Rust parameter block that goes with it.
    pub fn validate(&self, params_size: usize) -> Result<(), InvalidDescription> {
        self.validate_params(params_size)?;
        let buffers = self.buffers.len();
        for b in self.buffers {
            ensure!(
                b.role.is_external() || b.len.is_some(),
                "graph-owned buffer `{}` has no length",
                b.name
            );
            ensure!(b.len != Some(0), "buffer `{}` has length 0", b.name);
        }
        for node in self.nodes {
            self.validate_op(node, buffers)?;
        }
        let nodes = self.nodes.len();
        for &[from, to] in self.edges {
            ensure!(
                (from as usize) < nodes && (to as usize) < nodes && from != to,
                "edge {from} -> {to} does not join two nodes of the {nodes}"
            );
        }
        let position = once_each(self.topological_order, nodes, "the topological order")?;
        for &[from, to] in self.edges {
            ensure!(
                position[from as usize] < position[to as usize],
                "the topological order puts node {to} before node {from}, which it depends on"
            );
        }
        let level = once_each_in_groups(self.levels.iter().copied(), nodes, "the levels")?;
        for &[from, to] in self.edges {
            ensure!(
                level[from as usize] < level[to as usize],
                "node {to} is not in a later level than node {from}, which it depends on"
            );
        }
        self.validate_partitions(nodes)
    }

    fn validate_params(&self, params_size: usize) -> Result<(), InvalidDescription> {
        let size = self.params.size;
        ensure!(
            size as usize == params_size,
            "the parameter block is {size} bytes, but its Rust type is {params_size}"
        );
        for f in self.params.fields {
            ensure!(
                f.offset % 4 == 0
                    && f.offset
                        .checked_add(f.ty.size())
                        .is_some_and(|end| end <= size),
                "parameter `{}` at byte {} does not fit the {size}-byte block",
                f.name,
                f.offset
            );
        }
        Ok(())
    }

    fn validate_op(&self, node: &NodeDesc, buffers: usize) -> Result<(), InvalidDescription> {
        let name = node.name;
        let in_range = |b: u32| (b as usize) < buffers;
        match node.op {
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
                ensure!(
                    k.workgroup_size.iter().all(|&d| d > 0),
                    "kernel `{name}` has workgroup size {:?}",
                    k.workgroup_size
                );
                ensure!(!k.entry.is_empty(), "kernel `{name}` has no entry point");
                match k.dispatch {
                    DispatchDesc::BufferLen(b) => {
                        ensure!(
                            in_range(b),
                            "kernel `{name}` is sized by buffer {b} of {buffers}"
                        )
                    }
                    DispatchDesc::Threads(dims) | DispatchDesc::Workgroups(dims) => {
                        for dim in &dims {
                            self.validate_size(name, dim, buffers)?;
                        }
                    }
                }
            }
            OpDesc::Copy { src, dst } => {
                ensure!(
                    in_range(src) && in_range(dst) && src != dst,
                    "copy `{name}` joins buffers {src} and {dst} of {buffers}"
                );
                let (s, d) = (&self.buffers[src as usize], &self.buffers[dst as usize]);
                ensure!(
                    s.elem == d.elem,
                    "copy `{name}` moves `{}` into `{}`",
                    s.elem,
                    d.elem
                );
            }
            OpDesc::Host { accesses } => {
                for a in accesses {
                    ensure!(
                        in_range(a.buffer),
                        "host task `{name}` uses buffer {} of {buffers}",
                        a.buffer
                    );
                }
            }
        }
        Ok(())
    }

    /// A size program is one well-formed expression that fits the evaluation stack and reads only `u32`
    /// parameters and existing buffers.
    fn validate_size(
        &self,
        node: &str,
        size: &SizeDesc,
        buffers: usize,
    ) -> Result<(), InvalidDescription> {
        let depth = crate::size::stack_depth(size.steps);
        ensure!(
            depth.is_some_and(|d| d <= crate::size::MAX_STACK),
            "the size `{}` of `{node}` is not a well-formed expression",
            size.text
        );
        for step in size.steps {
            match *step {
                SizeStep::Param(offset) => {
                    let field = self.params.fields.iter().find(|f| {
                        f.ty.scalar == crate::types::Scalar::U32
                            && offset >= f.offset
                            && offset < f.offset + f.ty.size()
                            && (offset - f.offset) % 4 == 0
                    });
                    ensure!(
                        field.is_some(),
                        "the size `{}` of `{node}` reads byte {offset} of the parameters, which is no `u32`",
                        size.text
                    );
                }
                SizeStep::Len(b) => ensure!(
                    (b as usize) < buffers,
                    "the size `{}` of `{node}` reads the length of buffer {b} of {buffers}",
                    size.text
                ),
                SizeStep::Literal(_) | SizeStep::Op(_) => {}
            }
        }
        Ok(())
    }

    /// Every node in exactly one partition of its kind, and no edge that runs backwards across or within them.
    fn validate_partitions(&self, nodes: usize) -> Result<(), InvalidDescription> {
        let mut place = vec![None; nodes];
        for (p, partition) in self.partitions.iter().enumerate() {
            let groups: Vec<&[u32]> = match partition {
                PartitionDesc::Gpu { levels } => levels.to_vec(),
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
        for &[from, to] in self.edges {
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
