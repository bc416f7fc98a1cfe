use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout, y: [f32] = inout, flag: [u32] = input }
        if maybe(flag) {
            #[on(0)]
            kernel a(x: read_write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
                }
            }
            #[on(1)]
            kernel b(y: read_write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * y[gid.x]; }
                }
            }
        }
    }
}

fn main() {}
