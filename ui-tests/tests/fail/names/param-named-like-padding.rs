use graph_runtime::graph;

// The generated parameter struct pads with `__pad` fields; WGSL reserves names starting with `__` anyway.
graph! {
    graph G {
        params { a: f32, __pad0: vec4<f32> }
        buffers { x: [f32] = output }
        fill f(x = params.a);
    }
}

fn main() {}
