//! Lowering: the syntax tree becomes a `graph_core::ir::Graph`, and where each IR item was written goes into
//! [`Spans`] at the item's location, so diagnostics about the IR can be shown on the user's tokens.

use std::path::PathBuf;

use graph_core::Loc;
use graph_core::ir::{
    Access, AccessMode, Buffer, DispatchSpec, EdgeMode, ElementRange, ExplicitEdge, Graph, Kernel,
    KernelArg, KernelSource, Node, NodeKind, Param, ParamsStorage, Role, SizeExpr, SizeOp,
    WorkgroupLimits,
};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Attribute, Expr, Ident};

use crate::ast::{
    AccessDecl, Dispatch, GraphDef, Item, KernelBody, KernelDecl, Marked, Marks, Slice, type_text,
};
use crate::ctxt::Ctxt;
use crate::spans::{SpanRange, Spans, one, range_of};
use crate::wgsl_tokens::WgslText;

/// The doc comments written on each parameter, buffer and node, at the IR's indices: the generated fields and
/// variants carry them.
#[derive(Default)]
pub struct Docs {
    pub params: Vec<Vec<Attribute>>,
    pub buffers: Vec<Vec<Attribute>>,
    pub nodes: Vec<Vec<Attribute>>,
}

/// What codegen needs beyond the IR.
pub struct Lowered {
    pub graph: Graph,
    pub spans: Spans,
    pub docs: Docs,
    /// Paths of `.wgsl` files read, so the generated code re-runs the macro when they change.
    pub files: Vec<String>,
    /// The child type of each subgraph node, by node index.
    pub subgraph_paths: Vec<(usize, syn::Path)>,
}

/// The IR of `def`. What cannot be lowered as written (an unreadable file, a bad literal, an unknown access
/// word) is reported into `cx` and lowered as a stand-in; where what the checks would say of the stand-in
/// follows from the mistake, `cx` is told that location is covered.
pub fn lower(def: &GraphDef, cx: &Ctxt) -> Lowered {
    let mut out = Lowered {
        graph: Graph {
            name: name_of(&def.name),
            edge_mode: if def.explicit_edges {
                EdgeMode::ExplicitOnly
            } else {
                EdgeMode::Inferred
            },
            params_storage: if def.uniform_params {
                ParamsStorage::Uniform
            } else {
                ParamsStorage::Immediates
            },
            workgroup_limits: if def.device_limits {
                WorkgroupLimits::Device
            } else {
                WorkgroupLimits::Portable
            },
            ..Graph::default()
        },
        spans: Spans::new(def.name.span()),
        docs: Docs::default(),
        files: Vec::new(),
        subgraph_paths: Vec::new(),
    };
    for item in &def.items {
        lower_item(&mut out, cx, item);
    }
    if def.no_fusion {
        out.graph.no_fusion = out.graph.nodes.iter().map(|n| n.name.clone()).collect();
    }
    if def.no_alias {
        out.graph.no_alias = (out.graph.buffers.iter())
            .filter(|b| b.role == Role::Owned)
            .map(|b| b.name.clone())
            .collect();
    }
    out
}

/// One item into the IR and its spans, its attributes onto the node it declares.
fn lower_item(out: &mut Lowered, cx: &Ctxt, marked: &Marked<Item>) {
    let first = out.graph.nodes.len();
    lower_item_itself(out, cx, &marked.item);
    // Alternatives and blocks hold nodes of their own, with their own attributes.
    if !matches!(marked.item, Item::Alternatives { .. } | Item::Block { .. }) {
        mark_node(out, first, &marked.marks);
    }
    // `#[on(..)]` places every node the item declared: a block's members, a group's choices, their own
    // placements (checked against it) kept.
    if let Some(gpu) = marked.marks.on {
        for n in first..out.graph.nodes.len() {
            let node = out.graph.nodes[n].name.clone();
            if !out.graph.on.iter().any(|p| p.node == node) {
                out.graph.on.push(graph_core::ir::Placement { node, gpu });
            }
        }
    }
}

/// Node `n`'s attributes, when the item declared one.
fn mark_node(out: &mut Lowered, n: usize, marks: &Marks) {
    let Some(node) = out.graph.nodes.get(n) else {
        return;
    };
    if marks.no_fusion {
        out.graph.no_fusion.push(node.name.clone());
    }
    out.docs.nodes[n] = marks.docs.clone();
}

/// One item into the IR and its spans; a block's items first, then the block.
fn lower_item_itself(out: &mut Lowered, cx: &Ctxt, item: &Item) {
    match item {
        Item::Params { keyword, fields } => {
            out.spans.set(Loc::ParamsBlock, one(*keyword));
            for f in fields {
                let i = out.graph.params.len();
                out.graph.params.push(Param {
                    name: name_of(&f.name),
                    ty: type_text(&f.ty),
                });
                out.spans.set(Loc::Param(i), one(f.name.span()));
                out.spans.set(Loc::ParamType(i), range_of(&f.ty));
                out.docs.params.push(f.docs.clone());
            }
        }
        Item::Buffers(list) => {
            for b in list {
                let len = match &b.len {
                    Some(lit) => match lit.base10_parse::<u64>() {
                        Ok(n) => Some(n),
                        Err(e) => {
                            cx.error(e);
                            None
                        }
                    },
                    None => None,
                };
                let role = match b.role.as_ref().map(Ident::to_string).as_deref() {
                    None => Role::Owned,
                    Some("input") => Role::Input,
                    Some("output") => Role::Output,
                    Some("inout") => Role::InOut,
                    Some(other) => {
                        cx.error(syn::Error::new(
                                b.role.as_ref().map_or_else(Span::call_site, Ident::span),
                                format!(
                                    "unknown buffer role `{other}`; write `= input`, `= output` or `= inout` for a \
                                     buffer the caller binds, or nothing for a buffer the graph owns"
                                ),
                            ));
                        // Bound by the caller and both read and written: no follow-on error either way.
                        Role::InOut
                    }
                };
                let i = out.graph.buffers.len();
                out.graph.buffers.push(Buffer {
                    name: name_of(&b.name),
                    elem: type_text(&b.elem),
                    len,
                    role,
                });
                out.spans.set(Loc::Buffer(i), one(b.name.span()));
                out.spans.set(Loc::BufferType(i), range_of(&b.elem));
                out.docs.buffers.push(b.docs.clone());
                if b.no_alias.is_some() {
                    out.graph.no_alias.push(name_of(&b.name));
                }
            }
        }
        Item::Textures(list) => {
            for t in list {
                let role = match t.role.as_ref().map(Ident::to_string).as_deref() {
                    Some("input") => Role::Input,
                    Some("output") => Role::Output,
                    Some("inout") => Role::InOut,
                    // The checks say that a texture is bound from outside; `= ..` missing is graph-owned.
                    None => Role::Owned,
                    Some(other) => {
                        cx.error(syn::Error::new(
                            t.role.as_ref().map_or_else(Span::call_site, Ident::span),
                            format!(
                                "unknown texture role `{other}`; write `= input`, `= output` or `= inout`"
                            ),
                        ));
                        Role::InOut
                    }
                };
                // A texture is a buffer of the graph whose element is its type (see `graph_core::texture`).
                let i = out.graph.buffers.len();
                out.graph.buffers.push(Buffer {
                    name: name_of(&t.name),
                    elem: t.ty.to_string().replace(' ', ""),
                    len: None,
                    role,
                });
                out.spans.set(Loc::Buffer(i), one(t.name.span()));
                out.spans.set(Loc::BufferType(i), range_of(&t.ty));
                out.docs.buffers.push(t.docs.clone());
            }
        }
        Item::Kernel(k) => lower_kernel(out, cx, k),
        Item::Copy { name, src, dst } => {
            let (src_range, src_sizes) = lower_range(cx, src);
            let (dst_range, dst_sizes) = lower_range(cx, dst);
            let kind = NodeKind::Copy {
                src: name_of(&src.buffer),
                dst: name_of(&dst.buffer),
                src_range,
                dst_range,
            };
            push_builtin(
                out,
                name,
                kind,
                &[src, dst],
                [src_sizes, dst_sizes].concat(),
            );
        }
        Item::Fill { name, dst, value } => {
            let (range, sizes) = lower_range(cx, dst);
            let kind = NodeKind::Fill {
                dst: name_of(&dst.buffer),
                value: WgslText::from_tokens(value.clone()).text,
                range,
            };
            let n = push_builtin(out, name, kind, &[dst], sizes);
            out.spans
                .set(Loc::KernelArg { node: n, index: 0 }, range_of(value));
        }
        Item::Transfer {
            name,
            buffer,
            readback,
        } => {
            let (range, sizes) = lower_range(cx, buffer);
            let kind = match readback {
                true => NodeKind::Readback {
                    src: name_of(&buffer.buffer),
                    range,
                },
                false => NodeKind::Upload {
                    dst: name_of(&buffer.buffer),
                    range,
                },
            };
            push_builtin(out, name, kind, &[buffer], sizes);
        }
        Item::Host { name, accesses } => {
            let list = lower_accesses(out, cx, accesses);
            push_node(out, name, NodeKind::Host { accesses: list });
        }
        Item::Interop { name, accesses } => {
            let list = lower_accesses(out, cx, accesses);
            push_node(out, name, NodeKind::Interop { accesses: list });
        }
        Item::Empty { name, barrier } => {
            let kind = if *barrier {
                NodeKind::Barrier {}
            } else {
                NodeKind::Empty {}
            };
            push_node(out, name, kind);
        }
        Item::Subgraph {
            name,
            path,
            accesses,
        } => {
            let list = lower_accesses(out, cx, accesses);
            let text = path
                .segments
                .iter()
                .map(|s| s.ident.unraw().to_string())
                .collect::<Vec<_>>()
                .join("::");
            let text = match path.leading_colon {
                Some(_) => format!("::{text}"),
                None => text,
            };
            out.subgraph_paths
                .push((out.graph.nodes.len(), path.clone()));
            let n = push_node(
                out,
                name,
                NodeKind::Subgraph {
                    graph: text,
                    accesses: list,
                },
            );
            // The child's path, for what is said of it as of a kernel's source.
            out.spans.set(Loc::KernelSource(n), range_of(path));
        }
        Item::Alternatives {
            name,
            choices,
            misplaced,
        } => {
            let first = out.graph.nodes.len();
            for choice in choices {
                lower_item(out, cx, choice);
            }
            let choices = out.graph.nodes[first..]
                .iter()
                .map(|n| n.name.clone())
                .collect();
            for item in misplaced {
                lower_item(out, cx, item);
            }
            let i = out.graph.alternatives.len();
            out.graph.alternatives.push(graph_core::ir::Alternatives {
                name: name_of(name),
                choices,
            });
            out.spans.set(Loc::Alternatives(i), one(name.span()));
        }
        Item::Edges(chain) => {
            for pair in chain.windows(2) {
                let i = out.graph.edges.len();
                out.graph.edges.push(ExplicitEdge {
                    from: name_of(&pair[0]),
                    to: name_of(&pair[1]),
                });
                let (from, to) = (pair[0].span(), pair[1].span());
                out.spans.set(Loc::Edge(i), (from, to));
                out.spans.set(Loc::EdgeFrom(i), one(from));
                out.spans.set(Loc::EdgeTo(i), one(to));
            }
        }
        Item::Block {
            keyword,
            name,
            count,
            flag,
            items,
            otherwise,
            arms,
        } => {
            let nodes = lower_branch(out, cx, items);
            // An `if` or `switch` whose flag is not a buffer's name (already an error): what the checks say of
            // its flag follows from it.
            // An arm whose value is unreadable is kept (already an error): what the checks say of the
            // switch's arms follows from it.
            let unreadable = std::cell::Cell::new(arms.iter().any(|arm| arm.unreadable));
            let flag_name = flag.as_ref().map(name_of).unwrap_or_default();
            let kind = match (keyword.to_string().as_str(), count) {
                ("if", _) => graph_core::ir::BlockKind::If {
                    flag: flag_name,
                    otherwise: lower_branch(out, cx, otherwise),
                },
                ("switch", _) => graph_core::ir::BlockKind::Switch {
                    index: flag_name,
                    arms: arms
                        .iter()
                        .map(|arm| graph_core::ir::SwitchArm {
                            value: arm.value.as_ref().map(|v| match v.base10_parse::<u32>() {
                                Ok(v) => v,
                                Err(e) => {
                                    cx.error(syn::Error::new(
                                        v.span(),
                                        format!("a switch's arm value is a `u32`: {e}"),
                                    ));
                                    unreadable.set(true);
                                    0
                                }
                            }),
                            nodes: lower_branch(out, cx, &arm.items),
                        })
                        .collect(),
                },
                (_, count) => graph_core::ir::BlockKind::Repeat {
                    count: match count.as_ref().map(|c| c.base10_parse::<u32>()) {
                        Some(Ok(c)) => c,
                        Some(Err(e)) => {
                            cx.error(e);
                            1
                        }
                        None => 1,
                    },
                    flag: flag.as_ref().map(name_of),
                },
            };
            let i = out.graph.blocks.len();
            if (keyword == "if" || keyword == "switch") && flag.is_none() || unreadable.get() {
                cx.cover(Loc::Block(i));
            }
            out.graph.blocks.push(graph_core::ir::Block {
                name: name_of(name),
                kind,
                nodes,
            });
            out.spans.set(Loc::Block(i), one(name.span()));
        }
    }
}

/// Lowers a block's branch, its items' nodes appended to the graph's; returns their names.
fn lower_branch(out: &mut Lowered, cx: &Ctxt, items: &[Marked<Item>]) -> Vec<String> {
    let first = out.graph.nodes.len();
    for inner in items {
        lower_item(out, cx, inner);
    }
    out.graph.nodes[first..]
        .iter()
        .map(|n| n.name.clone())
        .collect()
}

/// Pushes a node, with its name's span; returns its index.
fn push_node(out: &mut Lowered, name: &Ident, kind: NodeKind) -> usize {
    let n = out.graph.nodes.len();
    out.graph.nodes.push(Node {
        name: name_of(name),
        kind,
    });
    out.spans.set(Loc::Node(n), one(name.span()));
    out.docs.nodes.push(Vec::new());
    n
}

/// A copy, fill, upload or readback: no WGSL of its own, its accesses the slices it names, and the terms of
/// their ranges' bounds by size slot. Returns its index.
fn push_builtin(
    out: &mut Lowered,
    name: &Ident,
    kind: NodeKind,
    slices: &[&Slice],
    sizes: Vec<Vec<SpanRange>>,
) -> usize {
    let n = push_node(out, name, kind);
    for (index, slice) in slices.iter().enumerate() {
        let range = slice.span_range();
        out.spans.set(Loc::Access { node: n, index }, range);
        out.spans.set(Loc::AccessMode { node: n, index }, range);
    }
    set_size_terms(&mut out.spans, n, sizes);
    n
}

/// The spans of node `node`'s size terms, per size slot (a dimension of its dispatch, or a bound of a range),
/// each slot's terms in preorder.
fn set_size_terms(spans: &mut Spans, node: usize, slots: Vec<Vec<SpanRange>>) {
    for (dim, terms) in slots.into_iter().enumerate() {
        for (term, range) in terms.into_iter().enumerate() {
            spans.set(Loc::SizeTerm { node, dim, term }, range);
        }
    }
}

/// The accesses of the next node. An unknown access word is one error: the access is kept as `read_write`
/// (valid for any use, ordered against everything), and what the checks say of that access is not shown.
fn lower_accesses(out: &mut Lowered, cx: &Ctxt, accesses: &[AccessDecl]) -> Vec<Access> {
    let node = out.graph.nodes.len();
    let mut list = Vec::with_capacity(accesses.len());
    for (index, a) in accesses.iter().enumerate() {
        const MODES: [&str; 3] = ["read", "write", "read_write"];
        let word = a.mode.to_string();
        let mode = match word.as_str() {
            "read" => AccessMode::Read,
            "write" => AccessMode::Write,
            "read_write" => AccessMode::ReadWrite,
            _ => {
                let message = match graph_core::names::did_you_mean(&word, MODES) {
                    Some(mode) => format!("unknown access `{word}`; did you mean `{mode}`?"),
                    None => format!(
                        "unknown access `{word}`; write `read`, `write` (overwrite) or `read_write`"
                    ),
                };
                cx.error(syn::Error::new(a.mode.span(), message));
                cx.cover(Loc::AccessMode { node, index });
                AccessMode::ReadWrite
            }
        };
        list.push(Access {
            binding: name_of(a.binding()),
            buffer: name_of(&a.buffer),
            mode,
        });
        let buffer = (a.binding().span(), a.buffer.span());
        out.spans.set(Loc::Access { node, index }, buffer);
        out.spans
            .set(Loc::AccessMode { node, index }, range_of(&a.mode));
    }
    list
}

fn lower_kernel(out: &mut Lowered, cx: &Ctxt, k: &KernelDecl) {
    // The node about to be pushed: its parts' spans are recorded under its index as they are lowered.
    let n = out.graph.nodes.len();
    let (dispatch, mut size_spans) = lower_dispatch(cx, k.dispatch.as_ref());
    // The overrides' values are the size slots after the dispatch's.
    let mut overrides = Vec::new();
    for (name, value) in &k.overrides {
        let mut terms = Vec::new();
        let value = lower_size(value, &mut terms).unwrap_or_else(|error| {
            cx.error(error);
            terms = vec![range_of(value)];
            SizeExpr::Literal(1)
        });
        size_spans.push(terms);
        overrides.push(graph_core::ir::KernelOverride {
            name: name_of(name),
            value,
        });
    }
    let (accesses, source, args) = match &k.body {
        KernelBody::Missing { accesses } => {
            let list = lower_accesses(out, cx, accesses);
            // Its WGSL is missing (the parser reported it): it is checked as an empty kernel.
            cx.cover(Loc::KernelSource(n));
            let source = KernelSource::Wgsl {
                text: String::new(),
                file: None,
            };
            (list, source, Vec::new())
        }
        KernelBody::Inline { accesses, wgsl } => {
            let list = lower_accesses(out, cx, accesses);
            let text = WgslText::from_tokens(wgsl.clone());
            let source = KernelSource::Wgsl {
                text: text.text.clone(),
                file: None,
            };
            out.spans.set_inline(n, text);
            (list, source, Vec::new())
        }
        KernelBody::File { accesses, path } => {
            let list = lower_accesses(out, cx, accesses);
            let text = match read_wgsl_file(&path.value()) {
                Ok((full, text)) => {
                    out.files.push(full);
                    text
                }
                Err(message) => {
                    cx.error(syn::Error::new(path.span(), message));
                    cx.cover(Loc::KernelSource(n));
                    String::new()
                }
            };
            let source = KernelSource::Wgsl {
                text,
                file: Some(path.value()),
            };
            out.spans.set(Loc::KernelSource(n), range_of(path));
            (list, source, Vec::new())
        }
        KernelBody::Library { path, bindings } => {
            let path_text = path
                .iter()
                .map(Ident::to_string)
                .collect::<Vec<_>>()
                .join("::");
            let lib = kernels::LIBRARY.get(&path_text);
            let (mut accesses, mut args) = (Vec::new(), Vec::new());
            for (name, value) in bindings {
                let is_binding = lib.is_some_and(|l| l.bindings.iter().any(|b| *name == b.name));
                let is_arg = lib.is_some_and(|l| l.args.iter().any(|a| *name == a.name));
                let buffer = match single_ident(value) {
                    Some(ident) if !is_arg => Some(ident),
                    _ => None,
                };
                match buffer {
                    Some(buffer) if is_binding || lib.is_some() => {
                        let index = accesses.len();
                        accesses.push(Access {
                            binding: name_of(name),
                            buffer: name_of(&buffer),
                            mode: AccessMode::Read,
                        });
                        // The mode is not written: what is said of it is shown on the whole binding.
                        let spans = &mut out.spans;
                        spans.set(Loc::Access { node: n, index }, range_of(&buffer));
                        let binding = (name.span(), buffer.span());
                        spans.set(Loc::AccessMode { node: n, index }, binding);
                    }
                    _ if lib.is_none() => {}
                    _ => {
                        let index = args.len();
                        args.push(KernelArg {
                            name: name_of(name),
                            wgsl: WgslText::from_tokens(value.clone()).text,
                        });
                        let arg = (name.span(), range_of(value).1);
                        out.spans.set(Loc::KernelArg { node: n, index }, arg);
                    }
                }
            }
            let source = KernelSource::Library(path_text);
            let at = range_of(path.iter().collect::<TokenStreamOf>().0);
            out.spans.set(Loc::KernelSource(n), at);
            (accesses, source, args)
        }
    };
    let kernel = Kernel {
        accesses,
        source,
        entry: k.entry.as_ref().map(Ident::to_string),
        dispatch,
        args,
        overrides,
    };
    push_node(out, &k.name, NodeKind::Kernel(kernel));
    if let Some(entry) = &k.entry {
        out.spans.set(Loc::KernelEntry(n), one(entry.span()));
    }
    if let Some(d) = &k.dispatch {
        let last = d.dims.as_ref().and_then(|dims| dims.last());
        let end = last.map_or(d.keyword.span(), |e| range_of(e).1);
        out.spans.set(Loc::Dispatch(n), (d.keyword.span(), end));
    }
    set_size_terms(&mut out.spans, n, size_spans);
}

/// A slice's range, its two bounds as size expressions with the spans of their terms (size slots start and
/// end; a bound left out has no terms). A bound not in the size language is one error, and the whole range
/// is dropped so nothing is checked against a stand-in.
fn lower_range(cx: &Ctxt, slice: &Slice) -> (Option<ElementRange>, Vec<Vec<SpanRange>>) {
    let Some((range, _)) = &slice.range else {
        return (None, Vec::new());
    };
    let mut spans = Vec::new();
    let mut bounds = Vec::new();
    for bound in [&range.start, &range.end] {
        let mut terms = Vec::new();
        let lowered = bound
            .as_deref()
            .map(|e| lower_size(e, &mut terms))
            .transpose();
        match lowered {
            Ok(expr) => bounds.push(expr),
            Err(error) => {
                cx.error(error);
                return (None, Vec::new());
            }
        }
        spans.push(terms);
    }
    let end = bounds.pop().flatten();
    let start = bounds.pop().flatten();
    (Some(ElementRange::new(start, end)), spans)
}

/// The kernel's dispatch clause as size expressions, with the spans of each term. A size that is not in the
/// language is one error, and stands as `1` for the checks.
fn lower_dispatch(cx: &Ctxt, dispatch: Option<&Dispatch>) -> (DispatchSpec, Vec<Vec<SpanRange>>) {
    let Some(d) = dispatch else {
        return (DispatchSpec::Auto, Vec::new());
    };
    if let Some(buffer) = &d.indirect {
        return (DispatchSpec::Indirect(name_of(buffer)), Vec::new());
    }
    let mut dims = Vec::new();
    let mut spans = Vec::new();
    match &d.dims {
        Some(exprs) => {
            for e in exprs {
                let mut terms = Vec::new();
                match lower_size(e, &mut terms) {
                    Ok(size) => dims.push(size),
                    Err(error) => {
                        cx.error(error);
                        terms = vec![range_of(e)];
                        dims.push(SizeExpr::Literal(1));
                    }
                }
                spans.push(terms);
            }
        }
        None => {
            dims.push(SizeExpr::Literal(1));
            spans.push(vec![(d.keyword.span(), d.keyword.span())]);
        }
    }
    let spec = if d.workgroups {
        DispatchSpec::Workgroups(dims)
    } else {
        DispatchSpec::Threads(dims)
    };
    (spec, spans)
}

const SIZE_LANGUAGE: &str = "a dispatch size is written with `params.NAME`, `BUFFER.len()`, `TEXTURE.width()` (`.height()`, \
                             `.layers()`, `.depth()`), integer literals, `+`, `-`, `*`, `/`, `.div_ceil(..)`, `.min(..)`, \
                             `.max(..)` and parentheses";

/// One size expression, its terms' spans pushed in preorder (the numbering `Loc::SizeTerm` uses).
fn lower_size(expr: &Expr, spans: &mut Vec<SpanRange>) -> syn::Result<SizeExpr> {
    let unsupported =
        |at: &dyn ToTokens| syn::Error::new_spanned(at.to_token_stream(), SIZE_LANGUAGE);
    match expr {
        // Parentheses group; they are no term of their own.
        Expr::Paren(p) => return lower_size(&p.expr, spans),
        Expr::Group(g) => return lower_size(&g.expr, spans),
        _ => {}
    }
    spans.push(range_of(expr));
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) if ["", "u", "u32"].contains(&i.suffix()) => Ok(SizeExpr::Literal(i.base10_parse()?)),
        Expr::Field(field) => lower_param(field).ok_or_else(|| unsupported(expr)),
        Expr::MethodCall(call) => {
            let method = call.method.to_string();
            match (method.as_str(), call.args.len()) {
                ("len", 0) => match &*call.receiver {
                    Expr::Path(p) => p
                        .path
                        .get_ident()
                        .map(|b| SizeExpr::Len(name_of(b)))
                        .ok_or_else(|| unsupported(expr)),
                    _ => Err(unsupported(expr)),
                },
                // `t.width()`, `t.height()`, `t.layers()`, `t.depth()`: a texture's size.
                (name, 0) if graph_core::size::Axis::parse(name).is_some() => {
                    match (&*call.receiver, graph_core::size::Axis::parse(name)) {
                        (Expr::Path(p), Some(axis)) => p
                            .path
                            .get_ident()
                            .map(|t| SizeExpr::Extent {
                                texture: name_of(t),
                                axis,
                            })
                            .ok_or_else(|| unsupported(expr)),
                        _ => Err(unsupported(expr)),
                    }
                }
                (name, 1) => {
                    let op = method_op(name).ok_or_else(|| unsupported(&call.method))?;
                    let lhs = lower_size(&call.receiver, spans)?;
                    let rhs = lower_size(&call.args[0], spans)?;
                    Ok(SizeExpr::binary(op, lhs, rhs))
                }
                _ => Err(unsupported(expr)),
            }
        }
        Expr::Call(call) if call.args.len() == 2 => {
            let op = match &*call.func {
                Expr::Path(p) => p.path.get_ident().and_then(|f| method_op(&f.to_string())),
                _ => None,
            }
            .ok_or_else(|| unsupported(&call.func))?;
            let lhs = lower_size(&call.args[0], spans)?;
            let rhs = lower_size(&call.args[1], spans)?;
            Ok(SizeExpr::binary(op, lhs, rhs))
        }
        Expr::Binary(b) => {
            let op = match b.op {
                syn::BinOp::Add(_) => SizeOp::Add,
                syn::BinOp::Sub(_) => SizeOp::Sub,
                syn::BinOp::Mul(_) => SizeOp::Mul,
                syn::BinOp::Div(_) => SizeOp::Div,
                _ => return Err(unsupported(&b.op)),
            };
            let lhs = lower_size(&b.left, spans)?;
            let rhs = lower_size(&b.right, spans)?;
            Ok(SizeExpr::binary(op, lhs, rhs))
        }
        _ => Err(unsupported(expr)),
    }
}

fn method_op(name: &str) -> Option<SizeOp> {
    match name {
        "div_ceil" => Some(SizeOp::DivCeil),
        "min" => Some(SizeOp::Min),
        "max" => Some(SizeOp::Max),
        _ => None,
    }
}

/// `params.NAME` or `params.NAME.x`.
fn lower_param(field: &syn::ExprField) -> Option<SizeExpr> {
    let member = |m: &syn::Member| match m {
        syn::Member::Named(name) => Some(name_of(name)),
        syn::Member::Unnamed(_) => None,
    };
    let is_params = |e: &Expr| matches!(e, Expr::Path(p) if p.path.is_ident("params"));
    if is_params(&field.base) {
        return Some(SizeExpr::Param {
            name: member(&field.member)?,
            component: None,
        });
    }
    let Expr::Field(inner) = &*field.base else {
        return None;
    };
    let component = ["x", "y", "z", "w"]
        .iter()
        .position(|c| member(&field.member).as_deref() == Some(*c))?;
    is_params(&inner.base).then_some(())?;
    Some(SizeExpr::Param {
        name: member(&inner.member)?,
        component: Some(component as u8),
    })
}

/// The identifier a value consists of, if it is one.
fn single_ident(value: &TokenStream) -> Option<Ident> {
    let mut tokens = value.clone().into_iter();
    match (tokens.next(), tokens.next()) {
        (Some(proc_macro2::TokenTree::Ident(ident)), None) => Some(ident),
        _ => None,
    }
}

/// Collects identifiers into one token stream, for taking the range of a path.
struct TokenStreamOf(TokenStream);

impl<'a> FromIterator<&'a Ident> for TokenStreamOf {
    fn from_iter<I: IntoIterator<Item = &'a Ident>>(iter: I) -> Self {
        let mut ts = TokenStream::new();
        for i in iter {
            i.to_tokens(&mut ts);
        }
        TokenStreamOf(ts)
    }
}

/// A name as the graph knows it: `r#loop` is `loop` (WGSL has no raw identifiers; the checks refuse the
/// names WGSL reserves).
fn name_of(ident: &Ident) -> String {
    ident.unraw().to_string()
}

/// Reads a `.wgsl` file relative to the invoking crate's manifest: `(absolute path, contents)`.
fn read_wgsl_file(relative: &str) -> Result<(String, String), String> {
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    let full = root.join(relative);
    match std::fs::read_to_string(&full) {
        Ok(text) => Ok((full.display().to_string(), text)),
        // Not found: said in words of our own, the same on every platform.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "WGSL file `{relative}` not found; the path is relative to the crate's directory (where its \
             Cargo.toml is)"
        )),
        Err(e) => Err(format!(
            "cannot read WGSL file `{relative}` ({e}); the path is relative to the crate's directory (where its \
             Cargo.toml is)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use graph_core::Loc;

    use crate::ctxt::Ctxt;
    use crate::spans::SpanRange;

    /// The text a span range covers, as written.
    fn written(range: Option<SpanRange>) -> Option<String> {
        let (first, last) = range?;
        first.join(last)?.source_text()
    }

    /// Lowering records each item's span at the location diagnostics use for it, size terms in preorder and
    /// by size slot.
    #[test]
    fn spans_are_recorded_at_the_irs_locations() {
        let input = "graph G {
            params { n: u32 }
            buffers { a: [f32; 64], b: [f32; 64] }
            kernel k(a: write) threads(params.n.div_ceil(64) + 1) {
                @compute @workgroup_size(64) fn main() {}
            }
            kernel s = kernels::scale(data: b, alpha: 2.0);
            copy c(a[1..a.len() - 1] -> b[..62]);
            k -> c;
        }";
        let cx = Ctxt::new();
        let def = crate::ast::parse(input.parse().expect("tokens"), &cx).expect("a graph");
        let lowered = super::lower(&def, &cx);
        assert!(cx.into_errors().is_empty());
        let spans = &lowered.spans;
        let at = |loc: Loc| written(spans.get(&loc));
        for (loc, text) in [
            (Loc::Param(0), "n"),
            (Loc::ParamType(0), "u32"),
            (Loc::Buffer(1), "b"),
            (Loc::BufferType(1), "f32"),
            (Loc::Node(0), "k"),
            (Loc::Access { node: 0, index: 0 }, "a"),
            (Loc::AccessMode { node: 0, index: 0 }, "write"),
            (Loc::Dispatch(0), "threads(params.n.div_ceil(64) + 1"),
            (
                Loc::SizeTerm {
                    node: 0,
                    dim: 0,
                    term: 0,
                },
                "params.n.div_ceil(64) + 1",
            ),
            (
                Loc::SizeTerm {
                    node: 0,
                    dim: 0,
                    term: 2,
                },
                "params.n",
            ),
            (
                Loc::SizeTerm {
                    node: 0,
                    dim: 0,
                    term: 4,
                },
                "1",
            ),
            (Loc::KernelSource(1), "scale"),
            (Loc::Access { node: 1, index: 0 }, "b"),
            (Loc::AccessMode { node: 1, index: 0 }, "data: b"),
            (Loc::KernelArg { node: 1, index: 0 }, "alpha: 2.0"),
            (Loc::Access { node: 2, index: 0 }, "a[1..a.len() - 1]"),
            (
                Loc::SizeTerm {
                    node: 2,
                    dim: 1,
                    term: 1,
                },
                "a.len()",
            ),
            // The destination's start is left out: its slot has no terms, and the end is slot 3.
            (
                Loc::SizeTerm {
                    node: 2,
                    dim: 3,
                    term: 0,
                },
                "62",
            ),
            (Loc::Edge(0), "k -> c"),
            (Loc::EdgeTo(0), "c"),
        ] {
            assert_eq!(at(loc.clone()).as_deref(), Some(text), "{loc:?}");
        }
        let size_slot_2 = Loc::SizeTerm {
            node: 2,
            dim: 2,
            term: 0,
        };
        assert_eq!(at(size_slot_2), None);
        // Inline WGSL: a byte range lands on its tokens.
        let wgsl = match &lowered.graph.nodes[0].kind {
            graph_core::ir::NodeKind::Kernel(k) => match &k.source {
                graph_core::ir::KernelSource::Wgsl { text, .. } => text.clone(),
                _ => String::new(),
            },
            _ => String::new(),
        };
        let main = wgsl.find("main").expect("main");
        let range = main..main + 4;
        let shown = spans.locate(&Loc::Wgsl { node: 0, range });
        assert_eq!(written(Some(shown)).as_deref(), Some("main"));
    }
}
