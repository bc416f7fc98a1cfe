use graph_runtime::graph;

graph! {
    #[explicit_edge]
    graph G {
        buffers { x: [f32] = output }
        fill a(x = 1.0);
    }
}

fn main() {}
