use graph_runtime::graph;

// Each read of an `f16` parameter is converted in the kernel's module (`f16(params.gain)`): a mistake after
// one is still shown where it was written.
graph! {
    graph G {
        params { gain: f16 }
        buffers { x: [f16] = inout }
        kernel scale(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] * params.gain + params.gain * 1u; }
            }
        }
    }
}

fn main() {}
