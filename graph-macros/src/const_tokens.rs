//! A description value turned into the tokens of a constant expression that rebuilds it: text and lists as
//! borrowed `Cow`s, so the compiler lays the description out once and const evaluation can read it. The
//! macro never assembles a description by hand; it writes out the value `graph_core::describe` made.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use graph_core::desc::{
    AccessDesc, AlternativeDesc, AxisSizeDesc, BlockDesc, BufferDesc, DispatchDesc, EdgeDesc,
    GraphDesc, GridDesc, KernelArgDesc, KernelDesc, OpDesc, OverrideDesc, ParamFieldDesc,
    ParamsDesc, PartitionDesc, RangeDesc, SizeDesc, SubgraphBinding, TextureSizeDesc,
};
use graph_core::ir::{AccessMode, ParamsStorage, Role};
use graph_core::size::{Axis, SizeOp, SizeStep};
use graph_core::types::{Scalar, ValueType};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

/// A value that can be written as a constant expression of itself.
pub trait ConstTokens {
    fn const_tokens(&self) -> TokenStream;
}

fn p() -> TokenStream {
    quote!(::graph_runtime::__private)
}

fn cow() -> TokenStream {
    quote!(::std::borrow::Cow::Borrowed)
}

impl ConstTokens for std::borrow::Cow<'static, str> {
    fn const_tokens(&self) -> TokenStream {
        let (cow, text) = (cow(), &**self);
        quote!(#cow(#text))
    }
}

impl<T: ConstTokens + Clone> ConstTokens for std::borrow::Cow<'static, [T]> {
    fn const_tokens(&self) -> TokenStream {
        let cow = cow();
        let items = self.iter().map(ConstTokens::const_tokens);
        quote!(#cow(&[#(#items),*]))
    }
}

impl<T: ConstTokens, const N: usize> ConstTokens for [T; N] {
    fn const_tokens(&self) -> TokenStream {
        let items = self.iter().map(ConstTokens::const_tokens);
        quote!([#(#items),*])
    }
}

impl<T: ConstTokens> ConstTokens for Option<T> {
    fn const_tokens(&self) -> TokenStream {
        match self {
            Some(v) => {
                let v = v.const_tokens();
                quote!(::core::option::Option::Some(#v))
            }
            None => quote!(::core::option::Option::None),
        }
    }
}

impl ConstTokens for u32 {
    fn const_tokens(&self) -> TokenStream {
        quote!(#self)
    }
}

impl ConstTokens for bool {
    fn const_tokens(&self) -> TokenStream {
        quote!(#self)
    }
}

/// A fieldless enum as `path::Variant`.
macro_rules! unit_enums {
    ($($ty:ident in $module:ident { $($variant:ident),* })*) => {$(
        impl ConstTokens for $ty {
            fn const_tokens(&self) -> TokenStream {
                let p = p();
                match self {
                    $($ty::$variant => quote!(#p::$module::$ty::$variant),)*
                }
            }
        }
    )*};
}

unit_enums! {
    Scalar in types { F32, I32, U32, F16, U8, U16 }
    AccessMode in ir { Read, Write, ReadWrite }
    Role in ir { Input, Output, InOut, Owned }
    ParamsStorage in ir { Immediates, Uniform }
    SizeOp in size { Add, Sub, Mul, Div, DivCeil, Min, Max }
    Axis in size { Width, Height, Layers, Depth }
}

/// A struct as `path::Name { field: value, .. }`.
macro_rules! structs {
    ($($ty:ident in $module:ident { $($field:ident),* })*) => {$(
        impl ConstTokens for $ty {
            fn const_tokens(&self) -> TokenStream {
                let p = p();
                $(let $field = self.$field.const_tokens();)*
                quote!(#p::$module::$ty { $($field: #$field),* })
            }
        }
    )*};
}

structs! {
    ValueType in types { scalar, components }
    ParamsDesc in desc { size, storage, fields, wgsl_struct }
    ParamFieldDesc in desc { name, ty, offset }
    BufferDesc in desc { name, elem, len, role, no_alias, texture, texture_size, sampler }
    SubgraphBinding in desc { name, buffer, mode }
    BlockDesc in desc { name, count, flag, nodes, branches, cases }
    AccessDesc in desc { buffer, mode }
    KernelDesc in desc { declarations, args, source, entry, workgroup_size, bindings, dispatch, foldable, range, alternative, pointwise, reach, grid, no_fusion, overrides }
    OverrideDesc in desc { key, value }
    GridDesc in desc { reach, image }
    AlternativeDesc in desc { group, choice }
    RangeDesc in desc { start, end }
    KernelArgDesc in desc { name, ty, value }
    SizeDesc in desc { text, steps }
}

/// Constants a description's expression names instead of repeating: each distinct value once, in items of
/// their own. Checking the description then costs the compiler work per item, each small, rather than one
/// expression of thousands of borrows (whose borrow check grows faster than its size), and a value that
/// recurs (the same library kernel on the same buffers) is checked once. What there are thousands of (nodes,
/// edges, levels) is written as arrays of plain values instead, which hold no borrows to check.
///
/// Each constant is named after a hash of its value, not a count: after an edit to one node, every other
/// constant keeps its name and its value, and the compiler's incremental check reuses what it found of it.
#[derive(Default)]
struct Shared {
    items: Vec<TokenStream>,
    /// Each value's constant, by its type and value as text.
    names: HashMap<String, Ident>,
    /// The names given, so that two values whose hashes meet still get two constants.
    taken: HashSet<Ident>,
}

impl Shared {
    /// The name of a constant of type `ty` holding `value`, declared on first use.
    fn name(&mut self, ty: TokenStream, value: TokenStream) -> TokenStream {
        let key = value.to_string();
        self.named(ty, key, || value)
    }

    /// The name of a constant of type `ty` holding the value `key` stands for (its text, or any text that
    /// tells it from every other value of `ty`), declared with the tokens `value` makes on first use, so a
    /// value that recurs is written out once.
    fn named(
        &mut self,
        ty: TokenStream,
        key: String,
        value: impl FnOnce() -> TokenStream,
    ) -> TokenStream {
        let key = format!("{ty}: {key}");
        if let Some(ident) = self.names.get(&key) {
            return quote!(#ident);
        }
        let mut hasher = std::hash::DefaultHasher::new();
        key.hash(&mut hasher);
        let hash = hasher.finish();
        let mut ident = quote::format_ident!("__D{:016x}", hash);
        for n in 1u32.. {
            if !self.taken.contains(&ident) {
                break;
            }
            ident = quote::format_ident!("__D{:016x}_{}", hash, n);
        }
        let value = value();
        self.items.push(quote!(const #ident: #ty = #value;));
        self.taken.insert(ident.clone());
        self.names.insert(key, ident.clone());
        quote!(#ident)
    }
}

/// A `graph!` graph's description. A subgraph node's child is a constant that `generate` places beside it
/// ([`subgraph_description`]), read from the child's type: the macro never sees the child's declaration.
/// Written as a block: the shared constants ([`Shared`]), then the value.
impl ConstTokens for GraphDesc {
    fn const_tokens(&self) -> TokenStream {
        let p = p();
        let cow = cow();
        let mut shared = Shared::default();
        let GraphDesc {
            name,
            params,
            buffers,
            nodes: _,
            edges,
            topological_order,
            levels,
            partitions,
            blocks,
        } = self;
        // The nodes as data: their names and their ops, given to `nodes_from` (see `graph_core::desc`).
        let names = self.nodes.iter().map(|node| &*node.name);
        let ops: Vec<TokenStream> = self
            .nodes
            .iter()
            .map(|node| match &node.op {
                // A library subgraph's child was described at expansion: written out whole, as a constant
                // reference of its own (an argument of `nodes_from` holds no borrow of a temporary).
                OpDesc::Subgraph {
                    path,
                    graph,
                    bindings,
                } if path.starts_with(graph_core::library::SUBGRAPH_PREFIX) => {
                    let (path, bindings) = (path.const_tokens(), bindings.const_tokens());
                    let child = GraphDesc::const_tokens(graph);
                    let child = shared.name(quote!(&'static #p::desc::GraphDesc), quote!(&#child));
                    quote!(#p::desc::OpDesc::Subgraph {
                        path: #path,
                        graph: #cow(#child),
                        bindings: #bindings,
                    })
                }
                // A `graph!` child's op stays in the list itself: each constant between a description and
                // its child's is one more step of the compiler's queries per level of nesting, and deep
                // nests then overflow its depth limit before the nesting check can speak.
                OpDesc::Subgraph { path, bindings, .. } => {
                    let child = subgraph_description(&node.name);
                    let (path, bindings) = (path.const_tokens(), bindings.const_tokens());
                    quote!(#p::desc::OpDesc::Subgraph {
                        path: #path,
                        graph: #cow(#child),
                        bindings: #bindings,
                    })
                }
                // Keyed by the value, so a kernel that recurs is written out once.
                op => {
                    let key = format!("{op:?}");
                    shared.named(quote!(#p::desc::OpDesc), key, || op.const_tokens())
                }
            })
            .collect();
        let levels_of = |levels: &[graph_core::desc::List<u32>], shared: &mut Shared| {
            let flat = levels
                .iter()
                .flat_map(|l| l.iter())
                .map(|&n| Literal::u32_unsuffixed(n));
            let lens = levels.iter().map(|l| Literal::usize_unsuffixed(l.len()));
            shared.name(
                quote!(#p::desc::List<#p::desc::List<u32>>),
                quote!(#cow(&#p::desc::split_cow_lists(&[#(#flat),*], &[#(#lens),*]))),
            )
        };
        let levels = levels_of(levels, &mut shared);
        let partitions: Vec<TokenStream> = partitions
            .iter()
            .map(|partition| match partition {
                PartitionDesc::Gpu { levels } => {
                    let levels = levels_of(levels, &mut shared);
                    quote!(#p::desc::PartitionDesc::Gpu { levels: #levels })
                }
                host => host.const_tokens(),
            })
            .collect();
        let edges = edge_words(edges, &mut shared);
        let topological_order = shared.name(
            quote!(#p::desc::List<u32>),
            topological_order.const_tokens(),
        );
        let [name, params, buffers, blocks] = [
            name.const_tokens(),
            params.const_tokens(),
            buffers.const_tokens(),
            blocks.const_tokens(),
        ];
        // Placed nodes, when there are any: `placed` over the nodes (a graph without costs nothing more).
        let placements: Vec<TokenStream> = self
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(n, node)| {
                let (n, gpu) = (Literal::u32_unsuffixed(n as u32), node.on?);
                let gpu = Literal::u32_unsuffixed(gpu);
                Some(quote!((#n, #gpu)))
            })
            .collect();
        let mut nodes = quote!(#p::desc::nodes_from([#(#names),*], [#(#ops),*]));
        if !placements.is_empty() {
            nodes = quote!(#p::desc::placed(#nodes, &[#(#placements),*]));
        }
        let items = shared.items;
        quote!({
            #(#items)*
            #p::desc::GraphDesc {
                name: #name,
                params: #params,
                buffers: #buffers,
                nodes: #cow(&#nodes),
                edges: #edges,
                topological_order: #topological_order,
                levels: #levels,
                partitions: #cow(&[#(#partitions),*]),
                blocks: #blocks,
            }
        })
    }
}

/// A graph's edges as a constant of their words ([`EdgeDesc::to_words`]) that `edges_from_words` turns
/// into edges where the constant is evaluated: thousands of integers are far less for the compiler to check
/// than as many struct and enum expressions.
fn edge_words(edges: &[EdgeDesc], shared: &mut Shared) -> TokenStream {
    let p = p();
    let count = edges.len();
    let words = edges.iter().map(|e| {
        let words = e.to_words().map(Literal::u32_unsuffixed);
        quote!([#(#words),*])
    });
    let array = shared.name(
        quote!([#p::desc::EdgeDesc; #count]),
        quote!(#p::desc::edges_from_words(&[#(#words),*])),
    );
    let cow = cow();
    quote!(#cow(&#array))
}

/// The type alias, beside graph `graph` (outside its hidden module), for the child of its subgraph node
/// `node`.
pub fn subgraph_alias(graph: &str, node: &str) -> proc_macro2::Ident {
    quote::format_ident!("__{}_subgraph_{}", graph, node)
}

/// The constant, in the graph's hidden module, of the description of the child of its subgraph node `node`
/// (`generate::subgraph_checks` writes it: the child's description, or a stub where the child contains its
/// parent again).
pub fn subgraph_description(node: &str) -> proc_macro2::Ident {
    quote::format_ident!("__subgraph_{}", node)
}

impl ConstTokens for u8 {
    fn const_tokens(&self) -> TokenStream {
        quote!(#self)
    }
}

impl ConstTokens for OpDesc {
    fn const_tokens(&self) -> TokenStream {
        let p = p();
        match self {
            OpDesc::Kernel(k) => {
                let k = k.const_tokens();
                quote!(#p::desc::OpDesc::Kernel(#k))
            }
            OpDesc::Copy {
                src,
                dst,
                src_range,
                dst_range,
            } => {
                let (src_range, dst_range) = (src_range.const_tokens(), dst_range.const_tokens());
                quote!(#p::desc::OpDesc::Copy {
                    src: #src,
                    dst: #dst,
                    src_range: #src_range,
                    dst_range: #dst_range,
                })
            }
            OpDesc::Upload { buffer, range } => {
                let range = range.const_tokens();
                quote!(#p::desc::OpDesc::Upload { buffer: #buffer, range: #range })
            }
            OpDesc::Readback { buffer, range } => {
                let range = range.const_tokens();
                quote!(#p::desc::OpDesc::Readback { buffer: #buffer, range: #range })
            }
            OpDesc::Host { accesses } => {
                let accesses = accesses.const_tokens();
                quote!(#p::desc::OpDesc::Host { accesses: #accesses })
            }
            OpDesc::Interop { accesses } => {
                let accesses = accesses.const_tokens();
                quote!(#p::desc::OpDesc::Interop { accesses: #accesses })
            }
            OpDesc::Empty => quote!(#p::desc::OpDesc::Empty),
            // Written by the graph's own tokens, which know the alias of the child (see `GraphDesc`).
            OpDesc::Subgraph { .. } => quote!(::core::compile_error!(
                "a subgraph node is written by its graph's description"
            )),
        }
    }
}

impl ConstTokens for TextureSizeDesc {
    fn const_tokens(&self) -> TokenStream {
        let p = p();
        match self {
            TextureSizeDesc::Texels(texels) => {
                let texels = texels.const_tokens();
                quote!(#p::desc::TextureSizeDesc::Texels(#texels))
            }
            TextureSizeDesc::Like(index) => quote!(#p::desc::TextureSizeDesc::Like(#index)),
            TextureSizeDesc::Params(axes) => {
                let axes = axes.iter().map(ConstTokens::const_tokens);
                quote!(#p::desc::TextureSizeDesc::Params([#(#axes),*]))
            }
        }
    }
}

impl ConstTokens for AxisSizeDesc {
    fn const_tokens(&self) -> TokenStream {
        let p = p();
        match self {
            AxisSizeDesc::Texels(n) => quote!(#p::desc::AxisSizeDesc::Texels(#n)),
            AxisSizeDesc::Param(offset) => quote!(#p::desc::AxisSizeDesc::Param(#offset)),
        }
    }
}

impl ConstTokens for DispatchDesc {
    fn const_tokens(&self) -> TokenStream {
        let p = p();
        match self {
            DispatchDesc::BufferLen(b) => quote!(#p::desc::DispatchDesc::BufferLen(#b)),
            DispatchDesc::Indirect(b) => quote!(#p::desc::DispatchDesc::Indirect(#b)),
            DispatchDesc::Threads(dims) => {
                let dims = dims.const_tokens();
                quote!(#p::desc::DispatchDesc::Threads(#dims))
            }
            DispatchDesc::Workgroups(dims) => {
                let dims = dims.const_tokens();
                quote!(#p::desc::DispatchDesc::Workgroups(#dims))
            }
        }
    }
}

impl ConstTokens for SizeStep {
    fn const_tokens(&self) -> TokenStream {
        let p = p();
        match self {
            SizeStep::Literal(v) => quote!(#p::size::SizeStep::Literal(#v)),
            SizeStep::Param(offset) => quote!(#p::size::SizeStep::Param(#offset)),
            SizeStep::Len(buffer) => quote!(#p::size::SizeStep::Len(#buffer)),
            SizeStep::Extent { texture, axis } => {
                let axis = axis.const_tokens();
                quote!(#p::size::SizeStep::Extent { texture: #texture, axis: #axis })
            }
            SizeStep::Op(op) => {
                let op = op.const_tokens();
                quote!(#p::size::SizeStep::Op(#op))
            }
        }
    }
}

impl ConstTokens for PartitionDesc {
    fn const_tokens(&self) -> TokenStream {
        let p = p();
        match self {
            PartitionDesc::Gpu { levels } => {
                let levels = levels.const_tokens();
                quote!(#p::desc::PartitionDesc::Gpu { levels: #levels })
            }
            PartitionDesc::Host { nodes } => {
                let nodes = nodes.const_tokens();
                quote!(#p::desc::PartitionDesc::Host { nodes: #nodes })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_text_and_lists_are_written_as_borrowed_cows() {
        let size = SizeDesc::ONE.const_tokens().to_string();
        assert!(
            size.contains(":: std :: borrow :: Cow :: Borrowed (\"1\")"),
            "{size}"
        );
        assert!(size.contains("SizeStep :: Literal (1u32)"), "{size}");
    }
}
