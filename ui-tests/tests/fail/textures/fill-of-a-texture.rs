use graph_runtime::graph;

graph! {
    graph G {
        textures { t: texture_2d<r32float> = output }
        fill clear(t = vec4<f32>());
    }
}

fn main() {}
