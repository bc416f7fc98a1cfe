use graph_runtime::graph;

graph! {
    graph G {
        textures {
            frame: texture_2d<rgba8unorm> = input,
            tmp: texture_2d<rgba16float; 64, 32>,
        }
        buffers { out: [f32] = output }
        kernel copy(frame: read, tmp: write) threads(32, 32) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(tmp, gid.xy, textureLoad(frame, gid.xy, 0));
            }
        }
        kernel take(tmp: read, out: write) threads(1) {
            @compute @workgroup_size(1)
            fn main() { out[0] = textureLoad(tmp, vec2<u32>(0u), 0).r; }
        }
    }
}

fn main() {}
