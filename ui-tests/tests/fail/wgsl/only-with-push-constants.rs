use graph_runtime::graph;

// Valid with parameters in push constants, invalid in the uniform buffer a device without them gets.
graph! {
    graph G {
        params { a: f32 }
        buffers { x: [f32] = inout }
        kernel k(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let p: ptr<immediate, GraphParams> = &params;
                if (gid.x < arrayLength(&x)) { x[gid.x] = (*p).a; }
            }
        }
    }
}

fn main() {}
