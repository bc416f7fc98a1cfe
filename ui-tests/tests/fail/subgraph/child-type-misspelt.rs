use graph_runtime::graph;

graph! {
    /// `dst = src * 2`.
    graph Double {
        params { n: u32 }
        buffers { src: [f32; 256] = input, dst: [f32; 256] = output }
        kernel twice(src: read, dst: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { dst[gid.x] = 2.0 * src[gid.x]; }
            }
        }
    }
}

graph! {
    graph Parent {
        params { n: u32 }
        buffers { a: [f32; 256] = input, b: [f32; 256] = output }
        subgraph d = Doubel(src: a: read, dst: b: write);
    }
}

fn main() {}
