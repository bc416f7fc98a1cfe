use graph_runtime::graph;

graph! {
    graph G {
        buffers { b: [u32] = output }
        fill f(b[8..4] = 1u);
    }
}

fn main() {}
