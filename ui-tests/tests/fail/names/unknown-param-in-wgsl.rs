use graph_runtime::graph;

graph! {
    graph G {
        params { n: u32 }
        buffers { data: [f32] = inout }
        kernel double(data: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.nn) { data[gid.x] = 2.0 * data[gid.x]; }
            }
        }
    }
}

fn main() {}
