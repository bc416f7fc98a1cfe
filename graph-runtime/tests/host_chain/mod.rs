//! A graph with host tasks between two GPU partitions, shared by the native awaited-replay tests
//! (`awaited.rs`) and the web tests (`web.rs`): squares on the GPU, two host tasks in one phase (the second
//! reads what the first wrote), then the GPU again over what they wrote.

use graph_runtime::{Baked, Buffer, Error, Gpu, graph};

graph! {
    /// Squares, reversed and shifted on the host, plus `k`.
    pub graph HostChain {
        params { k: f32 }
        buffers { a: [f32] = input, mid: [f32] = output, out: [f32] = output }
        kernel square(a: read, mid: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&mid)) { mid[gid.x] = a[gid.x] * a[gid.x]; }
            }
        }
        host reverse(mid: read_write);
        host shift(mid: read_write);
        kernel finish(mid: read, out: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&out)) { out[gid.x] = mid[gid.x] + params.k; }
            }
        }
        readback result(out);
    }
}

/// The buffers a [`HostChain`] is baked over: `a`, then `mid` and `out` poisoned (NaN).
pub struct Chain {
    pub graph: Baked<HostChain>,
    pub a: Buffer<f32>,
    pub out: Buffer<f32>,
}

/// [`HostChain`] baked over `xs`, with `k` and its host tasks: `reverse` reverses `mid`, `shift` adds 1 to
/// what `reverse` wrote.
pub fn bake(gpu: &Gpu, xs: &[f32], k: f32) -> Result<Chain, Error> {
    let a = gpu.buffer_from_slice(xs)?;
    let mid = gpu.buffer_from_slice(&vec![f32::NAN; xs.len()])?;
    let out = gpu.buffer_from_slice(&vec![f32::NAN; xs.len()])?;
    let mut graph = HostChain::bake(
        gpu,
        HostChainBuffers {
            a: &a,
            mid: &mid,
            out: &out,
        },
    )?;
    graph.params_mut().k = k;
    graph.on_host(HostChain::HOSTS.reverse, |h| {
        let mut mid = h.mid()?;
        mid.reverse();
        h.write_mid(&mid)
    })?;
    graph.on_host(HostChain::HOSTS.shift, |h| {
        let mid: Vec<f32> = h.mid()?.iter().map(|v| v + 1.0).collect();
        h.write_mid(&mid)
    })?;
    Ok(Chain { graph, a, out })
}

/// The CPU's `out`: squares, reversed, each plus 1, plus `k`.
pub fn expected(xs: &[f32], k: f32) -> Vec<f32> {
    xs.iter().rev().map(|v| v * v + 1.0 + k).collect()
}
