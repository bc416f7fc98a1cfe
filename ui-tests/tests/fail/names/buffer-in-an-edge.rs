use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        fill a(x = 1.0);
        host b(x: read);
        x -> b;
    }
}

fn main() {}
