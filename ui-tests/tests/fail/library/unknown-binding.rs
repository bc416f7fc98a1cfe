use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            x: [f32] = input,
            y: [f32] = inout,
        }
        kernel axpy = kernels::axpy(x: x, z: y, a: 2.0);
    }
}

fn main() {}
