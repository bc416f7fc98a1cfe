//! Vector parameters: the generated struct follows the WGSL layout (vectors aligned to their size, the block
//! rounded up to its alignment) with explicit padding, byte for byte.

use graph_runtime::graph;

graph! {
    graph G {
        params {
            a: f32,
            offset: vec2<f32>,
            mask: vec4<u32>,
            n: u32,
        }
        buffers { y: [f32] = inout }
        kernel apply(y: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < params.n && params.mask[i % 4u] != 0u) {
                    y[i] = params.a * y[i] + params.offset.x - params.offset.y;
                }
            }
        }
    }
}

// a at 0, offset at 8 (8-aligned), mask at 16 (16-aligned), n at 32; 36 bytes rounded up to 48.
const _: () = assert!(core::mem::size_of::<GParams>() == 48);
const _: () = assert!(core::mem::offset_of!(GParams, a) == 0);
const _: () = assert!(core::mem::offset_of!(GParams, offset) == 8);
const _: () = assert!(core::mem::offset_of!(GParams, mask) == 16);
const _: () = assert!(core::mem::offset_of!(GParams, n) == 32);

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<G>(G::FUSED), Ok(()));
    // Vectors are arrays on the Rust side; the padding fields are filled by `Default`.
    let p = GParams {
        a: 2.0,
        offset: [1.0, 0.5],
        mask: [1, 0, 1, 0],
        n: 64,
        ..GParams::default()
    };
    assert_eq!(G::DESCRIPTION.params.size, 48);
    assert_eq!(p.mask[2], 1);
}
