//! An inline kernel, a library kernel, a fill, a copy and an explicit edge, with the generated API used.

use graph_runtime::{Buffer, Gpu, graph};

graph! {
    /// y = a*x + y, doubled, published to `out`; the scratch buffer is cleared last.
    pub graph Typical {
        params { a: f32, n: u32 }
        buffers {
            x: [f32] = input,
            y: [f32] = inout,
            out: [f32] = output,
            scratch: [f32; 1024],
        }
        fill clear(scratch = 0.0);
        kernel axpy(x: read, y: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < params.n) { y[i] = params.a * x[i] + y[i]; }
            }
        }
        kernel twice = kernels::scale(data: y, alpha: 2.0);
        copy publish(y -> out);
        publish -> clear;
    }
}

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<Typical>(Typical::FUSED), Ok(()));
    use TypicalNode::{Axpy, Clear, Publish, Twice};
    assert_eq!(Typical::NODE_COUNT, 4);
    // `axpy -> twice -> publish` inferred from `y`, `publish -> clear` explicit.
    assert_eq!(Typical::TOPOLOGICAL_ORDER, [Axpy, Twice, Publish, Clear]);
    assert_eq!(Typical::LEVELS, &[&[Axpy][..], &[Twice], &[Publish], &[Clear]]);
    assert_eq!(Clear.name(), "clear");
    let params = TypicalParams { a: 3.0, n: 1000 };
    assert_eq!(core::mem::size_of_val(&params), 8);
    // Typed binding of the external buffers; not run (no GPU needed to compile).
    let _bake = |gpu: &Gpu, x: &Buffer<f32>, y: &Buffer<f32>, out: &Buffer<f32>| {
        Typical::bake(gpu, TypicalBuffers { x, y, out })
    };
}
