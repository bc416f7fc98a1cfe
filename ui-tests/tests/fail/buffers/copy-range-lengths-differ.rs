use graph_runtime::graph;

graph! {
    graph G {
        buffers { a: [f32; 64] = input, b: [f32; 32] = output }
        copy c(a[..16] -> b[8..]);
    }
}

fn main() {}
