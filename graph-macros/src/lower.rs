//! Lowering: the syntax tree becomes a `graph_core::ir::Graph`, and every span it came from goes into a
//! [`SpanTable`] at the same indices, so diagnostics about the IR can be shown on the user's tokens.

use std::path::PathBuf;

use graph_core::ir::{
    Access, AccessMode, Buffer, DispatchSpec, EdgeMode, ExplicitEdge, Graph, Kernel, KernelArg,
    KernelSource, Node, NodeKind, Param, ParamsStorage, Role,
};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Expr, Ident};

use crate::ast::{AccessDecl, GraphDef, Item, KernelBody, KernelDecl};
use crate::wgsl_tokens::WgslText;

/// A first and last span: rustc shows the range between them.
pub type SpanRange = (Span, Span);

pub fn range_of(tokens: impl ToTokens) -> SpanRange {
    let mut iter = tokens.into_token_stream().into_iter();
    let first = iter.next().map_or_else(Span::call_site, |t| t.span());
    let last = iter.last().map_or(first, |t| t.span());
    (first, last)
}

/// Where a kernel's WGSL came from, for pointing at it.
pub enum SourceSpans {
    Inline {
        text: WgslText,
    },
    File {
        path: SpanRange,
    },
    Library {
        path: SpanRange,
    },
    /// A `fill` or `copy`, which have no WGSL of their own.
    Builtin {
        name: Span,
    },
}

/// The spans of every IR item, at the IR's indices.
pub struct SpanTable {
    pub graph: Span,
    pub params_block: Span,
    pub params: Vec<Span>,
    pub param_types: Vec<SpanRange>,
    pub buffers: Vec<Span>,
    pub buffer_types: Vec<SpanRange>,
    pub nodes: Vec<Span>,
    /// Per node, per access: the buffer and the mode (the whole binding for library kernels).
    pub accesses: Vec<Vec<(SpanRange, SpanRange)>>,
    pub args: Vec<Vec<SpanRange>>,
    pub sources: Vec<SourceSpans>,
    pub entries: Vec<Option<Span>>,
    pub dispatch: Vec<Option<SpanRange>>,
    pub edges: Vec<(Span, Span)>,
}

/// What codegen needs beyond the IR: the Rust expressions of dispatch sizes and the doc comments.
pub struct Lowered {
    pub graph: Graph,
    pub spans: SpanTable,
    /// Per node: the `threads(..)`/`workgroups(..)` expressions, when given.
    pub dispatch_exprs: Vec<Vec<Expr>>,
    /// Paths of `.wgsl` files read, so the generated code re-runs the macro when they change.
    pub files: Vec<String>,
    /// Errors found while lowering (an unreadable file, a bad literal).
    pub errors: Vec<syn::Error>,
    /// Nodes whose `.wgsl` file could not be read (already an error): they are checked as empty kernels.
    pub unread_files: Vec<usize>,
}

pub fn lower(def: &GraphDef) -> Lowered {
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
            ..Graph::default()
        },
        spans: SpanTable {
            graph: def.name.span(),
            params_block: def.name.span(),
            params: Vec::new(),
            param_types: Vec::new(),
            buffers: Vec::new(),
            buffer_types: Vec::new(),
            nodes: Vec::new(),
            accesses: Vec::new(),
            args: Vec::new(),
            sources: Vec::new(),
            entries: Vec::new(),
            dispatch: Vec::new(),
            edges: Vec::new(),
        },
        dispatch_exprs: Vec::new(),
        files: Vec::new(),
        errors: Vec::new(),
        unread_files: Vec::new(),
    };
    for item in &def.items {
        match item {
            Item::Params {
                keyword, fields, ..
            } => {
                out.spans.params_block = *keyword;
                for f in fields {
                    out.graph.params.push(Param {
                        name: name_of(&f.name),
                        ty: type_text(&f.ty),
                    });
                    out.spans.params.push(f.name.span());
                    out.spans.param_types.push(range_of(&f.ty));
                }
            }
            Item::Buffers(list, _) => {
                for b in list {
                    let len = match &b.len {
                        Some(lit) => match lit.base10_parse::<u64>() {
                            Ok(n) => Some(n),
                            Err(e) => {
                                out.errors.push(e);
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
                            out.errors.push(syn::Error::new(
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
                    out.graph.buffers.push(Buffer {
                        name: name_of(&b.name),
                        elem: type_text(&b.elem),
                        len,
                        role,
                    });
                    out.spans.buffers.push(b.name.span());
                    out.spans.buffer_types.push(range_of(&b.elem));
                }
            }
            Item::Kernel(k) => lower_kernel(&mut out, k),
            Item::Copy { name, src, dst } => {
                let kind = NodeKind::Copy {
                    src: name_of(src),
                    dst: name_of(dst),
                };
                let spans = vec![
                    (range_of(src), range_of(src)),
                    (range_of(dst), range_of(dst)),
                ];
                push_node(
                    &mut out,
                    name,
                    kind,
                    spans,
                    SourceSpans::Builtin { name: name.span() },
                );
            }
            Item::Fill { name, dst, value } => {
                // `fill` is the library's fill kernel under a shorter name.
                let kernel = Kernel {
                    accesses: vec![Access {
                        binding: "output".into(),
                        buffer: name_of(dst),
                        mode: AccessMode::Write,
                    }],
                    source: KernelSource::Library("fill".into()),
                    entry: None,
                    dispatch: DispatchSpec::Auto,
                    args: vec![KernelArg {
                        name: "value".into(),
                        wgsl: WgslText::from_tokens(value.to_token_stream()).text,
                    }],
                };
                let spans = vec![(range_of(dst), range_of(dst))];
                push_node(
                    &mut out,
                    name,
                    NodeKind::Kernel(kernel),
                    spans,
                    SourceSpans::Builtin { name: name.span() },
                );
                *out.spans.args.last_mut().expect("node just pushed") = vec![range_of(value)];
            }
            Item::Host { name, accesses } => {
                let (list, spans) = lower_accesses(accesses);
                push_node(
                    &mut out,
                    name,
                    NodeKind::Host { accesses: list },
                    spans,
                    SourceSpans::Builtin { name: name.span() },
                );
            }
            Item::Edges(chain) => {
                for pair in chain.windows(2) {
                    out.graph.edges.push(ExplicitEdge {
                        from: name_of(&pair[0]),
                        to: name_of(&pair[1]),
                    });
                    out.spans.edges.push((pair[0].span(), pair[1].span()));
                }
            }
        }
    }
    out
}

fn push_node(
    out: &mut Lowered,
    name: &Ident,
    kind: NodeKind,
    accesses: Vec<(SpanRange, SpanRange)>,
    source: SourceSpans,
) {
    out.graph.nodes.push(Node {
        name: name_of(name),
        kind,
    });
    out.spans.nodes.push(name.span());
    out.spans.accesses.push(accesses);
    out.spans.args.push(Vec::new());
    out.spans.sources.push(source);
    out.spans.entries.push(None);
    out.spans.dispatch.push(None);
    out.dispatch_exprs.push(Vec::new());
}

fn lower_accesses(accesses: &[AccessDecl]) -> (Vec<Access>, Vec<(SpanRange, SpanRange)>) {
    let list = accesses
        .iter()
        .map(|a| Access {
            binding: name_of(&a.buffer),
            buffer: name_of(&a.buffer),
            mode: match a.mode.to_string().as_str() {
                "read" => AccessMode::Read,
                "write" => AccessMode::Write,
                _ => AccessMode::ReadWrite,
            },
        })
        .collect();
    let spans = accesses
        .iter()
        .map(|a| (range_of(&a.buffer), range_of(&a.mode)))
        .collect();
    (list, spans)
}

fn lower_kernel(out: &mut Lowered, k: &KernelDecl) {
    let dispatch = match &k.dispatch {
        None => DispatchSpec::Auto,
        Some(d) if d.workgroups => DispatchSpec::Workgroups {
            dims: d.dims.len() as u8,
        },
        Some(d) => DispatchSpec::Threads {
            dims: d.dims.len() as u8,
        },
    };
    let (accesses, access_spans, source, source_spans, args, arg_spans) = match &k.body {
        KernelBody::Inline { accesses, wgsl } => {
            let (list, spans) = lower_accesses(accesses);
            let text = WgslText::from_tokens(wgsl.clone());
            let source = KernelSource::Wgsl {
                text: text.text.clone(),
                file: None,
            };
            (
                list,
                spans,
                source,
                SourceSpans::Inline { text },
                Vec::new(),
                Vec::new(),
            )
        }
        KernelBody::File { accesses, path } => {
            let (list, spans) = lower_accesses(accesses);
            let text = match read_wgsl_file(&path.value()) {
                Ok((full, text)) => {
                    out.files.push(full);
                    text
                }
                Err(message) => {
                    out.errors.push(syn::Error::new(path.span(), message));
                    out.unread_files.push(out.graph.nodes.len());
                    String::new()
                }
            };
            let source = KernelSource::Wgsl {
                text,
                file: Some(path.value()),
            };
            (
                list,
                spans,
                source,
                SourceSpans::File {
                    path: range_of(path),
                },
                Vec::new(),
                Vec::new(),
            )
        }
        KernelBody::Library { path, bindings } => {
            let path_text = path
                .iter()
                .map(Ident::to_string)
                .collect::<Vec<_>>()
                .join("::");
            let lib = kernels::LIBRARY.get(&path_text);
            let (mut accesses, mut access_spans, mut args, mut arg_spans) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for (name, value) in bindings {
                let is_binding = lib.is_some_and(|l| l.bindings.iter().any(|b| *name == b.name));
                let is_arg = lib.is_some_and(|l| l.args.iter().any(|a| *name == a.name));
                let buffer = match value {
                    Expr::Path(p) if !is_arg => p.path.get_ident().cloned(),
                    _ => None,
                };
                match buffer {
                    Some(buffer) if is_binding || lib.is_some() => {
                        accesses.push(Access {
                            binding: name_of(name),
                            buffer: name_of(&buffer),
                            mode: AccessMode::Read,
                        });
                        access_spans.push((range_of(&buffer), (name.span(), buffer.span())));
                    }
                    _ if lib.is_none() => {}
                    _ => {
                        args.push(KernelArg {
                            name: name_of(name),
                            wgsl: WgslText::from_tokens(value.to_token_stream()).text,
                        });
                        arg_spans.push((name.span(), range_of(value).1));
                    }
                }
            }
            let source = KernelSource::Library(path_text);
            let spans = SourceSpans::Library {
                path: range_of(path.iter().collect::<TokenStreamOf>().0),
            };
            (accesses, access_spans, source, spans, args, arg_spans)
        }
    };
    let kernel = Kernel {
        accesses,
        source,
        entry: k.entry.as_ref().map(Ident::to_string),
        dispatch,
        args,
    };
    push_node(
        out,
        &k.name,
        NodeKind::Kernel(kernel),
        access_spans,
        source_spans,
    );
    let n = out.graph.nodes.len() - 1;
    out.spans.args[n] = arg_spans;
    out.spans.entries[n] = k.entry.as_ref().map(Ident::span);
    if let Some(d) = &k.dispatch {
        out.spans.dispatch[n] = Some((d.keyword.span(), range_of(d.dims.last()).1));
        out.dispatch_exprs[n] = d.dims.clone();
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

fn type_text(ty: &syn::Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
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
