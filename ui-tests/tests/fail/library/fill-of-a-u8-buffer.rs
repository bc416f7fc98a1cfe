use graph_runtime::graph;

graph! {
    graph G {
        buffers { mask: [u8] = output }
        kernel clear = kernels::fill(output: mask, value: 0u);
    }
}

fn main() {}
