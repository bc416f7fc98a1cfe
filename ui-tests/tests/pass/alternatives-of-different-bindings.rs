//! Choices of one group may bind other buffers, and another number of them: the group orders as one node
//! accessing what any choice accesses (`k` runs after it, whichever choice wrote `other`).

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

fn main() {
    let edges: Vec<(u32, u32)> = G::DESCRIPTION.edges.iter().map(|e| (e.from, e.to)).collect();
    assert!(edges.contains(&(0, 2)) && edges.contains(&(1, 2)), "{edges:?}");
}
