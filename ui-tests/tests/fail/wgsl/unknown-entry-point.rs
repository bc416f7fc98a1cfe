use graph_runtime::graph;

graph! {
    graph G {
        buffers { data: [f32] = inout }
        kernel double(data: read_write) entry(dobule) {
            @compute @workgroup_size(64)
            fn double(@builtin(global_invocation_id) gid: vec3<u32>) {
                data[gid.x] = 2.0 * data[gid.x];
            }
            @compute @workgroup_size(64)
            fn halve(@builtin(global_invocation_id) gid: vec3<u32>) {
                data[gid.x] = 0.5 * data[gid.x];
            }
        }
    }
}

fn main() {}
