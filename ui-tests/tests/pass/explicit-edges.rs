//! `#[explicit_edges]`: every conflicting pair of accesses is ordered by a path of explicit edges; readers of
//! one buffer need no order between them.

use graph_runtime::graph;

graph! {
    #[explicit_edges]
    graph Ordered {
        buffers {
            x: [f32] = input,
            tmp: [f32; 256],
            left: [f32] = output,
            right: [f32] = output,
        }
        copy load(x -> tmp);
        kernel halve(tmp: read, left: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&left)) { left[gid.x] = 0.5 * tmp[gid.x]; }
            }
        }
        kernel double(tmp: read, right: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&right)) { right[gid.x] = 2.0 * tmp[gid.x]; }
            }
        }
        kernel shift(left: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&left)) { left[gid.x] = left[gid.x] + 1.0; }
            }
        }
        load -> halve -> shift;
        load -> double;
    }
}

const _: () = assert!(Ordered::NODE_COUNT == 4);
const _: () = assert!(Ordered::LEVELS.len() == 3);

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<Ordered>(Ordered::FUSED), Ok(()));
    use OrderedNode::{Double, Halve, Load, Shift};
    assert_eq!(Ordered::LEVELS, &[&[Load][..], &[Halve, Double], &[Shift]]);
}
