//! Control that stays on the GPU: a kernel whose workgroup counts an earlier node wrote (an indirect dispatch).

mod common;

use common::{gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{BakedGraph, Error, GraphBuilder, KernelSpec, LIBRARY, graph};

graph! {
    /// The GPU decides how much of `x` to double: the first `x.len() / 2` elements (rounded up to whole
    /// workgroups of 64), counted by a one-invocation kernel into `args`.
    graph FirstHalf {
        buffers { x: [f32] = input, y: [f32] = output, args: [u32; 3] }
        kernel size(x: read, args: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() {
                args[0] = (arrayLength(&x) / 2u + 63u) / 64u;
                args[1] = 1u;
                args[2] = 1u;
            }
        }
        kernel double(x: read, y: write) workgroups(indirect: args) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
            }
        }
    }
}

#[test]
fn an_indirect_dispatch_runs_the_workgroups_an_earlier_node_wrote() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for len in [1, 2 + random_u32(&mut rng, 5000) as usize] {
        let xs = random_f32s(&mut rng, len);
        let x = gpu.buffer_from_slice(&xs)?;
        let y = gpu.buffer_zeroed::<f32>(len)?;
        poison_f32(&y);
        FirstHalf::bake(&gpu, FirstHalfBuffers { x: &x, y: &y })?.replay_blocking()?;
        let written = (len / 2).div_ceil(64) * 64;
        let ys = read(&y);
        for (i, (&got, &x)) in ys.iter().zip(&xs).enumerate() {
            if i < written {
                assert_eq!(got, 2.0 * x, "y[{i}] of {len}");
            } else {
                assert!(
                    got.is_nan(),
                    "y[{i}] of {len}: past the GPU's count, yet written"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn the_builder_dispatches_indirectly_too_and_orders_the_writer_first()
-> Result<(), Box<dyn std::error::Error>> {
    let mut b = GraphBuilder::new("FirstHalf");
    b.input("x", "f32")
        .output("y", "f32")
        .owned("args", "u32", 3);
    b.kernel(
        "double",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                 if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
             }",
        )
        .read("x")
        .write("y")
        .indirect("args"),
    );
    // The reader declared first: edges come from declaration order, so the counts are not written before.
    let refused = b.build(&LIBRARY).expect_err("args never written before");
    assert!(
        refused.to_string().contains(
            "reads its workgroup counts from graph-owned `args`, but no node writes it before"
        ),
        "{refused}"
    );
    let built = FirstHalf::DESCRIPTION;
    // The macro's: the size kernel before the indirect one, by the edge the counts make.
    assert!(
        built.edges.iter().any(|e| (e.from, e.to) == (0, 1)),
        "{:?}",
        built.edges
    );
    let gpu = gpu();
    let xs = random_f32s(&mut rng(), 300);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(300)?;
    poison_f32(&y);
    BakedGraph::bake(&gpu, built, &[("x", x.as_any()), ("y", y.as_any())])?.replay_blocking()?;
    assert_eq!(read(&y).iter().filter(|v| !v.is_nan()).count(), 192);
    Ok(())
}
