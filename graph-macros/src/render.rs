//! Diagnostics from `graph-core` shown on the user's tokens: each abstract location becomes the narrowest span
//! the table knows for it.

use graph_core::{Diagnostic, Loc};
use proc_macro2::{Ident, Span, TokenStream};
use quote::ToTokens;

use crate::lower::{SourceSpans, SpanRange, SpanTable};

/// A `syn::Error` that rustc underlines from `range.0` to `range.1`.
pub fn error_at(range: SpanRange, message: &str) -> syn::Error {
    let mut tokens = TokenStream::new();
    Ident::new("first", range.0).to_tokens(&mut tokens);
    Ident::new("last", range.1).to_tokens(&mut tokens);
    syn::Error::new_spanned(tokens, message)
}

pub fn render(diagnostic: &Diagnostic, spans: &SpanTable) -> syn::Error {
    error_at(locate(&diagnostic.loc, spans), &diagnostic.full_message())
}

fn one(span: Span) -> SpanRange {
    (span, span)
}

fn locate(loc: &Loc, t: &SpanTable) -> SpanRange {
    let node_name = |n: usize| t.nodes.get(n).copied().map_or(one(t.graph), one);
    let found = match loc {
        Loc::Graph => Some(one(t.graph)),
        Loc::ParamsBlock => Some(one(t.params_block)),
        Loc::Param(i) => t.params.get(*i).copied().map(one),
        Loc::ParamType(i) => t.param_types.get(*i).copied(),
        Loc::Buffer(i) => t.buffers.get(*i).copied().map(one),
        Loc::BufferType(i) => t.buffer_types.get(*i).copied(),
        Loc::Node(n) => Some(node_name(*n)),
        Loc::Access { node, index } => t
            .accesses
            .get(*node)
            .and_then(|a| a.get(*index))
            .map(|a| a.0),
        Loc::AccessMode { node, index } => t
            .accesses
            .get(*node)
            .and_then(|a| a.get(*index))
            .map(|a| a.1),
        Loc::KernelArg { node, index } => t.args.get(*node).and_then(|a| a.get(*index)).copied(),
        Loc::KernelSource(n) => t.sources.get(*n).map(|s| match s {
            // The kernel's name: narrower than its whole body, and what the message names.
            SourceSpans::Inline { .. } => node_name(*n),
            SourceSpans::File { path } | SourceSpans::Library { path } => *path,
            SourceSpans::Builtin { name } => one(*name),
        }),
        Loc::KernelEntry(n) => t.entries.get(*n).copied().flatten().map(one),
        Loc::Dispatch(n) => t.dispatch.get(*n).copied().flatten(),
        Loc::SizeTerm { node, dim, term } => t
            .sizes
            .get(*node)
            .and_then(|dims| dims.get(*dim))
            .and_then(|terms| terms.get(*term))
            .copied(),
        Loc::Wgsl { node, range } => t.sources.get(*node).and_then(|s| match s {
            SourceSpans::Inline { text, .. } => text.spans_for(range),
            SourceSpans::File { path } | SourceSpans::Library { path } => Some(*path),
            SourceSpans::Builtin { name } => Some(one(*name)),
        }),
        Loc::Alternatives(i) => t.alternatives.get(*i).map(|s| one(*s)),
        Loc::Block(i) => t.blocks.get(*i).map(|s| one(*s)),
        Loc::Edge(i) => t.edges.get(*i).copied(),
        Loc::EdgeFrom(i) => t.edges.get(*i).map(|e| one(e.0)),
        Loc::EdgeTo(i) => t.edges.get(*i).map(|e| one(e.1)),
    };
    let fallback = match loc {
        Loc::Access { node, .. }
        | Loc::AccessMode { node, .. }
        | Loc::KernelArg { node, .. }
        | Loc::KernelEntry(node)
        | Loc::Dispatch(node)
        | Loc::Wgsl { node, .. } => node_name(*node),
        Loc::SizeTerm { node, .. } => t
            .dispatch
            .get(*node)
            .copied()
            .flatten()
            .unwrap_or_else(|| node_name(*node)),
        _ => one(t.graph),
    };
    found.unwrap_or(fallback)
}
