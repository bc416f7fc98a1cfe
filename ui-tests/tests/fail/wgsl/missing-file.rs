use graph_runtime::graph;

graph! {
    graph G {
        buffers { data: [f32] = inout }
        kernel double(data: read_write) file("missing.wgsl");
    }
}

fn main() {}
