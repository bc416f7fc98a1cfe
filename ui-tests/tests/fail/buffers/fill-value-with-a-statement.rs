use graph_runtime::graph;

// A fill's value is one expression: it becomes the body of a generated function, which a statement (or a
// brace, a comment) would end. The builder and graph files refuse the same value in the same words.
graph! {
    graph G {
        buffers { x: [f32] = output }
        fill clear(x = 1.0; x[99] = 42.0);
    }
}

fn main() {}
