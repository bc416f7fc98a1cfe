//! Diagnostics from `graph-core` shown on the user's tokens: each abstract location at the narrowest span
//! [`Spans::locate`] knows for it.

use graph_core::Diagnostic;
use proc_macro2::{Ident, TokenStream};
use quote::ToTokens;

use crate::spans::{SpanRange, Spans};

/// A `syn::Error` that rustc underlines from `range.0` to `range.1`.
pub fn error_at(range: SpanRange, message: &str) -> syn::Error {
    let mut tokens = TokenStream::new();
    Ident::new("first", range.0).to_tokens(&mut tokens);
    Ident::new("last", range.1).to_tokens(&mut tokens);
    syn::Error::new_spanned(tokens, message)
}

pub fn render(diagnostic: &Diagnostic, spans: &Spans) -> syn::Error {
    error_at(spans.locate(&diagnostic.loc), &diagnostic.full_message())
}
