//! Inline WGSL arrives as Rust tokens. This turns them back into WGSL text and keeps, for each token, its byte
//! range in that text and its span, so a naga error on a byte range lands on the user's tokens.

use std::ops::Range;

use proc_macro2::{Delimiter, LineColumn, Spacing, Span, TokenStream, TokenTree};

pub struct WgslText {
    pub text: String,
    tokens: Vec<(Range<usize>, Span)>,
    /// Where the last token ended in the user's file, when the compiler says (line 0: it does not).
    last_end: Option<LineColumn>,
    /// Whether the last token was punctuation joined to the next (`>` of `>>`).
    joint: bool,
}

impl WgslText {
    pub fn from_tokens(tokens: TokenStream) -> Self {
        let mut out = WgslText {
            text: String::new(),
            tokens: Vec::new(),
            last_end: None,
            joint: false,
        };
        out.push_stream(tokens);
        out
    }

    fn push_stream(&mut self, tokens: TokenStream) {
        let mut iter = tokens.into_iter().peekable();
        while let Some(tt) = iter.next() {
            // Rust keeps `///` comments as `#[doc = ".."]` (and `//!` as `#![doc = ".."]`): not WGSL, drop them.
            if let TokenTree::Punct(p) = &tt
                && p.as_char() == '#'
            {
                if let Some(TokenTree::Punct(bang)) = iter.peek()
                    && bang.as_char() == '!'
                {
                    let mut ahead = iter.clone();
                    ahead.next();
                    if matches!(ahead.peek(), Some(TokenTree::Group(g)) if is_doc(g)) {
                        iter.next();
                        iter.next();
                        continue;
                    }
                }
                if matches!(iter.peek(), Some(TokenTree::Group(g)) if is_doc(g)) {
                    iter.next();
                    continue;
                }
            }
            match tt {
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::None => ("", ""),
                    };
                    self.push_token(open, g.span_open(), false);
                    self.push_stream(g.stream());
                    self.push_token(close, g.span_close(), false);
                }
                TokenTree::Punct(p) => self.push_token(
                    &p.as_char().to_string(),
                    p.span(),
                    p.spacing() == Spacing::Joint,
                ),
                TokenTree::Ident(i) => self.push_token(&i.to_string(), i.span(), false),
                TokenTree::Literal(l) => self.push_token(&l.to_string(), l.span(), false),
            }
        }
    }

    /// Appends a token, with the whitespace it had in the user's file before it: none where the tokens
    /// touched (`.5`, `0x1p-3`, `a.b`), a line break where a new line began, else a space. Where the compiler
    /// gives no positions (tokens from another macro), punctuation spacing decides, as Rust's own does.
    fn push_token(&mut self, text: &str, span: Span, joint: bool) {
        if !text.is_empty() {
            let (start, end) = (span.start(), span.end());
            // A real token has a width; a zero-width span (`call_site` in tests, or a tool that gives no
            // positions) says nothing about spacing.
            let known = start.line > 0 && (start.line, start.column) != (end.line, end.column);
            let follows = self
                .last_end
                .filter(|prev| known && (start.line, start.column) >= (prev.line, prev.column));
            match follows {
                Some(prev) if start.line > prev.line => self.text.push('\n'),
                Some(prev) if start.column > prev.column => self.text.push(' '),
                Some(_) => {}
                None if !self.joint && !self.text.is_empty() => self.text.push(' '),
                None => {}
            }
            let at = self.text.len();
            self.text.push_str(text);
            self.tokens.push((at..self.text.len(), span));
            self.last_end = known.then_some(end);
        }
        self.joint = joint;
    }

    /// The spans of the first and last tokens that overlap `range`; the nearest token when none does.
    pub fn spans_for(&self, range: &Range<usize>) -> Option<(Span, Span)> {
        let overlapping: Vec<Span> = self
            .tokens
            .iter()
            .filter(|(r, _)| r.start < range.end.max(range.start + 1) && range.start < r.end)
            .map(|(_, s)| *s)
            .collect();
        match (overlapping.first(), overlapping.last()) {
            (Some(first), Some(last)) => Some((*first, *last)),
            _ => self
                .tokens
                .iter()
                .rev()
                .find(|(r, _)| r.start <= range.start)
                .or(self.tokens.first())
                .map(|(_, s)| (*s, *s)),
        }
    }
}

fn is_doc(group: &proc_macro2::Group) -> bool {
    group.delimiter() == Delimiter::Bracket
        && matches!(group.stream().into_iter().next(), Some(TokenTree::Ident(i)) if i == "doc")
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn keeps_joint_punctuation_and_drops_doc_comments() {
        let tokens = quote! {
            /// a doc comment
            @compute @workgroup_size(64)
            fn main() { var a: array<vec2<f32>, 4>; a[0].x >>= 1u; let b = 0.5f; }
        };
        let w = WgslText::from_tokens(tokens);
        assert!(!w.text.contains("doc"), "{}", w.text);
        assert!(w.text.contains(">>="), "{}", w.text);
        assert!(w.text.contains("0.5f"), "{}", w.text);
        assert!(
            w.text.contains("vec2 < f32 > , 4 >")
                || w.text.contains("f32 >,")
                || w.text.contains("f32 >>"),
            "{}",
            w.text
        );
        let at = w.text.find("main").expect("main");
        assert!(w.spans_for(&(at..at + 4)).is_some());
    }
}
