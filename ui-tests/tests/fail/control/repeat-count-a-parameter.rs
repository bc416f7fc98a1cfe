use graph_runtime::graph;

// A repeat is unrolled at bake, so its count is a literal; the block is kept, so `y` is written.
graph! {
    graph G {
        params { iters: u32 }
        buffers { y: [f32] = output }
        repeat steps(params.iters) {
            fill clear(y = 0.0);
        }
    }
}

fn main() {}
