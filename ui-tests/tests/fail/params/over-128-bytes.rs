use graph_runtime::graph;

graph! {
    graph G {
        params {
            a: vec4<f32>,
            b: vec4<f32>,
            c: vec4<f32>,
            d: vec4<f32>,
            e: vec4<f32>,
            f: vec4<f32>,
            g: vec4<f32>,
            h: vec4<f32>,
            i: f32,
        }
        buffers { x: [f32] = output }
        fill zero(x = params.i);
    }
}

fn main() {}
