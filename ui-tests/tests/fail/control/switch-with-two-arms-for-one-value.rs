use graph_runtime::graph;

graph! {
    graph G {
        buffers { y: [f32] = output, pick: [u32; 1] }
        fill set(pick = 1u);
        switch choose(pick) {
            0 => { fill zero(y = 0.0); }
            1 => { fill one(y = 1.0); }
            1 => { fill two(y = 2.0); }
        }
    }
}

fn main() {}
