use graph_runtime::graph;

// A misspelt `kernels::` is one error: the library kernel is still found and still writes `y`.
graph! {
    graph G {
        buffers { y: [f32] = output }
        kernel set = kernel::fill(output: y, value: 1.0);
        host show(y: read);
    }
}

fn main() {
    let _ = GNode::Set;
}
