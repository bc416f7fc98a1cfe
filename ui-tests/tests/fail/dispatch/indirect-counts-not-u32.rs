use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = inout, args: [f32; 3] = input }
        kernel k(x: read_write) workgroups(indirect: args) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }
        }
    }
}

fn main() {}
