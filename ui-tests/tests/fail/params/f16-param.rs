use graph_runtime::graph;

graph! {
    graph G {
        params { gain: f16 }
        buffers { x: [f16] = inout }
        kernel scale(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] * params.gain; }
            }
        }
    }
}

fn main() {}
