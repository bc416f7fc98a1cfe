use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = input, y: [u32] = output }
        kernel c = kernels::copy(input: x, output: y);
    }
}

fn main() {}
