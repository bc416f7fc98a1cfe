use graph_runtime::graph;

graph! {
    graph G {
        buffers { x: [f32] = input, sums: [f32; 8] = output }
        kernel block_sums(x: read, sums: write) workgroups(8) overrides(til: x.len() / 8) {
            override tile: u32;
            var<workgroup> cache: array<f32, 64>;

            @compute @workgroup_size(64)
            fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
                cache[lid] = x[wid.x * 64u + lid] * f32(tile);
                workgroupBarrier();
                if (lid == 0u) { sums[wid.x] = cache[0]; }
            }
        }
    }
}

fn main() {}
