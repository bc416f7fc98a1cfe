use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        kernel twice = kernels::scale(data: x);
    }
}

fn main() {}
