use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            x: [f32] = inout,
            y: [f32] = output,
        }
        kernel scale = kernels::scale(data: x, alpha: 2.0);
    }
}

fn main() {}
