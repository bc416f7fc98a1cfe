use graph_runtime::graph;

// Inline WGSL means what naga says it means: float literals without a leading digit, exponents, float suffixes
// and `>>` all reach naga as written.
graph! {
    graph G {
        buffers { x: [f32] = inout, m: [u32] = output }
        kernel k(x: read_write, m: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < arrayLength(&x)) {
                    x[i] = .5 * x[i] + 1.e-3 + 1e3 + 2.5e+2f + .25f;
                    m[i] = (i >> 1u) & 0xFFu;
                }
            }
        }
    }
}

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<G>(G::FUSED), Ok(()));
    let graph_runtime::desc::OpDesc::Kernel(k) = &G::DESCRIPTION.nodes[0].op else {
        panic!("a kernel");
    };
    assert!(k.source.contains(".5 * x[i] + 1.e-3 + 1e3 + 2.5e+2f + .25f"), "{}", k.source);
}
