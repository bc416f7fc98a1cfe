use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = input, y: [f32] = output }
        #[no_fusion]
        copy c(x -> y);
    }
}

fn main() {}
