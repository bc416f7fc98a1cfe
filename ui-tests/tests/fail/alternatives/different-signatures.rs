use graph_runtime::graph;

graph! {
    graph G {
        params { width: u32, height: u32 }
        buffers { image: [f32] = input, gradient: [f32] = output, other: [f32] = output }
        alternatives edges {
            kernel sobel = kernels::sobel(input: image, output: gradient, width: params.width, height: params.height);
            kernel scharr = kernels::scharr(input: image, output: other, width: params.width, height: params.height);
        }
        kernel k(other: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { other[gid.x] = 0.0; }
        }
    }
}

fn main() {}
