//! The syntax tree of a `graph!` block, mirroring the grammar, and its parser.
//!
//! ```text
//! graph   := attr* vis 'graph' Ident '{' item* '}'
//! attr    := '#[explicit_edges]' | '#[uniform_params]' | doc comment
//! item    := 'params' '{' (Ident ':' Type),* '}'
//!          | 'buffers' '{' (Ident ':' '[' Type (';' LitInt)? ']' ('=' role)?),* '}'
//!          | 'kernel' Ident '(' (Ident ':' mode),* ')' clause* ( '{' WGSL '}' | 'file' '(' LitStr ')' ';' )
//!          | 'kernel' Ident '=' 'kernels' '::' path '(' (Ident ':' Expr),* ')' clause* ';'
//!          | 'fill' Ident '(' Ident '=' Expr ')' ';'
//!          | 'copy' Ident '(' Ident '->' Ident ')' ';'
//!          | 'host' Ident '(' (Ident ':' mode),* ')' ';'
//!          | Ident ('->' Ident)+ ';'
//! clause  := 'threads' '(' Expr,{1,3} ')' | 'workgroups' '(' Expr,{1,3} ')' | 'entry' '(' Ident ')'
//! ```

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{
    Attribute, Expr, Ident, LitInt, LitStr, Token, Type, Visibility, braced, bracketed,
    parenthesized,
};

pub mod kw {
    syn::custom_keyword!(graph);
    syn::custom_keyword!(params);
    syn::custom_keyword!(buffers);
    syn::custom_keyword!(kernel);
    syn::custom_keyword!(kernels);
    syn::custom_keyword!(copy);
    syn::custom_keyword!(fill);
    syn::custom_keyword!(host);
    syn::custom_keyword!(threads);
    syn::custom_keyword!(workgroups);
    syn::custom_keyword!(entry);
    syn::custom_keyword!(file);
}

pub struct GraphDef {
    pub docs: Vec<Attribute>,
    pub explicit_edges: bool,
    pub uniform_params: bool,
    pub vis: Visibility,
    pub name: Ident,
    pub items: Vec<Item>,
    /// Errors from items the parser skipped to recover.
    pub errors: Vec<syn::Error>,
}

pub enum Item {
    Params {
        keyword: Span,
        fields: Vec<ParamDecl>,
        /// Errors of the declarations that did not parse.
        errors: Vec<syn::Error>,
    },
    /// The declarations that parsed, and the errors of those that did not.
    Buffers(Vec<BufferDecl>, Vec<syn::Error>),
    Kernel(KernelDecl),
    Copy {
        name: Ident,
        src: Ident,
        dst: Ident,
    },
    Fill {
        name: Ident,
        dst: Ident,
        value: Expr,
    },
    Host {
        name: Ident,
        accesses: Vec<AccessDecl>,
    },
    Edges(Vec<Ident>),
}

pub struct ParamDecl {
    pub name: Ident,
    pub ty: Type,
}

pub struct BufferDecl {
    pub name: Ident,
    pub elem: Type,
    pub len: Option<LitInt>,
    pub role: Option<Ident>,
}

pub struct AccessDecl {
    pub buffer: Ident,
    pub mode: Ident,
}

pub struct KernelDecl {
    pub name: Ident,
    pub body: KernelBody,
    pub dispatch: Option<Dispatch>,
    pub entry: Option<Ident>,
}

pub enum KernelBody {
    Inline {
        accesses: Vec<AccessDecl>,
        wgsl: TokenStream,
    },
    File {
        accesses: Vec<AccessDecl>,
        path: LitStr,
    },
    Library {
        path: Vec<Ident>,
        bindings: Vec<(Ident, Expr)>,
    },
}

pub struct Dispatch {
    pub keyword: Ident,
    pub workgroups: bool,
    pub dims: Vec<Expr>,
}

impl Parse for GraphDef {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let mut docs = Vec::new();
        let mut errors = Vec::new();
        let (mut explicit_edges, mut uniform_params) = (false, false);
        for attr in attrs {
            if attr.path().is_ident("doc") {
                docs.push(attr);
            } else if attr.path().is_ident("explicit_edges") {
                match attr.meta.require_path_only() {
                    Ok(_) => explicit_edges = true,
                    Err(e) => errors.push(e),
                }
            } else if attr.path().is_ident("uniform_params") {
                match attr.meta.require_path_only() {
                    Ok(_) => uniform_params = true,
                    Err(e) => errors.push(e),
                }
            } else {
                // Reported beside the rest, so the graph's items are still checked and stubbed.
                errors.push(syn::Error::new_spanned(
                    attr.path(),
                    "unknown graph attribute; the graph attributes are `#[explicit_edges]` (no edge inference: \
                     order conflicting accesses with `a -> b;`) and `#[uniform_params]` (parameters in a \
                     uniform buffer instead of push constants)",
                ));
            }
        }
        let vis: Visibility = input.parse()?;
        input.parse::<kw::graph>()?;
        let name: Ident = input.parse()?;
        let content;
        braced!(content in input);
        let mut items = Vec::new();
        while !content.is_empty() {
            // Doc comments on items are welcome and dropped; other attributes mean nothing here.
            match content.call(Attribute::parse_outer) {
                Ok(attrs) => {
                    errors.extend(attrs.iter().filter(|a| !a.path().is_ident("doc")).map(|a| {
                        syn::Error::new_spanned(
                            a,
                            "graph items take no attributes other than doc comments",
                        )
                    }))
                }
                Err(e) => errors.push(e),
            }
            // Each item is parsed on a fork: on error, recovery restarts from the item's first token.
            let fork = content.fork();
            match fork.parse::<Item>() {
                Ok(mut item) => {
                    content.advance_to(&fork);
                    match &mut item {
                        Item::Params { errors: inner, .. } | Item::Buffers(_, inner) => {
                            errors.append(inner)
                        }
                        _ => {}
                    }
                    items.push(item);
                }
                Err(e) => {
                    errors.push(e);
                    skip_item(&content);
                }
            }
        }
        if !input.is_empty() {
            return Err(input
                .error("one `graph!` block declares one graph; expected nothing after its `}`"));
        }
        Ok(GraphDef {
            docs,
            explicit_edges,
            uniform_params,
            vis,
            name,
            items,
            errors,
        })
    }
}

/// Comma-separated declarations, each parsed on its own: a bad one is reported and skipped (to its comma),
/// and the rest are kept, so one typo in `buffers { .. }` does not make every buffer unknown.
fn parse_entries<T: Parse>(content: ParseStream<'_>) -> (Vec<T>, Vec<syn::Error>) {
    let (mut entries, mut errors) = (Vec::new(), Vec::new());
    while !content.is_empty() {
        let fork = content.fork();
        let parsed = fork.parse::<T>().and_then(|entry| {
            if !fork.is_empty() {
                fork.parse::<Token![,]>()?;
            }
            Ok(entry)
        });
        match parsed {
            Ok(entry) => {
                content.advance_to(&fork);
                entries.push(entry);
            }
            Err(e) => {
                errors.push(e);
                let _ = content.step(|cursor| {
                    let mut rest = *cursor;
                    while let Some((tt, next)) = rest.token_tree() {
                        rest = next;
                        if matches!(tt, TokenTree::Punct(p) if p.as_char() == ',') {
                            break;
                        }
                    }
                    Ok(((), rest))
                });
            }
        }
    }
    (entries, errors)
}

/// The words that start an item: recovery stops before one, so a bad item does not swallow the next.
const ITEM_KEYWORDS: [&str; 6] = ["params", "buffers", "kernel", "fill", "copy", "host"];

/// Skips a bad item from its first token to just after its `;` or braced group, or to just before the next
/// item keyword, so one mistake does not hide the errors of the rest (nor cause new ones).
fn skip_item(input: ParseStream<'_>) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        let mut first = true;
        while let Some((tt, next)) = rest.token_tree() {
            if !first && matches!(&tt, TokenTree::Ident(i) if ITEM_KEYWORDS.contains(&i.to_string().as_str())) {
                break;
            }
            first = false;
            rest = next;
            match tt {
                TokenTree::Punct(p) if p.as_char() == ';' => break,
                TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => break,
                _ => {}
            }
        }
        Ok(((), rest))
    });
}

impl Parse for Item {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let look = input.lookahead1();
        if look.peek(kw::params) {
            let keyword = input.parse::<kw::params>()?.span;
            let content;
            braced!(content in input);
            let (fields, errors) = parse_entries(&content);
            Ok(Item::Params {
                keyword,
                fields,
                errors,
            })
        } else if look.peek(kw::buffers) {
            input.parse::<kw::buffers>()?;
            let content;
            braced!(content in input);
            let (list, errors) = parse_entries(&content);
            Ok(Item::Buffers(list, errors))
        } else if look.peek(kw::kernel) {
            input.parse::<kw::kernel>()?;
            input.parse().map(Item::Kernel)
        } else if look.peek(kw::copy) {
            input.parse::<kw::copy>()?;
            let name = input.parse()?;
            let content;
            parenthesized!(content in input);
            let src = content.parse()?;
            content.parse::<Token![->]>()?;
            let dst = content.parse()?;
            input.parse::<Token![;]>()?;
            Ok(Item::Copy { name, src, dst })
        } else if look.peek(kw::fill) {
            input.parse::<kw::fill>()?;
            let name = input.parse()?;
            let content;
            parenthesized!(content in input);
            let dst = content.parse()?;
            content.parse::<Token![=]>()?;
            let value = content.parse()?;
            input.parse::<Token![;]>()?;
            Ok(Item::Fill { name, dst, value })
        } else if look.peek(kw::host) {
            input.parse::<kw::host>()?;
            let name = input.parse()?;
            let accesses = parse_accesses(input)?;
            input.parse::<Token![;]>()?;
            Ok(Item::Host { name, accesses })
        } else if look.peek(Ident) {
            let mut chain = vec![input.parse::<Ident>()?];
            if !input.peek(Token![->]) {
                let word = chain[0].to_string();
                let keywords = ["params", "buffers", "kernel", "fill", "copy", "host"];
                let message = match graph_core::names::did_you_mean(&word, keywords) {
                    Some(keyword) => format!("unknown item `{word}`; did you mean `{keyword}`?"),
                    None => format!(
                        "expected an item: `params`, `buffers`, `kernel`, `fill`, `copy`, `host`, or an edge \
                         `{word} -> other;`"
                    ),
                };
                return Err(syn::Error::new(chain[0].span(), message));
            }
            while input.peek(Token![->]) {
                input.parse::<Token![->]>()?;
                chain.push(input.parse()?);
            }
            input.parse::<Token![;]>()?;
            Ok(Item::Edges(chain))
        } else {
            Err(look.error())
        }
    }
}

impl Parse for ParamDecl {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name = input.parse()?;
        input.parse::<Token![:]>()?;
        let ty = input.parse().map_err(|e: syn::Error| {
            syn::Error::new(
                e.span(),
                "expected the parameter's type: `f32`, `i32`, `u32`, `vec2<f32>`, `vec4<u32>`..",
            )
        })?;
        Ok(ParamDecl { name, ty })
    }
}

impl Parse for BufferDecl {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name = input.parse()?;
        input.parse::<Token![:]>()?;
        let content;
        bracketed!(content in input);
        let elem = content.parse().map_err(|e: syn::Error| {
            syn::Error::new(
                e.span(),
                "expected the element type: `[f32]`, `[u32; 64]`, `[vec4<f32>]`..",
            )
        })?;
        let len = if content.peek(Token![;]) {
            content.parse::<Token![;]>()?;
            Some(content.parse()?)
        } else {
            None
        };
        if !content.is_empty() {
            return Err(content.error("expected `[T]` or `[T; N]`"));
        }
        let role = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            // Any word, keywords included (`= in`): lowering reports a wrong one and keeps the buffer, so its
            // users do not see it as unknown.
            Some(input.call(Ident::parse_any)?)
        } else {
            None
        };
        Ok(BufferDecl {
            name,
            elem,
            len,
            role,
        })
    }
}

impl Parse for AccessDecl {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let buffer = input.parse()?;
        input.parse::<Token![:]>()?;
        let mode: Ident = input.call(Ident::parse_any)?;
        if !["read", "write", "read_write"].contains(&mode.to_string().as_str()) {
            return Err(syn::Error::new(
                mode.span(),
                format!(
                    "unknown access `{mode}`; write `read`, `write` (overwrite) or `read_write`"
                ),
            ));
        }
        Ok(AccessDecl { buffer, mode })
    }
}

fn parse_accesses(input: ParseStream<'_>) -> syn::Result<Vec<AccessDecl>> {
    let content;
    parenthesized!(content in input);
    Ok(
        Punctuated::<AccessDecl, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect(),
    )
}

impl Parse for KernelDecl {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            input.parse::<kw::kernels>()?;
            let mut path = Vec::new();
            while input.peek(Token![::]) {
                input.parse::<Token![::]>()?;
                path.push(input.parse::<Ident>()?);
            }
            if path.is_empty() {
                return Err(
                    input.error("expected a library kernel path, such as `kernels::scale(..)`")
                );
            }
            let content;
            parenthesized!(content in input);
            let bindings = Punctuated::<LibraryBinding, Token![,]>::parse_terminated(&content)?;
            let (dispatch, entry) = parse_clauses(input)?;
            input.parse::<Token![;]>()?;
            let bindings = bindings.into_iter().map(|b| (b.name, b.value)).collect();
            return Ok(KernelDecl {
                name,
                body: KernelBody::Library { path, bindings },
                dispatch,
                entry,
            });
        }
        let accesses = parse_accesses(input)?;
        let (dispatch, entry) = parse_clauses(input)?;
        let body = if input.peek(kw::file) {
            input.parse::<kw::file>()?;
            let content;
            parenthesized!(content in input);
            let path = content.parse()?;
            input.parse::<Token![;]>()?;
            KernelBody::File { accesses, path }
        } else if input.peek(syn::token::Brace) {
            let content;
            braced!(content in input);
            KernelBody::Inline {
                accesses,
                wgsl: content.parse()?,
            }
        } else {
            return Err(input.error(
                "expected the kernel's WGSL: a `{ .. }` body, or `file(\"path.wgsl\");` relative to the crate",
            ));
        };
        Ok(KernelDecl {
            name,
            body,
            dispatch,
            entry,
        })
    }
}

struct LibraryBinding {
    name: Ident,
    value: Expr,
}

impl Parse for LibraryBinding {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name = input.parse()?;
        input.parse::<Token![:]>()?;
        Ok(LibraryBinding {
            name,
            value: input.parse()?,
        })
    }
}

fn parse_clauses(input: ParseStream<'_>) -> syn::Result<(Option<Dispatch>, Option<Ident>)> {
    let (mut dispatch, mut entry) = (None, None);
    loop {
        if input.peek(kw::threads) || input.peek(kw::workgroups) {
            let keyword: Ident = input.parse()?;
            let content;
            parenthesized!(content in input);
            let dims: Vec<Expr> = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?
                .into_iter()
                .collect();
            if dims.is_empty() || dims.len() > 3 {
                return Err(syn::Error::new(
                    keyword.span(),
                    format!("`{keyword}` takes 1 to 3 sizes (x, y, z)"),
                ));
            }
            if dispatch.is_some() {
                return Err(syn::Error::new(
                    keyword.span(),
                    "a kernel has one `threads(..)` or `workgroups(..)`",
                ));
            }
            let workgroups = keyword == "workgroups";
            dispatch = Some(Dispatch {
                keyword,
                workgroups,
                dims,
            });
        } else if input.peek(kw::entry) {
            input.parse::<kw::entry>()?;
            let content;
            parenthesized!(content in input);
            entry = Some(content.parse()?);
        } else {
            return Ok((dispatch, entry));
        }
    }
}
