use graph_runtime::graph;

graph! {
    graph G {
        buffers { b: [f32; 16] = output }
        fill f(b[b.len() - 20..] = 0.0);
    }
}

fn main() {}
