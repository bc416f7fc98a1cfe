use graph_runtime::graph;

// One bad declaration is one error: the other parameters and the items after it are still checked.
graph! {
    graph G {
        params { a: , n: u32 }
        buffers { y: [f32] = output }
        kernel k(y: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { y[gid.x] = 1.0; }
            }
        }
    }
}

fn main() {}
