use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = input, y: [f32] = output }
        copy c(x -> y);
        readback r(x[..4]);
    }
}

fn main() {}
