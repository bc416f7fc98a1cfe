use graph_runtime::graph;

graph! {
    graph G {
        buffers { y: [f32] = inout, flag: [u32; 1] }
        fill set(flag = 0u);
        if maybe(flag) {
            fill one(y = 1.0);
        } else {
            host look(y: read);
        }
    }
}

fn main() {}
