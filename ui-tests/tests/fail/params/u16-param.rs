use graph_runtime::graph;

graph! {
    graph G {
        params { level: u16 }
        buffers { x: [u16] = output }
        fill clear(x = params.level);
    }
}

fn main() {}
