use graph_runtime::graph;

graph! {
    graph G {
        textures { edges: texture_storage_2d<r32float, write> = output }
        kernel mark(edges: read_write) threads(8, 8) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(edges, gid.xy, vec4<f32>(1.0));
            }
        }
    }
}

fn main() {}
