use graph_runtime::graph;

// The buffer is kept with the element type it names, so the kernel knows `x`.
graph! {
    graph G {
        buffers { x: Vec<f32> = inout }
        kernel k(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }
        }
    }
}

fn main() {}
