use graph_runtime::graph;

graph! {
    graph G {
        textures {
            frame: texture_2d<rgba8unorm> = input,
            bilinear: sampler<bilinear, clamp>,
        }
        buffers { out: [f32] = output }
        kernel first(frame: read, bilinear: read, out: write) threads(1) {
            @compute @workgroup_size(1)
            fn main() { out[0] = textureSampleLevel(frame, bilinear, vec2<f32>(0.5), 0.0).r; }
        }
    }
}

fn main() {}
