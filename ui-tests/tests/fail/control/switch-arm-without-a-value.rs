use graph_runtime::graph;

graph! {
    graph G {
        buffers { y: [f32] = output, pick: [u32; 1] }
        fill set(pick = 1u);
        switch choose(pick) {
            0 => { fill zero(y = 0.0); }
            other => { fill one(y = 1.0); }
        }
    }
}

fn main() {}
