//! Inline WGSL arrives as Rust tokens. This turns them back into WGSL text and keeps, for each token, its byte
//! range in that text and its span, so a naga error on a byte range lands on the user's tokens.

use std::ops::Range;

use proc_macro2::{Delimiter, Spacing, Span, TokenStream, TokenTree};

pub struct WgslText {
    pub text: String,
    tokens: Vec<(Range<usize>, Span)>,
}

impl WgslText {
    pub fn from_tokens(tokens: TokenStream) -> Self {
        let mut out = WgslText {
            text: String::new(),
            tokens: Vec::new(),
        };
        out.push_stream(tokens);
        out
    }

    fn push_stream(&mut self, tokens: TokenStream) {
        let mut iter = tokens.into_iter().peekable();
        let mut joint = false;
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
            if !joint {
                self.separate();
            }
            joint = false;
            match tt {
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::None => ("", ""),
                    };
                    self.push_token(open, g.span_open());
                    if g.delimiter() == Delimiter::Brace {
                        self.text.push('\n');
                    }
                    self.push_stream(g.stream());
                    if g.delimiter() == Delimiter::Brace {
                        self.text.push('\n');
                    }
                    self.separate();
                    self.push_token(close, g.span_close());
                    if g.delimiter() == Delimiter::Brace {
                        self.text.push('\n');
                    }
                }
                TokenTree::Punct(p) => {
                    // `>` `>` written together stay `>>`; apart, they stay apart. The spacing decides.
                    joint = p.spacing() == Spacing::Joint;
                    self.push_token(&p.as_char().to_string(), p.span());
                    if p.as_char() == ';' {
                        self.text.push('\n');
                    }
                }
                TokenTree::Ident(i) => self.push_token(&i.to_string(), i.span()),
                TokenTree::Literal(l) => self.push_token(&l.to_string(), l.span()),
            }
        }
    }

    fn separate(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with(char::is_whitespace) {
            self.text.push(' ');
        }
    }

    fn push_token(&mut self, text: &str, span: Span) {
        let start = self.text.len();
        self.text.push_str(text);
        self.tokens.push((start..self.text.len(), span));
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
