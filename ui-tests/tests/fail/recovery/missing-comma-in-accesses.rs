use graph_runtime::graph;

// A missing `,` in an access list is one error: both accesses are kept.
graph! {
    graph G {
        buffers { x: [f32] = input, y: [f32] = output }
        kernel k(x: read y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x]; }
            }
        }
    }
}

fn main() {}
