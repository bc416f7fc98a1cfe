use graph_runtime::graph;

graph! {
    graph G {
        params { a: f32 }
        buffers { x: [f32] = input, y: [f32] = output }
        kernel k(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = params.x[gid.x]; }
            }
        }
    }
}

fn main() {}
