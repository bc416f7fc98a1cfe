use graph_runtime::graph;

// The flag of `if` is a buffer the GPU reads; the block is kept, so `y` is written.
graph! {
    graph G {
        params { go: u32 }
        buffers { y: [f32] = output }
        if maybe(params.go) {
            fill clear(y = 0.0);
        }
    }
}

fn main() {}
