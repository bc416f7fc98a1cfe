//! Upload and readback nodes, ranges and a typed host task in a public graph: the generated items (the
//! handles and the node sets of each role, empty ones included) and the typed API compile without a warning.
#![deny(warnings)]

use graph_runtime::{Dispatch, Error, Finished, Gpu, graph};

graph! {
    /// Offsets uploaded each replay, a host task in between, a range read back.
    pub graph Offsets {
        params { k: f32 }
        buffers { x: [f32] = input, y: [f32] = output, t: [f32; 4], z: [u32; 8] }
        upload bias(t);
        fill clear(z[2..6] = 7u);
        kernel add(x: read, t: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < arrayLength(&y)) { y[i] = x[i] * params.k + t[i % 4u]; }
            }
        }
        host look(t: read, z: read_write);
        readback tail(y[1..]);
        readback counts(z);
    }
}

/// Runs the graph once and returns what it read back.
pub fn run(gpu: &Gpu, x: &graph_runtime::Buffer<f32>, y: &graph_runtime::Buffer<f32>) -> Result<Vec<f32>, Error> {
    let mut g = Offsets::bake(gpu, OffsetsBuffers { x, y })?;
    g.on_host(Offsets::HOSTS.look, |h| {
        let t: Vec<f32> = h.t()?;
        let z: Vec<u32> = h.z()?;
        h.write_z(&z.iter().map(|v| v + t.len() as u32).collect::<Vec<u32>>())
    })?;
    // The nodes of each role the updates take; the roles without nodes are enums without variants.
    g.set_range(OffsetsRanged::Clear, 3..5)?;
    g.set_dispatch(OffsetsKernel::Add, Dispatch::Threads([4, 1, 1]))?;
    assert_eq!(OffsetsRanged::Tail.node(), OffsetsNode::Tail);
    let _: Option<(OffsetsChoice, OffsetsCopy, OffsetsInterop)> = None;
    g.upload(Offsets::UPLOADS.bias, &[1.0, 2.0, 3.0, 4.0])?;
    let finished: Finished<Offsets> = g.replay()?.wait()?;
    let _: Vec<u32> = finished.read(Offsets::READBACKS.counts)?;
    finished.read(Offsets::READBACKS.tail)
}

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<Offsets>(Offsets::FUSED), Ok(()));
    let _ = run;
}
