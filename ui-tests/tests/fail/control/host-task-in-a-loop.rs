use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        repeat twice(2) {
            host look(x: read);
        }
    }
}

fn main() {}
