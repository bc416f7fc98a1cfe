use graph_runtime::graph;

graph! {
    graph G {
        buffers { a: [f32; 16] = output }
        fill f(a[..a.len() - 20] = 0.0);
    }
}

fn main() {}
