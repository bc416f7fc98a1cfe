use graph_runtime::graph;

graph! {
    graph G {
        params { enabled: bool }
        buffers { x: [f32] = output }
        fill zero(x = 0.0);
    }
}

fn main() {}
