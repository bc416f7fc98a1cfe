use graph_runtime::graph;

// A Rust keyword can name a node through a raw identifier; the node enum gets `Loop`.
graph! {
    graph G {
        buffers { y: [f32] = output }
        kernel r#loop(y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = 1.0; }
            }
        }
    }
}

const _: () = assert!(matches!(G::NODES, [GNode::Loop]));

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<G>(G::FUSED), Ok(()));
    assert_eq!(GNode::Loop.name(), "loop");
}
