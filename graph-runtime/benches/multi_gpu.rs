//! One graph across two GPUs (`GpusGraph`) against the same graph on one, and what moving a buffer between
//! them costs.
//!
//! - **chains 20x20** (the benchmark's shape: 20 independent chains of 20 kernels over 64K-element buffers,
//!   fused): on one GPU; on two with each chain placed on GPU `chain % 2` and its buffer made there (only `x`,
//!   256 KiB, moves to GPU 1 each replay); and on two by the placement pass with every buffer made on GPU 0,
//!   so the chains it puts on GPU 1 move their buffers there and back.
//! - **chains 20x20, own inputs** (GPU-bound): 20 chains of 20 kernels `y = y * 0.999 + x` over 2M-element
//!   buffers, unfused (400 dispatches, about 9.6 GB of memory traffic), each chain with its own `x` and `y`
//!   made on the GPU it is placed on (`chain % 2`): nothing moves between the GPUs.
//! - **transfer**: `t = 2x` on GPU 0, `y = t + 1` on GPU 1 (one transfer of `t`), against both kernels on one
//!   GPU, for buffers of 256 KiB to 64 MiB: the difference is what the transfer adds to a replay. On each
//!   path the set has (`TransferPath`): host memory both devices import (Vulkan), and staged through the
//!   host. The other shapes use the set's default path.
//!
//! Every side's output is checked once against the CPU (the chains against the f64 reference within the
//! rounding their arithmetic allows), outputs poisoned first. Printed: the median wall time of a replay
//! (submit to every GPU finished) over `--runs` runs after 3 warm-up ones.
//!
//! On a machine with one adapter the "two GPUs" are two devices of it (the transfers are real, the speed-up
//! is not). Run: `cargo bench -p graph-runtime --bench multi_gpu [-- --runs N]`.

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use graph_runtime::{
    BakedGraph, Buffer, Error, Gpu, Gpus, GpusGraph, GraphBuilder, GraphDesc, KernelSpec, LIBRARY,
    TransferPath,
};

mod shapes;

use shapes::{Dag, Expected, N, chains_dag, compare, fresh, graph_of, inputs, names_of};

fn main() -> Result<(), Error> {
    let runs = runs_argument()?;
    let mut gpus = Gpus::new_blocking()?;
    if gpus.len() < 2 {
        println!(
            "one adapter: the second GPU is a second device of it ({})",
            gpus[0].summary()
        );
        gpus = Gpus::from_gpus(vec![gpus[0].clone(), Gpu::new_blocking()?])?;
    }
    for (i, gpu) in gpus.iter().enumerate() {
        println!("GPU {i}: {}", gpu.summary());
    }
    if let Some(report) = gpus.external_memory_report() {
        println!("{report}");
    }
    println!(
        "transfers: {:?} (the default of this set)",
        gpus.transfer_path()
    );
    println!("median of {runs} runs, wall time of one replay until every GPU finished\n");
    chains(&gpus, runs)?;
    own_inputs(&gpus, runs.min(20))?;
    println!();
    transfers(&gpus, runs)?;
    Ok(())
}

fn runs_argument() -> Result<usize, Error> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--runs") {
        Some(i) => args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| Error::Wait("--runs takes a number".into())),
        None => Ok(100),
    }
}

/// The 20x20 chains on one GPU, on two as placed by chain, and on two by the placement pass.
fn chains(gpus: &Gpus, runs: usize) -> Result<(), Error> {
    let dag = chains_dag("chains 20x20", 20, 20);
    let desc = graph_of(&dag, true)?;
    let (x, state, expected) = inputs(&dag);
    let names = names_of(&dag);
    let make = |gpu: &Gpu| -> Result<Vec<Buffer<f32>>, Error> {
        (0..dag.buffers)
            .map(|_| gpu.buffer_zeroed::<f32>(N))
            .collect()
    };

    // One GPU.
    let one = make(&gpus[0])?;
    let bound: Vec<(&str, &graph_runtime::AnyBuffer)> = names
        .iter()
        .zip(&one)
        .map(|(n, b)| (n.as_str(), b.as_any()))
        .collect();
    let mut baked = BakedGraph::bake(&gpus[0], desc.clone(), &bound)?;
    set_inputs(&dag, &one, &x, &state)?;
    baked.replay_blocking()?;
    check(&dag, "one GPU", &one, &expected)?;
    let t_one = measure(runs, || baked.replay_blocking().map(drop))?;
    row("chains 20x20", "one GPU", t_one, None);

    // Two GPUs, chain c on GPU c % 2 with its buffer there; `x` on GPU 0.
    let mut placed = desc.clone();
    let per_chain = dag.nodes.len() / 20;
    for (k, node) in placed.nodes.to_mut().iter_mut().enumerate() {
        node.on = Some(((k / per_chain) % 2) as u32);
    }
    let homes: Vec<Buffer<f32>> = (0..dag.buffers)
        .map(|b| {
            let gpu = if b == 0 { 0 } else { (b - 1) % 2 };
            gpus[gpu].buffer_zeroed::<f32>(N)
        })
        .collect::<Result<_, _>>()?;
    let t_placed = two_gpus(
        gpus,
        &dag,
        placed,
        &names,
        &homes,
        (&x, &state, &expected),
        runs,
    )?;
    row(
        "chains 20x20",
        "two GPUs, placed by chain",
        t_placed.0,
        Some((t_one, t_placed.1)),
    );

    // Two GPUs by the placement pass, every buffer on GPU 0.
    let all_on_0 = make(&gpus[0])?;
    let t_pass = two_gpus(
        gpus,
        &dag,
        desc,
        &names,
        &all_on_0,
        (&x, &state, &expected),
        runs,
    )?;
    row(
        "chains 20x20",
        "two GPUs, placement pass, buffers on GPU 0",
        t_pass.0,
        Some((t_one, t_pass.1)),
    );
    Ok(())
}

/// Elements per buffer of the GPU-bound chains.
const LONG: usize = 2 * 1024 * 1024;

/// 20 chains of 20 unfused steps over `LONG` elements, each chain over its own `x{c}` and `y{c}`, chain `c` on
/// GPU `c % gpus` when given.
fn own_chains(gpus: Option<u32>) -> Result<GraphDesc, Error> {
    let mut b = GraphBuilder::new("OwnChains");
    for c in 0..20 {
        let (x, y) = (format!("x{c}"), format!("y{c}"));
        b.input(&x, "f32").inout(&y, "f32");
        for k in 0..20 {
            let node = format!("c{c}s{k}");
            let code = format!(
                "@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                     let i = gid.x + gid.y * 65535u * 256u;
                     if (i < arrayLength(&{y})) {{ {y}[i] = {y}[i] * 0.999 + {x}[i]; }} }}"
            );
            let groups = LONG.div_ceil(256);
            b.kernel(
                &node,
                KernelSpec::wgsl(code).read(&x).read_write(&y).workgroups(&[
                    &groups.min(65535).to_string(),
                    &groups.div_ceil(65535).to_string(),
                    "1",
                ]),
            )
            .no_fusion(&node);
            if let Some(gpus) = gpus {
                b.on(&node, c % gpus);
            }
        }
    }
    b.build(&LIBRARY)
        .map_err(|e| Error::Gpu(format!("own chains: {e}")))
}

/// The GPU-bound chains on one GPU and on two, each checked against the CPU (`f32`, within `1e-5` relative).
fn own_inputs(gpus: &Gpus, runs: usize) -> Result<(), Error> {
    let x: Vec<f32> = (0..LONG).map(|i| (i % 97) as f32 * 0.01).collect();
    let y0: Vec<f32> = (0..LONG).map(|i| (i % 13) as f32 * 0.1).collect();
    let want: Vec<f32> = x
        .iter()
        .zip(&y0)
        .map(|(&x, &y)| (0..20).fold(y, |y, _| y * 0.999 + x))
        .collect();
    let mut times = Vec::new();
    for two in [false, true] {
        let on = |c: usize| if two { c % 2 } else { 0 };
        let xs: Vec<Buffer<f32>> = (0..20)
            .map(|c| gpus[on(c)].buffer_from_slice(&x))
            .collect::<Result<_, _>>()?;
        let ys: Vec<Buffer<f32>> = (0..20)
            .map(|c| gpus[on(c)].buffer_zeroed::<f32>(LONG))
            .collect::<Result<_, _>>()?;
        let names: Vec<(String, String)> = (0..20)
            .map(|c| (format!("x{c}"), format!("y{c}")))
            .collect();
        let mut bound: Vec<(&str, &graph_runtime::AnyBuffer)> = Vec::new();
        for (c, (xn, yn)) in names.iter().enumerate() {
            bound.push((xn.as_str(), xs[c].as_any()));
            bound.push((yn.as_str(), ys[c].as_any()));
        }
        let mut replay: Box<dyn FnMut() -> Result<(), Error>> = if two {
            let mut g = GpusGraph::bake(gpus, own_chains(Some(2))?, &bound)?;
            Box::new(move || g.replay_blocking().map(drop))
        } else {
            let mut g = BakedGraph::bake(&gpus[0], own_chains(None)?, &bound)?;
            Box::new(move || g.replay_blocking().map(drop))
        };
        for y in &ys {
            y.write(&y0)?;
        }
        replay()?;
        for (c, y) in ys.iter().enumerate() {
            let got = y.read_blocking()?;
            if let Some(i) = (0..LONG).find(|&i| {
                let error = (got[i] - want[i]).abs();
                error.is_nan() || error > 1e-5 * want[i].abs().max(1.0)
            }) {
                return Err(Error::Gpu(format!(
                    "own chains, chain {c}: [{i}] is {}, the CPU's {}",
                    got[i], want[i]
                )));
            }
        }
        times.push(measure(runs, &mut replay)?);
    }
    row("chains 20x20, own inputs, 2M", "one GPU", times[0], None);
    row(
        "chains 20x20, own inputs, 2M",
        "two GPUs, placed by chain",
        times[1],
        Some((times[0], 0)),
    );
    Ok(())
}

/// Bakes `desc` on `gpus` over `buffers`, checks one replay and times `runs`: the median, and the bytes each
/// replay moves.
fn two_gpus(
    gpus: &Gpus,
    dag: &Dag,
    desc: GraphDesc,
    names: &[String],
    buffers: &[Buffer<f32>],
    (x, state, expected): (&[f32], &[f32], &Expected),
    runs: usize,
) -> Result<(Duration, u64), Error> {
    let bound: Vec<(&str, &graph_runtime::AnyBuffer)> = names
        .iter()
        .zip(buffers)
        .map(|(n, b)| (n.as_str(), b.as_any()))
        .collect();
    let mut g = GpusGraph::bake(gpus, desc, &bound)?;
    set_inputs(dag, buffers, x, state)?;
    g.replay_blocking()?;
    check(dag, "two GPUs", buffers, expected)?;
    let moved = g.transfer_bytes();
    let t = measure(runs, || g.replay_blocking().map(drop))?;
    Ok((t, moved))
}

/// `x`, and what each other buffer holds before a checked run.
fn set_inputs(dag: &Dag, buffers: &[Buffer<f32>], x: &[f32], state: &[f32]) -> Result<(), Error> {
    buffers[0].write(x)?;
    for (b, buffer) in buffers.iter().enumerate().skip(1) {
        buffer.write(&fresh(dag, b, state))?;
    }
    Ok(())
}

/// The checked buffers against the f64 reference, within the rounding their arithmetic allows.
fn check(dag: &Dag, side: &str, buffers: &[Buffer<f32>], expected: &Expected) -> Result<(), Error> {
    for (&b, reference) in dag.checked.iter().zip(expected) {
        compare(dag, side, b, &buffers[b].read_blocking()?, reference).map_err(Error::Gpu)?;
    }
    Ok(())
}

/// `t = 2x` then `y = t + 1`, over buffers of `len` elements, the second kernel on GPU `second`.
fn relay(len: usize, second: u32) -> Result<GraphDesc, Error> {
    let kernel = |body: &str| {
        format!(
            "@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                 let i = gid.x + gid.y * 65535u * 256u; {body} }}"
        )
    };
    let groups = len.div_ceil(256);
    let (gx, gy) = (groups.min(65535), groups.div_ceil(65535));
    let dims = [gx.to_string(), gy.to_string(), "1".to_string()];
    let dims: Vec<&str> = dims.iter().map(String::as_str).collect();
    let mut b = GraphBuilder::new("Relay");
    b.input("x", "f32")
        .output("y", "f32")
        .owned("t", "f32", len as u64)
        .kernel(
            "double",
            KernelSpec::wgsl(kernel("if (i < arrayLength(&t)) { t[i] = 2.0 * x[i]; }"))
                .read("x")
                .write("t")
                .workgroups(&dims),
        )
        .kernel(
            "inc",
            KernelSpec::wgsl(kernel("if (i < arrayLength(&y)) { y[i] = t[i] + 1.0; }"))
                .read("t")
                .write("y")
                .workgroups(&dims),
        )
        .no_fusion("double")
        .no_fusion("inc")
        .on("double", 0)
        .on("inc", second);
    b.build(&LIBRARY)
        .map_err(|e| Error::Gpu(format!("relay: {e}")))
}

/// The relay on one GPU and across two on each path the set has, for several sizes: the difference is the
/// transfer's cost.
fn transfers(gpus: &Gpus, runs: usize) -> Result<(), Error> {
    let mut paths = vec![gpus.clone()];
    if gpus.transfer_path() == TransferPath::SharedHostMemory {
        let mut staged = gpus.clone();
        staged.set_transfer_path(TransferPath::Staged)?;
        paths.push(staged);
    }
    println!(
        "{:<14} {:<18} {:>12} {:>12} {:>12} {:>10}",
        "transfer of t", "path", "one GPU", "two GPUs", "difference", "GB/s"
    );
    for len in [64 * 1024, 1024 * 1024, 4 * 1024 * 1024, 16 * 1024 * 1024] {
        let input: Vec<f32> = (0..len).map(|i| (i % 1000) as f32).collect();
        let want: Vec<f32> = input.iter().map(|v| 2.0 * v + 1.0).collect();
        // One GPU.
        let (x, y) = (
            gpus[0].buffer_from_slice(&input)?,
            gpus[0].buffer_zeroed::<f32>(len)?,
        );
        let mut one = BakedGraph::bake(
            &gpus[0],
            relay(len, 0)?,
            &[("x", x.as_any()), ("y", y.as_any())],
        )?;
        y.write(&vec![f32::NAN; len])?;
        one.replay_blocking()?;
        exact(&y.read_blocking()?, &want, "relay on one GPU")?;
        let t_one = measure(runs, || one.replay_blocking().map(drop))?;
        // Two: `x` on GPU 0, `y` on GPU 1, on each path.
        for on in &paths {
            let (x2, y2) = (
                on[0].buffer_from_slice(&input)?,
                on[1].buffer_zeroed::<f32>(len)?,
            );
            let mut two = GpusGraph::bake(
                on,
                relay(len, 1)?,
                &[("x", x2.as_any()), ("y", y2.as_any())],
            )?;
            y2.write(&vec![f32::NAN; len])?;
            two.replay_blocking()?;
            exact(&y2.read_blocking()?, &want, "relay on two GPUs")?;
            let bytes = two.transfer_bytes();
            let t_two = measure(runs, || two.replay_blocking().map(drop))?;
            let extra = t_two.saturating_sub(t_one);
            println!(
                "{:<14} {:<18} {:>10.1}us {:>10.1}us {:>10.1}us {:>10.2}",
                format!("{} KiB", bytes / 1024),
                format!("{:?}", two.transfer_path()),
                us(t_one),
                us(t_two),
                us(extra),
                bytes as f64 / extra.as_secs_f64().max(1e-9) / 1e9
            );
        }
    }
    Ok(())
}

fn exact(got: &[f32], want: &[f32], what: &str) -> Result<(), Error> {
    match got
        .iter()
        .zip(want)
        .position(|(g, w)| g.to_bits() != w.to_bits())
    {
        Some(i) => Err(Error::Gpu(format!(
            "{what}: [{i}] is {}, the CPU's {}",
            got[i], want[i]
        ))),
        None => Ok(()),
    }
}

fn measure(runs: usize, mut run: impl FnMut() -> Result<(), Error>) -> Result<Duration, Error> {
    for _ in 0..3 {
        run()?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        run()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn row(shape: &str, side: &str, t: Duration, against: Option<(Duration, u64)>) {
    let extra = match against {
        Some((one, moved)) => format!(
            "  speed-up {:.2}x, {} KiB moved per replay",
            one.as_secs_f64() / t.as_secs_f64(),
            moved / 1024
        ),
        None => String::new(),
    };
    println!("{shape:<30} {side:<44} {:>10.1}us{extra}", us(t));
}
