use graph_runtime::graph;

graph! {
    graph G {
        params { n: u32 }
        buffers { b: [f32] = output }
        fill f(b[1..params.n] = 0.0);
    }
}

fn main() {}
