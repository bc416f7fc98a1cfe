use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = input }
        kernel check(x: read) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let v = x[gid.x];
            }
        }
    }
}

fn main() {}
