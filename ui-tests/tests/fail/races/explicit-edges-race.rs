use graph_runtime::graph;

graph! {
    #[explicit_edges]
    graph G {
        buffers {
            x: [f32] = input,
            y: [f32] = output,
        }
        copy first(x -> y);
        kernel second(y: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                y[gid.x] = 2.0 * y[gid.x];
            }
        }
    }
}

fn main() {}
