use graph_runtime::graph;

graph! {
    graph G {
        textures { image: texture_2d<rgba8unorm> = inout }
        kernel brighten(image: read_write) threads(8, 8) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(image, gid.xy, 2.0 * textureLoad(image, gid.xy));
            }
        }
    }
}

fn main() {}
