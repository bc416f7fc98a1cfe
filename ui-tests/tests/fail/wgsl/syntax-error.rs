use graph_runtime::graph;

graph! {
    graph G {
        buffers { data: [f32] = inout }
        kernel double(data: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                data[i] = 2.0 * ;
            }
        }
    }
}

fn main() {}
