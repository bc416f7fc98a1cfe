use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout, y: [f32] = output }
        repeat twice(2) {
            copy c(x -> y);
        }
    }
}

fn main() {}
