use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            x: [f32] = output,
            y: [f32] = output,
        }
        fill a(x = 1.0);
        fill b(y = 2.0);
        fill c(x = 3.0);
        b -> c;
        c -> b;
    }
}

fn main() {}
