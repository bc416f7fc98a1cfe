//! The `graph!` procedural macro. Use it through `graph_runtime::graph!`, whose documentation describes the
//! language; this crate only parses, checks (with `graph-core`) and generates.

#![forbid(unsafe_code)]

mod ast;
mod const_tokens;
mod ctxt;
mod expand;
mod fallback;
mod generate;
mod lower;
mod render;
mod spans;
#[cfg(test)]
mod wgsl_token_properties;
mod wgsl_tokens;

/// Declares a GPU task graph, checks it at compile time and generates its typed API. See `graph_runtime`.
#[proc_macro]
pub fn graph(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand::expand(input.into()).into()
}
