//! Doc comments are welcome wherever Rust takes them on a field or an item: on the graph, its parameters and
//! buffers, every item, the choices of alternatives and the members of blocks. A public graph under
//! `deny(missing_docs)` compiles without a warning: they become the generated items' docs.
#![deny(warnings, missing_docs)]

use graph_runtime::graph;

graph! {
    /// Doubles a signal, once or twice.
    pub graph Documented {
        params {
            /// The factor.
            k: f32,
            /// The signal's length.
            n: u32,
        }
        buffers {
            /// The signal.
            x: [f32] = inout,
            /// Where the host looks.
            seen: [f32; 4],
            /// Whether to go again.
            again: [u32; 1],
        }
        /// Clears what the host sees.
        fill clear(seen = 0.0);
        /// One more pass, or none.
        fill decide(again = 1u);
        /// How to scale.
        alternatives scale {
            /// Inline.
            kernel by_k(x: read_write) threads(params.n) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < params.n) { x[gid.x] = params.k * x[gid.x]; }
                }
            }
            /// From the library.
            kernel by_lib = kernels::scale(data: x, alpha: params.k);
        }
        /// Once more, when asked.
        if maybe(again) {
            /// The second pass.
            kernel twice(x: read_write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
                }
            }
        }
        /// Twice more.
        repeat again_and_again(2) {
            /// Copies the head where the host sees it.
            copy head(x[..4] -> seen);
        }
        /// A marker.
        empty mark;
        /// A full barrier.
        barrier wall;
        /// Sends the head out.
        upload into(seen);
        /// Looks at the head.
        host look(seen: read);
        /// Reads the head back.
        readback out(seen);
        /// The passes in order.
        mark -> wall;
    }
}

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<Documented>(Documented::FUSED), Ok(()));
    assert_eq!(Documented::NODES.len(), 11);
}
