use graph_runtime::graph;

graph! {
    graph G {
        params { factors: vec2<f32> }
        buffers { x: [f32] = inout }
        kernel twice = kernels::scale(data: x, alpha: params.factors);
    }
}

fn main() {}
