use graph_runtime::graph;

graph! {
    graph Nested {
        params { n: u32 }
        buffers { src: [f32; 256] = input, dst: [f32; 256] = output }
        subgraph again = Nested(src: src: read, dst: dst: write);
    }
}

fn main() {}
