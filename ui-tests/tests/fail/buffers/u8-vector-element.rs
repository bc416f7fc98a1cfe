use graph_runtime::graph;

graph! {
    graph G {
        buffers { pixels: [vec4<u8>] = inout }
        host show(pixels: read);
    }
}

fn main() {}
