use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            #[no_alias]
            x: [f32] = input,
            y: [f32] = output,
        }
        kernel k(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
            }
        }
    }
}

fn main() {}
