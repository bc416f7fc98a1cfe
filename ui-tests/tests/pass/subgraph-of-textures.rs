//! A subgraph bound to its parent's texture of the same type: the child's graph-owned texture is sized like
//! the bound one, and the parent's description, flattened, is valid.

use graph_runtime::graph;

graph! {
    /// Each texel turned grey into a texture of the child's own, then its red channel into `red`.
    graph Greys {
        textures {
            frame: texture_2d<rgba8unorm> = input,
            grey: texture_2d<r32float; frame>,
        }
        buffers { red: [f32] = output }
        kernel to_grey(frame: read, grey: write) threads(frame.width(), frame.height()) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let c = textureLoad(frame, gid.xy, 0);
                textureStore(grey, gid.xy, vec4<f32>((c.r + c.g + c.b) / 3.0, 0.0, 0.0, 1.0));
            }
        }
        kernel take(grey: read, red: write) threads(grey.width(), grey.height()) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let size = textureDimensions(grey);
                if (gid.x >= size.x || gid.y >= size.y) { return; }
                red[gid.y * size.x + gid.x] = textureLoad(grey, gid.xy, 0).r;
            }
        }
    }
}

graph! {
    graph Parent {
        textures { picture: texture_2d<rgba8unorm> = input }
        buffers { out: [f32] = output }
        subgraph g = Greys(frame: picture: read, red: out: write);
    }
}

fn main() {
    let flat = graph_runtime::pipeline::flatten(&Parent::DESCRIPTION).expect("flattens");
    flat.validate(0).expect("valid");
    let grey = flat
        .buffers
        .iter()
        .find(|b| b.name == "g.grey")
        .expect("the child's texture");
    assert_eq!(
        grey.texture_size,
        Some(graph_runtime::desc::TextureSizeDesc::Like(0)),
        "sized like the parent's picture"
    );
}
