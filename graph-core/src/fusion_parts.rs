//! What both fusion passes ([`crate::fusion`]'s pointwise groups and [`crate::stencil`]'s tiled ones) make
//! their kernels from: the binding cap, the lengths a description declares, which nodes touch a buffer, a
//! kernel made a member of a fused module, and a fused module validated once per distinct text.

use std::collections::{HashMap, HashSet};

use crate::desc::{AccessDesc, DispatchDesc, GraphDesc, KernelDesc, OpDesc};
use crate::wgsl;

/// The most storage buffers a fused kernel binds on any device: WebGPU's default
/// `maxStorageBuffersPerShaderStage`.
pub const MAX_FUSED_BINDINGS: usize = 8;

/// The buffer lengths a description declares (`None` where the buffer is bound at bake).
pub fn declared_lengths(desc: &GraphDesc) -> Vec<Option<u64>> {
    desc.buffers.iter().map(|b| b.len.map(u64::from)).collect()
}

/// By buffer, the nodes that read or write it (their contents, not only their lengths), each once, in node
/// order: computed once per pass, so asking who touches a buffer does not walk the graph.
pub(crate) fn touchers(desc: &GraphDesc) -> Vec<Vec<u32>> {
    let mut touchers: Vec<Vec<u32>> = vec![Vec::new(); desc.buffers.len()];
    for (n, node) in desc.nodes.iter().enumerate() {
        for b in buffers_of(&node.op) {
            if let Some(list) = touchers.get_mut(b as usize)
                && list.last() != Some(&(n as u32))
            {
                list.push(n as u32);
            }
        }
    }
    touchers
}

/// The buffers `op` reads or writes (their contents, not only their lengths), a buffer perhaps more than once.
fn buffers_of(op: &OpDesc) -> Vec<u32> {
    match op {
        OpDesc::Kernel(k) => {
            let mut buffers: Vec<u32> = k.bindings.iter().map(|a| a.buffer).collect();
            if let DispatchDesc::Indirect(b) = k.dispatch {
                buffers.push(b);
            }
            buffers
        }
        OpDesc::Copy { src, dst, .. } => vec![*src, *dst],
        OpDesc::Upload { buffer, .. } | OpDesc::Readback { buffer, .. } => vec![*buffer],
        OpDesc::Host { accesses } | OpDesc::Interop { accesses } => {
            accesses.iter().map(|a| a.buffer).collect()
        }
        OpDesc::Subgraph { bindings, .. } => bindings.iter().map(|s| s.buffer).collect(),
        OpDesc::Empty => Vec::new(),
    }
}

/// Validates fused `kernel`'s module, unless one of the same text was (groups of one shape make one module,
/// which a bake also compiles once); naga's message otherwise.
pub(crate) fn validate_once(
    kernel: &KernelDesc,
    desc: &GraphDesc,
    validated: &mut HashSet<String>,
) -> Result<(), String> {
    let module = kernel.compose(&desc.params, desc.params.storage);
    if !validated.contains(&module) {
        wgsl::validate(&module).map_err(|e| e.message)?;
        validated.insert(module);
    }
    Ok(())
}

/// Kernel `k` (of node `name`) made the member of a fused module whose code is `source`: its name as a
/// comment and its library arguments as functions appended to `source`, its code renamed apart with
/// `prefix`, each binding `binding` by `bound(binding)`. The caller appends the code.
pub(crate) fn member_of(
    source: &mut String,
    name: &str,
    k: &KernelDesc,
    prefix: &str,
    bound: &dyn Fn(&AccessDesc) -> String,
) -> Result<wgsl::Member, String> {
    let mut renames: HashMap<String, String> = wgsl::binding_names(&k.declarations)
        .into_iter()
        .zip(k.bindings.iter())
        .map(|(binding, b)| (binding, bound(b)))
        .collect();
    if renames.len() != k.bindings.len() {
        return Err(format!(
            "`{name}`'s declarations do not give each of its bindings a name of its own"
        ));
    }
    // The member's code carries no comment with its name: groups of one shape then make one module, which
    // is validated and compiled once (`FusedGroup::names` says which member is which).
    for arg in k.args.iter() {
        let function = format!("{prefix}{}", arg.name);
        source.push_str(&format!(
            "fn {function}() -> {} {{ return {}; }}\n",
            arg.ty, arg.value
        ));
        renames.insert(arg.name.to_string(), function);
    }
    wgsl::member(&k.source, &k.entry, prefix, &renames).ok_or_else(|| {
        format!(
            "`{name}`'s code has a form the renaming does not handle (a directive, an `override`, a name \
             starting with `{}`, or an entry point argument that is not a builtin)",
            wgsl::FUSED_PREFIX
        )
    })
}
