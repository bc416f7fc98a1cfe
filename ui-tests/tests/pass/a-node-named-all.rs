use graph_runtime::graph;

// Generated items never take a name a node's variant could have: a node may be called `ALL` or `NODES`.
graph! {
    graph G {
        buffers { x: [f32] = output, y: [f32] = output }
        fill ALL(x = 1.0);
        fill NODES(y = 2.0);
    }
}

const _: () = assert!(matches!(G::NODES, [GNode::ALL, GNode::NODES]));

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<G>(G::FUSED), Ok(()));
    assert_eq!(G::NODE_COUNT, 2);
}
