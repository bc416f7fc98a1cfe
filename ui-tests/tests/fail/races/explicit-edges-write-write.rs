use graph_runtime::graph;

graph! {
    #[explicit_edges]
    graph G {
        buffers { x: [f32] = output }
        fill a(x = 1.0);
        fill b(x = 2.0);
    }
}

fn main() {}
