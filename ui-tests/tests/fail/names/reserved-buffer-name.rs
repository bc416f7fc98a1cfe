use graph_runtime::graph;

graph! {
    graph G {
        buffers { target: [f32] = output }
        kernel k(target: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {}
        }
    }
}

fn main() {}
