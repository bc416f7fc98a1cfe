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

#[cfg(test)]
mod tests {
    use graph_core::Loc;
    use proc_macro2::{LineColumn, Span, TokenStream, TokenTree};

    use super::{Spans, one};
    use crate::wgsl_tokens::WgslText;

    /// Spans that tell apart, with proc-macro2's positions: one per word of `words`, and the text's tokens.
    fn spans(words: &str) -> (Vec<Span>, TokenStream) {
        let tokens: TokenStream = words.parse().expect("tokens");
        let spans = tokens.clone().into_iter().map(|t| t.span()).collect();
        (spans, tokens)
    }

    fn start(range: (Span, Span)) -> LineColumn {
        range.0.start()
    }

    #[test]
    fn a_location_without_a_span_is_shown_at_the_nearest_one_around_it() {
        let (s, _) = spans("Graph k threads n file param");
        let [graph, kernel, threads, n, file, param] = s[..] else {
            panic!("six spans");
        };
        let mut t = Spans::new(graph);
        t.set(Loc::Node(0), one(kernel));
        t.set(Loc::Dispatch(0), (threads, n));
        t.set(
            Loc::SizeTerm {
                node: 0,
                dim: 0,
                term: 0,
            },
            one(n),
        );
        t.set(Loc::Node(1), one(file));
        t.set(Loc::KernelSource(1), one(file));
        t.set(Loc::Param(0), one(param));
        let is_at = |loc: Loc, span: Span| {
            assert_eq!(start(t.locate(&loc)), span.start(), "{loc:?}");
        };
        // Its own span, when recorded.
        is_at(
            Loc::SizeTerm {
                node: 0,
                dim: 0,
                term: 0,
            },
            n,
        );
        is_at(Loc::Param(0), param);
        // A size term without one: the dispatch clause; an access, argument or entry: the node's name.
        is_at(
            Loc::SizeTerm {
                node: 0,
                dim: 1,
                term: 0,
            },
            threads,
        );
        is_at(Loc::Access { node: 0, index: 3 }, kernel);
        is_at(Loc::AccessMode { node: 0, index: 3 }, kernel);
        is_at(Loc::KernelArg { node: 0, index: 0 }, kernel);
        is_at(Loc::KernelEntry(0), kernel);
        // A size term of a node without a dispatch clause (a copy's range): the node's name.
        is_at(
            Loc::SizeTerm {
                node: 1,
                dim: 0,
                term: 0,
            },
            file,
        );
        // WGSL not written inline: the kernel's source, else the node's name.
        is_at(
            Loc::Wgsl {
                node: 1,
                range: 0..4,
            },
            file,
        );
        is_at(
            Loc::Wgsl {
                node: 0,
                range: 0..4,
            },
            kernel,
        );
        // A node, parameter or block without one, and whatever belongs to it: the graph's name.
        is_at(Loc::Node(7), graph);
        is_at(Loc::Access { node: 7, index: 0 }, graph);
        is_at(
            Loc::SizeTerm {
                node: 7,
                dim: 0,
                term: 0,
            },
            graph,
        );
        is_at(Loc::Param(1), graph);
        is_at(Loc::ParamsBlock, graph);
        is_at(Loc::EdgeTo(0), graph);
    }

    /// A byte range of inline WGSL is shown on the tokens it covers, not at the kernel.
    #[test]
    fn inline_wgsl_ranges_are_shown_on_their_tokens() {
        let (s, tokens) = spans("k { fn main() {} }");
        let Some(TokenTree::Group(body)) = tokens.into_iter().nth(1) else {
            panic!("a body");
        };
        let text = WgslText::from_tokens(body.stream());
        let main = text.text.find("main").expect("main");
        let mut t = Spans::new(Span::call_site());
        t.set(Loc::Node(0), one(s[0]));
        t.set_inline(0, text);
        let shown = t.locate(&Loc::Wgsl {
            node: 0,
            range: main..main + 4,
        });
        assert_eq!(start(shown), LineColumn { line: 1, column: 7 });
        assert_eq!(start(t.locate(&Loc::KernelSource(0))), s[0].start());
    }
}
