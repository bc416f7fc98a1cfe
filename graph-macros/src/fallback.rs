//! What the macro emits when the graph has errors, in one place: the errors, and beside them a stub with every
//! public item a checked graph has (as thiserror does), so code using the graph sees only the real errors
//! and none of its own.

use graph_core::layout::ParamsLayout;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

use crate::ast::GraphDef;
use crate::generate::{self, Names, graph_items, private};
use crate::lower::Lowered;

/// The errors and the stub. Its parameter struct keeps the parameters whose types are valid, each name once
/// (a duplicate, which the checks report, would break the struct) and none named like its padding; each
/// node's variant is there once.
pub fn stub(
    def: &GraphDef,
    lowered: &Lowered,
    names: &Names,
    variants: &[Ident],
    nodes: &[(String, Span)],
    errors: &[syn::Error],
) -> TokenStream {
    // A parameter named like the struct's padding (`__pad1`, refused) would clash with a padding field.
    let params: Vec<_> = lowered
        .graph
        .params
        .iter()
        .filter(|p| !p.name.starts_with("__"))
        .cloned()
        .collect();
    let layout = ParamsLayout::of_valid_params(&params);
    let mut named: Vec<(Ident, String)> = Vec::new();
    for (v, (name, _)) in variants.iter().zip(nodes) {
        if !named.iter().any(|(_, n)| n == name) {
            named.push((v.clone(), name.clone()));
        }
    }
    let types = generate::types(def, lowered, &layout, names, &named);
    let stub_variants: Vec<Ident> = named.into_iter().map(|(v, _)| v).collect();
    let description = stub_description(names, &stub_variants);
    let errors = errors.iter().map(syn::Error::to_compile_error);
    quote!(#(#errors)* #types #description)
}

/// A description that bakes nothing, for the stub emitted beside errors: every item of a checked graph, so
/// code using them sees only the real errors. Its schedule is declaration order in one level per node.
fn stub_description(names: &Names, nodes: &[Ident]) -> TokenStream {
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
    let order: Vec<&Ident> = nodes.iter().collect();
    let levels: Vec<Vec<&Ident>> = nodes.iter().map(|n| vec![n]).collect();
    let inherent = graph_items(
        names,
        nodes,
        &order,
        &levels,
        &[],
        &quote!(::core::option::Option::None),
    );
    // Marked as having errors, so a parent checks nothing against the stub: only this graph's own errors show.
    let nesting = generate::nesting_impls(graph, &[], true);
    quote! {
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
            const DESCRIPTION: &'static #p::desc::GraphDesc = &#p::STUB_DESCRIPTION;
            fn bind<'a>(_: &<Self as #p::TaskGraph>::Buffers<'a>) -> ::std::vec::Vec<(u32, &'a #p::AnyBuffer)> { ::std::vec::Vec::new() }
            fn node(index: usize) -> ::core::option::Option<#node> { #graph::NODES.get(index).copied() }
            fn node_index(node: #node) -> usize { node.index() }
        }
        #inherent
        #nesting
    }
}
