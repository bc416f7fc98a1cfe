use graph_runtime::graph;

graph! {
    graph G {
        params { a: f32, a: u32 }
        buffers { x: [f32] = output }
        fill set(x = params.a);
    }
}

fn main() {}
