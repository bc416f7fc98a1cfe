use graph_runtime::graph;

graph! {
    graph G {
        params { scale: f32 }
        buffers { y: [f32] = inout }
        kernel apply(y: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                y[gid.x] = scale * y[gid.x];
            }
        }
    }
}

fn main() {}
