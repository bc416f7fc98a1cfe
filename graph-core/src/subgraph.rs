//! A subgraph node's binding, checked against the child's description: one set of `const fn`s, so that the
//! macro checks a `graph!` parent by const evaluation (it cannot see the child's declaration, only the
//! child's generated `DESCRIPTION`) and the builder and graph files check theirs at run time, with the same
//! words.
//!
//! A binding `binding: buffer: mode` gives the child's external buffer `binding` the parent's `buffer`. It
//! fits when the child declares `binding` as an external buffer of the same element type, the mode is the
//! child's role (`input` is `read`, `output` is `write`, `inout` is `read_write`) and declared lengths agree.
//! Every external buffer of the child is bound, and every parameter the child declares is a parameter of the
//! parent with the same name and type: a child reads its parent's parameters by name.

// Const evaluation cannot allocate, so messages are built in a fixed buffer and returned by value, and `Cow`s
// are matched by reference (their `Deref` is not `const`).
#![allow(clippy::result_large_err, clippy::ptr_arg)]

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::desc::{BufferDesc, GraphDesc, List, OpDesc, ParamFieldDesc, SubgraphBinding, Text};
use crate::ir::{AccessMode, Role};
use crate::types::{Scalar, ValueType};

/// The child graphs a builder or a graph file names, by the name its subgraph nodes give.
pub type Subgraphs = BTreeMap<String, Arc<GraphDesc>>;

/// A subgraph node as the checks see it: its name, the child as the parent names it, and the child.
#[derive(Debug, Clone, Copy)]
pub struct SubgraphRef<'a> {
    pub node: &'a str,
    pub path: &'a str,
    pub child: &'a GraphDesc,
}

/// The access a parent declares for a child buffer of role `role`.
pub const fn mode_of(role: Role) -> Option<AccessMode> {
    match role {
        Role::Input => Some(AccessMode::Read),
        Role::Output => Some(AccessMode::Write),
        Role::InOut => Some(AccessMode::ReadWrite),
        Role::Owned => None,
    }
}

/// Checks one binding of `sub` to the parent's buffer `parent`.
pub const fn check_binding(
    sub: SubgraphRef<'_>,
    binding: &SubgraphBinding,
    parent: &BufferDesc,
) -> Result<(), Message> {
    let name = text(&binding.name);
    let Some(child) = find_buffer(sub.child, name) else {
        let m = Message::new()
            .push("subgraph `")
            .push(sub.node)
            .push("` binds `")
            .push(name)
            .push("`, but `")
            .push(sub.path);
        return Err(external_buffers(
            m.push("` has no external buffer of that name"),
            sub.child,
        ));
    };
    if !child.role.is_external() {
        let m = Message::new()
            .push("subgraph `")
            .push(sub.node)
            .push("` binds `")
            .push(name)
            .push("`, which `")
            .push(sub.path)
            .push("` owns");
        return Err(external_buffers(m, sub.child));
    }
    if let Some(m) = texture_mismatch(sub, name, child, parent) {
        return Err(m);
    }
    if !same_type(child.elem, parent.elem) {
        return Err(Message::new()
            .push("subgraph `")
            .push(sub.node)
            .push("` binds `")
            .push(text(&parent.name))
            .push("` (")
            .push(type_name(parent.elem))
            .push(") to `")
            .push(sub.path)
            .push("`'s `")
            .push(name)
            .push("`, which holds ")
            .push(type_name(child.elem)));
    }
    if let Some(wanted) = mode_of(child.role)
        && !same_mode(wanted, binding.mode)
    {
        let what = match child.role {
            Role::Input => "` only reads it (an input)",
            Role::Output => "` writes it without reading it (an output)",
            _ => "` reads and writes it (inout)",
        };
        return Err(Message::new()
            .push("subgraph `")
            .push(sub.node)
            .push("` binds `")
            .push(name)
            .push("` with `")
            .push(binding.mode.keyword())
            .push("`, but `")
            .push(sub.path)
            .push(what)
            .push(": bind it `")
            .push(wanted.keyword())
            .push("`"));
    }
    if let (Some(want), Some(have)) = (child.len, parent.len)
        && want != have
    {
        return Err(Message::new()
            .push("subgraph `")
            .push(sub.node)
            .push("` binds `")
            .push(text(&parent.name))
            .push("` (")
            .push_u32(have)
            .push(" elements) to `")
            .push(sub.path)
            .push("`'s `")
            .push(name)
            .push("`, which holds ")
            .push_u32(want));
    }
    Ok(())
}

/// Why the parent's buffer or texture `parent` cannot be the child's `name` (`child`): a texture binds a
/// texture of exactly its declared type (the child's kernels were composed for that type, and the flattened
/// graph binds the parent's), and a buffer a buffer; two declared sizes in texels must be equal, and a
/// texture sized by parameters binds no texture declared in texels.
const fn texture_mismatch(
    sub: SubgraphRef<'_>,
    name: &str,
    child: &BufferDesc,
    parent: &BufferDesc,
) -> Option<Message> {
    let start = Message::new()
        .push("subgraph `")
        .push(sub.node)
        .push("` binds ");
    match (&child.texture, &parent.texture) {
        (None, None) => None,
        (Some(want), Some(have)) if !same_text(text(want), text(have)) => Some(
            start
                .push("texture `")
                .push(text(&parent.name))
                .push("` (`")
                .push(text(have))
                .push("`) to `")
                .push(sub.path)
                .push("`'s `")
                .push(name)
                .push("`, which is `")
                .push(text(want))
                .push("`"),
        ),
        (Some(_), Some(_)) => match (child.texture_size, parent.texture_size) {
            (
                Some(crate::desc::TextureSizeDesc::Texels(want)),
                Some(crate::desc::TextureSizeDesc::Texels(have)),
            ) if want[0] != have[0] || want[1] != have[1] || want[2] != have[2] => Some(
                start
                    .push("texture `")
                    .push(text(&parent.name))
                    .push("` to `")
                    .push(sub.path)
                    .push("`'s `")
                    .push(name)
                    .push("`, which is declared another size"),
            ),
            // A parameter could give any size: the child's declared one is not promised.
            (
                Some(crate::desc::TextureSizeDesc::Texels(_)),
                Some(crate::desc::TextureSizeDesc::Params(_)),
            ) => Some(
                start
                    .push("texture `")
                    .push(text(&parent.name))
                    .push("`, sized by parameters, to `")
                    .push(sub.path)
                    .push("`'s `")
                    .push(name)
                    .push("`, which is declared a size in texels"),
            ),
            _ => None,
        },
        (Some(want), None) => Some(
            start
                .push("buffer `")
                .push(text(&parent.name))
                .push("` to `")
                .push(sub.path)
                .push("`'s texture `")
                .push(name)
                .push("` (`")
                .push(text(want))
                .push("`)"),
        ),
        (None, Some(have)) => Some(
            start
                .push("texture `")
                .push(text(&parent.name))
                .push("` (`")
                .push(text(have))
                .push("`) to `")
                .push(sub.path)
                .push("`'s buffer `")
                .push(name)
                .push("`"),
        ),
    }
}

/// Checks that every external buffer of the child is bound, and that the parent declares every parameter the
/// child reads, with its type.
pub const fn check_node(
    sub: SubgraphRef<'_>,
    bindings: &[SubgraphBinding],
    params: &[ParamFieldDesc],
) -> Result<(), Message> {
    let buffers = list(&sub.child.buffers);
    let mut b = 0;
    while b < buffers.len() {
        let child = &buffers[b];
        b += 1;
        if !child.role.is_external() {
            continue;
        }
        let mut found = false;
        let mut i = 0;
        while i < bindings.len() {
            found |= same_text(text(&bindings[i].name), text(&child.name));
            i += 1;
        }
        if !found {
            return Err(Message::new()
                .push("subgraph `")
                .push(sub.node)
                .push("` does not bind `")
                .push(sub.path)
                .push("`'s ")
                .push(child.role.keyword())
                .push(" `")
                .push(text(&child.name))
                .push("`: bind it as `")
                .push(text(&child.name))
                .push(": BUFFER: ")
                .push(match mode_of(child.role) {
                    Some(mode) => mode.keyword(),
                    None => "read",
                })
                .push("`"));
        }
    }
    let fields = list(&sub.child.params.fields);
    let mut f = 0;
    while f < fields.len() {
        let wanted = &fields[f];
        f += 1;
        let mut found = None;
        let mut i = 0;
        while i < params.len() {
            if same_text(text(&params[i].name), text(&wanted.name)) {
                found = Some(params[i].ty);
            }
            i += 1;
        }
        let m = Message::new()
            .push("subgraph `")
            .push(sub.node)
            .push("`: `")
            .push(sub.path)
            .push("` reads the parameter `")
            .push(text(&wanted.name))
            .push(": ")
            .push(type_name(wanted.ty))
            .push("`, ");
        match found {
            None => return Err(m.push(
                "which this graph does not declare (a child reads its parent's parameters by name)",
            )),
            Some(ty) if !same_type(ty, wanted.ty) => {
                return Err(m.push("which this graph declares as ").push(type_name(ty)));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The subgraph node `node` of `parent`, for the checks; `None` when it is no subgraph node.
pub const fn subgraph_of(
    parent: &GraphDesc,
    node: u32,
) -> Option<(SubgraphRef<'_>, &[SubgraphBinding])> {
    let nodes = list(&parent.nodes);
    if node as usize >= nodes.len() {
        return None;
    }
    let n = &nodes[node as usize];
    match &n.op {
        OpDesc::Subgraph {
            path,
            graph,
            bindings,
        } => Some((
            SubgraphRef {
                node: text(&n.name),
                path: text(path),
                child: desc(graph),
            },
            list(bindings),
        )),
        _ => None,
    }
}

/// Binding `binding` of node `node` of `parent`, checked: what a `graph!` parent evaluates as a constant
/// for each binding it writes.
pub const fn check_described_binding(
    parent: &GraphDesc,
    node: u32,
    binding: u32,
) -> Result<(), Message> {
    let Some((sub, bindings)) = subgraph_of(parent, node) else {
        return Err(Message::new().push("no subgraph node at this index"));
    };
    let buffers = list(&parent.buffers);
    if binding as usize >= bindings.len()
        || bindings[binding as usize].buffer as usize >= buffers.len()
    {
        return Err(Message::new().push("no binding at this index"));
    }
    let b = &bindings[binding as usize];
    check_binding(sub, b, &buffers[b.buffer as usize])
}

/// Node `node` of `parent`, checked as a whole (see [`check_node`]). A binding that does not fit is its own
/// error ([`check_described_binding`]): then the child may only look unbound, and this says nothing.
pub const fn check_described_node(parent: &GraphDesc, node: u32) -> Result<(), Message> {
    let Some((sub, bindings)) = subgraph_of(parent, node) else {
        return Err(Message::new().push("no subgraph node at this index"));
    };
    let mut b = 0;
    while b < bindings.len() {
        if check_described_binding(parent, node, b as u32).is_err() {
            return Ok(());
        }
        b += 1;
    }
    check_node(sub, bindings, list(&parent.params.fields))
}

/// The error of a `graph!` graph that contains itself: its subgraph node `node` is a `path`, which is the graph
/// itself (`directly`) or contains it deeper down.
pub const fn contains_itself(graph: &str, node: &str, path: &str, directly: bool) -> Message {
    let m = Message::new()
        .push("graph `")
        .push(graph)
        .push("` contains itself: its subgraph `")
        .push(node)
        .push("` is a `")
        .push(path)
        .push("`");
    let m = match directly {
        true => m,
        false => m
            .push(", which contains `")
            .push(graph)
            .push("` (directly or through its own subgraphs)"),
    };
    m.push("; a graph cannot be its own subgraph")
}

/// [`contains_itself`] for subgraph node `node` of `parent`.
pub const fn described_contains_itself(parent: &GraphDesc, node: u32, directly: bool) -> Message {
    match subgraph_of(parent, node) {
        Some((sub, _)) => contains_itself(text(&parent.name), sub.node, sub.path, directly),
        None => Message::new().push("no subgraph node at this index"),
    }
}

/// The error of a `graph!` subgraph node whose child nests graphs deeper than the compile-time checks follow
/// (`depth` levels below it, and as many again below the last).
pub const fn described_nests_too_deep(parent: &GraphDesc, node: u32, depth: u32) -> Message {
    match subgraph_of(parent, node) {
        Some((sub, _)) => Message::new()
            .push("subgraph `")
            .push(sub.node)
            .push("` is a `")
            .push(sub.path)
            .push("`, whose subgraphs nest more than ")
            .push_u32(depth)
            .push(" levels deep, further than the compile-time checks follow: nest fewer graphs inside each other"),
        None => Message::new().push("no subgraph node at this index"),
    }
}

const fn external_buffers(m: Message, child: &GraphDesc) -> Message {
    let buffers = list(&child.buffers);
    let mut m = m.push("; its external buffers are");
    let mut count = 0;
    let mut b = 0;
    while b < buffers.len() {
        if buffers[b].role.is_external() {
            m = m
                .push(if count == 0 { " `" } else { ", `" })
                .push(text(&buffers[b].name))
                .push("`");
            count += 1;
        }
        b += 1;
    }
    if count == 0 {
        m = m.push(" none");
    }
    m
}

const fn find_buffer<'a>(graph: &'a GraphDesc, name: &str) -> Option<&'a BufferDesc> {
    let buffers = list(&graph.buffers);
    let mut b = 0;
    while b < buffers.len() {
        if same_text(text(&buffers[b].name), name) {
            return Some(&buffers[b]);
        }
        b += 1;
    }
    None
}

/// The text of a description, borrowed or owned.
pub const fn text(t: &Text) -> &str {
    match t {
        Cow::Borrowed(s) => s,
        Cow::Owned(s) => s.as_str(),
    }
}

/// A list of a description, borrowed or owned.
pub const fn list<T: Clone>(l: &List<T>) -> &[T] {
    match l {
        Cow::Borrowed(s) => s,
        Cow::Owned(v) => v.as_slice(),
    }
}

/// A child description, borrowed (a `graph!` child) or owned (built, or read from a file).
pub const fn desc<'a>(d: &'a Cow<'static, GraphDesc>) -> &'a GraphDesc {
    match d {
        Cow::Borrowed(d) => d,
        Cow::Owned(d) => d,
    }
}

/// Whether two texts are equal, in const evaluation.
pub const fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn same_type(a: ValueType, b: ValueType) -> bool {
    a.components == b.components && a.scalar as u8 == b.scalar as u8
}

const fn same_mode(a: AccessMode, b: AccessMode) -> bool {
    a as u8 == b as u8
}

/// The WGSL spelling of a buffer element or parameter type, as a `&'static str` for const evaluation.
pub const fn type_name(t: ValueType) -> &'static str {
    match (t.scalar, t.components) {
        (Scalar::F32, 1) => "f32",
        (Scalar::I32, 1) => "i32",
        (Scalar::U32, 1) => "u32",
        (Scalar::F32, 2) => "vec2<f32>",
        (Scalar::I32, 2) => "vec2<i32>",
        (Scalar::U32, 2) => "vec2<u32>",
        (Scalar::F32, 3) => "vec3<f32>",
        (Scalar::I32, 3) => "vec3<i32>",
        (Scalar::U32, 3) => "vec3<u32>",
        (Scalar::F32, _) => "vec4<f32>",
        (Scalar::I32, _) => "vec4<i32>",
        (Scalar::U32, _) => "vec4<u32>",
        (Scalar::F16, 1) => "f16",
        (Scalar::F16, 2) => "vec2<f16>",
        (Scalar::F16, 3) => "vec3<f16>",
        (Scalar::F16, _) => "vec4<f16>",
        (Scalar::U8, _) => "u8",
        (Scalar::U16, _) => "u16",
    }
}

/// A message built in const evaluation (no allocation there): text in a fixed buffer, cut at its capacity on
/// a character boundary.
#[derive(Clone, Copy)]
pub struct Message {
    bytes: [u8; Message::CAPACITY],
    len: usize,
}

impl Message {
    const CAPACITY: usize = 640;

    pub const fn new() -> Self {
        Message {
            bytes: [0; Message::CAPACITY],
            len: 0,
        }
    }

    pub const fn push(mut self, s: &str) -> Self {
        let s = s.as_bytes();
        let mut i = 0;
        while i < s.len() && self.len < Message::CAPACITY {
            self.bytes[self.len] = s[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    pub const fn push_u32(mut self, n: u32) -> Self {
        let mut digits = [0u8; 10];
        let (mut n, mut count) = (n, 0);
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while count > 0 && self.len < Message::CAPACITY {
            count -= 1;
            self.bytes[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    pub const fn as_str(&self) -> &str {
        let (bytes, _) = self.bytes.split_at(self.len);
        match std::str::from_utf8(bytes) {
            Ok(s) => s,
            // Cut inside a character: keep what precedes it.
            Err(e) => match std::str::from_utf8(bytes.split_at(e.valid_up_to()).0) {
                Ok(s) => s,
                Err(_) => "",
            },
        }
    }
}

impl Default for Message {
    fn default() -> Self {
        Message::new()
    }
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_hold_numbers_and_cut_on_a_character_boundary() {
        assert_eq!(Message::new().push("n = ").push_u32(0).as_str(), "n = 0");
        assert_eq!(
            Message::new().push_u32(4_294_967_295).as_str(),
            "4294967295"
        );
        let long = "é".repeat(Message::CAPACITY);
        let cut = Message::new().push("x").push(&long);
        assert!(cut.as_str().len() <= Message::CAPACITY && cut.as_str().ends_with('é'));
    }

    #[test]
    fn type_names_are_the_wgsl_spellings() {
        for s in [Scalar::F32, Scalar::I32, Scalar::U32] {
            for n in 1..=4 {
                let t = ValueType::vector(s, n);
                assert_eq!(type_name(t), t.wgsl());
            }
        }
    }
}
