use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            x: [f32] = input,
            y: [f32] = output,
        }
        kernel ones(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                y[gid.x] = 1.0;
            }
        }
    }
}

fn main() {}
