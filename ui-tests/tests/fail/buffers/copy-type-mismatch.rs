use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            x: [f32] = input,
            y: [u32] = output,
        }
        copy out(x -> y);
    }
}

fn main() {}
