use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        kernel twice = kernels::scal(data: x, alpha: 2.0);
    }
}

fn main() {}
