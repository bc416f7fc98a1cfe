use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = in }
        host show(x: read);
    }
}

fn main() {}
