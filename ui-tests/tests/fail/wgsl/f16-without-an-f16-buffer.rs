use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout }
        kernel halve(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = f32(f16(x[gid.x]) * 0.5h); }
            }
        }
    }
}

fn main() {}
