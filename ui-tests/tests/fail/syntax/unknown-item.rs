use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        kernal double(x: read_write) {}
    }
}

fn main() {}
