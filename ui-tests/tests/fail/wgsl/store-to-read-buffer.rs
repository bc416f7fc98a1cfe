use graph_runtime::graph;

graph! {
    graph G {
        buffers { data: [f32] = inout }
        kernel double(data: read) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                data[gid.x] = 2.0 * data[gid.x];
            }
        }
    }
}

fn main() {}
