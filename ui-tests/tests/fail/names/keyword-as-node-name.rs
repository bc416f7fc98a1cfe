use graph_runtime::graph;

// A Rust keyword names a node only as a raw identifier (`r#loop`); the node is kept, so `y` is written.
graph! {
    graph G {
        buffers { y: [f32] = output }
        kernel loop(y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = 1.0; }
            }
        }
    }
}

fn main() {}
