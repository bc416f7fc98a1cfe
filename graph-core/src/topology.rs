//! Whether two descriptions have one topology, for a whole-graph update of a baked graph (SYCL's
//! `update(graph)`, CUDA's `cudaGraphExecUpdate`): the same parameters, buffers, nodes (names, kinds and what
//! they bind) and edges. What may differ is what a node does within that shape: kernel code, arguments and
//! workgroup size, dispatch sizes, copy, fill, upload and readback ranges, fill values.

use crate::desc::{AccessDesc, GraphDesc, OpDesc};

/// The first difference of topology between `baked` and `update`, in words; `None` when they have one.
pub fn topology_difference(baked: &GraphDesc, update: &GraphDesc) -> Option<String> {
    if baked.params != update.params {
        return Some(format!(
            "the parameters differ: {} in the baked graph, {} in the update",
            params_words(baked),
            params_words(update)
        ));
    }
    if baked.buffers.len() != update.buffers.len() {
        return Some(format!(
            "the baked graph has {} buffers, the update {}",
            baked.buffers.len(),
            update.buffers.len()
        ));
    }
    for (i, (a, b)) in baked.buffers.iter().zip(update.buffers.iter()).enumerate() {
        if a != b {
            let words = |b: &crate::desc::BufferDesc| {
                let len = b.len.map_or(String::new(), |n| format!("; {n}"));
                format!("`{}: [{}{len}] = {}`", b.name, b.elem, b.role.keyword())
            };
            return Some(format!(
                "buffer {i} is {} in the baked graph, {} in the update",
                words(a),
                words(b)
            ));
        }
    }
    if baked.nodes.len() != update.nodes.len() {
        return Some(format!(
            "the baked graph has {} nodes, the update {}",
            baked.nodes.len(),
            update.nodes.len()
        ));
    }
    for (i, (a, b)) in baked.nodes.iter().zip(update.nodes.iter()).enumerate() {
        if a.name != b.name {
            return Some(format!(
                "node {i} is `{}` in the baked graph, `{}` in the update",
                a.name, b.name
            ));
        }
        if a.op.kind() != b.op.kind() {
            return Some(format!(
                "node `{}` is a {} in the baked graph, a {} in the update",
                a.name,
                a.op.kind(),
                b.op.kind()
            ));
        }
        if let Some(what) = binding_difference(&a.op, &b.op) {
            return Some(format!("node `{}` {what}", a.name));
        }
    }
    if baked.blocks != update.blocks {
        return Some("its `if`, `switch` and `repeat` blocks differ".to_string());
    }
    let edges = |g: &GraphDesc| {
        let mut pairs: Vec<(u32, u32)> = g.edges.iter().map(|e| (e.from, e.to)).collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    };
    let (ea, eb) = (edges(baked), edges(update));
    let name = |g: &GraphDesc, n: u32| {
        g.nodes
            .get(n as usize)
            .map_or("?".to_string(), |n| n.name.to_string())
    };
    if let Some(&(from, to)) = ea.iter().find(|e| !eb.contains(e)) {
        return Some(format!(
            "the edge `{} -> {}` of the baked graph is not in the update",
            name(baked, from),
            name(baked, to)
        ));
    }
    if let Some(&(from, to)) = eb.iter().find(|e| !ea.contains(e)) {
        return Some(format!(
            "the update has an edge `{} -> {}` the baked graph has not",
            name(update, from),
            name(update, to)
        ));
    }
    None
}

/// What differs in what two nodes of one kind bind, in words after the node's name.
fn binding_difference(a: &OpDesc, b: &OpDesc) -> Option<String> {
    let accesses = |list: &[AccessDesc]| -> Vec<(u32, &'static str)> {
        list.iter().map(|x| (x.buffer, x.mode.keyword())).collect()
    };
    let (left, right) = match (a, b) {
        (OpDesc::Kernel(x), OpDesc::Kernel(y)) => {
            if x.alternative != y.alternative {
                return Some("is a choice of other alternatives in the update".to_string());
            }
            (accesses(&x.bindings), accesses(&y.bindings))
        }
        (OpDesc::Host { accesses: x }, OpDesc::Host { accesses: y })
        | (OpDesc::Interop { accesses: x }, OpDesc::Interop { accesses: y }) => {
            (accesses(x), accesses(y))
        }
        (OpDesc::Copy { src, dst, .. }, OpDesc::Copy { src: s, dst: d, .. }) => (
            vec![(*src, "read"), (*dst, "write")],
            vec![(*s, "read"), (*d, "write")],
        ),
        (OpDesc::Upload { buffer: x, .. }, OpDesc::Upload { buffer: y, .. })
        | (OpDesc::Readback { buffer: x, .. }, OpDesc::Readback { buffer: y, .. }) => {
            (vec![(*x, "")], vec![(*y, "")])
        }
        _ => return None,
    };
    (left != right).then(|| {
        format!("binds buffers {left:?} in the baked graph, {right:?} in the update (buffer index, access)")
    })
}

fn params_words(g: &GraphDesc) -> String {
    let fields: Vec<String> = g
        .params
        .fields
        .iter()
        .map(|f| format!("{}: {}", f.name, f.ty))
        .collect();
    format!("{{ {} }} in {:?}", fields.join(", "), g.params.storage)
}
