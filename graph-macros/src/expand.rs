//! parse -> lower -> check -> generate, with every error collected on the way.

use graph_core::Loc;
use graph_core::layout::ParamsLayout;
use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::GraphDef;
use crate::generate::{self, Names};
use crate::lower;
use crate::render::render;

pub fn expand(input: TokenStream) -> TokenStream {
    let def: GraphDef = match syn::parse2(input) {
        Ok(def) => def,
        Err(e) => return e.to_compile_error(),
    };
    let lowered = lower::lower(&def);
    let names = Names::new(&def.name);
    let mut errors: Vec<syn::Error> = def.errors.clone();
    errors.extend(lowered.errors.iter().cloned());

    let variants: Vec<syn::Ident> = lowered
        .graph
        .nodes
        .iter()
        .zip(&lowered.spans.nodes)
        .map(|(n, span)| generate::variant_name(&n.name, *span))
        .collect();
    // Two node names that map to one variant would break the enum: an error, unless the names are the same
    // (a duplicate node, which the checks report).
    let mut stub_nodes: Vec<(syn::Ident, String)> = Vec::with_capacity(variants.len());
    for (v, node) in variants.iter().zip(&lowered.graph.nodes) {
        match stub_nodes.iter().find(|(w, _)| w == v) {
            Some((_, other)) if *other != node.name => errors.push(syn::Error::new(
                v.span(),
                format!("node names `{other}` and `{}` both become the variant `{v}` of the node enum; rename one", node.name),
            )),
            Some(_) => {}
            None => stub_nodes.push((v.clone(), node.name.clone())),
        }
    }

    let result = graph_core::check(lowered.graph.clone(), &kernels::LIBRARY);
    match result {
        Ok(checked) if errors.is_empty() => {
            let nodes: Vec<(syn::Ident, String)> = variants
                .iter()
                .cloned()
                .zip(lowered.graph.nodes.iter().map(|n| n.name.clone()))
                .collect();
            let types = generate::types(&def, &lowered, &checked.params, &names, &nodes);
            let description = generate::description(&checked, &lowered, &names, &variants);
            quote!(#types #description)
        }
        other => {
            if let Err(diags) = other {
                errors.extend(
                    diags
                        .iter()
                        .filter(|d| !about_unread_file(&d.loc, &lowered.unread_files))
                        .map(|d| render(d, &lowered.spans)),
                );
            }
            // A stub of the public items beside the errors, so code using the graph does not add errors of its
            // own. Its parameter struct keeps the parameters whose types are valid, each name once (a duplicate,
            // which the checks report, would break the struct).
            let layout = ParamsLayout::of_valid_params(&lowered.graph.params);
            // Each variant once, so a duplicate node does not also break the enum.
            let types = generate::types(&def, &lowered, &layout, &names, &stub_nodes);
            let stub = generate::stub_description(&names);
            let errors = errors.iter().map(syn::Error::to_compile_error);
            quote!(#(#errors)* #types #stub)
        }
    }
}

/// Whether a diagnostic is about the WGSL of a kernel whose file could not be read: that kernel was checked
/// as empty, and the unreadable file is the one error to show for it.
fn about_unread_file(loc: &Loc, unread: &[usize]) -> bool {
    match loc {
        Loc::KernelSource(n)
        | Loc::KernelEntry(n)
        | Loc::Wgsl { node: n, .. }
        | Loc::AccessMode { node: n, .. } => unread.contains(n),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;
    use std::time::Instant;

    /// A graph of `n` inline kernels: chains over four buffers, each kernel reading one and updating another.
    fn big_graph(n: usize) -> proc_macro2::TokenStream {
        let mut text = String::from(
            "pub graph Big { params { a: f32, n: u32 } buffers { b0: [f32] = inout, b1: [f32] = inout, \
             b2: [f32] = inout, b3: [f32] = inout }\n",
        );
        for i in 0..n {
            let (src, dst) = (i % 4, (i + 1) % 4);
            let _ = writeln!(
                text,
                "kernel k{i}(b{src}: read, b{dst}: read_write) threads(params.n) {{
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                        let i = gid.x;
                        if (i < params.n) {{ b{dst}[i] = params.a * b{src}[i] + b{dst}[i]; }}
                    }}
                }}"
            );
        }
        text.push('}');
        text.parse().expect("tokens")
    }

    /// The macro must stay fast on big graphs: the budget is 2 s for 1000 nodes on a 2-core machine.
    /// This prints the figure; the bound asserted is that budget, which a debug build meets with room.
    #[test]
    fn expands_a_1000_node_graph_within_budget() {
        let input = big_graph(1000);
        let start = Instant::now();
        let output = super::expand(input);
        let elapsed = start.elapsed();
        let text = output.to_string();
        assert!(
            !text.contains("compile_error"),
            "the big graph must check: {}",
            &text[..text.len().min(2000)]
        );
        assert!(
            text.contains("NODE_COUNT : usize = 1000usize"),
            "node count"
        );
        println!(
            "graph! expanded a 1000-node graph in {:.3} s ({} bytes of output)",
            elapsed.as_secs_f64(),
            text.len()
        );
        assert!(
            elapsed.as_secs_f64() < 2.0,
            "expansion took {elapsed:?}, over the 2 s budget"
        );
    }
}
