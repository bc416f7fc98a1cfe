//! GPU tests of baked graphs against CPU references, on fresh random inputs with outputs poisoned first, and
//! compared as tightly as the arithmetic allows: exactly where both sides round the same operations in the
//! same order, else within the rounding those operations can add.

#![forbid(unsafe_code)]

mod common;

use common::{
    U, assert_exact, assert_within, both_parameter_storages, gpu, native_expected, poison_f32,
    poison_u32, random_f32s, random_small_ints, random_u32, read, rng,
};
use graph_runtime::ir::ParamsStorage;
use graph_runtime::{Baked, Error, Gpu, graph, kernels::cpu};

graph! {
    /// y = a*x + y (inline), then y *= 2 (library), then out = y (copy): a chain.
    graph Saxpy {
        params { a: f32, n: u32 }
        buffers {
            x: [f32] = input,
            y: [f32] = inout,
            out: [f32] = output,
        }
        kernel axpy(x: read, y: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < params.n) { y[i] = params.a * x[i] + y[i]; }
            }
        }
        kernel twice = kernels::scale(data: y, alpha: 2.0);
        copy publish(y -> out);
    }
}

/// `2 (a x + y)` in f64, and the most f32 can be off from it: `a x + y` rounds at most twice (once if fused),
/// and doubling is exact.
fn saxpy_reference(a: f32, x: &[f32], y: &[f32], active: usize) -> (Vec<f64>, Vec<f64>) {
    x.iter()
        .zip(y)
        .enumerate()
        .map(|(i, (&x, &y))| {
            let (a, x, y) = (f64::from(a), f64::from(x), f64::from(y));
            if i < active {
                let sum = a * x + y;
                (2.0 * sum, 2.0 * U * ((a * x).abs() + sum.abs()) * 1.000_001)
            } else {
                (2.0 * y, 0.0)
            }
        })
        .unzip()
}

#[test]
fn saxpy_chain_matches_the_cpu() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 10_000 + random_u32(&mut rng, 1000) as usize;
    let (xs, ys) = (random_f32s(&mut rng, n), random_f32s(&mut rng, n));
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_from_slice(&ys)?;
    let out = gpu.buffer_zeroed::<f32>(n)?;
    poison_f32(&out);
    let mut g = Saxpy::bake(
        &gpu,
        SaxpyBuffers {
            x: &x,
            y: &y,
            out: &out,
        },
    )?;
    let a = random_f32s(&mut rng, 1)[0];
    *g.params_mut() = SaxpyParams { a, n: n as u32 };
    g.replay()?.wait()?;
    let (expected, bound) = saxpy_reference(a, &xs, &ys, n);
    assert_within(&read(&out), &expected, &bound, "out");
    // The copy is exact: `out` is `y` bit for bit.
    assert_exact(&read(&out), &read(&y), "out against y");
    Ok(())
}

#[test]
fn a_parameter_change_takes_effect_without_a_rebake_in_both_parameter_storages() -> Result<(), Error>
{
    for (gpu, storage) in both_parameter_storages() {
        parameter_changes(&gpu, storage)?;
    }
    Ok(())
}

fn parameter_changes(gpu: &Gpu, storage: ParamsStorage) -> Result<(), Error> {
    let mut rng = rng();
    let n = 4096;
    let xs = random_f32s(&mut rng, n);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    let out = gpu.buffer_zeroed::<f32>(n)?;
    let mut g = Saxpy::bake(
        gpu,
        SaxpyBuffers {
            x: &x,
            y: &y,
            out: &out,
        },
    )?;
    assert_eq!(g.params_storage(), storage);
    for step in 0..4 {
        let before = read(&y);
        let a = random_f32s(&mut rng, 1)[0] + step as f32;
        // `n` is a parameter too, so the dispatch size changes as well.
        let active = [n, n / 2, n, 100][step];
        *g.params_mut() = SaxpyParams {
            a,
            n: active as u32,
        };
        poison_f32(&out);
        g.replay_blocking()?;
        let (expected, bound) = saxpy_reference(a, &xs, &before, active);
        assert_within(
            &read(&out),
            &expected,
            &bound,
            &format!("out after replay {step} ({storage:?})"),
        );
    }
    Ok(())
}

graph! {
    /// Each replay adds `k * x` to `acc` and writes `k` into slot `slot` of `log`. With small integers every
    /// value is exact in f32, so every replay's parameter stays visible in the result.
    graph Accumulate {
        params { k: f32, slot: u32 }
        buffers { x: [f32] = input, acc: [f32] = inout, log: [f32] = inout }
        kernel add(x: read, acc: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < arrayLength(&acc)) { acc[i] = acc[i] + params.k * x[i]; }
            }
        }
        kernel record(log: read_write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() {
                if (params.slot < arrayLength(&log)) { log[params.slot] = params.k; }
            }
        }
    }
}

#[test]
fn a_hundred_replays_in_flight_each_see_their_own_parameters_in_both_storages() -> Result<(), Error>
{
    for (gpu, storage) in both_parameter_storages() {
        replays_in_flight(&gpu, storage)?;
    }
    Ok(())
}

fn replays_in_flight(gpu: &Gpu, storage: ParamsStorage) -> Result<(), Error> {
    const REPLAYS: usize = 100;
    let mut rng = rng();
    let n = 2048 + random_u32(&mut rng, 64) as usize;
    let xs = random_small_ints(&mut rng, n);
    let x = gpu.buffer_from_slice(&xs)?;
    let acc = gpu.buffer_zeroed::<f32>(n)?;
    let log = gpu.buffer_zeroed::<f32>(REPLAYS)?;
    poison_f32(&log);
    let mut g = Accumulate::bake(
        gpu,
        AccumulateBuffers {
            x: &x,
            acc: &acc,
            log: &log,
        },
    )?;
    assert_eq!(g.params_storage(), storage);
    // A parameter of its own for every replay, none waited for until all are submitted.
    let ks: Vec<f32> = (0..REPLAYS).map(|r| (r + 1) as f32).collect();
    let mut pending = Vec::new();
    for (slot, &k) in ks.iter().enumerate() {
        *g.params_mut() = AccumulateParams {
            k,
            slot: slot as u32,
        };
        pending.push(g.replay()?);
    }
    for submission in pending {
        submission.wait()?;
    }
    // Exact: integers below 2^24 throughout. A wrong `k` in any replay changes every element by a nonzero
    // multiple of it.
    let total: f32 = ks.iter().sum();
    let expected: Vec<f32> = xs.iter().map(|&x| total * x).collect();
    assert_exact(&read(&acc), &expected, &format!("acc ({storage:?})"));
    assert_exact(&read(&log), &ks, &format!("log ({storage:?})"));
    Ok(())
}

graph! {
    /// A diamond over graph-owned buffers: split into two branches, join.
    graph Diamond {
        params { k: f32 }
        buffers {
            src: [f32; 1024] = input,
            left: [f32; 1024],
            right: [f32; 1024],
            dst: [f32; 1024] = output,
        }
        kernel to_left(src: read, left: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&left)) { left[gid.x] = src[gid.x] * params.k; }
            }
        }
        kernel to_right(src: read, right: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&right)) { right[gid.x] = src[gid.x] + params.k; }
            }
        }
        kernel join(left: read, right: read, dst: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&dst)) { dst[gid.x] = left[gid.x] - right[gid.x]; }
            }
        }
    }
}

/// The node enums print as `derive(Debug)` prints: the variant's name.
#[test]
fn node_enums_print_their_variant_names() {
    assert_eq!(format!("{:?}", DiamondNode::ToLeft), "ToLeft");
    assert_eq!(
        format!("{:?}", [DiamondKernel::Join, DiamondKernel::ToRight]),
        "[Join, ToRight]"
    );
    assert_eq!(
        format!("{:?}", Diamond::LEVELS),
        "[[ToLeft, ToRight], [Join]]"
    );
}

#[test]
fn a_diamond_schedules_its_branches_in_one_level() -> Result<(), Error> {
    assert_eq!(
        Diamond::LEVELS,
        &[
            &[DiamondNode::ToLeft, DiamondNode::ToRight][..],
            &[DiamondNode::Join][..]
        ]
    );
    let gpu = gpu();
    let mut rng = rng();
    let xs = random_f32s(&mut rng, 1024);
    let src = gpu.buffer_from_slice(&xs)?;
    let dst = gpu.buffer_zeroed::<f32>(1024)?;
    poison_f32(&dst);
    let mut g = Diamond::bake(
        &gpu,
        DiamondBuffers {
            src: &src,
            dst: &dst,
        },
    )?;
    let k = random_f32s(&mut rng, 1)[0];
    g.params_mut().k = k;
    g.replay_blocking()?;
    // The product, the sum and the difference are each stored by their own kernel, so each rounds once, as
    // on the CPU: exact.
    let expected: Vec<f32> = xs.iter().map(|v| v * k - (v + k)).collect();
    assert_exact(&read(&dst), &expected, "dst");
    Ok(())
}

graph! {
    /// Parameters passed in a uniform buffer instead of push constants, by the graph's choice.
    #[uniform_params]
    graph Uniform {
        params { offset: vec4<f32>, scale: f32 }
        buffers { v: [vec4<f32>] = inout }
        kernel affine(v: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&v)) { v[gid.x] = v[gid.x] * params.scale + params.offset; }
            }
        }
    }
}

#[test]
fn uniform_parameters_work_and_vectors_keep_their_layout() -> Result<(), Error> {
    const { assert!(size_of::<UniformParams>() == 32) };
    let gpu = gpu();
    let mut rng = rng();
    let flat = random_f32s(&mut rng, 4 * 300);
    let data: Vec<[f32; 4]> = flat.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    let v = gpu.buffer_from_slice(&data)?;
    let mut g = Uniform::bake(&gpu, UniformBuffers { v: &v })?;
    assert_eq!(g.params_storage(), ParamsStorage::Uniform);
    let offset = [1.0, -2.0, 3.0, -4.0];
    *g.params_mut() = UniformParams {
        offset,
        scale: 0.5,
        ..Default::default()
    };
    g.replay_blocking()?;
    // Halving is exact, so the one rounding is the addition's, fused or not: exact on both sides.
    let expected: Vec<f32> = data
        .iter()
        .flat_map(|d| (0..4).map(move |c| d[c] * 0.5 + offset[c]))
        .collect();
    let got: Vec<f32> = read(&v).into_iter().flatten().collect();
    assert_exact(&got, &expected, "v");
    Ok(())
}

graph! {
    /// A 2D dispatch with a fill, a host task between two GPU partitions, and explicit-only edges.
    #[explicit_edges]
    graph Staged {
        params { w: u32, h: u32, bias: f32 }
        buffers {
            grid: [f32] = inout,
            sum: [f32; 1] = output,
        }
        fill clear(sum = 0.0);
        kernel bump(grid: read_write) threads(params.w, params.h) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.w && gid.y < params.h) {
                    let i = gid.y * params.w + gid.x;
                    grid[i] = grid[i] + params.bias + f32(gid.x);
                }
            }
        }
        host inspect(grid: read);
        kernel total(grid: read, sum: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() {
                var s = 0.0;
                for (var i = 0u; i < arrayLength(&grid); i++) { s += grid[i]; }
                sum[0] = s;
            }
        }
        clear -> bump -> inspect -> total;
    }
}

#[test]
fn host_tasks_run_between_partitions_and_see_the_gpu_results() -> Result<(), Error> {
    use std::sync::{Arc, Mutex};
    let gpu = gpu();
    let mut rng = rng();
    let (w, h) = (37 + random_u32(&mut rng, 20), 23 + random_u32(&mut rng, 20));
    let cells = random_f32s(&mut rng, (w * h) as usize);
    let grid = gpu.buffer_from_slice(&cells)?;
    let sum = gpu.buffer_zeroed::<f32>(1)?;
    poison_f32(&sum);
    let mut g = Staged::bake(
        &gpu,
        StagedBuffers {
            grid: &grid,
            sum: &sum,
        },
    )?;
    *g.params_mut() = StagedParams { w, h, bias: 0.25 };
    let seen: Arc<Mutex<Vec<f32>>> = Arc::default();
    let into = seen.clone();
    g.on_host(Staged::HOSTS.inspect, move |h| {
        *into.lock().expect("lock") = h.grid()?;
        Ok(())
    })?;
    g.replay_blocking()?;
    // Two additions in one order on both sides, each correctly rounded: exact.
    let expected: Vec<f32> = cells
        .iter()
        .enumerate()
        .map(|(i, v)| v + 0.25 + (i as u32 % w) as f32)
        .collect();
    assert_exact(
        &seen.lock().expect("lock"),
        &expected,
        "grid as the host task saw it",
    );
    assert_exact(&read(&grid), &expected, "grid");
    // One invocation sums in index order, as the CPU does here: exact, so a missing element shows.
    let total = expected.iter().fold(0.0f32, |s, v| s + v);
    assert_exact(&read(&sum), &[total], "sum");
    Ok(())
}

#[test]
fn a_host_task_without_a_closure_is_an_error() -> Result<(), Error> {
    let gpu = gpu();
    let grid = gpu.buffer_zeroed::<f32>(64)?;
    let sum = gpu.buffer_zeroed::<f32>(1)?;
    let mut g = Staged::bake(
        &gpu,
        StagedBuffers {
            grid: &grid,
            sum: &sum,
        },
    )?;
    *g.params_mut() = StagedParams {
        w: 8,
        h: 8,
        bias: 0.0,
    };
    let result = g.replay();
    assert!(
        matches!(
            &result,
            Err(Error::HostTaskMissing {
                node,
                ..
            }) if node == "inspect"
        ),
        "{result:?}"
    );
    Ok(())
}

#[test]
fn library_kernels_match_their_cpu_references() -> Result<(), Error> {
    graph! {
        graph Library {
            params { a: f32, v: f32 }
            buffers { x: [f32] = input, y: [f32] = inout, z: [f32] = output, f: [f32] = output }
            kernel ax = kernels::axpy(x: x, y: y, a: params.a);
            kernel sc = kernels::scale(data: y, alpha: params.a);
            kernel cp = kernels::copy(input: y, output: z);
            kernel fl = kernels::fill(output: f, value: params.v);
        }
    }
    let gpu = gpu();
    let mut rng = rng();
    let n = 3000 + random_u32(&mut rng, 100) as usize;
    let (xs, ys) = (random_f32s(&mut rng, n), random_f32s(&mut rng, n));
    let (x, y) = (gpu.buffer_from_slice(&xs)?, gpu.buffer_from_slice(&ys)?);
    let (z, f) = (gpu.buffer_zeroed::<f32>(n)?, gpu.buffer_zeroed::<f32>(n)?);
    poison_f32(&z);
    poison_f32(&f);
    let mut g: Baked<Library> = Library::bake(
        &gpu,
        LibraryBuffers {
            x: &x,
            y: &y,
            z: &z,
            f: &f,
        },
    )?;
    let (a, v) = (random_f32s(&mut rng, 1)[0], random_f32s(&mut rng, 1)[0]);
    *g.params_mut() = LibraryParams { a, v };
    g.replay_blocking()?;
    // axpy rounds at most twice, then scaling by `a` once more: the bound carries the first error through.
    let (expected, bound): (Vec<f64>, Vec<f64>) = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| {
            let (a, x, y) = (f64::from(a), f64::from(x), f64::from(y));
            let sum = a * x + y;
            let axpy_error = U * ((a * x).abs() + sum.abs());
            let scaled = a * sum;
            (
                scaled,
                (a.abs() * axpy_error + U * scaled.abs() * 1.000_001) * 1.000_001,
            )
        })
        .unzip();
    assert_within(&read(&y), &expected, &bound, "y");
    assert_exact(&read(&z), &read(&y), "z, a copy of y");
    let mut filled = vec![0.0; n];
    cpu::fill(&mut filled, v);
    assert_exact(&read(&f), &filled, "f");
    Ok(())
}

graph! {
    /// A host task that reads one buffer and writes another between two GPU partitions.
    graph HostWrites {
        params { k: f32 }
        buffers { a: [f32] = input, mid: [f32; 512], out: [f32; 512] = output }
        kernel square(a: read, mid: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&mid)) { mid[gid.x] = a[gid.x] * a[gid.x]; }
            }
        }
        host reverse(mid: read_write);
        kernel finish(mid: read, out: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&out)) { out[gid.x] = mid[gid.x] + params.k; }
            }
        }
    }
}

#[test]
fn a_host_task_writes_what_the_next_partition_reads() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let xs = random_f32s(&mut rng, 512);
    let a = gpu.buffer_from_slice(&xs)?;
    let out = gpu.buffer_zeroed::<f32>(512)?;
    poison_f32(&out);
    let mut g = HostWrites::bake(&gpu, HostWritesBuffers { a: &a, out: &out })?;
    g.params_mut().k = 0.5;
    // By name: the untyped context, checked at run time.
    g.on_host("reverse", |ctx| {
        let mut mid: Vec<f32> = ctx.read("mid")?;
        mid.reverse();
        ctx.write("mid", &mid)?;
        // The task declared only `mid`: anything else is refused, by name.
        assert!(matches!(
            ctx.read::<f32>("out"),
            Err(Error::HostAccess { .. })
        ));
        assert!(matches!(
            ctx.write("mid", &[0.0f32; 3]),
            Err(Error::TransferData { .. })
        ));
        Ok(())
    })?;
    g.replay_blocking()?;
    let expected: Vec<f32> = xs.iter().rev().map(|v| v * v + 0.5).collect();
    assert_exact(&read(&out), &expected, "out");
    Ok(())
}

#[test]
fn fills_past_the_per_dimension_limit_are_folded_into_two_dimensions() -> Result<(), Error> {
    graph! {
        graph Long {
            params { v: f32 }
            buffers { y: [f32] = output }
            fill set(y = params.v);
        }
    }
    let gpu = gpu();
    let mut rng = rng();
    // 65535 workgroups of 64 cover 4,194,240 elements; go past that.
    let n = 65_535 * 64 + 1000 + random_u32(&mut rng, 1000) as usize;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    poison_f32(&y);
    let mut g = Long::bake(&gpu, LongBuffers { y: &y })?;
    let v = random_f32s(&mut rng, 1)[0];
    g.params_mut().v = v;
    g.replay_blocking()?;
    let got = read(&y);
    assert!(
        got.iter().all(|&e| e.to_bits() == v.to_bits()),
        "first wrong element at {:?}",
        got.iter().position(|&e| e.to_bits() != v.to_bits())
    );
    Ok(())
}

#[test]
fn fill_writes_every_element_type() -> Result<(), Error> {
    graph! {
        graph Fills {
            params { n: u32, v: vec4<f32> }
            buffers { a: [u32] = output, b: [i32] = output, c: [vec4<f32>] = output, d: [vec2<u32>] = output }
            fill fa(a = params.n);
            fill fb(b = -7);
            fill fc(c = params.v);
            fill fd(d = vec2<u32>(params.n, 3u));
        }
    }
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 300) as usize;
    let a = gpu.buffer_from_slice(&vec![u32::MAX; len])?;
    let b = gpu.buffer_from_slice(&vec![i32::MIN; len])?;
    let c = gpu.buffer_from_slice(&vec![[f32::NAN; 4]; len])?;
    let d = gpu.buffer_from_slice(&vec![[u32::MAX; 2]; len])?;
    let mut g = Fills::bake(
        &gpu,
        FillsBuffers {
            a: &a,
            b: &b,
            c: &c,
            d: &d,
        },
    )?;
    let n = random_u32(&mut rng, 1000);
    let v = [1.5, -2.0, 0.25, 8.0];
    *g.params_mut() = FillsParams::new(n, v);
    g.replay_blocking()?;
    assert_eq!(read(&a), vec![n; len]);
    assert_eq!(read(&b), vec![-7; len]);
    assert_eq!(read(&c), vec![v; len]);
    assert_eq!(read(&d), vec![[n, 3]; len]);
    Ok(())
}

graph! {
    /// Two independent chains, a barrier after both, then a join: in explicit-only mode, only the barrier's
    /// edges (from the leaves `a2` and `b2`) and `sync -> join` order the join after the chains.
    #[explicit_edges]
    graph Barrier {
        buffers {
            i: [f32] = input,
            ta: [f32; 4096], tb: [f32; 4096],
            x: [f32] = output, y: [f32] = output, z: [f32] = output,
        }
        kernel a1(i: read, ta: write) { @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&ta)) { ta[g.x] = i[g.x] * 3.0; } } }
        kernel a2(ta: read, x: write) { @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&x)) { x[g.x] = ta[g.x] + 1.0; } } }
        kernel b1(i: read, tb: write) { @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&tb)) { tb[g.x] = i[g.x] * 5.0; } } }
        kernel b2(tb: read, y: write) { @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&y)) { y[g.x] = tb[g.x] - 2.0; } } }
        a1 -> a2;
        b1 -> b2;
        barrier sync;
        empty ready;
        sync -> ready -> join;
        kernel join(x: read, y: read, z: write) { @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&z)) { z[g.x] = x[g.x] * y[g.x]; } } }
    }
}

#[test]
fn a_barrier_orders_a_join_after_independent_chains() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 4096;
    let is = random_f32s(&mut rng, n);
    let i = gpu.buffer_from_slice(&is)?;
    let (x, y, z) = (
        gpu.buffer_zeroed::<f32>(n)?,
        gpu.buffer_zeroed::<f32>(n)?,
        gpu.buffer_zeroed::<f32>(n)?,
    );
    for out in [&x, &y, &z] {
        poison_f32(out);
    }
    let mut g = Barrier::bake(
        &gpu,
        BarrierBuffers {
            i: &i,
            x: &x,
            y: &y,
            z: &z,
        },
    )?;
    g.replay()?.wait()?;
    // Each step rounds once, in the same order on both sides: exact.
    let xs: Vec<f32> = is.iter().map(|v| v * 3.0 + 1.0).collect();
    let ys: Vec<f32> = is.iter().map(|v| v * 5.0 - 2.0).collect();
    let zs: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a * b).collect();
    assert_exact(&read(&x), &xs, "x");
    assert_exact(&read(&y), &ys, "y");
    assert_exact(&read(&z), &zs, "z");
    // The description says why the join waits: the leaves before the barrier, then the explicit edges.
    let leaves: Vec<(u32, u32)> = Barrier::DESCRIPTION
        .edges
        .iter()
        .filter(|e| e.origin == graph_runtime::desc::EdgeOriginDesc::Leaf)
        .map(|e| (e.from, e.to))
        .collect();
    assert_eq!(leaves, vec![(1, 4), (3, 4)]);
    Ok(())
}

graph! {
    /// A kernel, an interop task that records its own wgpu work (a copy, as a third-party library might),
    /// then a kernel reading what the task wrote: ordered by the declared accesses.
    graph Interop {
        buffers {
            x: [f32] = input,
            doubled: [f32] = output,
            copied: [f32] = output,
            plus_one: [f32] = output,
        }
        kernel double(x: read, doubled: write) { @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&doubled)) { doubled[g.x] = 2.0 * x[g.x]; } } }
        interop mirror(doubled: read, copied: write);
        kernel add(copied: read, plus_one: write) { @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&plus_one)) { plus_one[g.x] = copied[g.x] + 1.0; } } }
    }
}

#[test]
fn an_interop_task_records_in_order_with_the_graph() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 3000 + random_u32(&mut rng, 100) as usize;
    let xs = random_f32s(&mut rng, n);
    let x = gpu.buffer_from_slice(&xs)?;
    let outs: Vec<graph_runtime::Buffer<f32>> = (0..3)
        .map(|_| gpu.buffer_zeroed::<f32>(n))
        .collect::<Result<_, _>>()?;
    for out in &outs {
        poison_f32(out);
    }
    let mut g = Interop::bake(
        &gpu,
        InteropBuffers {
            x: &x,
            doubled: &outs[0],
            copied: &outs[1],
            plus_one: &outs[2],
        },
    )?;
    // Before it has a closure, a replay is an error and submits nothing.
    assert!(matches!(g.replay(), Err(Error::InteropTaskMissing { node, .. }) if node == "mirror"));
    g.on_interop(InteropInterop::Mirror, |ctx| {
        let (from, to) = (ctx.buffer("doubled")?, ctx.buffer("copied")?);
        ctx.encoder()
            .copy_buffer_to_buffer(&from, 0, &to, 0, from.size());
        Ok(())
    })?;
    // On Vulkan the native recorder replays it (the task records between its command buffers), unless
    // turned off; then the portable recorder, for the same results.
    assert_eq!(g.untyped().recorder() == "native", native_expected(&gpu));
    let doubled: Vec<f32> = xs.iter().map(|v| 2.0 * v).collect();
    let plus_one: Vec<f32> = doubled.iter().map(|v| v + 1.0).collect();
    for recorder in [g.untyped().recorder(), "portable"] {
        if recorder == "portable" {
            g.use_portable_recorder();
        }
        for out in &outs {
            poison_f32(out);
        }
        for _ in 0..3 {
            g.replay()?.wait()?;
        }
        assert_exact(&read(&outs[0]), &doubled, &format!("doubled, {recorder}"));
        assert_exact(
            &read(&outs[1]),
            &doubled,
            &format!("copied by the interop task, {recorder}"),
        );
        assert_exact(
            &read(&outs[2]),
            &plus_one,
            &format!("plus_one, after the interop task, {recorder}"),
        );
    }
    Ok(())
}

#[test]
fn an_interop_task_sees_only_what_it_declared_and_its_panic_is_an_error() -> Result<(), Error> {
    let gpu = gpu();
    let n = 256;
    let x = gpu.buffer_from_slice(&vec![1.0f32; n])?;
    let outs: Vec<graph_runtime::Buffer<f32>> = (0..3)
        .map(|_| gpu.buffer_zeroed::<f32>(n))
        .collect::<Result<_, _>>()?;
    let mut g = Interop::bake(
        &gpu,
        InteropBuffers {
            x: &x,
            doubled: &outs[0],
            copied: &outs[1],
            plus_one: &outs[2],
        },
    )?;
    g.on_interop(InteropInterop::Mirror, |ctx| ctx.buffer("x").map(|_| ()))?;
    let undeclared = g.replay();
    assert!(
        matches!(&undeclared, Err(Error::HostAccess { buffer, .. }) if buffer == "x"),
        "{undeclared:?}"
    );
    g.on_interop(InteropInterop::Mirror, |_| panic!("the library failed"))?;
    let panicked = g.replay();
    assert!(
        matches!(&panicked, Err(Error::InteropTaskPanicked { message, .. }) if message == "the library failed"),
        "{panicked:?}"
    );
    // The graph stays usable.
    g.on_interop(InteropInterop::Mirror, |_| Ok(()))?;
    g.replay()?.wait()?;
    // The typed API takes an interop task only as an `InteropInterop`; the untyped one checks at run time.
    let mut untyped = graph_runtime::BakedGraph::bake(
        &gpu,
        Interop::DESCRIPTION,
        &[
            ("x", x.as_any()),
            ("doubled", outs[0].as_any()),
            ("copied", outs[1].as_any()),
            ("plus_one", outs[2].as_any()),
        ],
    )?;
    assert!(matches!(
        untyped.on_interop("double", |_| Ok(())),
        Err(Error::NotANode { .. })
    ));
    Ok(())
}

graph! {
    /// Copies and fills of ranges, fixed at bake from the bound lengths: the middle of `x` to the start of `y`,
    /// the last two elements of `y` filled, three elements of `z`, and all of `w` but its first element (long
    /// enough that the fill's dispatch folds into two dimensions).
    graph Ranges {
        params { v: f32 }
        buffers { x: [f32] = input, y: [f32] = inout, z: [vec2<u32>; 8] = inout, w: [u32] = inout }
        copy head(x[1..x.len() - 1] -> y[..y.len() - 2]);
        fill tail(y[y.len() - 2..] = params.v);
        fill mid(z[2..5] = vec2<u32>(7u, 9u));
        fill most(w[1..] = 5u);
    }
}

#[test]
fn ranges_copy_and_fill_exactly_their_elements() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    // Past 65535 workgroups of 64 for `w`; `x` and `y` from the shortest that has a range to a few thousand.
    let long = 65_535 * 64 + 1 + random_u32(&mut rng, 1000) as usize;
    for len in [3, 65 + random_u32(&mut rng, 3000) as usize] {
        let xs = random_f32s(&mut rng, len);
        let x = gpu.buffer_from_slice(&xs)?;
        let y = gpu.buffer_zeroed::<f32>(len)?;
        poison_f32(&y);
        let z = gpu.buffer_from_slice(&[[0xDEAD_BEEF_u32; 2]; 8])?;
        let w = gpu.buffer_zeroed::<u32>(long)?;
        poison_u32(&w);
        let mut g = Ranges::bake(
            &gpu,
            RangesBuffers {
                x: &x,
                y: &y,
                z: &z,
                w: &w,
            },
        )?;
        // Ranged fills replay natively on Vulkan: their bounds are the SPIR-V's override constants.
        assert_eq!(g.untyped().recorder() == "native", native_expected(&gpu));
        let v = random_f32s(&mut rng, 1)[0];
        g.params_mut().v = v;
        g.replay_blocking()?;
        let mut expected_y = xs[1..len - 1].to_vec();
        expected_y.extend([v, v]);
        assert_exact(&read(&y), &expected_y, &format!("y of {len}"));
        let mut expected_z = [[0xDEAD_BEEF_u32; 2]; 8];
        expected_z[2..5].fill([7, 9]);
        assert_eq!(read(&z), expected_z, "z: only 2..5 filled");
        let got_w = read(&w);
        assert_eq!(got_w[0], 0xDEAD_BEEF, "w[0] is outside the range");
        assert_eq!(
            got_w[1..].iter().position(|&e| e != 5),
            None,
            "first element of w[1..] not filled"
        );
    }
    Ok(())
}

#[test]
fn a_range_that_does_not_fit_the_bound_buffers_is_an_error_at_bake() -> Result<(), Error> {
    let gpu = gpu();
    let z = gpu.buffer_zeroed::<[u32; 2]>(8)?;
    let w = gpu.buffer_zeroed::<u32>(4)?;
    // `x[1..0]`: starts after it ends.
    let (x, y) = (gpu.buffer_zeroed::<f32>(1)?, gpu.buffer_zeroed::<f32>(4)?);
    let buffers = |x, y| RangesBuffers { x, y, z: &z, w: &w };
    let result = Ranges::bake(&gpu, buffers(&x, &y));
    let message = result.expect_err("refused").to_string();
    assert!(
        message.contains("`1..0` of `x`") && message.contains("`head`"),
        "{message}"
    );
    // 8 elements of `x` into 3 of `y`.
    let (x, y) = (gpu.buffer_zeroed::<f32>(10)?, gpu.buffer_zeroed::<f32>(5)?);
    let message = Ranges::bake(&gpu, buffers(&x, &y))
        .expect_err("refused")
        .to_string();
    assert!(
        message.contains("moves 8 elements of `x` into a range of 3 elements of `y`"),
        "{message}"
    );
    // The positive control: lengths that fit.
    let (x, y) = (gpu.buffer_zeroed::<f32>(10)?, gpu.buffer_zeroed::<f32>(10)?);
    Ranges::bake(&gpu, buffers(&x, &y))?;
    Ok(())
}
