use graph_runtime::graph;

// The buffer is kept with its length, so the kernel knows `x` and the graph may own it.
graph! {
    graph G {
        buffers { x: [f32, 256], y: [f32] = output }
        fill clear(x = 1.0);
        kernel k(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x % 256u]; }
            }
        }
    }
}

fn main() {}
