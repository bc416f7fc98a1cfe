use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = input, y: [f32] = output }
        upload u(x);
        copy c(x -> y);
    }
}

fn main() {}
