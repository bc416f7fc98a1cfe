use graph_runtime::graph;

// The parameter struct pads `__pad1` to its alignment with a field `__pad1`: a parameter of that name is one
// error, not a clash in the generated struct as well.
graph! {
    graph G {
        params { a: f32, __pad1: vec2<f32> }
        buffers { x: [f32] = output }
        fill f(x = params.a);
    }
}

fn main() {}
