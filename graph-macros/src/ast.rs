//! The syntax tree of a `graph!` block, mirroring the grammar, and its parser.
//!
//! ```text
//! graph   := attr* vis 'graph' Ident '{' marked* '}'
//! attr    := '#[explicit_edges]' | '#[uniform_params]' | '#[device_limits]' | '#[no_fusion]' | '#[no_alias]'
//!          | doc comment
//! marked  := (doc comment | '#[no_fusion]')* item      (`#[no_fusion]` on a kernel or a fill)
//! item    := 'params' '{' (doc comment* Ident ':' Type),* '}'
//!          | 'buffers' '{' ((doc comment | '#[no_alias]')* Ident ':' '[' Type (';' LitInt)? ']' ('=' role)?),* '}'
//!          | 'textures' '{' (doc comment* Ident ':' TextureType ('=' role)?),* '}'  (`texture_2d<rgba8unorm>`, `texture_2d<r32float; 64, 64>`, `sampler<linear, clamp>`)
//!          | 'kernel' Ident '(' (Ident ':' mode),* ')' clause* ( '{' WGSL '}' | 'file' '(' LitStr ')' ';' )
//!          | 'kernel' Ident '=' 'kernels' '::' path '(' (Ident ':' value),* ')' clause* ';'
//!          | 'fill' Ident '(' slice '=' value ')' ';'
//!          | 'copy' Ident '(' slice '->' slice ')' ';'
//!          | ('upload' | 'readback') Ident '(' slice ')' ';'
//!          | 'host' Ident '(' (Ident ':' mode),* ')' ';'
//!          | 'alternatives' Ident '{' marked* '}'                 (each a kernel, one of which runs)
//!          | 'if' Ident '(' Ident ')' '{' marked* '}'
//!          | 'repeat' Ident '(' LitInt (',' 'while' ':' Ident)? ')' '{' marked* '}'
//!          | Ident ('->' Ident)+ ';'
//! slice   := Ident ('[' Expr? '..' Expr? ']')?       (a range in elements, as Rust slices are written)
//! clause  := 'threads' '(' Expr,{1,3} ')' | 'workgroups' '(' Expr,{1,3} ')' | 'entry' '(' Ident ')'
//! value   := WGSL tokens up to the next `,` outside brackets (`params.k`, `vec2<f32>(1.0, 2.0)`)
//! ```
//!
//! The parser recovers: a mistake that leaves the rest of an item readable (a missing `;` or `,`, a misspelt
//! keyword, an unknown access word) is reported and the item is kept with what it declared, so the one
//! mistake does not turn into "unknown node" or "never written" errors elsewhere. Only an item that cannot be
//! read at all is skipped, up to the next item.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream, Parser};
use syn::{
    Attribute, Expr, Ident, LitInt, LitStr, Token, Type, Visibility, braced, bracketed,
    parenthesized,
};

use crate::ctxt::Ctxt;

pub mod kw {
    syn::custom_keyword!(graph);
}

/// The words that start an item.
const ITEM_KEYWORDS: [&str; 17] = [
    "params",
    "buffers",
    "textures",
    "kernel",
    "fill",
    "copy",
    "upload",
    "readback",
    "host",
    "interop",
    "empty",
    "barrier",
    "subgraph",
    "alternatives",
    "if",
    "switch",
    "repeat",
];

/// The clauses a kernel takes after its access list.
const CLAUSES: [&str; 4] = ["threads", "workgroups", "entry", "overrides"];

pub struct GraphDef {
    pub docs: Vec<Attribute>,
    pub explicit_edges: bool,
    pub uniform_params: bool,
    pub device_limits: bool,
    /// `#[no_fusion]` on the graph: no kernel of it is fused.
    pub no_fusion: bool,
    /// `#[no_alias]` on the graph: no graph-owned buffer of it shares memory.
    pub no_alias: bool,
    pub vis: Visibility,
    pub name: Ident,
    pub items: Vec<Marked<Item>>,
}

/// What is written above an item: doc comments (the node's docs) and `#[no_fusion]`.
pub struct Marks {
    pub docs: Vec<Attribute>,
    /// `#[no_fusion]` on a kernel or a fill (on anything else it is an error, and not kept).
    pub no_fusion: bool,
    /// `#[on(1)]`: the GPU of a set every node the item declares runs on.
    pub on: Option<u32>,
}

/// An item, or a choice of alternatives, with its attributes.
pub struct Marked<T> {
    pub marks: Marks,
    pub item: T,
}

pub enum Item {
    Params {
        keyword: Span,
        fields: Vec<ParamDecl>,
    },
    Buffers(Vec<BufferDecl>),
    /// `textures { .. }`: textures the caller binds.
    Textures(Vec<TextureDecl>),
    Kernel(KernelDecl),
    Copy {
        name: Ident,
        src: Slice,
        dst: Slice,
    },
    Fill {
        name: Ident,
        dst: Slice,
        value: TokenStream,
    },
    /// `upload name(buf);` (`readback: false`) or `readback name(buf);`, each of a buffer or a slice.
    Transfer {
        name: Ident,
        buffer: Slice,
        readback: bool,
    },
    Host {
        name: Ident,
        accesses: Vec<AccessDecl>,
    },
    Interop {
        name: Ident,
        accesses: Vec<AccessDecl>,
    },
    /// `empty name;` (`barrier: false`) or `barrier name;`.
    Empty {
        name: Ident,
        barrier: bool,
    },
    /// `subgraph name = path::Child(binding: buffer: mode, ..);`: each access names the child's buffer
    /// (`binding`, the buffer's own name when left out).
    Subgraph {
        name: Ident,
        path: syn::Path,
        accesses: Vec<AccessDecl>,
    },
    /// `alternatives name { kernel a ..; kernel b ..; }`: kernels, each binding what it needs, one active at a
    /// time.
    /// Each choice is a node item (the checks refuse one that is not a kernel).
    Alternatives {
        name: Ident,
        choices: Vec<Marked<Item>>,
        /// Other items written among the choices (already an error): kept as items of the graph, so what
        /// they declare is not unknown elsewhere.
        misplaced: Vec<Marked<Item>>,
    },
    /// `if name(flag) { .. }`, `repeat name(count) { .. }`, `repeat name(count, while: flag) { .. }`: items
    /// that run under GPU control.
    Block {
        keyword: Ident,
        name: Ident,
        /// `None` when the count is not a literal (already an error).
        count: Option<LitInt>,
        /// `None` for a `repeat` without `while`, or when the flag is not a buffer's name (already an error).
        flag: Option<Ident>,
        items: Vec<Marked<Item>>,
        /// An `if`'s `else { .. }`.
        otherwise: Vec<Marked<Item>>,
        /// A `switch`'s arms, in order.
        arms: Vec<Arm>,
    },
    Edges(Vec<Ident>),
}

/// One arm of a `switch`: `3 => { .. }`, or `_ => { .. }` (`value: None`); `unreadable` when what picks it
/// was neither (already an error: the arm is kept, so its nodes are not unknown elsewhere).
pub struct Arm {
    pub value: Option<LitInt>,
    pub unreadable: bool,
    pub items: Vec<Marked<Item>>,
}

/// A buffer, or a range of it: `x`, `x[2..]`, `x[..n.len()]`.
pub struct Slice {
    pub buffer: Ident,
    /// The bracketed range and its closing bracket's span, when written.
    pub range: Option<(syn::ExprRange, Span)>,
}

impl Slice {
    /// From the buffer's name to the closing bracket.
    pub fn span_range(&self) -> (Span, Span) {
        let end = self.range.as_ref().map_or(self.buffer.span(), |r| r.1);
        (self.buffer.span(), end)
    }
}

impl Parse for Slice {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let buffer = input.parse()?;
        if !input.peek(syn::token::Bracket) {
            return Ok(Slice {
                buffer,
                range: None,
            });
        }
        let content;
        let group = bracketed!(content in input);
        let range = match content.parse::<Expr>()? {
            Expr::Range(range) => range,
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "expected a range of elements, as Rust slices take: `start..end`, `start..`, `..end`",
                ));
            }
        };
        if let syn::RangeLimits::Closed(dots) = range.limits {
            return Err(syn::Error::new_spanned(
                dots,
                "write an end-exclusive range, `start..end`",
            ));
        }
        if !content.is_empty() {
            return Err(content.error("unexpected tokens after the range"));
        }
        Ok(Slice {
            buffer,
            range: Some((range, group.span.close())),
        })
    }
}

pub struct ParamDecl {
    pub docs: Vec<Attribute>,
    pub name: Ident,
    pub ty: Type,
}

pub struct BufferDecl {
    pub docs: Vec<Attribute>,
    /// `#[no_alias]` on it: its memory is its own (the checks refuse it on an external buffer).
    pub no_alias: Option<Attribute>,
    pub name: Ident,
    pub elem: Type,
    pub len: Option<LitInt>,
    pub role: Option<Ident>,
}

/// `name: texture_2d<rgba8unorm> = input`: a texture the caller binds, or without a role
/// `name: texture_2d<rgba16float; 512, 512>`, one the graph makes, or `name: sampler<linear, clamp>`, a
/// sampler the graph makes (types and sizes are checked by graph-core).
pub struct TextureDecl {
    pub docs: Vec<Attribute>,
    pub name: Ident,
    /// The type's tokens, `texture_2d` to the closing `>`: no Rust type, since a size follows a `;`.
    pub ty: TokenStream,
    pub role: Option<Ident>,
}

/// `buffer: mode`, or in a subgraph `binding: buffer: mode`. The mode is any word here; lowering refuses an
/// unknown one and keeps the access.
pub struct AccessDecl {
    /// A subgraph's name for the buffer, when it differs from the buffer's.
    pub binding: Option<Ident>,
    pub buffer: Ident,
    pub mode: Ident,
}

impl AccessDecl {
    /// The name the node's code uses for the buffer.
    pub fn binding(&self) -> &Ident {
        self.binding.as_ref().unwrap_or(&self.buffer)
    }
}

pub struct KernelDecl {
    pub name: Ident,
    pub body: KernelBody,
    pub dispatch: Option<Dispatch>,
    pub entry: Option<Ident>,
    /// `overrides(tile: x.len() / 64)`: values of the WGSL's `override` constants.
    pub overrides: Vec<(Ident, Expr)>,
}

/// What a kernel's clauses give: its dispatch, entry point, override values, and where they end.
struct Clauses {
    dispatch: Option<Dispatch>,
    entry: Option<Ident>,
    overrides: Vec<(Ident, Expr)>,
    end: Span,
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
    /// The WGSL is missing (already an error): the kernel keeps its accesses, and its WGSL is not checked.
    Missing { accesses: Vec<AccessDecl> },
    Library {
        path: Vec<Ident>,
        /// `name: value`: a buffer when the value is one name, else WGSL for an argument.
        bindings: Vec<(Ident, TokenStream)>,
    },
}

pub struct Dispatch {
    pub keyword: Ident,
    pub workgroups: bool,
    /// `workgroups(indirect: args)`: the buffer holding the counts.
    pub indirect: Option<Ident>,
    /// `None` when the sizes could not be parsed (already an error).
    pub dims: Option<Vec<Expr>>,
}

/// Parses a whole `graph!` block. Every mistake the parser recovers from is reported into `cx`, and the graph
/// is kept; an `Err` is a block that could not be read at all.
pub fn parse(tokens: TokenStream, cx: &Ctxt) -> syn::Result<GraphDef> {
    Parser::parse2(|input: ParseStream<'_>| parse_graph(input, cx), tokens)
}

fn parse_graph(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<GraphDef> {
    let attrs = input.call(Attribute::parse_outer)?;
    let mut docs = Vec::new();
    let (mut explicit_edges, mut uniform_params, mut device_limits, mut no_fusion, mut no_alias) =
        (false, false, false, false, false);
    for attr in attrs {
        let flag = if attr.path().is_ident("doc") {
            docs.push(attr);
            continue;
        } else if attr.path().is_ident("explicit_edges") {
            &mut explicit_edges
        } else if attr.path().is_ident("uniform_params") {
            &mut uniform_params
        } else if attr.path().is_ident("device_limits") {
            &mut device_limits
        } else if attr.path().is_ident("no_fusion") {
            &mut no_fusion
        } else if attr.path().is_ident("no_alias") {
            &mut no_alias
        } else {
            // Reported beside the rest, so the graph's items are still checked and stubbed.
            cx.error(syn::Error::new_spanned(
                attr.path(),
                "unknown graph attribute; the graph attributes are `#[explicit_edges]` (no edge inference: \
                 order conflicting accesses with `a -> b;`), `#[uniform_params]` (parameters in a uniform \
                 buffer instead of push constants), `#[device_limits]` (workgroup sizes checked against \
                 the device at bake instead of the portable limits), `#[no_fusion]` (no kernel fused \
                 with another) and `#[no_alias]` (no graph-owned buffer shares memory with another)",
            ));
            continue;
        };
        match attr.meta.require_path_only() {
            Ok(_) => *flag = true,
            Err(e) => cx.error(e),
        }
    }
    let vis: Visibility = input.parse()?;
    input.parse::<kw::graph>()?;
    let name: Ident = input.parse()?;
    let items = parse_block_body(input, cx)?;
    if !input.is_empty() {
        return Err(
            input.error("one `graph!` block declares one graph; expected nothing after its `}`")
        );
    }
    Ok(GraphDef {
        docs,
        explicit_edges,
        uniform_params,
        device_limits,
        no_fusion,
        no_alias,
        vis,
        name,
        items,
    })
}

/// The attributes above an item: its doc comments, and `#[no_fusion]` if written (checked against the item by
/// [`marked`]). Any other attribute is one error.
/// Doc comments and the two marks an item or an entry may carry.
pub struct Attrs {
    pub docs: Vec<Attribute>,
    pub no_fusion: Option<Attribute>,
    pub no_alias: Option<Attribute>,
    /// `#[on(1)]`, its GPU read.
    pub on: Option<(Attribute, u32)>,
}

fn parse_attrs(input: ParseStream<'_>, cx: &Ctxt) -> Attrs {
    let (mut docs, mut no_fusion, mut no_alias, mut on) = (Vec::new(), None, None, None);
    let attrs = match input.call(Attribute::parse_outer) {
        Ok(attrs) => attrs,
        Err(e) => {
            cx.error(e);
            Vec::new()
        }
    };
    for a in attrs {
        if a.path().is_ident("doc") {
            docs.push(a);
        } else if a.path().is_ident("no_fusion") || a.path().is_ident("no_alias") {
            match a.meta.require_path_only() {
                Ok(_) if a.path().is_ident("no_fusion") => no_fusion = Some(a),
                Ok(_) => no_alias = Some(a),
                Err(e) => cx.error(e),
            }
        } else if a.path().is_ident("on") {
            let gpu = a
                .parse_args::<LitInt>()
                .and_then(|gpu| gpu.base10_parse::<u32>());
            match gpu {
                Ok(gpu) => on = Some((a, gpu)),
                Err(_) => cx.error(syn::Error::new_spanned(
                    a,
                    "`#[on(..)]` takes the index of a GPU in the set the graph is baked on: `#[on(1)]`",
                )),
            }
        } else {
            cx.error(syn::Error::new_spanned(
                a,
                "graph items take no attributes other than doc comments, `#[no_fusion]` on a kernel or a \
                 fill, `#[no_alias]` on a graph-owned buffer, and `#[on(gpu)]` on a node",
            ));
        }
    }
    Attrs {
        docs,
        no_fusion,
        no_alias,
        on,
    }
}

/// `#[no_alias]` where it marks nothing: one error.
fn refuse_no_alias(no_alias: Option<Attribute>, what: &str, cx: &Ctxt) {
    if let Some(attr) = no_alias {
        cx.error(syn::Error::new_spanned(
            attr,
            format!("`#[no_alias]` marks a graph-owned buffer, whose memory bake may share; {what} is not: remove it"),
        ));
    }
}

/// An item with its attributes: `#[no_fusion]` on an item that is not fused is one error, and the item is
/// kept.
fn marked(item: Item, attrs: Attrs, cx: &Ctxt) -> Marked<Item> {
    let Attrs {
        docs,
        no_fusion,
        no_alias,
        on,
    } = attrs;
    refuse_no_alias(no_alias, "a node", cx);
    let places = !matches!(
        item,
        Item::Params { .. } | Item::Buffers(_) | Item::Textures(_) | Item::Edges(_)
    );
    if let Some((attr, _)) = on.as_ref().filter(|_| !places) {
        cx.error(syn::Error::new_spanned(
            attr,
            "`#[on(..)]` places the nodes an item declares on a GPU; this item declares none",
        ));
    }
    let fusable = matches!(item, Item::Kernel(_) | Item::Fill { .. });
    if let Some(attr) = no_fusion.as_ref().filter(|_| !fusable) {
        cx.error(syn::Error::new_spanned(
            attr,
            "`#[no_fusion]` marks a kernel or a fill; only those are fused",
        ));
    }
    Marked {
        marks: Marks {
            docs,
            no_fusion: no_fusion.is_some() && fusable,
            on: on.filter(|_| places).map(|(_, gpu)| gpu),
        },
        item,
    }
}

/// One item, parsed on a fork: when it cannot be read at all, it is one error (what the attempt reported
/// before failing goes with it) and recovery restarts from its first token, skipping to the next item.
fn parse_item_on_fork(input: ParseStream<'_>, cx: &Ctxt) -> Option<Item> {
    let fork = input.fork();
    match cx.attempt(|| parse_item(&fork, cx)) {
        Ok(item) => {
            input.advance_to(&fork);
            Some(item)
        }
        Err(e) => {
            cx.error(e);
            skip_item(input);
            None
        }
    }
}

/// Skips an unreadable item from its first token to just after its `;` or braced group, or to just before
/// the next item keyword, so one mistake does not hide the errors of the rest (nor cause new ones).
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
                TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => break,
                _ => {}
            }
        }
        Ok(((), rest))
    });
}

fn parse_item(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<Item> {
    let word: Ident = input.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected an item: `params`, `buffers`, `textures`, `kernel`, `fill`, `copy`, `upload`, `readback`, \
             `host`, `interop`, `empty`, `barrier`, `subgraph`, `alternatives`, `if`, `switch`, `repeat`, or an \
             edge `a -> b;`",
        )
    })?;
    // A chain of edges may start with any node name, one that looks like a keyword included.
    if input.peek(Token![->]) {
        return parse_edges(input, word, cx);
    }
    let text = word.to_string();
    let keyword = if ITEM_KEYWORDS.contains(&text.as_str()) {
        text
    } else {
        match graph_core::names::did_you_mean(&text, ITEM_KEYWORDS) {
            // A misspelt keyword: say so, and read the item as what it most likely is.
            Some(keyword) => {
                cx.error(syn::Error::new(
                    word.span(),
                    format!("unknown item `{text}`; did you mean `{keyword}`?"),
                ));
                keyword.to_string()
            }
            None => {
                return Err(syn::Error::new(
                    word.span(),
                    format!(
                        "expected an item: `params`, `buffers`, `textures`, `kernel`, `fill`, `copy`, `upload`, \
                         `readback`, `host`, `interop`, `empty`, `barrier`, `subgraph`, `alternatives`, `if`, `repeat`, \
                         or an edge `{text} -> other;`"
                    ),
                ));
            }
        }
    };
    match keyword.as_str() {
        "params" => {
            let content;
            braced!(content in input);
            let fields = parse_entries(&content, cx, |input, cx| {
                let Attrs { docs, no_alias, .. } = parse_entry_attrs(input, cx, "a parameter");
                refuse_no_alias(no_alias, "a parameter", cx);
                let name = input.parse()?;
                input.parse::<Token![:]>()?;
                let ty = input.parse().map_err(|e: syn::Error| {
                    syn::Error::new(
                        e.span(),
                        "expected the parameter's type: `f32`, `i32`, `u32`, `vec2<f32>`, `vec4<u32>`..",
                    )
                })?;
                Ok(ParamDecl { docs, name, ty })
            });
            Ok(Item::Params {
                keyword: word.span(),
                fields,
            })
        }
        "buffers" => {
            let content;
            braced!(content in input);
            Ok(Item::Buffers(parse_entries(&content, cx, parse_buffer)))
        }
        "textures" => {
            let content;
            braced!(content in input);
            Ok(Item::Textures(parse_entries(&content, cx, parse_texture)))
        }
        "kernel" => parse_kernel(input, cx).map(Item::Kernel),
        "copy" => {
            let name = parse_name(input, cx)?;
            let content;
            let group = parenthesized!(content in input);
            let src = content.parse()?;
            content.parse::<Token![->]>()?;
            let dst = content.parse()?;
            expect_end(&content, cx)?;
            expect_semi(input, cx, group.span.close());
            Ok(Item::Copy { name, src, dst })
        }
        "fill" => {
            let name = parse_name(input, cx)?;
            let content;
            let group = parenthesized!(content in input);
            let dst = content.parse()?;
            content.parse::<Token![=]>()?;
            let value = parse_value(&content)?;
            expect_end(&content, cx)?;
            expect_semi(input, cx, group.span.close());
            Ok(Item::Fill { name, dst, value })
        }
        "upload" | "readback" => {
            let name = parse_name(input, cx)?;
            let content;
            let group = parenthesized!(content in input);
            let buffer = content.parse()?;
            expect_end(&content, cx)?;
            expect_semi(input, cx, group.span.close());
            Ok(Item::Transfer {
                name,
                buffer,
                readback: keyword == "readback",
            })
        }
        "subgraph" => {
            let name = parse_name(input, cx)?;
            input.parse::<Token![=]>()?;
            let path = input.call(syn::Path::parse_mod_style).map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected the child graph's type: `subgraph name = Blur(src: image: read, ..);`",
                )
            })?;
            let content;
            let group = parenthesized!(content in input);
            let accesses = parse_entries(&content, cx, |input, _| parse_binding(input));
            expect_semi(input, cx, group.span.close());
            Ok(Item::Subgraph {
                name,
                path,
                accesses,
            })
        }
        "alternatives" => {
            let name: Ident = input.parse()?;
            let content;
            braced!(content in input);
            let (mut choices, mut misplaced) = (Vec::new(), Vec::new());
            while !content.is_empty() {
                let attrs = parse_attrs(&content, cx);
                let word = content.fork().call(Ident::parse_any).ok();
                let Some(item) = parse_item_on_fork(&content, cx) else {
                    continue;
                };
                let item = marked(item, attrs, cx);
                match &item.item {
                    // A node: a choice, even one that is no kernel (the checks say so, in the words the
                    // builder's `alternatives` gets).
                    Item::Kernel(_)
                    | Item::Copy { .. }
                    | Item::Fill { .. }
                    | Item::Transfer { .. }
                    | Item::Host { .. }
                    | Item::Interop { .. }
                    | Item::Empty { .. }
                    | Item::Subgraph { .. } => choices.push(item),
                    Item::Params { .. }
                    | Item::Buffers(_)
                    | Item::Textures(_)
                    | Item::Alternatives { .. }
                    | Item::Block { .. }
                    | Item::Edges(_) => {
                        let (at, word) = word
                            .map_or((name.span(), String::new()), |w| (w.span(), w.to_string()));
                        cx.error(syn::Error::new(
                            at,
                            format!(
                                "`{word}` cannot be in `alternatives {name}`: alternatives hold the kernels \
                                 one of which runs; write it outside the group"
                            ),
                        ));
                        // Kept, so what it declares is not unknown elsewhere; an edge would only say more
                        // about the same mistake.
                        if !matches!(item.item, Item::Edges(_)) {
                            misplaced.push(item);
                        }
                    }
                }
            }
            Ok(Item::Alternatives {
                name,
                choices,
                misplaced,
            })
        }
        "if" | "repeat" | "switch" => {
            let name: Ident = input.parse()?;
            let content;
            parenthesized!(content in input);
            let (count, flag) = if keyword == "if" || keyword == "switch" {
                (None, parse_flag(&content, cx, (&keyword, &name)))
            } else {
                let count = parse_count(&content, cx)?;
                let mut flag = None;
                if content.peek(Token![,]) {
                    content.parse::<Token![,]>()?;
                    let word = content.call(Ident::parse_any)?;
                    if word != "while" {
                        return Err(syn::Error::new(
                            word.span(),
                            "expected `while: FLAG` after the count: `repeat name(100, while: flag) { .. }`",
                        ));
                    }
                    content.parse::<Token![:]>()?;
                    flag = Some(content.parse()?);
                }
                (count, flag)
            };
            expect_end(&content, cx)?;
            let (mut items, mut otherwise, mut arms) = (Vec::new(), Vec::new(), Vec::new());
            if keyword == "switch" {
                arms = parse_arms(input, cx)?;
            } else {
                items = parse_block_body(input, cx)?;
                if keyword == "if" && input.peek(Token![else]) {
                    input.parse::<Token![else]>()?;
                    otherwise = parse_block_body(input, cx)?;
                }
            }
            Ok(Item::Block {
                keyword: word.clone(),
                name,
                count,
                flag,
                items,
                otherwise,
                arms,
            })
        }
        "empty" | "barrier" => {
            let name = parse_name(input, cx)?;
            expect_semi(input, cx, name.span());
            Ok(Item::Empty {
                name,
                barrier: keyword == "barrier",
            })
        }
        _ => {
            let name = parse_name(input, cx)?;
            let (accesses, close) = parse_accesses(input, cx)?;
            expect_semi(input, cx, close);
            if keyword == "interop" {
                Ok(Item::Interop { name, accesses })
            } else {
                Ok(Item::Host { name, accesses })
            }
        }
    }
}

fn parse_edges(input: ParseStream<'_>, first: Ident, cx: &Ctxt) -> syn::Result<Item> {
    let mut chain = vec![first];
    while input.peek(Token![->]) {
        input.parse::<Token![->]>()?;
        // Any word: a node named by a keyword is reported where it is declared.
        chain.push(input.call(Ident::parse_any)?);
    }
    let last = chain.last().map_or_else(Span::call_site, Ident::span);
    expect_semi(input, cx, last);
    Ok(Item::Edges(chain))
}

/// Braced items: a graph's body, a block's or an arm's, `{ kernel a ..; fill b ..; }`.
fn parse_block_body(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<Vec<Marked<Item>>> {
    let body;
    braced!(body in input);
    let mut items = Vec::new();
    while !body.is_empty() {
        let attrs = parse_attrs(&body, cx);
        if let Some(item) = parse_item_on_fork(&body, cx) {
            items.push(marked(item, attrs, cx));
        }
    }
    Ok(items)
}

/// A `switch`'s braced arms: `0 => { .. } 1 => { .. } _ => { .. }`, commas between them allowed.
fn parse_arms(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<Vec<Arm>> {
    let body;
    braced!(body in input);
    let mut arms = Vec::new();
    while !body.is_empty() {
        let (mut value, mut unreadable) = (None, false);
        if body.peek(Token![_]) {
            body.parse::<Token![_]>()?;
        } else if body.peek(LitInt) {
            value = Some(body.parse::<LitInt>()?);
        } else {
            // One error, then on to the arm's body.
            let written: TokenStream = body.step(|cursor| {
                let mut rest = *cursor;
                let mut taken = TokenStream::new();
                while !rest.eof() && rest.punct().is_none_or(|(p, _)| p.as_char() != '=') {
                    let Some((tt, next)) = rest.token_tree() else {
                        break;
                    };
                    taken.extend([tt]);
                    rest = next;
                }
                Ok((taken, rest))
            })?;
            cx.error(syn::Error::new_spanned(
                written,
                "a switch's arm starts with the `u32` value that picks it, or `_` for the default arm: \
                 `0 => { .. }`, `_ => { .. }`",
            ));
            unreadable = true;
        }
        body.parse::<Token![=>]>()?;
        let items = parse_block_body(&body, cx)?;
        if body.peek(Token![,]) {
            body.parse::<Token![,]>()?;
        }
        arms.push(Arm {
            value,
            unreadable,
            items,
        });
    }
    Ok(arms)
}

/// The flag of `if name(flag)`, or the value of `switch name(index)`: a buffer's name. Anything else is one
/// error, and the block is kept without a flag.
fn parse_flag(
    content: ParseStream<'_>,
    cx: &Ctxt,
    (keyword, block): (&str, &Ident),
) -> Option<Ident> {
    if content.peek(Ident) && peek_end(content, 1) {
        return content.parse().ok();
    }
    let at = content.span();
    let written: TokenStream = content.parse().ok()?;
    let what = if keyword == "switch" { "index" } else { "flag" };
    let message = match written.to_string().replace(' ', "").strip_prefix("params.") {
        // The flag is read on the GPU, where the block starts; a parameter can be copied into one.
        Some(param) => format!(
            "the {what} of `{keyword} {block}` is a buffer the GPU reads when it reaches the block, not a \
             parameter: declare `{what}: [u32; 1]`, set it before the block with \
             `fill set({what} = params.{param});`, and write `{keyword} {block}({what})`"
        ),
        None => format!(
            "the {what} of `{keyword} {block}` is a buffer's name: `{keyword} {block}({what}) {{ .. }}`, with \
             `{what}: [u32; 1]`"
        ),
    };
    cx.error(match written.is_empty() {
        true => syn::Error::new(at, message),
        false => syn::Error::new_spanned(written, message),
    });
    None
}

/// The count of `repeat name(count)`: an integer literal. Anything else is one error, and the repeat is kept
/// (running once, for the checks).
fn parse_count(content: ParseStream<'_>, cx: &Ctxt) -> syn::Result<Option<LitInt>> {
    if content.peek(LitInt) {
        return content.parse().map(Some);
    }
    let written = parse_value(content)?;
    cx.error(syn::Error::new_spanned(
        written,
        "a repeat's count is an integer literal: its runs are unrolled into the replay's commands when the \
         graph is baked, so the count cannot change between replays; to stop early at run time, give it a flag \
         that a member clears: `repeat name(100, while: flag) { .. }`",
    ));
    Ok(None)
}

/// Whether the token `n` places ahead is the end of the group.
fn peek_end(content: ParseStream<'_>, n: usize) -> bool {
    let mut cursor = content.cursor();
    for _ in 0..n {
        match cursor.token_tree() {
            Some((_, next)) => cursor = next,
            None => return false,
        }
    }
    cursor.eof()
}

/// A node's name. A Rust keyword is one error and the name is kept: the generated node enum and handles are
/// Rust, where `r#loop` names a node `loop`.
fn parse_name(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<Ident> {
    let name = input.call(Ident::parse_any)?;
    if syn::parse2::<Ident>(name.to_token_stream()).is_err() {
        let text = name.to_string();
        let message = match ["self", "Self", "super", "crate", "_"].contains(&text.as_str()) {
            true => format!(
                "`{text}` is a Rust keyword, and cannot name a node even as a raw identifier; choose another name"
            ),
            false => format!(
                "`{text}` is a Rust keyword: write `r#{text}` to name a node `{text}`, or choose another name"
            ),
        };
        cx.error(syn::Error::new(name.span(), message));
    }
    Ok(name)
}

/// A `;` to end an item: when it is missing but the item was whole, one error after the item's last token,
/// and the item is kept.
fn expect_semi(input: ParseStream<'_>, cx: &Ctxt, after: Span) {
    if input.peek(Token![;]) {
        let _ = input.parse::<Token![;]>();
    } else {
        cx.error(syn::Error::new(after, "expected `;` after this"));
    }
}

/// Nothing may follow the last thing inside a group.
fn expect_end(content: ParseStream<'_>, cx: &Ctxt) -> syn::Result<()> {
    if !content.is_empty() {
        cx.error(content.error("unexpected tokens here"));
        // Consume them, so the group counts as read.
        content.step(|cursor| {
            let mut rest = *cursor;
            while let Some((_, next)) = rest.token_tree() {
                rest = next;
            }
            Ok(((), rest))
        })?;
    }
    Ok(())
}

/// Comma-separated entries, each parsed on its own: a bad one is one error and skipped (to its comma), and
/// the rest are kept, so one typo in `buffers { .. }` does not make every buffer unknown. A missing comma
/// between two readable entries is one error, and both entries are kept.
fn parse_entries<T>(
    content: ParseStream<'_>,
    cx: &Ctxt,
    parse: impl Fn(ParseStream<'_>, &Ctxt) -> syn::Result<T>,
) -> Vec<T> {
    let mut entries = Vec::new();
    while !content.is_empty() {
        let fork = content.fork();
        match cx.attempt(|| parse(&fork, cx)) {
            Ok(entry) => {
                content.advance_to(&fork);
                entries.push(entry);
                if content.is_empty() || content.peek(Token![,]) {
                    let _ = content.parse::<Token![,]>();
                } else if content.peek(Token![;]) {
                    // `a: f32; b: f32`: one error, and both entries are kept.
                    cx.error(
                        content.error("write `,` instead of `;`: entries are separated by commas"),
                    );
                    let _ = content.parse::<Token![;]>();
                } else if content.peek(Ident::peek_any) && content.peek2(Token![:]) {
                    cx.error(content.error("expected `,` before this"));
                } else {
                    cx.error(content.error("expected `,`"));
                    skip_past_comma(content);
                }
            }
            Err(e) => {
                cx.error(e);
                skip_past_comma(content);
            }
        }
    }
    entries
}

fn skip_past_comma(content: ParseStream<'_>) {
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

/// The attributes above a parameter or a buffer: doc comments, kept for the generated field. Any other is one
/// error, and the entry is kept.
fn parse_entry_attrs(input: ParseStream<'_>, cx: &Ctxt, what: &str) -> Attrs {
    let attrs = parse_attrs(input, cx);
    if let Some((attr, _)) = &attrs.on {
        cx.error(syn::Error::new_spanned(
            attr,
            format!("`#[on(..)]` places a node on a GPU; {what} is not one: remove it"),
        ));
    }
    if let Some(attr) = &attrs.no_fusion {
        cx.error(syn::Error::new_spanned(
            attr,
            format!(
                "`#[no_fusion]` marks a kernel or a fill, which are fused; {what} is not: remove it"
            ),
        ));
    }
    attrs
}

fn parse_texture(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<TextureDecl> {
    let Attrs { docs, no_alias, .. } = parse_entry_attrs(input, cx, "a texture");
    refuse_no_alias(no_alias, "a texture", cx);
    let name = input.parse()?;
    input.parse::<Token![:]>()?;
    let ty = parse_texture_type(input).map_err(|e: syn::Error| {
        syn::Error::new(
            e.span(),
            "expected the texture's or sampler's type: `texture_2d<rgba8unorm>`, `texture_storage_2d<r32float, write>`, \
             `texture_2d<rgba16float; 512, 512>`, `sampler<linear, clamp>`..",
        )
    })?;
    // Any word, as for buffers: lowering reports a wrong one and keeps the texture.
    let role = if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        Some(input.call(Ident::parse_any)?)
    } else {
        None
    };
    Ok(TextureDecl {
        docs,
        name,
        ty,
        role,
    })
}

/// `texture_2d<..>`: a word, then every token from `<` to the first `>` (a texture type holds no other
/// angle brackets), which graph-core parses as a texture declaration.
fn parse_texture_type(input: ParseStream<'_>) -> syn::Result<TokenStream> {
    let mut tokens = TokenStream::new();
    input.call(Ident::parse_any)?.to_tokens(&mut tokens);
    input.parse::<Token![<]>()?.to_tokens(&mut tokens);
    loop {
        if input.peek(Token![>]) {
            input.parse::<Token![>]>()?.to_tokens(&mut tokens);
            return Ok(tokens);
        }
        if input.is_empty() || input.peek(Token![=]) {
            return Err(input.error("expected `>`"));
        }
        input
            .parse::<proc_macro2::TokenTree>()?
            .to_tokens(&mut tokens);
    }
}

fn parse_buffer(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<BufferDecl> {
    let Attrs { docs, no_alias, .. } = parse_entry_attrs(input, cx, "a buffer");
    let name = input.parse()?;
    input.parse::<Token![:]>()?;
    let (elem, len) = if input.peek(syn::token::Bracket) {
        let content;
        bracketed!(content in input);
        let elem: Type = content.parse().map_err(|e: syn::Error| {
            syn::Error::new(
                e.span(),
                "expected the element type: `[f32]`, `[u32; 64]`, `[vec4<f32>]`..",
            )
        })?;
        let len = if content.peek(Token![;]) {
            content.parse::<Token![;]>()?;
            Some(content.parse()?)
        } else if content.peek(Token![,]) && content.peek2(LitInt) {
            // `[f32, 256]`: one error, and the buffer keeps its length.
            let comma = content.parse::<Token![,]>()?;
            let len: LitInt = content.parse()?;
            cx.error(syn::Error::new(
                comma.span,
                format!(
                    "an array's length follows a `;`: write `[{}; {len}]`",
                    type_text(&elem)
                ),
            ));
            Some(len)
        } else {
            None
        };
        if !content.is_empty() {
            return Err(content.error("expected `[T]` or `[T; N]`"));
        }
        (elem, len)
    } else {
        // `Vec<f32>`, `&[f32]`, `f32`: one error, and the buffer is kept with the element type it names.
        let written: Type = input.parse().map_err(|e: syn::Error| {
            syn::Error::new(
                e.span(),
                "expected the buffer's type: `[f32]`, `[u32; 64]`, `[vec4<f32>]`..",
            )
        })?;
        let elem = element_of(&written).clone();
        cx.error(syn::Error::new_spanned(
            &written,
            format!(
                "a buffer's type is its element type in brackets: write `[{0}]`, or `[{0}; N]` with a length",
                type_text(&elem)
            ),
        ));
        (elem, None)
    };
    let role = if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        // Any word, keywords included (`= in`): lowering reports a wrong one and keeps the buffer, so its
        // users do not see it as unknown.
        Some(input.call(Ident::parse_any)?)
    } else {
        None
    };
    Ok(BufferDecl {
        docs,
        no_alias,
        name,
        elem,
        len,
        role,
    })
}

/// The element type a buffer type written another way names: `f32` in `Vec<f32>` or `&[f32]`.
fn element_of(ty: &Type) -> &Type {
    match ty {
        Type::Reference(r) => element_of(&r.elem),
        Type::Slice(s) => &s.elem,
        Type::Array(a) => &a.elem,
        Type::Path(p) => {
            let argument = p.path.segments.last().and_then(|s| match &s.arguments {
                syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                },
                _ => None,
            });
            // `vec4<f32>` is an element type itself.
            let is_vector = p.path.segments.len() == 1
                && ["vec2", "vec3", "vec4"]
                    .iter()
                    .any(|v| p.path.segments[0].ident == v);
            match argument {
                Some(t) if !is_vector => element_of(t),
                _ => ty,
            }
        }
        _ => ty,
    }
}

/// A type as written, without spaces: `vec4<f32>`.
pub fn type_text(ty: &Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
}

impl Parse for AccessDecl {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let buffer = input.parse()?;
        input.parse::<Token![:]>()?;
        let mode = input.call(Ident::parse_any).map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected an access: `read`, `write` (overwrite) or `read_write`",
            )
        })?;
        Ok(AccessDecl {
            binding: None,
            buffer,
            mode,
        })
    }
}

/// A subgraph's binding: `binding: buffer: mode`, or `buffer: mode` when the child's name is the buffer's.
fn parse_binding(input: ParseStream<'_>) -> syn::Result<AccessDecl> {
    let first: Ident = input.parse()?;
    input.parse::<Token![:]>()?;
    let second = input.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected `child_buffer: buffer: access` or `buffer: access`",
        )
    })?;
    if !input.peek(Token![:]) || input.peek(Token![::]) {
        return Ok(AccessDecl {
            binding: None,
            buffer: first,
            mode: second,
        });
    }
    input.parse::<Token![:]>()?;
    let mode = input.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected an access: `read`, `write` (overwrite) or `read_write`",
        )
    })?;
    Ok(AccessDecl {
        binding: Some(first),
        buffer: second,
        mode,
    })
}

/// A value written in WGSL: the tokens up to the next `,` (commas inside brackets belong to their group).
fn parse_value(input: ParseStream<'_>) -> syn::Result<TokenStream> {
    let value = input.step(|cursor| {
        let mut rest = *cursor;
        let mut tokens = TokenStream::new();
        while let Some((tt, next)) = rest.token_tree() {
            if matches!(&tt, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            tokens.extend([tt]);
            rest = next;
        }
        Ok((tokens, rest))
    })?;
    if value.is_empty() {
        return Err(input.error("expected a value"));
    }
    Ok(value)
}

/// `( buffer: mode, .. )`, and the span of its closing parenthesis.
fn parse_accesses(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<(Vec<AccessDecl>, Span)> {
    let content;
    let group = parenthesized!(content in input);
    let accesses = parse_entries(&content, cx, |input, _| input.parse());
    Ok((accesses, group.span.close()))
}

fn parse_kernel(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<KernelDecl> {
    let name = parse_name(input, cx)?;
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        let path = parse_library_path(input, cx)?;
        let content;
        let group = parenthesized!(content in input);
        let bindings = parse_entries(&content, cx, |input, _| {
            let name: Ident = input.parse()?;
            input.parse::<Token![:]>()?;
            Ok((name, parse_value(input)?))
        });
        let clauses = parse_clauses(input, cx, group.span.close());
        expect_semi(input, cx, clauses.end);
        return Ok(KernelDecl {
            name,
            body: KernelBody::Library { path, bindings },
            dispatch: clauses.dispatch,
            entry: clauses.entry,
            overrides: clauses.overrides,
        });
    }
    let (accesses, close) = parse_accesses(input, cx)?;
    let Clauses {
        dispatch,
        entry,
        overrides,
        end,
    } = parse_clauses(input, cx, close);
    let body = if input.peek(Ident::peek_any) && input.fork().call(Ident::parse_any)? == "file" {
        input.call(Ident::parse_any)?;
        let content;
        let group = parenthesized!(content in input);
        let path = content.parse()?;
        expect_end(&content, cx)?;
        expect_semi(input, cx, group.span.close());
        KernelBody::File { accesses, path }
    } else if input.peek(syn::token::Brace) {
        let content;
        braced!(content in input);
        KernelBody::Inline {
            accesses,
            wgsl: content.parse()?,
        }
    } else {
        cx.error(syn::Error::new(
            end,
            "expected the kernel's WGSL after this: a `{ .. }` body, or `file(\"path.wgsl\");` relative to the \
             crate",
        ));
        // A stray `;` where the body should be belongs to this item.
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
        }
        KernelBody::Missing { accesses }
    };
    Ok(KernelDecl {
        name,
        body,
        dispatch,
        entry,
        overrides,
    })
}

/// `kernels::a::b`: the segments after `kernels`. A misspelt or missing `kernels` is one error, and the path
/// is kept.
fn parse_library_path(input: ParseStream<'_>, cx: &Ctxt) -> syn::Result<Vec<Ident>> {
    let first: Ident = input.call(Ident::parse_any).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected a library kernel path, such as `kernels::scale(..)`",
        )
    })?;
    let mut path = Vec::new();
    if first != "kernels" {
        let message = if input.peek(Token![::]) {
            format!("library kernels are named `kernels::PATH`, not `{first}::PATH`")
        } else {
            path.push(first.clone());
            format!("library kernels are named `kernels::PATH`: write `kernels::{first}`")
        };
        cx.error(syn::Error::new(first.span(), message));
    }
    while input.peek(Token![::]) {
        input.parse::<Token![::]>()?;
        path.push(input.call(Ident::parse_any)?);
    }
    if path.is_empty() {
        return Err(input.error("expected a library kernel path, such as `kernels::scale(..)`"));
    }
    Ok(path)
}

/// The clauses after a kernel's access list, and the span of the last token read (for a missing `;`).
fn parse_clauses(input: ParseStream<'_>, cx: &Ctxt, mut end: Span) -> Clauses {
    let (mut dispatch, mut entry, mut overrides) = (None, None, Vec::new());
    loop {
        // A clause is a word followed by parentheses; `file(..)` is the kernel's body.
        let fork = input.fork();
        let Ok(word) = fork.call(Ident::parse_any) else {
            return Clauses {
                dispatch,
                entry,
                overrides,
                end,
            };
        };
        if word == "file" || !fork.peek(syn::token::Paren) {
            return Clauses {
                dispatch,
                entry,
                overrides,
                end,
            };
        }
        let text = word.to_string();
        let clause = if CLAUSES.contains(&text.as_str()) {
            text
        } else if let Some(clause) = graph_core::names::did_you_mean(&text, CLAUSES) {
            cx.error(syn::Error::new(
                word.span(),
                format!("unknown clause `{text}`; did you mean `{clause}`?"),
            ));
            clause.to_string()
        } else {
            cx.error(syn::Error::new(
                word.span(),
                format!(
                    "unknown clause `{text}`; a kernel takes `threads(..)`, `workgroups(..)`, `entry(..)` and \
                     `overrides(..)`"
                ),
            ));
            clause_group(input);
            continue;
        };
        let _ = input.call(Ident::parse_any);
        let Some((content, span)) = clause_group(input) else {
            return Clauses {
                dispatch,
                entry,
                overrides,
                end,
            };
        };
        end = span;
        if clause == "overrides" {
            let pairs = syn::parse::Parser::parse2(
                |input: ParseStream<'_>| {
                    let mut pairs = Vec::new();
                    while !input.is_empty() {
                        let name: Ident = input.parse()?;
                        input.parse::<Token![:]>()?;
                        let value: Expr = input.parse()?;
                        pairs.push((name, value));
                        if !input.is_empty() {
                            input.parse::<Token![,]>()?;
                        }
                    }
                    Ok(pairs)
                },
                content,
            );
            match pairs {
                Ok(pairs) => overrides.extend(pairs),
                Err(e) => cx.error(e),
            }
            continue;
        }
        if clause == "entry" {
            match syn::parse2::<Ident>(content) {
                Ok(name) => entry = Some(name),
                Err(e) => cx.error(e),
            }
            continue;
        }
        // `workgroups(indirect: args)`: counts a node wrote into a buffer.
        let indirect = syn::parse::Parser::parse2(
            |input: ParseStream<'_>| {
                let word = input.call(Ident::parse_any)?;
                if word != "indirect" || !input.peek(Token![:]) {
                    return Err(input.error("not indirect"));
                }
                input.parse::<Token![:]>()?;
                let buffer: Ident = input.parse()?;
                if !input.is_empty() {
                    return Err(input.error("expected `)` after the counts' buffer"));
                }
                Ok(buffer)
            },
            content.clone(),
        )
        .ok();
        if let Some(buffer) = indirect {
            if clause != "workgroups" {
                cx.error(syn::Error::new(
                    word.span(),
                    "an indirect dispatch is `workgroups(indirect: BUFFER)`: it reads workgroup counts",
                ));
            }
            if dispatch.is_some() {
                cx.error(syn::Error::new(
                    word.span(),
                    "a kernel has one `threads(..)` or `workgroups(..)`",
                ));
                continue;
            }
            dispatch = Some(Dispatch {
                workgroups: true,
                indirect: Some(buffer),
                keyword: word,
                dims: None,
            });
            continue;
        }
        let dims = syn::parse::Parser::parse2(
            syn::punctuated::Punctuated::<Expr, Token![,]>::parse_terminated,
            content,
        );
        let dims = match dims {
            Ok(dims) => Some(dims.into_iter().collect()),
            Err(e) => {
                cx.error(e);
                None
            }
        };
        if dispatch.is_some() {
            cx.error(syn::Error::new(
                word.span(),
                "a kernel has one `threads(..)` or `workgroups(..)`",
            ));
            continue;
        }
        dispatch = Some(Dispatch {
            workgroups: clause == "workgroups",
            indirect: None,
            keyword: word,
            dims,
        });
    }
}

/// A parenthesised group's tokens and closing span.
fn clause_group(input: ParseStream<'_>) -> Option<(TokenStream, Span)> {
    input
        .step(|cursor| match cursor.group(Delimiter::Parenthesis) {
            Some((inside, span, rest)) => Ok(((inside.token_stream(), span.close()), rest)),
            None => Err(cursor.error("expected `(`")),
        })
        .ok()
}
