use graph_runtime::graph;

graph! {
    graph First {
        params { n: u32 }
        buffers { src: [f32; 256] = input, dst: [f32; 256] = output }
        subgraph second = Second(src: src: read, dst: dst: write);
    }
}

graph! {
    graph Second {
        params { n: u32 }
        buffers { src: [f32; 256] = input, dst: [f32; 256] = output }
        subgraph first = First(src: src: read, dst: dst: write);
    }
}

// Holds the pair without being on the cycle: nothing to report here.
graph! {
    graph Holder {
        params { n: u32 }
        buffers { src: [f32; 256] = input, dst: [f32; 256] = output }
        subgraph first = First(src: src: read, dst: dst: write);
    }
}

fn main() {}
