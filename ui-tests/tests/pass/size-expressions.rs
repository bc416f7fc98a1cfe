use graph_runtime::graph;

// Dispatch sizes in the size language: parameters, vector components, buffer lengths, literals and
// `+ - * /`, `div_ceil`, `min`, `max`.
graph! {
    graph G {
        params { w: u32, h: u32, tile: vec2<u32> }
        buffers { x: [f32] = inout }
        kernel k(x: read_write) threads((params.w * params.h).min(x.len()), params.tile.y.div_ceil(2) + 1, max(1, 2 - 1)) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }
        }
        kernel j(x: read_write) workgroups(x.len() / 64u32) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
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
    let graph_runtime::desc::DispatchDesc::Threads(dims) = &k.dispatch else {
        panic!("threads");
    };
    assert_eq!(dims[0].text, "(params.w * params.h).min(x.len())");
    assert_eq!(dims[1].text, "params.tile.y.div_ceil(2) + 1");
    assert_eq!(dims[2].text, "1.max(2 - 1)");
}
