use graph_runtime::graph;

// A misspelt `buffers` is one error: the buffers are still declared, so nothing that uses them is unknown.
graph! {
    graph G {
        bufers { x: [f32] = input, y: [f32] = output }
        kernel k(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x]; }
            }
        }
    }
}

fn main() {}
