use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            tmp: [f32],
            y: [f32] = output,
        }
        fill zero(tmp = 0.0);
        copy out(tmp -> y);
    }
}

fn main() {}
