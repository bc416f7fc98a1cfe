//! Where each IR item was written: spans keyed by the IR's own locations ([`Loc`], the locations diagnostics
//! carry), recorded by lowering where it makes each item, so nothing is kept in step with the IR's vectors by
//! hand. A location written nowhere (a kernel without `entry(..)`, a graph without `params`) is shown at the
//! narrowest location around it that was written, and at the graph's name at last.

use std::collections::HashMap;

use graph_core::Loc;
use proc_macro2::Span;
use quote::ToTokens;

use crate::wgsl_tokens::WgslText;

/// A first and last span: rustc shows the range between them.
pub type SpanRange = (Span, Span);

pub fn range_of(tokens: impl ToTokens) -> SpanRange {
    let mut iter = tokens.into_token_stream().into_iter();
    let first = iter.next().map_or_else(Span::call_site, |t| t.span());
    let last = iter.last().map_or(first, |t| t.span());
    (first, last)
}

/// One token's span as a range.
pub fn one(span: Span) -> SpanRange {
    (span, span)
}

/// The spans of a graph's IR items, by location.
pub struct Spans {
    at: HashMap<Loc, SpanRange>,
    /// Each inline kernel's WGSL with the span of every token, by node: a byte range of it (`Loc::Wgsl`) is
    /// shown on the tokens it covers, which no single entry of `at` could say.
    inline: HashMap<usize, WgslText>,
}

impl Spans {
    /// The spans of a graph named at `graph`, before any item is recorded.
    pub fn new(graph: Span) -> Self {
        let mut spans = Spans {
            at: HashMap::new(),
            inline: HashMap::new(),
        };
        spans.set(Loc::Graph, one(graph));
        spans
    }

    /// Records where the item at `loc` was written. A WGSL range is never recorded: see [`Spans::set_inline`].
    pub fn set(&mut self, loc: Loc, range: SpanRange) {
        self.at.insert(loc, range);
    }

    /// Records the inline WGSL of kernel `node`, whose tokens its byte ranges map to.
    pub fn set_inline(&mut self, node: usize, text: WgslText) {
        self.inline.insert(node, text);
    }

    /// Where exactly the item at `loc` was written, if it was.
    pub fn get(&self, loc: &Loc) -> Option<SpanRange> {
        self.at.get(loc).copied()
    }

    /// The narrowest span to show `loc` at: its own, else that of the nearest location around it.
    pub fn locate(&self, loc: &Loc) -> SpanRange {
        // A byte range of inline WGSL is shown on its tokens.
        if let Loc::Wgsl { node, range } = loc
            && let Some(text) = self.inline.get(node)
            && let Some(tokens) = text.spans_for(range)
        {
            return tokens;
        }
        match (self.get(loc), around(loc)) {
            (Some(range), _) => range,
            (None, Some(around)) => self.locate(&around),
            (None, None) => self.graph(),
        }
    }

    /// The span of the graph's name, where everything is shown when nothing narrower was written.
    fn graph(&self) -> SpanRange {
        self.get(&Loc::Graph)
            .unwrap_or_else(|| one(Span::call_site()))
    }
}

/// The location a diagnostic at `loc` is shown at when `loc` itself has no span: the node for the parts of a
/// node, the dispatch clause for a term of a size, the kernel's source (its path, else the node's name) for
/// WGSL, the graph for everything else. `None` for the graph itself.
fn around(loc: &Loc) -> Option<Loc> {
    match loc {
        Loc::Graph => None,
        Loc::Access { node, .. }
        | Loc::AccessMode { node, .. }
        | Loc::KernelArg { node, .. }
        | Loc::KernelSource(node)
        | Loc::KernelEntry(node)
        | Loc::Dispatch(node) => Some(Loc::Node(*node)),
        Loc::SizeTerm { node, .. } => Some(Loc::Dispatch(*node)),
        // WGSL from a file, the library or nowhere (a fill) is shown at its path, or the node's name.
        Loc::Wgsl { node, .. } => Some(Loc::KernelSource(*node)),
        Loc::ParamsBlock
        | Loc::Param(_)
        | Loc::ParamType(_)
        | Loc::Buffer(_)
        | Loc::BufferType(_)
        | Loc::Node(_)
        | Loc::Alternatives(_)
        | Loc::Block(_)
        | Loc::Edge(_)
        | Loc::EdgeFrom(_)
        | Loc::EdgeTo(_) => Some(Loc::Graph),
    }
}
