use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [u8; 10] = input, y: [u8; 10] = output }
        copy head(x[0..3] -> y[0..3]);
        fill rest(y[3..] = 0u);
    }
}

fn main() {}
