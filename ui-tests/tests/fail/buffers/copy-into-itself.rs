use graph_runtime::graph;

graph! {
    graph G {
        buffers { a: [f32] = inout }
        copy c(a[..8] -> a[8..16]);
    }
}

fn main() {}
