use graph_runtime::graph;

// A missing `;` is one error: the copy is still a node, so the edge and the output see it.
graph! {
    graph G {
        buffers { y: [f32] = inout, out: [f32] = output }
        copy publish(y -> out)
        host report(out: read);
        publish -> report;
    }
}

fn main() {
    let _ = GNode::Publish;
}
