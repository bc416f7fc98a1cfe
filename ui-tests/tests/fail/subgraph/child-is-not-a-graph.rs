use graph_runtime::graph;

/// Not a graph: a plain struct.
pub struct Double;

graph! {
    graph Parent {
        params { n: u32 }
        buffers { a: [f32; 256] = input, b: [f32; 256] = output }
        subgraph d = Double(src: a: read, dst: b: write);
    }
}

// Holds the graph with the mistake: nothing more to report here.
graph! {
    graph Holder {
        params { n: u32 }
        buffers { a: [f32; 256] = input, b: [f32; 256] = output }
        subgraph parent = Parent(a: a: read, b: b: write);
    }
}

fn main() {}
