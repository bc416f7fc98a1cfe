use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [u32] = inout }
        kernel twice = kernels::scale(data: x, alpha: 2.0);
    }
}

fn main() {}
