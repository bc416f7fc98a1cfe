use graph_runtime::graph;

// An unknown access word is one error: the access is kept, so `x` is not unused, `y` is still written and
// the kernel's WGSL still checks.
graph! {
    graph G {
        buffers { x: [f32] = input, y: [f32] = output }
        kernel k(x: reed, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x]; }
            }
        }
        host h(y: raed);
    }
}

fn main() {}
