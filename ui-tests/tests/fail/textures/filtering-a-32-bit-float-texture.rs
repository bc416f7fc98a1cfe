use graph_runtime::graph;

graph! {
    graph G {
        textures {
            depth: texture_2d<r32float> = input,
            bilinear: sampler<linear, clamp>,
        }
        buffers { out: [f32] = output }
        kernel first(depth: read, bilinear: read, out: write) threads(1) {
            @compute @workgroup_size(1)
            fn main() { out[0] = textureSampleLevel(depth, bilinear, vec2<f32>(0.5), 0.0).r; }
        }
    }
}

fn main() {}
