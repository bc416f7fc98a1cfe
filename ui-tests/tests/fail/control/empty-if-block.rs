use graph_runtime::graph;

graph! {
    graph G {
        buffers { y: [f32] = output, flag: [u32; 1] }
        fill set(flag = 1u);
        if maybe(flag) { }
        fill clear(y = 0.0);
    }
}

fn main() {}
