use graph_runtime::graph;

graph! {
    graph G {
        params { k: f32 }
        buffers { y: [f32] = output }
        kernel twice = kernels::scale(data: k, alpha: 2.0);
        fill f(y = params.k);
    }
}

fn main() {}
