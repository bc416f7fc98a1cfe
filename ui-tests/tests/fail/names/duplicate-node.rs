use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            x: [f32] = output,
            y: [f32] = output,
        }
        fill zero(x = 0.0);
        fill zero(y = 0.0);
    }
}

fn main() {}
