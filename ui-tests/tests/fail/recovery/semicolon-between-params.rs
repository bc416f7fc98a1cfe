use graph_runtime::graph;

graph! {
    graph G {
        params { a: f32; b: f32 }
        buffers { x: [f32] = inout }
        kernel k(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = params.a * x[gid.x] + params.b; }
            }
        }
    }
}

fn main() {}
