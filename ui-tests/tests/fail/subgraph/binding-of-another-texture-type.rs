use graph_runtime::graph;

graph! {
    /// Each texel's red channel into `red`.
    graph Reds {
        textures { frame: texture_2d<rgba8unorm> = input }
        buffers { red: [f32] = output }
        kernel take(frame: read, red: write) threads(frame.width(), frame.height()) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let size = textureDimensions(frame);
                if (gid.x >= size.x || gid.y >= size.y) { return; }
                red[gid.y * size.x + gid.x] = textureLoad(frame, gid.xy, 0).r;
            }
        }
    }
}

graph! {
    graph Parent {
        textures { picture: texture_2d<rgba16float> = input }
        buffers { out: [f32] = output }
        subgraph r = Reds(frame: picture: read, red: out: write);
    }
}

fn main() {}
