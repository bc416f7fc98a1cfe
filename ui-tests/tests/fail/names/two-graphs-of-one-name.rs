use graph_runtime::graph;

// Two graphs of one name in one module: one error, at the second graph's name.
graph! {
    graph Twice {
        buffers { x: [f32] = output }
        fill one(x = 1.0);
    }
}

graph! {
    graph Twice {
        buffers { x: [f32] = output }
        fill two(x = 2.0);
    }
}

fn main() {
    let _ = TwiceNode::One;
}
