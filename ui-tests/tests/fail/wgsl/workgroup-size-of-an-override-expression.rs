use graph_runtime::graph;

graph! {
    graph G {
        buffers { y: [f32] = output }
        kernel k(y: write) {
            override WIDTH: u32 = 64;
            @compute @workgroup_size(WIDTH * 2)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                y[gid.x] = 1.0;
            }
        }
    }
}

fn main() {}
