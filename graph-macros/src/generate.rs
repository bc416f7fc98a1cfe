//! Code generation: the typed items of one graph and its static description. Runs only on a checked graph,
//! except [`types`], which also builds the stub emitted beside errors.

use std::collections::{HashMap, HashSet};

use graph_core::Loc;
use graph_core::check::CheckedGraph;
use graph_core::ir::NodeKind;
use graph_core::layout::ParamsLayout;
use graph_core::types::{Scalar, ValueType};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::ext::IdentExt;

use crate::ast::GraphDef;
use crate::const_tokens::ConstTokens;
use crate::ctxt::Ctxt;
use crate::lower::Lowered;

/// The names of the generated items.
pub struct Names {
    pub graph: Ident,
    pub params: Ident,
    pub buffers: Ident,
    pub node: Ident,
    /// The node sets of one role each (see [`role_enums`]).
    pub kernel: Ident,
    pub choice: Ident,
    pub ranged: Ident,
    pub copy: Ident,
    pub interop: Ident,
    pub toggle: Ident,
}

impl Names {
    pub fn new(graph: &Ident) -> Self {
        Names {
            graph: graph.clone(),
            params: format_ident!("{}Params", graph),
            buffers: format_ident!("{}Buffers", graph),
            node: format_ident!("{}Node", graph),
            kernel: format_ident!("{}Kernel", graph),
            choice: format_ident!("{}Choice", graph),
            ranged: format_ident!("{}Ranged", graph),
            copy: format_ident!("{}Copy", graph),
            interop: format_ident!("{}Interop", graph),
            toggle: format_ident!("{}Toggle", graph),
        }
    }
}

/// `axpy_twice` -> `AxpyTwice`.
fn camel_case(node: &str) -> String {
    let mut out = String::new();
    for part in node.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'N');
    }
    out
}

/// The node enum's variants, in declaration order: each node's name in camel case, unless two nodes would
/// share a variant (`n11_0` and `n1_10` both give `N110`); those keep their names as written, which are
/// distinct. A repeated name (a duplicate node, reported by the checks) shares its first variant.
pub fn variant_names(nodes: &[(String, Span)]) -> Vec<Ident> {
    let camel: Vec<String> = nodes.iter().map(|(name, _)| camel_case(name)).collect();
    nodes
        .iter()
        .zip(&camel)
        .map(|((name, span), c)| {
            let clash = nodes
                .iter()
                .zip(&camel)
                .any(|((other, _), d)| d == c && other != name);
            if clash {
                rust_ident(name, *span)
            } else {
                rust_ident(c, *span)
            }
        })
        .collect()
}

/// A Rust identifier for a graph name, raw where the name is a Rust keyword (`r#loop`). The keywords that have
/// no raw form (`Self`) are refused as names; the stub beside that error spells them with a trailing `_`.
pub fn rust_ident(name: &str, span: Span) -> Ident {
    if syn::parse_str::<Ident>(name).is_ok() {
        Ident::new(name, span)
    } else if ["self", "Self", "super", "crate", "_"].contains(&name) {
        format_ident!("{name}_", span = span)
    } else {
        Ident::new_raw(name, span)
    }
}

/// The doc comments written on a parameter, buffer or node, then an empty line before the generated text.
fn user_docs(docs: Option<&Vec<syn::Attribute>>) -> TokenStream {
    match docs.filter(|d| !d.is_empty()) {
        Some(docs) => quote!(#(#docs)* #[doc = ""]),
        None => TokenStream::new(),
    }
}

pub fn private() -> TokenStream {
    quote!(::graph_runtime::__private)
}

/// The graph type, the parameter struct, the buffer bindings struct and the node enum.
/// `nodes` pairs each enum variant with the node's name, in declaration order.
pub fn types(
    def: &GraphDef,
    lowered: &Lowered,
    layout: &ParamsLayout,
    names: &Names,
    nodes: &[(Ident, String)],
) -> TokenStream {
    let p = private();
    let Names {
        graph,
        params,
        buffers,
        node,
        ..
    } = names;
    let docs = &def.docs;
    let name_text = graph.to_string();

    // Parameters: the WGSL layout, with explicit padding so the struct is `Pod` and matches byte for byte.
    let mut fields = Vec::new();
    let mut asserts = Vec::new();
    // For `new`: the arguments, and every field's initialiser (padding zeroed).
    let mut args = Vec::new();
    let mut inits = Vec::new();
    let mut cursor = 0u32;
    for (pad, f) in layout.fields.iter().enumerate() {
        if f.offset > cursor {
            let pad_name = format_ident!("__pad{}", pad);
            let gap = (f.offset - cursor) as usize;
            fields.push(quote!(#[doc(hidden)] pub #pad_name: [u8; #gap]));
            inits.push(quote!(#pad_name: [0u8; #gap]));
        }
        let declared = lowered.graph.params.iter().position(|q| q.name == f.name);
        let span =
            declared.map_or_else(Span::call_site, |i| lowered.spans.locate(&Loc::Param(i)).0);
        let field = rust_ident(&f.name, span);
        let ty = param_rust_type(f.ty);
        let user_docs = user_docs(declared.and_then(|i| lowered.docs.params.get(i)));
        let doc = format!(
            "WGSL `{}` at byte {} of the parameter block.",
            f.ty, f.offset
        );
        fields.push(quote!(#user_docs #[doc = #doc] pub #field: #ty));
        args.push(quote!(#field: #ty));
        inits.push(quote!(#field));
        let offset = f.offset as usize;
        asserts.push(quote!(::core::assert!(::core::mem::offset_of!(#params, #field) == #offset);));
        cursor = f.offset + f.ty.in_params().size();
    }
    if layout.size > cursor {
        let gap = (layout.size - cursor) as usize;
        fields.push(quote!(#[doc(hidden)] pub __pad_end: [u8; #gap]));
        inits.push(quote!(__pad_end: [0u8; #gap]));
    }
    let size = layout.size as usize;
    let params_doc = format!(
        "Parameters of [`{name_text}`]: the WGSL `params` block ({size} bytes), passed as push constants (or in \
         a uniform buffer) and updatable between replays. The hidden `__pad` fields are the WGSL layout's \
         padding: use `new` or `..Default::default()`."
    );

    // External buffers, bound by the caller; a repeated name (reported as a duplicate) once.
    let buffer_list = &lowered.graph.buffers;
    let externals: Vec<TokenStream> = buffer_list
        .iter()
        .enumerate()
        .filter(|(i, b)| b.role.is_external() && buffer_list[..*i].iter().all(|c| c.name != b.name))
        .filter_map(|(i, b)| {
            let user_docs = user_docs(lowered.docs.buffers.get(i));
            let field = rust_ident(&b.name, lowered.spans.locate(&Loc::Buffer(i)).0);
            if let Ok((texture, size)) =
                graph_core::texture::TextureType::parse_declaration(&b.elem)
            {
                let size = size.map_or_else(String::new, |s| format!(" of size `{s}`"));
                let doc = format!(
                    "`{}`: {} texture, `{texture}`{size}.",
                    b.name,
                    b.role.keyword()
                );
                return Some(quote!(#user_docs #[doc = #doc] pub #field: &'a #p::Texture));
            }
            let elem = ValueType::parse(&b.elem).ok()?;
            let ty = rust_type(elem);
            let doc = format!(
                "`{}`: {} of `{elem}`{}.",
                b.name,
                b.role.keyword(),
                b.len
                    .map(|n| format!(", exactly {n} elements"))
                    .unwrap_or_default()
            );
            Some(quote!(#user_docs #[doc = #doc] pub #field: &'a #p::Buffer<#ty>))
        })
        .collect();
    // A graph that binds nothing still takes a (then empty) buffers value: `Default` makes one.
    let marker = externals
        .is_empty()
        .then(|| quote!(#[doc(hidden)] pub _lifetime: ::core::marker::PhantomData<&'a ()>,));
    let default = externals
        .is_empty()
        .then(|| quote!(#[derive(::core::default::Default)]));
    let buffers_doc =
        format!("The buffers [`{name_text}`] reads and writes, bound by the caller at bake time.");

    let node_variants: Vec<&Ident> = nodes.iter().map(|(v, _)| v).collect();
    let node_names: Vec<&str> = nodes.iter().map(|(_, n)| n.as_str()).collect();
    let variant_names: Vec<String> = node_variants
        .iter()
        .map(|v| v.unraw().to_string())
        .collect();
    // Each name's first node: the stub beside errors lists a repeated name once.
    let mut declared_at: HashMap<&str, usize> = HashMap::new();
    for (i, m) in lowered.graph.nodes.iter().enumerate() {
        declared_at.entry(m.name.as_str()).or_insert(i);
    }
    let node_docs: Vec<TokenStream> = node_names
        .iter()
        .map(|n| {
            let declared = declared_at.get(n).copied();
            let user_docs = user_docs(declared.and_then(|i| lowered.docs.nodes.get(i)));
            let doc = format!("The node `{n}`.");
            quote!(#user_docs #[doc = #doc])
        })
        .collect();
    let node_doc = format!("The nodes of [`{name_text}`], in declaration order.");
    let count = nodes.len();
    // A graph without nodes has an enum without values.
    let index = match count {
        0 => quote!(match self {}),
        _ => quote!(self as usize),
    };

    let transfers = transfer_handles(lowered, graph);
    let hosts = host_contexts(lowered, graph, nodes);
    let roles = role_enums(lowered, names, nodes);

    quote! {
        #(#docs)*
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::default::Default)]
        pub struct #graph;

        #transfers
        #hosts
        #roles

        #[doc = #params_doc]
        #[repr(C)]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::default::Default, ::core::cmp::PartialEq)]
        pub struct #params { #(#fields,)* }

        impl #params {
            /// Every parameter in declaration order; the WGSL layout's padding is zeroed.
            #[allow(clippy::too_many_arguments)]
            pub const fn new(#(#args),*) -> Self {
                Self { #(#inits),* }
            }
        }

        const _: () = {
            ::core::assert!(::core::mem::size_of::<#params>() == #size);
            #(#asserts)*
            // SAFETY: `#[repr(C)]`, every field is plain 32-bit data or bytes, and the explicit padding fields
            // leave no byte uncovered (the size assertion above).
            unsafe impl #p::bytemuck::Zeroable for #params {}
            unsafe impl #p::bytemuck::Pod for #params {}
        };

        #[doc = #buffers_doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy)]
        #default
        pub struct #buffers<'a> { #marker #(#externals,)* }

        #[doc = #node_doc]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash)]
        // Nodes whose camel-case names would clash keep their names as written.
        #[allow(non_camel_case_types)]
        pub enum #node { #(#node_docs #node_variants,)* }

        // As `derive(Debug)` writes it (the variant's name), from a table: a derived match arm per node
        // cost the borrow checker most of a second on a graph of 5000 nodes.
        impl ::core::fmt::Debug for #node {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                const VARIANTS: [&str; #count] = [#(#variant_names),*];
                f.write_str(VARIANTS[self.index()])
            }
        }

        // A table and the variant's discriminant (its position) rather than a match arm per node: less for
        // the compiler to check on big graphs.
        impl #node {
            /// The name written in the graph.
            pub const fn name(self) -> &'static str {
                const NAMES: [&str; #count] = [#(#node_names),*];
                NAMES[self.index()]
            }
            /// The position in declaration order (the index in the graph's description).
            pub const fn index(self) -> usize {
                #index
            }
        }
    }
}

/// `GraphUploads` and `GraphReadbacks`: a typed handle per upload and readback node, by node name, as the
/// constants `Graph::UPLOADS` and `Graph::READBACKS`. A node whose buffer has no usable type is left out
/// (its error is reported).
fn transfer_handles(lowered: &Lowered, graph: &Ident) -> TokenStream {
    let p = private();
    let mut out = TokenStream::new();
    for readback in [false, true] {
        let (kind, handle, constant) = match readback {
            false => ("Uploads", quote!(Upload), quote!(UPLOADS)),
            true => ("Readbacks", quote!(Readback), quote!(READBACKS)),
        };
        let mut fields = Vec::new();
        let mut values = Vec::new();
        for (index, node) in lowered.graph.nodes.iter().enumerate() {
            let buffer = match (&node.kind, readback) {
                (NodeKind::Upload { dst, .. }, false) => dst,
                (NodeKind::Readback { src, .. }, true) => src,
                _ => continue,
            };
            let declared = lowered.graph.buffers.iter().find(|b| &b.name == buffer);
            let field = rust_ident(&node.name, lowered.spans.locate(&Loc::Node(index)).0);
            // A texture's texels move as bytes, rows packed: `Texels` says so.
            let texture = declared
                .and_then(|b| graph_core::texture::TextureType::parse_declaration(&b.elem).ok());
            let (ty, doc) = match texture {
                Some((texture, _)) => (
                    quote!(#p::Texels),
                    format!(
                        "The node `{}`, of texture `{buffer}` (`{texture}`): its texels' bytes, rows packed.",
                        node.name
                    ),
                ),
                None => {
                    let elem = declared
                        .filter(|b| graph_core::types::element_type_problem(&b.elem).is_none())
                        .and_then(|b| ValueType::parse(&b.elem).ok());
                    let Some(elem) = elem else { continue };
                    (
                        rust_type(elem),
                        format!("The node `{}`, of `{buffer}`: `[{elem}]`.", node.name),
                    )
                }
            };
            let index = index as u32;
            fields.push(quote!(#[doc = #doc] pub #field: #p::#handle<#graph, #ty>));
            values.push(quote!(#field: #p::#handle::new(#index)));
        }
        let name = format_ident!("{}{}", graph, kind);
        let doc = match readback {
            false => format!(
                "The upload nodes of [`{graph}`]: give each its data with `Baked::upload` before each replay \
                 (of a `Baked<{graph}>`: another graph's does not take them)."
            ),
            true => format!(
                "The readback nodes of [`{graph}`]: read each from the replay's `Finished<{graph}>` (what `wait` \
                 returns; another graph's does not take them)."
            ),
        };
        out.extend(quote! {
            #[doc = #doc]
            #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy)]
            pub struct #name { #(#fields,)* }

            impl #graph {
                #[doc = #doc]
                pub const #constant: #name = #name { #(#values,)* };
            }
        });
    }
    out
}

/// Per host node: `GraphNameHost<'a>`, its typed context (a method per declared buffer: `buf()` reads it,
/// `write_buf(&data)` replaces it, as the access allows; a texture's the same over its texels' bytes), the
/// handle `GraphNameTask` that names it, and the handles as `Graph::HOSTS`. A buffer named twice, or without a
/// usable element type, gets no method (its error is reported).
fn host_contexts(lowered: &Lowered, graph: &Ident, nodes: &[(Ident, String)]) -> TokenStream {
    let p = private();
    let mut items = TokenStream::new();
    let mut fields = Vec::new();
    let mut values = Vec::new();
    for (index, (node, (variant, _))) in lowered.graph.nodes.iter().zip(nodes).enumerate() {
        let NodeKind::Host { accesses } = &node.kind else {
            continue;
        };
        let context = format_ident!("{}{}Host", graph, variant);
        let task = format_ident!("{}{}Task", graph, variant);
        let mut methods = Vec::new();
        for (a, access) in accesses.iter().enumerate() {
            // A buffer named twice, or without a usable element type, is an error the checks report.
            let repeated = accesses[..a].iter().any(|b| b.buffer == access.buffer);
            let span = lowered
                .spans
                .get(&Loc::Access {
                    node: index,
                    index: a,
                })
                .map_or_else(Span::call_site, |s| s.0);
            // A texture's texels, as bytes.
            let texture = lowered
                .graph
                .buffers
                .iter()
                .find(|b| b.name == access.buffer)
                .filter(|b| graph_core::texture::TextureType::parse_declaration(&b.elem).is_ok());
            if let (Some(texture), false) = (texture, repeated) {
                methods.extend(texel_methods(&p, access, a, &texture.elem, span));
                continue;
            }
            let elem = lowered
                .graph
                .buffers
                .iter()
                .find(|b| b.name == access.buffer)
                .filter(|b| graph_core::types::element_type_problem(&b.elem).is_none())
                .and_then(|b| ValueType::parse(&b.elem).ok());
            let (Some(elem), false) = (elem, repeated) else {
                continue;
            };
            let ty = rust_type(elem);
            let reader = rust_ident(&access.buffer, span);
            let writer = format_ident!("write_{}", access.buffer, span = span);
            if access.mode.reads() {
                let doc = format!(
                    "Reads `{}` (`[{elem}]`), as the GPU work before this task left it.",
                    access.buffer
                );
                methods.push(quote! {
                    #[doc = #doc]
                    pub fn #reader(&self) -> ::core::result::Result<::std::vec::Vec<#ty>, #p::Error> {
                        self.ctx.read_access::<#ty>(#a)
                    }
                });
            }
            if access.mode.writes() {
                let doc = format!(
                    "Replaces `{}` (`[{elem}]`, all of it) for the GPU work after this task.",
                    access.buffer
                );
                methods.push(quote! {
                    #[doc = #doc]
                    pub fn #writer(&self, data: &[#ty]) -> ::core::result::Result<(), #p::Error> {
                        self.ctx.write_access::<#ty>(#a, data)
                    }
                });
            }
        }
        let context_doc = format!(
            "What host task `{}` of [`{graph}`] sees: its declared buffers, typed.",
            node.name
        );
        let task_doc = format!(
            "The host task `{}` of [`{graph}`], for `Baked::on_host`.",
            node.name
        );
        items.extend(quote! {
            #[doc = #context_doc]
            pub struct #context<'a> {
                // Unread when the task declares no buffer.
                #[allow(dead_code)]
                ctx: &'a #p::HostContext<'a>,
            }

            impl #context<'_> {
                #(#methods)*
            }

            #[doc = #task_doc]
            #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy)]
            pub struct #task;

            impl #p::HostNode for #task {
                type Graph = #graph;
                type Context<'a> = #context<'a>;
                fn index(self) -> usize {
                    #index
                }
                fn context<'a>(ctx: &'a #p::HostContext<'a>, _: #p::ContextKey) -> #context<'a> {
                    #context { ctx }
                }
            }
        });
        let field = rust_ident(&node.name, variant.span());
        let field_doc = format!("The host task `{}`.", node.name);
        fields.push(quote!(#[doc = #field_doc] pub #field: #task));
        values.push(quote!(#field: #task));
    }
    let hosts = format_ident!("{}Hosts", graph);
    let doc = format!(
        "The host tasks of [`{graph}`], each with its typed context: give each its closure with `Baked::on_host`."
    );
    quote! {
        #items

        #[doc = #doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy)]
        pub struct #hosts { #(#fields,)* }

        impl #graph {
            #[doc = #doc]
            pub const HOSTS: #hosts = #hosts { #(#values,)* };
        }
    }
}

/// A node set of the typed API: the nodes of one role, which one method of `Baked` takes in place of the
/// whole node enum, so that a node of another kind (or of another graph) is a compile error naming the set.
/// Host tasks have theirs already (`Name::HOSTS`).
#[derive(Clone, Copy)]
enum Role {
    /// `NameKernel`, for `Baked::set_dispatch`.
    Kernel,
    /// `NameChoice`, for `Baked::select`.
    Choice,
    /// `NameRanged`: fills declared with a range, uploads and readbacks, for `Baked::set_range`.
    Ranged,
    /// `NameCopy`, for `Baked::set_copy_ranges`.
    Copy,
    /// `NameInterop`, for `Baked::on_interop`.
    Interop,
    /// `NameToggle`, for `Baked::set_enabled`: kernels, fills, copies, subgraphs.
    Toggle,
}

impl Role {
    const ALL: [Role; 6] = [
        Role::Kernel,
        Role::Choice,
        Role::Ranged,
        Role::Copy,
        Role::Interop,
        Role::Toggle,
    ];

    /// Whether a node of `kind` (a choice of alternatives or not) is in this set.
    fn has(self, kind: &NodeKind, is_choice: bool) -> bool {
        match (self, kind) {
            (
                Role::Toggle,
                NodeKind::Kernel(_)
                | NodeKind::Fill { .. }
                | NodeKind::Copy { .. }
                | NodeKind::Subgraph { .. },
            ) => true,
            (Role::Kernel, NodeKind::Kernel(_)) => true,
            (Role::Choice, NodeKind::Kernel(_)) => is_choice,
            (Role::Ranged, NodeKind::Fill { range, .. }) => range.is_some(),
            (Role::Ranged, NodeKind::Upload { .. } | NodeKind::Readback { .. }) => true,
            (Role::Copy, NodeKind::Copy { .. }) => true,
            (Role::Interop, NodeKind::Interop { .. }) => true,
            _ => false,
        }
    }

    /// The set's name, what its docs call a node of it, and the method that takes it.
    fn words(self, names: &Names) -> (&Ident, &'static str, &'static str) {
        match self {
            Role::Kernel => (&names.kernel, "kernel", "set_dispatch"),
            Role::Choice => (&names.choice, "choice of alternatives", "select"),
            Role::Ranged => (
                &names.ranged,
                "node with a range (a fill declared with one, an upload, a readback)",
                "set_range",
            ),
            Role::Copy => (&names.copy, "copy", "set_copy_ranges"),
            Role::Interop => (&names.interop, "interop task", "on_interop"),
            Role::Toggle => (
                &names.toggle,
                "node that can be turned off (a kernel, a fill, a copy, a subgraph)",
                "set_enabled",
            ),
        }
    }
}

/// What a node of `kind` is called in the docs.
fn kind_word(kind: &NodeKind) -> &'static str {
    match kind {
        NodeKind::Kernel(_) => "kernel",
        NodeKind::Copy { .. } => "copy",
        NodeKind::Fill { .. } => "fill",
        NodeKind::Upload { .. } => "upload",
        NodeKind::Readback { .. } => "readback",
        NodeKind::Host { .. } => "host task",
        NodeKind::Interop { .. } => "interop task",
        NodeKind::Empty {} => "empty node",
        NodeKind::Barrier {} => "barrier",
        NodeKind::Subgraph { .. } => "subgraph",
    }
}

/// The node sets of every [`Role`]: each an enum whose variants are the node enum's, with the nodes'
/// declaration indices as discriminants (what the runtime reads); a role no node has is an enum without
/// variants, so no call that takes it can be written.
fn role_enums(lowered: &Lowered, names: &Names, nodes: &[(Ident, String)]) -> TokenStream {
    let p = private();
    let (graph, node_enum) = (&names.graph, &names.node);
    // Each name's kind, of its first node (the stub beside errors lists a repeated name once).
    let mut kinds: HashMap<&str, &NodeKind> = HashMap::new();
    for n in &lowered.graph.nodes {
        kinds.entry(&n.name).or_insert(&n.kind);
    }
    let choices: HashSet<&str> = lowered
        .graph
        .alternatives
        .iter()
        .flat_map(|a| &a.choices)
        .map(String::as_str)
        .collect();
    let mut out = TokenStream::new();
    for role in Role::ALL {
        let (ident, what, method) = role.words(names);
        let mut variants = Vec::new();
        for (index, (variant, name)) in nodes.iter().enumerate() {
            let is_choice = choices.contains(name.as_str());
            let Some(kind) = kinds.get(name.as_str()) else {
                continue;
            };
            if role.has(kind, is_choice) {
                let doc = format!("The {} `{name}`.", kind_word(kind));
                let index = proc_macro2::Literal::usize_unsuffixed(index);
                variants.push(quote!(#[doc = #doc] #variant = #index));
            }
        }
        let doc = format!(
            "Each {what} of [`{graph}`]: what `Baked::{method}` takes. The variants are [`{node_enum}`]'s; a \
             node of another kind or graph does not compile there."
        );
        out.extend(quote! {
            #[doc = #doc]
            #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash)]
            // Variants as in the node enum; those the program never names are no reason for a warning.
            #[allow(non_camel_case_types, dead_code)]
            pub enum #ident { #(#variants,)* }

            // The variant's name, as the node enum's (see there).
            impl ::core::fmt::Debug for #ident {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    ::core::fmt::Debug::fmt(&self.node(), f)
                }
            }

            impl #ident {
                /// The node in the graph's node enum.
                pub const fn node(self) -> #node_enum {
                    #graph::NODES[self as usize]
                }
            }

            impl #p::GraphNode for #ident {
                fn index(self) -> usize {
                    self as usize
                }
            }
        });
    }
    out
}

/// The methods of a host context over texture access `a` (of type text `ty`), as the access allows: `t()`
/// reads its texels' bytes, `write_t(&bytes)` replaces them all.
fn texel_methods(
    p: &TokenStream,
    access: &graph_core::ir::Access,
    a: usize,
    ty: &str,
    span: Span,
) -> Vec<TokenStream> {
    let mut methods = Vec::new();
    let reader = rust_ident(&access.buffer, span);
    let writer = format_ident!("write_{}", access.buffer, span = span);
    if access.mode.reads() {
        let doc = format!(
            "Reads every texel of texture `{}` (`{ty}`) as bytes, rows one after another, as the GPU work \
             before this task left it.",
            access.buffer
        );
        methods.push(quote! {
            #[doc = #doc]
            pub fn #reader(&self) -> ::core::result::Result<::std::vec::Vec<u8>, #p::Error> {
                self.ctx.read_texels_access(#a)
            }
        });
    }
    if access.mode.writes() {
        let doc = format!(
            "Replaces every texel of texture `{}` (`{ty}`, bytes laid out as the reader gives them) for the \
             GPU work after this task.",
            access.buffer
        );
        methods.push(quote! {
            #[doc = #doc]
            pub fn #writer(&self, texels: &[u8]) -> ::core::result::Result<(), #p::Error> {
                self.ctx.write_texels_access(#a, texels)
            }
        });
    }
    methods
}

/// A parameter's field in the typed `Params` struct: its element's Rust type, but an `f16` is the
/// `HalfParam` the block holds (an `f32` of its value).
fn param_rust_type(t: ValueType) -> TokenStream {
    if !t.is_f16() {
        return rust_type(t);
    }
    let p = private();
    match t.components {
        1 => quote!(#p::HalfParam),
        n => {
            let n = n as usize;
            quote!([#p::HalfParam; #n])
        }
    }
}

fn rust_type(t: ValueType) -> TokenStream {
    let scalar = match t.scalar {
        Scalar::F32 => quote!(f32),
        Scalar::I32 => quote!(i32),
        Scalar::U32 => quote!(u32),
        Scalar::U8 => quote!(u8),
        Scalar::U16 => quote!(u16),
        Scalar::F16 => {
            let p = private();
            quote!(#p::f16)
        }
    };
    match t.components {
        1 => scalar,
        n => {
            let n = n as usize;
            quote!([#scalar; #n])
        }
    }
}

/// The `impl TaskGraph`, the static description and the inspectable constants of a checked graph.
pub fn description(
    checked: &CheckedGraph,
    lowered: &Lowered,
    names: &Names,
    node_variants: &[Ident],
) -> TokenStream {
    let p = private();
    let Names {
        graph,
        params,
        buffers,
        node,
        kernel,
        choice,
        ranged,
        copy,
        interop,
        toggle,
    } = names;
    let g = &checked.graph;
    let u = |v: usize| v as u32;
    let desc = graph_core::describe(checked);
    let description = desc.const_tokens();
    // What fuses whatever the bound buffers and the device: kernels over the same declared extent, each
    // group's kernel made and validated by the same function bake runs, so a group listed here is one bake
    // can make (a group whose kernel cannot be made is listed as the runs that can).
    let fusion = graph_core::fusion::fuse(
        &desc,
        &graph_core::fusion::declared_lengths(&desc),
        graph_core::fusion::MAX_FUSED_BINDINGS,
    );
    let fused_typed: Vec<Vec<&Ident>> = fusion
        .groups
        .iter()
        .map(|g| {
            g.members
                .iter()
                .map(|&n| &node_variants[n as usize])
                .collect()
        })
        .collect();

    // The memory plan bake makes on a device of WebGPU's default limits, from the same function: of the
    // fusion above when there is no subgraph to flatten, else of the flattened graph's.
    let flat = matches!(
        graph_core::flatten::flatten(&desc),
        Ok(std::borrow::Cow::Borrowed(_))
    );
    let planned = match flat {
        true => graph_core::memory::fused_plan(&fusion),
        false => graph_core::memory::declared_plan(&desc),
    };
    let memory = match planned {
        Some((plan, names)) => {
            let heaps = &plan.heaps;
            let owned = plan.owned_bytes();
            let unaliased = plan.unaliased_bytes;
            // The planned description is flattened: a child's graph-owned buffers follow the parent's.
            let external = |b: usize| desc.buffers.get(b).is_some_and(|b| b.role.is_external());
            let places = names
                .iter()
                .zip(&plan.placements)
                .enumerate()
                .filter(|&(b, _)| !external(b))
                .map(|(_, (name, place))| match place {
                    Some(p) => {
                        let (heap, offset) = (p.heap, p.offset);
                        quote!((#name, ::core::option::Option::Some((#heap, #offset))))
                    }
                    None => quote!((#name, ::core::option::Option::None)),
                });
            quote!(::core::option::Option::Some(#p::memory::DeclaredMemory {
                owned_bytes: #owned,
                unaliased_bytes: #unaliased,
                heaps: &[#(#heaps),*],
                placements: &[#(#places),*],
            }))
        }
        None => quote!(::core::option::Option::None),
    };

    let external = |textures: bool| -> (Vec<u32>, Vec<Ident>) {
        g.buffers
            .iter()
            .enumerate()
            .filter(|(i, b)| b.role.is_external() && checked.textures[*i].is_some() == textures)
            .map(|(i, b)| {
                (
                    u(i),
                    rust_ident(&b.name, lowered.spans.locate(&Loc::Buffer(i)).0),
                )
            })
            .unzip()
    };
    let (ext_index, ext_field) = external(false);
    let (texture_index, texture_field) = external(true);

    let order_typed: Vec<&Ident> = checked
        .schedule
        .order
        .iter()
        .map(|&n| &node_variants[n])
        .collect();
    let levels_typed: Vec<Vec<&Ident>> = checked
        .schedule
        .levels
        .iter()
        .map(|l| l.iter().map(|&n| &node_variants[n]).collect())
        .collect();
    let files = lowered.files.iter().map(|f| {
        quote!(
            const _: &str = ::core::include_str!(#f);
        )
    });
    let inherent = graph_items(
        names,
        node_variants,
        &order_typed,
        &levels_typed,
        &fused_typed,
        &memory,
    );

    quote! {
        const _: () = {
            #(#files)*

            impl #p::TaskGraph for #graph {
                type Params = #params;
                type Buffers<'a> = #buffers<'a>;
                type Node = #node;
                type KernelNode = #kernel;
                type ChoiceNode = #choice;
                type RangedNode = #ranged;
                type CopyNode = #copy;
                type InteropNode = #interop;
                type ToggleNode = #toggle;
                const DESCRIPTION: &'static #p::desc::GraphDesc = &#description;
                fn bind<'a>(buffers: &<Self as #p::TaskGraph>::Buffers<'a>) -> ::std::vec::Vec<(u32, &'a #p::AnyBuffer)> {
                    ::std::vec![#((#ext_index, buffers.#ext_field.as_any())),*]
                }
                fn bind_textures<'a>(buffers: &<Self as #p::TaskGraph>::Buffers<'a>) -> ::std::vec::Vec<(u32, &'a #p::Texture)> {
                    ::std::vec![#((#texture_index, buffers.#texture_field)),*]
                }
                fn node(index: usize) -> ::core::option::Option<#node> {
                    #graph::NODES.get(index).copied()
                }
                fn node_index(node: #node) -> usize {
                    node.index()
                }
            }
        };

        #inherent
    }
}

/// The graph type's own items: its node lists and `bake`. The stub beside errors has them too, so code using
/// them sees only the real error.
pub fn graph_items(
    names: &Names,
    nodes: &[Ident],
    order: &[&Ident],
    levels: &[Vec<&Ident>],
    fused: &[Vec<&Ident>],
    memory: &TokenStream,
) -> TokenStream {
    let p = private();
    let Names {
        graph,
        buffers,
        node,
        ..
    } = names;
    let count = nodes.len();
    // Every list but `NODES` by position in it: a number is less to check than a path.
    let position: HashMap<&Ident, usize> = nodes.iter().enumerate().map(|(i, n)| (n, i)).collect();
    let order = picked(graph, node, order.iter().copied(), &position);
    let levels = lists(graph, node, levels, &position);
    let fused = lists(graph, node, fused, &position);
    let bake_doc = format!(
        "Bakes [`{graph}`] onto `gpu`: pipelines, bind groups and graph-owned buffers, created once. Fails \
         with an error naming the buffer when a bound buffer has the wrong element type, length or usage."
    );
    quote! {
        impl #graph {
            /// Number of nodes.
            pub const NODE_COUNT: usize = #count;
            /// Every node, in declaration order.
            pub const NODES: [#node; #count] = [#(#node::#nodes),*];
            /// Every node once, each after all nodes it depends on (ties in declaration order).
            pub const TOPOLOGICAL_ORDER: [#node; #count] = #order;
            /// Topological levels: the nodes of one level have no path between them.
            pub const LEVELS: &'static [&'static [#node]] = #levels;
            /// The kernels the fusion pass merges at compile time, each group run as one kernel in this
            /// order: pointwise kernels over the same extent of declared length, and chains of
            /// neighbourhood kernels (stencils) over buffers of one declared length, run as one dispatch of
            /// `k` steps (the group's length) by overlapped tiling; each group's kernel made and validated
            /// as bake makes it. Bake runs every group listed here as one kernel (or
            /// inside a larger one: kernels over bound buffers of one length may fuse too,
            /// `untyped().fused()`); where the device cannot, `untyped().fusion_declined()` says why.
            pub const FUSED: &'static [&'static [#node]] = #fused;
            /// The graph-owned buffers' memory as bake plans it on a device of WebGPU's default limits
            /// (storage offsets aligned to 256 bytes, the fusion [`Self::FUSED`] lists): buffers that never
            /// live at one step of a replay share heaps. `None` when the plan needs the external buffers'
            /// lengths (a range over one). A baked graph's `memory_plan()` is the plan bake made.
            pub const MEMORY: ::core::option::Option<#p::memory::DeclaredMemory> = #memory;
            /// The static description the runtime bakes.
            pub const DESCRIPTION: &'static #p::desc::GraphDesc = <Self as #p::TaskGraph>::DESCRIPTION;

            #[doc = #bake_doc]
            pub fn bake(gpu: &#p::Gpu, buffers: #buffers<'_>) -> ::core::result::Result<#p::Baked<Self>, #p::Error> {
                #p::Baked::new(gpu, &buffers)
            }
        }
    }
}

/// A list of lists of nodes as a block: each inner list a constant of its own, then the list of them. One
/// expression of thousands of borrows costs the borrow checker more than its size (a chain of 5000 nodes has
/// 5000 levels); small constants cost it in proportion.
/// The nodes `list` as an array: picked from `graph::NODES` by position where the constant is evaluated
/// (`graph_core::desc::pick`).
fn picked<'a>(
    graph: &Ident,
    node: &Ident,
    list: impl Iterator<Item = &'a Ident>,
    position: &HashMap<&Ident, usize>,
) -> TokenStream {
    let p = private();
    // Every node of a list is one of `NODES`; were one not, the array would come out short and fail to
    // compile rather than name another node.
    let at: Vec<proc_macro2::Literal> = list
        .filter_map(|n| position.get(n).copied())
        .map(proc_macro2::Literal::usize_unsuffixed)
        .collect();
    match at.is_empty() {
        // `pick` needs a node to start from, and an empty list needs none.
        true => quote!([] as [#node; 0]),
        false => quote!(#p::desc::pick(&#graph::NODES, [#(#at),*])),
    }
}

/// Lists of nodes as data: every node in one array (see [`picked`]), and each list's length, split where the
/// constant is evaluated (`graph_core::desc::split_lists`). A constant per list cost the compiler a check
/// per list.
fn lists(
    graph: &Ident,
    node: &Ident,
    lists: &[Vec<&Ident>],
    position: &HashMap<&Ident, usize>,
) -> TokenStream {
    let p = private();
    let flat = picked(graph, node, lists.iter().flatten().copied(), position);
    let count = lists.iter().map(Vec::len).sum::<usize>();
    let lens = lists
        .iter()
        .map(|l| proc_macro2::Literal::usize_unsuffixed(l.len()));
    quote!({
        const FLAT: [#node; #count] = #flat;
        &#p::desc::split_lists(&FLAT, &[#(#lens),*])
    })
}

/// The hidden module the generated items live in, named after the graph (see `expand::in_module`).
pub fn module_name(graph: &Ident) -> Ident {
    Ident::new(&format!("__graph_{}", graph.unraw()), graph.span())
}

/// The subgraph nodes whose child is a `graph!` graph, each with its path as written. A library subgraph
/// (`kernels::..`) is none of them: it was read and checked at expansion, and is written out whole.
fn graph_children(lowered: &Lowered) -> impl Iterator<Item = &(usize, syn::Path)> {
    lowered
        .subgraph_paths
        .iter()
        .filter(|(_, path)| path.segments.first().is_none_or(|s| s.ident != "kernels"))
}

/// The span of a child's path that errors about the child type point at: its last segment, the type's name.
fn child_span(path: &syn::Path) -> Span {
    path.segments
        .last()
        .map_or_else(Span::call_site, |s| s.ident.span())
}

/// The type alias of a child, beside the graph, spanned at the child's path.
fn child_alias(graph: &Ident, node: &str, path: &syn::Path) -> Ident {
    let alias = crate::const_tokens::subgraph_alias(&graph.unraw().to_string(), node);
    Ident::new(&alias.to_string(), child_span(path))
}

/// Reports the errors a graph's own tokens show about its subgraphs: a subgraph whose path names the graph
/// itself (`Self`, or its name). One that contains it through others is found by const evaluation
/// (`graph_runtime`'s `nesting.rs`), with the same words.
pub fn subgraph_errors(lowered: &Lowered, graph: &Ident, cx: &Ctxt) {
    let name = graph.unraw().to_string();
    let errors = graph_children(lowered)
        .filter(|(_, path)| {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            path.leading_colon.is_none()
                && match segments.as_slice() {
                    [only] => *only == "Self" || *only == name,
                    [first, only] => first == "self" && *only == name,
                    _ => false,
                }
        })
        .map(|(node, path)| {
            let node = &lowered.graph.nodes[*node];
            let written = match &node.kind {
                NodeKind::Subgraph { graph, .. } => graph.as_str(),
                _ => "",
            };
            let message = graph_core::subgraph::contains_itself(&name, &node.name, written, true);
            syn::Error::new(child_span(path), message.as_str())
        });
    for error in errors {
        cx.error(error);
    }
}

/// What a graph gives its parents' checks (`graph_runtime`'s `nesting.rs`): its `Subgraph` impl and its
/// `Contains` walk over `children`, the aliases of its `graph!` children (none for the stub beside a graph's
/// errors, which `has_errors` marks).
pub fn nesting_impls(graph: &Ident, children: &[Ident], has_errors: bool) -> TokenStream {
    let p = private();
    let name = graph.unraw().to_string();
    let identity = quote_spanned! {graph.span()=>
        ::core::concat!(::core::module_path!(), "::", #name, " at ", ::core::file!(), ":",
            ::core::line!(), ":", ::core::column!())
    };
    let children: Vec<TokenStream> = children.iter().map(|alias| quote!(super::#alias)).collect();
    let walk = |mode: TokenStream| {
        let children = &children;
        quote!(#(<#children as #p::Contains<#graph, #p::MaxDepth, #mode>>::FOUND),*)
    };
    let (below, outer) = (walk(quote!(#p::Inner)), walk(quote!(#p::Outer)));
    let subgraph = quote! {
        // Not listed among the types that implement it when a child type is not a graph.
        #[diagnostic::do_not_recommend]
        impl #p::Subgraph for #graph {
            const IDENTITY: &'static str = #identity;
            const HAS_ERRORS: bool = #has_errors;
            const BELOW: #p::Found = #p::below(&[#below]);
            const NESTS_TOO_DEEP: bool = #p::any_too_deep(&[#outer]);
        }
    };
    if children.is_empty() {
        // Nothing below: the walk ends here, whatever its target and depth.
        return quote! {
            #subgraph
            impl<T, D, M> #p::Contains<T, D, M> for #graph {
                const FOUND: #p::Found = #p::Found::Nothing;
            }
        };
    }
    quote! {
        #subgraph
        impl<T: #p::Subgraph, M: #p::AtBottom<#graph>> #p::Contains<T, #p::Bottom, M> for #graph {
            const FOUND: #p::Found = #p::at_bottom::<#graph, T, M>();
        }
        impl<T: #p::Subgraph, D, M> #p::Contains<T, #p::Below<D>, M> for #graph
        where
            #(#children: #p::Contains<T, D, M>,)*
        {
            const FOUND: #p::Found = #p::step::<#graph, T>(&[
                #(<#children as #p::Contains<T, D, M>>::FOUND),*
            ]);
        }
    }
}

/// For each `graph!` child: its type alias, placed beside the graph (outside its hidden module, so the child's
/// path is read where the user wrote it) through `graph_runtime`'s `Child`, so that a type that is not a graph
/// is one error at its path and nowhere else; the constant of its description that the graph's description
/// holds; and, beside the graph too, the constants that check the subgraph node and each binding, each spanned
/// at what it checks: a mismatch is one compile error there, in the checks' words. They sit outside the hidden
/// module so the error names nothing generated (rustc says where the evaluation of `_` failed). Returns what
/// goes outside the module and what goes inside.
pub fn subgraph_checks(lowered: &Lowered, graph: &Ident) -> (TokenStream, TokenStream) {
    let p = private();
    let (mut outside, mut inside) = (TokenStream::new(), TokenStream::new());
    let module = module_name(graph);
    let mut aliases = Vec::new();
    for (node, path) in graph_children(lowered) {
        let node_name = &lowered.graph.nodes[*node].name;
        let alias = child_alias(graph, node_name, path);
        let description = crate::const_tokens::subgraph_description(node_name);
        // The path is written once, so a misspelt one is one error too.
        let written = Ident::new(&format!("{alias}_as_written"), alias.span());
        outside.extend(quote! {
            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            type #written = #path;
            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            type #alias = <#written as #p::Child<{ <#written as #p::Subgraph>::HAS_ERRORS }>>::Graph;
        });
        inside.extend(quote! {
            #[allow(non_upper_case_globals)]
            const #description: &'static #p::desc::GraphDesc =
                #p::child_description::<#graph, super::#alias>();
        });
        let n = *node as u32;
        let parent = quote!(#module::#graph);
        outside.extend(panic_on_err(
            quote!(#p::check_subgraph_node::<#parent, #alias>(#n)),
            crate::spans::range_of(path),
        ));
        let bindings = match &lowered.graph.nodes[*node].kind {
            NodeKind::Subgraph { accesses, .. } => accesses.len(),
            _ => 0,
        };
        for index in 0..bindings {
            let binding = lowered.spans.locate(&Loc::Access { node: *node, index });
            let mode = lowered
                .spans
                .locate(&Loc::AccessMode { node: *node, index });
            let i = index as u32;
            outside.extend(panic_on_err(
                quote!(#p::check_subgraph_binding::<#parent, #alias>(#n, #i)),
                (binding.0, mode.1),
            ));
        }
        aliases.push(alias);
    }
    inside.extend(nesting_impls(graph, &aliases, false));
    (outside, inside)
}

/// A constant that panics with the message of `check`'s `Err`, so the compile error reads it, shown from the
/// first to the last span of `at`.
fn panic_on_err(check: TokenStream, at: crate::spans::SpanRange) -> TokenStream {
    let (first, last) = at;
    let mut args = proc_macro2::Group::new(
        proc_macro2::Delimiter::Parenthesis,
        quote!("{}", message.as_str()),
    );
    args.set_span(last);
    let panic = quote_spanned!(first=> ::core::panic!);
    quote! {
        const _: () = if let ::core::result::Result::Err(message) = #check {
            #panic #args
        };
    }
}
