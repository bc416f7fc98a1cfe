use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        kernel double(x: read_write);
    }
}

fn main() {}
