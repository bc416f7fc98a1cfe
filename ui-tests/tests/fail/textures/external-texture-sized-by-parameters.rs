use graph_runtime::graph;

graph! {
    graph G {
        params { w: u32, h: u32 }
        textures {
            frame: texture_2d<rgba8unorm; params.w, params.h> = input,
            tmp: texture_2d<rgba16float; frame>,
        }
        kernel copy(frame: read, tmp: write) threads(4, 4) {
            @compute @workgroup_size(1)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(tmp, gid.xy, textureLoad(frame, gid.xy, 0));
            }
        }
    }
}

fn main() {}
