use graph_runtime::graph;

graph! {
    graph G {
        textures { t: texture_2d<r32float> = input_output }
        buffers { out: [f32] = output }
        kernel first(t: read, out: write) threads(1) {
            @compute @workgroup_size(1)
            fn main() { out[0] = textureLoad(t, vec2<u32>(0u, 0u), 0).r; }
        }
    }
}

fn main() {}
