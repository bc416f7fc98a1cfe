use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            tmp: [f32; 256],
            y: [f32] = output,
        }
        copy out(tmp -> y);
    }
}

fn main() {}
