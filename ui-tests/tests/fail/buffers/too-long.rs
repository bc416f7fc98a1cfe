use graph_runtime::graph;

graph! {
    graph G {
        buffers { y: [f32] = output, huge: [f32; 5000000000] }
        kernel k(huge: write, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { huge[gid.x] = 1.0; y[gid.x] = 1.0; }
        }
    }
}

fn main() {}
