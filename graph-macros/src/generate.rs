//! Code generation: the typed items of one graph and its static description. Runs only on a checked graph,
//! except [`types`], which also builds the stub emitted beside errors.

use std::collections::{HashMap, HashSet};

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
        let span = declared.map_or_else(Span::call_site, |i| lowered.spans.params[i]);
        let field = rust_ident(&f.name, span);
        let ty = rust_type(f.ty);
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
        cursor = f.offset + f.ty.size();
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
        .zip(&lowered.spans.buffers)
        .enumerate()
        .filter(|(i, (b, _))| {
            b.role.is_external() && buffer_list[..*i].iter().all(|c| c.name != b.name)
        })
        .filter_map(|(i, (b, span))| {
            let elem = ValueType::parse(&b.elem).ok()?;
            let user_docs = user_docs(lowered.docs.buffers.get(i));
            let field = rust_ident(&b.name, *span);
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
    let marker = externals
        .is_empty()
        .then(|| quote!(#[doc(hidden)] pub _lifetime: ::core::marker::PhantomData<&'a ()>,));
    let buffers_doc =
        format!("The buffers [`{name_text}`] reads and writes, bound by the caller at bake time.");

    let node_variants: Vec<&Ident> = nodes.iter().map(|(v, _)| v).collect();
    let node_names: Vec<&str> = nodes.iter().map(|(_, n)| n.as_str()).collect();
    let node_docs: Vec<TokenStream> = node_names
        .iter()
        .map(|n| {
            let declared = lowered.graph.nodes.iter().position(|m| m.name == *n);
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
        pub struct #buffers<'a> { #marker #(#externals,)* }

        #[doc = #node_doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash)]
        // Nodes whose camel-case names would clash keep their names as written.
        #[allow(non_camel_case_types)]
        pub enum #node { #(#node_docs #node_variants,)* }

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
        for (index, (node, span)) in lowered
            .graph
            .nodes
            .iter()
            .zip(&lowered.spans.nodes)
            .enumerate()
        {
            let buffer = match (&node.kind, readback) {
                (NodeKind::Upload { dst, .. }, false) => dst,
                (NodeKind::Readback { src, .. }, true) => src,
                _ => continue,
            };
            let elem = lowered
                .graph
                .buffers
                .iter()
                .find(|b| &b.name == buffer)
                .filter(|b| graph_core::types::element_type_problem(&b.elem).is_none())
                .and_then(|b| ValueType::parse(&b.elem).ok());
            let Some(elem) = elem else { continue };
            let field = rust_ident(&node.name, *span);
            let ty = rust_type(elem);
            let doc = format!("The node `{}`, of `{buffer}`: `[{elem}]`.", node.name);
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
/// `write_buf(&data)` replaces it, as the access allows), the handle `GraphNameTask` that names it, and the
/// handles as `Graph::HOSTS`. A buffer named twice, or without a usable element type, gets no method (its
/// error is reported).
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
            let span = lowered.spans.accesses[index]
                .get(a)
                .map_or_else(Span::call_site, |s| s.0.0);
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
            "The host task `{}` of [`{graph}`], for `Baked::on_host_typed`.",
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
        "The host tasks of [`{graph}`], each with its typed context: give each its closure with `Baked::on_host_typed` \
         (or `Baked::on_host`, for the untyped context)."
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
}

impl Role {
    const ALL: [Role; 5] = [
        Role::Kernel,
        Role::Choice,
        Role::Ranged,
        Role::Copy,
        Role::Interop,
    ];

    /// Whether a node of `kind` (a choice of alternatives or not) is in this set.
    fn has(self, kind: &NodeKind, is_choice: bool) -> bool {
        match (self, kind) {
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
            #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash)]
            // Variants as in the node enum; those the program never names are no reason for a warning.
            #[allow(non_camel_case_types, dead_code)]
            pub enum #ident { #(#variants,)* }

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

fn rust_type(t: ValueType) -> TokenStream {
    let scalar = match t.scalar {
        Scalar::F32 => quote!(f32),
        Scalar::I32 => quote!(i32),
        Scalar::U32 => quote!(u32),
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
    } = names;
    let g = &checked.graph;
    let u = |v: usize| v as u32;
    let desc = graph_core::describe(checked);
    let description = desc.const_tokens();
    // What fuses whatever the bound buffers and the device: kernels over the same declared extent, each
    // group's kernel made and validated by the same function bake runs, so a group listed here is one bake
    // can make (a group whose kernel cannot be made is listed as the runs that can).
    let fused_typed: Vec<Vec<&Ident>> = graph_core::fusion::fuse(
        &desc,
        &graph_core::fusion::declared_lengths(&desc),
        graph_core::fusion::MAX_FUSED_BINDINGS,
    )
    .groups
    .iter()
    .map(|g| {
        g.members
            .iter()
            .map(|&n| &node_variants[n as usize])
            .collect()
    })
    .collect();

    let externals: Vec<(u32, Ident)> = g
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.role.is_external())
        .map(|(i, b)| (u(i), rust_ident(&b.name, lowered.spans.buffers[i])))
        .collect();
    let (ext_index, ext_field): (Vec<u32>, Vec<Ident>) = externals.into_iter().unzip();

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
                const DESCRIPTION: &'static #p::desc::GraphDesc = &#description;
                fn bind<'a>(buffers: &<Self as #p::TaskGraph>::Buffers<'a>) -> ::std::vec::Vec<(u32, &'a #p::AnyBuffer)> {
                    ::std::vec![#((#ext_index, buffers.#ext_field.as_any())),*]
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
) -> TokenStream {
    let p = private();
    let Names {
        graph,
        buffers,
        node,
        ..
    } = names;
    let count = nodes.len();
    let levels = lists(node, levels);
    let fused = lists(node, fused);
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
            pub const TOPOLOGICAL_ORDER: [#node; #count] = [#(#node::#order),*];
            /// Topological levels: the nodes of one level have no path between them.
            pub const LEVELS: &'static [&'static [#node]] = #levels;
            /// The kernels the fusion pass merges at compile time, each group run as one kernel in this
            /// order: pointwise kernels over the same extent of declared length, each group's kernel
            /// made and validated as bake makes it. Bake runs every group listed here as one kernel (or
            /// inside a larger one: kernels over bound buffers of one length may fuse too,
            /// `untyped().fused()`); where the device cannot, `untyped().fusion_declined()` says why.
            pub const FUSED: &'static [&'static [#node]] = #fused;
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
fn lists(node: &Ident, lists: &[Vec<&Ident>]) -> TokenStream {
    let names: Vec<Ident> = (0..lists.len()).map(|i| format_ident!("L{}", i)).collect();
    quote!({
        #(const #names: &[#node] = &[#(#node::#lists),*];)*
        &[#(#names),*]
    })
}

/// For each subgraph node: the alias of its child type, placed beside the graph (outside its hidden module,
/// so the child's path is read where the user wrote it), and the constants that check its bindings against
/// the child's description, each spanned at what it checks: a mismatch is a compile error there.
pub fn subgraph_checks(lowered: &Lowered, graph: &Ident) -> (TokenStream, TokenStream) {
    let p = private();
    let (mut outside, mut inside) = (TokenStream::new(), TokenStream::new());
    let graph_name = graph.unraw().to_string();
    for (node, path) in &lowered.subgraph_paths {
        // A library subgraph was checked at expansion, and its description is written out whole.
        if path.segments.first().is_some_and(|s| s.ident == "kernels") {
            continue;
        }
        let alias =
            crate::const_tokens::subgraph_alias(&graph_name, &lowered.graph.nodes[*node].name);
        outside.extend(quote! {
            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            type #alias = #path;
        });
        let n = *node as u32;
        let desc = quote!(<#graph as #p::TaskGraph>::DESCRIPTION);
        let whole = crate::lower::range_of(path);
        inside.extend(panic_on_err(
            quote!(#p::subgraph::check_described_node(#desc, #n)),
            whole,
        ));
        for (i, (binding, mode)) in lowered.spans.accesses[*node].iter().enumerate() {
            let i = i as u32;
            inside.extend(panic_on_err(
                quote!(#p::subgraph::check_described_binding(#desc, #n, #i)),
                (binding.0, mode.1),
            ));
        }
    }
    (outside, inside)
}

/// A constant that panics with the message of `check`'s `Err`, so the compile error reads it, shown from the
/// first to the last span of `at`.
fn panic_on_err(check: TokenStream, at: crate::lower::SpanRange) -> TokenStream {
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
