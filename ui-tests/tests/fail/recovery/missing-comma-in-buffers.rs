use graph_runtime::graph;

// A missing `,` between two declarations is one error: both buffers are declared.
graph! {
    graph G {
        buffers {
            x: [f32] = input
            y: [f32] = output,
        }
        kernel k(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x]; }
            }
        }
    }
}

fn buffers<'a>(x: &'a graph_runtime::Buffer<f32>, y: &'a graph_runtime::Buffer<f32>) -> GBuffers<'a> {
    GBuffers { x, y }
}

fn main() {
    let _ = buffers;
}
