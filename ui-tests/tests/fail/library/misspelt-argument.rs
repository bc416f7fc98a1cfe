use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        kernel twice = kernels::scale(data: x, alhpa: 2.0);
    }
}

fn main() {}
