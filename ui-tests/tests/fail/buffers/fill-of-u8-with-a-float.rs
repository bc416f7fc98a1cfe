use graph_runtime::graph;

graph! {
    graph G {
        buffers { mask: [u8] = output }
        fill clear(mask = 0.5);
    }
}

fn main() {}
