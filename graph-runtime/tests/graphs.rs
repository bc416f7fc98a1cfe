//! GPU tests of baked graphs against CPU references, on fresh random inputs with outputs poisoned first.

mod common;

use common::{assert_close, gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{Baked, Error, ParamsStorage, graph, kernels::cpu};

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

fn saxpy_cpu(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    let mut y = y.to_vec();
    cpu::axpy(a, x, &mut y);
    cpu::scale(&mut y, 2.0);
    y
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
    let expected = saxpy_cpu(a, &xs, &ys);
    assert_close(&read(&out), &expected, "out");
    assert_close(&read(&y), &expected, "y");
    Ok(())
}

#[test]
fn a_parameter_change_takes_effect_without_a_rebake() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 4096;
    let xs = random_f32s(&mut rng, n);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    let out = gpu.buffer_zeroed::<f32>(n)?;
    let mut g = Saxpy::bake(
        &gpu,
        SaxpyBuffers {
            x: &x,
            y: &y,
            out: &out,
        },
    )?;
    let mut expected = vec![0.0f32; n];
    for step in 0..3 {
        let a = step as f32 + 0.5;
        // Only the first half this time: `n` is a parameter too, so the dispatch size changes as well.
        let active = if step == 1 { n / 2 } else { n };
        *g.params_mut() = SaxpyParams {
            a,
            n: active as u32,
        };
        poison_f32(&out);
        g.replay_blocking()?;
        // axpy covers the first `active` elements; the library scale covers the whole buffer.
        cpu::axpy(a, &xs[..active], &mut expected[..active]);
        cpu::scale(&mut expected, 2.0);
        assert_close(&read(&out), &expected, &format!("out after replay {step}"));
    }
    Ok(())
}

#[test]
fn a_hundred_replays_in_flight_equal_a_hundred_waited() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 2048;
    let (xs, ys) = (random_f32s(&mut rng, n), random_f32s(&mut rng, n));
    let run = |in_flight: bool| -> Result<Vec<f32>, Error> {
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
        let mut pending = Vec::new();
        for step in 0..100 {
            // A parameter that differs per replay, so each replay must see its own value.
            *g.params_mut() = SaxpyParams {
                a: 1.0 / (step as f32 + 1.0),
                n: n as u32,
            };
            let submission = g.replay()?;
            if in_flight {
                pending.push(submission);
            } else {
                submission.wait()?;
            }
        }
        for s in pending {
            s.wait()?;
        }
        Ok(read(&out))
    };
    let waited = run(false)?;
    let in_flight = run(true)?;
    assert_eq!(waited, in_flight);
    let mut expected = ys.clone();
    for step in 0..100 {
        expected = saxpy_cpu(1.0 / (step as f32 + 1.0), &xs, &expected);
    }
    // 100 dependent steps accumulate rounding: compare loosely against the CPU, exactly between GPU runs.
    for (i, (g, c)) in waited.iter().zip(&expected).enumerate() {
        assert!(
            (g - c).abs() <= 1e-3 * c.abs().max(1.0),
            "out[{i}]: GPU {g}, CPU {c}"
        );
    }
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
    let expected: Vec<f32> = xs.iter().map(|v| v * k - (v + k)).collect();
    assert_close(&read(&dst), &expected, "dst");
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
    let got = read(&v);
    for (i, (g, d)) in got.iter().zip(&data).enumerate() {
        for c in 0..4 {
            let e = d[c] * 0.5 + offset[c];
            assert!(
                (g[c] - e).abs() < 1e-5,
                "v[{i}][{c}]: GPU {}, CPU {e}",
                g[c]
            );
        }
    }
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
    g.on_host(StagedNode::Inspect, move |ctx| {
        *into.lock().expect("lock") = ctx.read::<f32>("grid")?;
        Ok(())
    })?;
    g.replay_blocking()?;
    let expected: Vec<f32> = cells
        .iter()
        .enumerate()
        .map(|(i, v)| v + 0.25 + (i as u32 % w) as f32)
        .collect();
    assert_close(
        &seen.lock().expect("lock"),
        &expected,
        "grid as the host task saw it",
    );
    assert_close(&read(&grid), &expected, "grid");
    let total: f32 = expected.iter().sum();
    let got = read(&sum)[0];
    assert!(
        (got - total).abs() <= 1e-3 * total.abs().max(1.0),
        "sum: GPU {got}, CPU {total}"
    );
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
    )
    .expect("bake");
    *g.params_mut() = StagedParams {
        w: 8,
        h: 8,
        bias: 0.0,
    };
    assert!(matches!(
        g.replay(),
        Err(Error::HostTaskMissing {
            node: "inspect",
            ..
        })
    ));
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
    let mut expected = ys.clone();
    cpu::axpy(a, &xs, &mut expected);
    cpu::scale(&mut expected, a);
    let mut copied = vec![0.0; n];
    cpu::copy(&expected, &mut copied);
    let mut filled = vec![0.0; n];
    cpu::fill(&mut filled, v);
    assert_close(&read(&y), &expected, "y");
    assert_close(&read(&z), &copied, "z");
    assert_close(&read(&f), &filled, "f");
    Ok(())
}

#[test]
fn a_device_without_push_constants_falls_back_to_a_uniform_buffer() -> Result<(), Error> {
    use graph_runtime::{Gpu, wgpu};
    // An application's own device, created without `IMMEDIATES`: the same graph must still run.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .expect("a GPU adapter (install mesa-vulkan-drivers for the software one)");
    let (device, queue) =
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))
            .expect("a device");
    let gpu = Gpu::from_wgpu(device, queue)?;
    assert_eq!(gpu.max_immediate_size(), 0);
    let mut rng = rng();
    let n = 5000;
    let (xs, ys) = (random_f32s(&mut rng, n), random_f32s(&mut rng, n));
    let (x, y) = (gpu.buffer_from_slice(&xs)?, gpu.buffer_from_slice(&ys)?);
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
    assert_eq!(g.params_storage(), ParamsStorage::Uniform);
    let a = random_f32s(&mut rng, 1)[0];
    *g.params_mut() = SaxpyParams::new(a, n as u32);
    g.replay_blocking()?;
    assert_close(&read(&out), &saxpy_cpu(a, &xs, &ys), "out");
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
    g.on_host(HostWritesNode::Reverse, |ctx| {
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
            Err(Error::LengthMismatch { .. })
        ));
        Ok(())
    })?;
    g.replay_blocking()?;
    let expected: Vec<f32> = xs.iter().rev().map(|v| v * v + 0.5).collect();
    assert_close(&read(&out), &expected, "out");
    Ok(())
}

#[test]
fn library_kernels_fold_dispatches_past_the_per_dimension_limit() -> Result<(), Error> {
    graph! {
        graph Long {
            params { v: f32 }
            buffers { y: [f32] = output }
            fill set(y = params.v);
        }
    }
    let gpu = gpu();
    // 65535 workgroups of 64 cover 4,194,240 elements; go past that.
    let n = 65_535 * 64 + 1000;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    poison_f32(&y);
    let mut g = Long::bake(&gpu, LongBuffers { y: &y })?;
    g.params_mut().v = 3.25;
    g.replay_blocking()?;
    let got = read(&y);
    assert!(
        got.iter().all(|&v| v == 3.25),
        "first wrong element at {:?}",
        got.iter().position(|&v| v != 3.25)
    );
    Ok(())
}
