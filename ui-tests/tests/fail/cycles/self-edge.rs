use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = output }
        fill a(x = 1.0);
        a -> a;
    }
}

fn main() {}
