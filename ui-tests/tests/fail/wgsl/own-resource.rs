use graph_runtime::graph;

graph! {
    graph G {
        buffers { y: [f32] = output }
        kernel k(y: write) {
            @group(0) @binding(5) var<storage, read> extra: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                y[gid.x] = extra[gid.x];
            }
        }
    }
}

fn main() {}
