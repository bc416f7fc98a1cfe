use graph_runtime::graph;

graph! {
    graph G {
        buffers { y: [f32] = output, pick: [f32; 1] }
        fill set(pick = 1.0);
        switch choose(pick) {
            0 => { fill zero(y = 0.0); }
            _ => { fill other(y = 1.0); }
        }
    }
}

fn main() {}
