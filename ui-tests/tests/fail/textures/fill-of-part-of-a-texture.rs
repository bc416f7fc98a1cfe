use graph_runtime::graph;

graph! {
    graph G {
        textures { t: texture_2d<r32float> = output }
        fill clear(t[..4] = vec4<f32>());
    }
}

fn main() {}
