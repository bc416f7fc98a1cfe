use graph_runtime::graph;

graph! {
    graph G {
        textures { t: texture_2d<r32float> = output }
        kernel zero(t: write) threads(t.width(), t.height(), t.depth()) {
            @compute @workgroup_size(1)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(t, gid.xy, vec4<f32>());
            }
        }
    }
}

fn main() {}
