use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        kernel twice = kernels::scale(data: x, alpha: 2.0, beta: 1.0);
    }
}

fn main() {}
