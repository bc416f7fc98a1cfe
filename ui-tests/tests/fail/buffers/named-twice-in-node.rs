use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        host show(x: read, x: read_write);
    }
}

fn main() {}
