use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = input, y: [f32] = output }
        alternatives pick {
            kernel copy_it = kernels::copy(input: x, output: y);
            kernel clear_x(x: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&x)) { x[gid.x] = 0.0; }
                }
            }
        }
    }
}

fn main() {}
