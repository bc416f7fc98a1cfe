use graph_runtime::graph;

graph! {
    graph G {
        textures { t: texture_2d<r32float> = inout }
        kernel store(t: read) threads(1) {
            @compute @workgroup_size(1)
            fn main() { textureStore(t, vec2<u32>(0u, 0u), vec4<f32>(1.0)); }
        }
    }
}

fn main() {}
