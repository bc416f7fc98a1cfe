use graph_runtime::graph;

// `Self` has no raw form: it cannot name a node. The node is kept, so `x` is written.
graph! {
    graph G {
        buffers { x: [f32] = output }
        fill Self(x = 1.0);
    }
}

fn main() {}
