use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            x: [f32] = output,
            x: [f32] = output,
        }
        fill zero(x = 0.0);
    }
}

fn main() {}
