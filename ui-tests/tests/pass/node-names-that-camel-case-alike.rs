use graph_runtime::graph;

// Node names that give one camel-case variant keep their own names; the others are camel-cased.
graph! {
    graph G {
        buffers {
            x: [f32] = output,
            y: [f32] = output,
            z: [f32] = output,
        }
        fill n11_0(x = 0.0);
        fill n1_10(y = 0.0);
        fill zero_z(z = 0.0);
    }
}

const _: () = assert!(matches!(G::NODES, [GNode::n11_0, GNode::n1_10, GNode::ZeroZ]));

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<G>(G::FUSED), Ok(()));
    assert_eq!(GNode::n1_10.name(), "n1_10");
    assert_eq!(GNode::ZeroZ.index(), 2);
}
