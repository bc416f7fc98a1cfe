use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout, going: [f32; 1] }
        fill start(going = 1.0);
        repeat halve(10, while: going) {
            kernel step(x: read_write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&x)) { x[gid.x] = 0.5 * x[gid.x]; }
                }
            }
        }
    }
}

fn main() {}
