use graph_runtime::graph;

graph! {
    graph G {
        textures { frame: texture_2d<rgba8unorn> = input }
        buffers { out: [f32] = output }
        kernel first(frame: read, out: write) threads(1) {
            @compute @workgroup_size(1)
            fn main() { out[0] = textureLoad(frame, vec2<u32>(0u, 0u), 0).r; }
        }
    }
}

fn main() {}
