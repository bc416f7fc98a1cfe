use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            #[on(1)]
            x: [f32] = inout,
        }
        kernel k(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }
        }
    }
}

fn main() {}
