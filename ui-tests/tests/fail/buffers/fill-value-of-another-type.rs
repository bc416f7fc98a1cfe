use graph_runtime::graph;

// A `u32` parameter does not fill an `f32` buffer: no conversion hides the mistake.
graph! {
    graph G {
        params { n: u32 }
        buffers { x: [f32] = output }
        fill clear(x = params.n);
    }
}

fn main() {}
