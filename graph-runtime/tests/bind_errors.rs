//! A bound buffer of the wrong element type, length or usage is an `Err` naming it, never a panic.

#![forbid(unsafe_code)]

mod common;

use common::gpu;
use graph_runtime::ir::ValueType;
use graph_runtime::{AnyBuffer, Baked, BakedGraph, Error, graph};

graph! {
    graph Check {
        buffers { x: [f32; 256] = input, y: [f32] = output }
        kernel k(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x % 256u]; }
            }
        }
    }
}

fn storage(gpu: &graph_runtime::Gpu, bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage,
        mapped_at_creation: false,
    })
}

use graph_runtime::wgpu;

#[test]
fn a_wrongly_typed_buffer_is_an_error() -> Result<(), Error> {
    let gpu = gpu();
    let x = AnyBuffer::from_wgpu(
        &gpu,
        storage(&gpu, 1024, wgpu::BufferUsages::STORAGE),
        ValueType::U32,
    )?;
    let y = gpu.buffer_zeroed::<f32>(10)?;
    let result = Baked::<Check>::with_buffers(&gpu, &[(0, &x), (1, y.as_any())]);
    assert!(
        matches!(&result, Err(Error::BufferType { buffer, .. }) if buffer == "x"),
        "{result:?}"
    );
    let message = result.expect_err("error").to_string();
    assert!(
        message.contains("`x`") && message.contains("u32") && message.contains("f32"),
        "{message}"
    );
    Ok(())
}

#[test]
fn a_too_short_buffer_is_an_error() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_zeroed::<f32>(100)?;
    let y = gpu.buffer_zeroed::<f32>(10)?;
    let result = Check::bake(&gpu, CheckBuffers { x: &x, y: &y });
    assert!(
        matches!(
            &result,
            Err(Error::BufferLength {
                buffer,
                actual: 100,
                ..
            }) if buffer == "x"
        ),
        "{result:?}"
    );
    Ok(())
}

#[test]
fn an_empty_run_time_length_buffer_is_an_error() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_zeroed::<f32>(256)?;
    let y = AnyBuffer::from_wgpu(
        &gpu,
        storage(&gpu, 0, wgpu::BufferUsages::STORAGE),
        ValueType::F32,
    )?;
    let result = Baked::<Check>::with_buffers(&gpu, &[(0, x.as_any()), (1, &y)]);
    assert!(
        matches!(
            &result,
            Err(Error::BufferLength {
                buffer,
                actual: 0,
                ..
            }) if buffer == "y"
        ),
        "{result:?}"
    );
    Ok(())
}

#[test]
fn a_buffer_without_storage_usage_is_an_error() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_zeroed::<f32>(256)?;
    let y = graph_runtime::Buffer::<f32>::from_wgpu(
        &gpu,
        storage(
            &gpu,
            64,
            wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        ),
    )?;
    let result = Check::bake(&gpu, CheckBuffers { x: &x, y: &y });
    assert!(
        matches!(&result, Err(Error::BufferUsage { buffer, .. }) if buffer == "y"),
        "{result:?}"
    );
    assert!(result.expect_err("error").to_string().contains("STORAGE"));
    Ok(())
}

#[test]
fn a_missing_buffer_is_an_error() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_zeroed::<f32>(256)?;
    let result = Baked::<Check>::with_buffers(&gpu, &[(0, x.as_any())]);
    assert!(
        matches!(&result, Err(Error::MissingBuffer { buffer, .. }) if buffer == "y"),
        "{result:?}"
    );
    Ok(())
}

#[test]
fn a_dispatch_over_the_device_limit_is_an_error_not_a_crash() -> Result<(), Error> {
    graph! {
        graph Huge {
            params { n: u32 }
            buffers { y: [f32] = output }
            kernel k(y: write) workgroups(params.n) {
                @compute @workgroup_size(1)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) { if (gid.x < arrayLength(&y)) { y[gid.x] = 1.0; } }
            }
        }
    }
    let gpu = gpu();
    let y = gpu.buffer_zeroed::<f32>(4)?;
    let mut g = Huge::bake(&gpu, HugeBuffers { y: &y }).expect("bake");
    g.params_mut().n = u32::MAX;
    assert!(matches!(
        g.replay(),
        Err(Error::DispatchTooLarge { node, .. }) if node == "k"
    ));
    g.params_mut().n = 4;
    g.replay_blocking().expect("a good size after a bad one");
    Ok(())
}

#[test]
fn write_with_the_wrong_length_is_an_error() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_zeroed::<f32>(4)?;
    assert!(matches!(
        x.write(&[1.0; 3]),
        Err(Error::LengthMismatch {
            expected: 4,
            actual: 3,
            ..
        })
    ));
    Ok(())
}

#[test]
fn a_graph_owned_buffer_over_the_device_limit_is_an_error_at_bake() -> Result<(), Error> {
    graph! {
        graph TooBig {
            buffers { y: [f32] = output, scratch: [f32; 2000000000] }
            kernel fill_scratch(scratch: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) { if (gid.x < arrayLength(&scratch)) { scratch[gid.x] = 1.0; } }
            }
            kernel k(scratch: read, y: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) { if (gid.x < arrayLength(&y)) { y[gid.x] = scratch[gid.x]; } }
            }
        }
    }
    let gpu = gpu();
    let y = gpu.buffer_zeroed::<f32>(4)?;
    let result = TooBig::bake(&gpu, TooBigBuffers { y: &y });
    assert!(
        matches!(result, Err(Error::BufferTooLarge { .. })),
        "{result:?}"
    );
    // The device is still usable afterwards.
    let x = gpu.buffer_zeroed::<f32>(256)?;
    Check::bake(&gpu, CheckBuffers { x: &x, y: &y })
        .expect("bake")
        .replay_blocking()
        .expect("replay");
    Ok(())
}

#[test]
fn a_lost_device_is_an_error_not_a_panic() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_zeroed::<f32>(256)?;
    let y = gpu.buffer_zeroed::<f32>(16)?;
    let mut g = Check::bake(&gpu, CheckBuffers { x: &x, y: &y }).expect("bake");
    // `destroy` is the one loss a test can cause. wgpu reports it from its next maintenance, which a wait
    // runs: the replay or its wait says the device is lost, and so does everything after.
    gpu.device().destroy();
    let outcome = g.replay().and_then(|s| s.wait());
    assert!(
        matches!(&outcome, Err(Error::DeviceLost(why)) if why.contains("destroyed")),
        "{outcome:?}"
    );
    assert!(matches!(y.read_blocking(), Err(Error::DeviceLost(_))));
    Ok(())
}

#[test]
fn one_wgpu_buffer_bound_to_two_graph_buffers_is_an_error_when_written() -> Result<(), Error> {
    graph! {
        graph Pair {
            buffers { a: [f32] = input, b: [f32] = output }
            kernel k(a: read, b: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) { if (gid.x < arrayLength(&b)) { b[gid.x] = a[gid.x]; } }
            }
        }
    }
    let gpu = gpu();
    let shared = gpu.buffer_zeroed::<f32>(64)?;
    let result = Pair::bake(
        &gpu,
        PairBuffers {
            a: &shared,
            b: &shared,
        },
    );
    assert!(
        matches!(
            &result,
            Err(Error::AliasedBuffers {
                first,
                second,
                ..
            }) if first == "a" && second == "b"
        ),
        "{result:?}"
    );
    Ok(())
}

#[test]
fn an_inline_kernel_sized_past_the_device_limit_fails_at_bake() -> Result<(), Error> {
    graph! {
        graph Wide {
            buffers { y: [f32] = output }
            kernel k(y: write) {
                @compute @workgroup_size(1)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) { if (gid.x < arrayLength(&y)) { y[gid.x] = 1.0; } }
            }
        }
    }
    let gpu = gpu();
    // One invocation per element with a workgroup of 1: more workgroups than one dimension allows, and an
    // inline kernel's indexing is its own, so it cannot be folded.
    let y = gpu.buffer_zeroed::<f32>(70_000)?;
    let result = Wide::bake(&gpu, WideBuffers { y: &y });
    assert!(
        matches!(&result, Err(Error::DispatchTooLarge { node, .. }) if node == "k"),
        "{result:?}"
    );
    Ok(())
}

#[test]
fn a_copy_between_bound_buffers_of_different_lengths_is_an_error() -> Result<(), Error> {
    graph! {
        graph Mirror {
            buffers { a: [f32] = input, b: [f32] = output }
            copy c(a -> b);
        }
    }
    let gpu = gpu();
    let (a, b) = (
        gpu.buffer_zeroed::<f32>(64)?,
        gpu.buffer_zeroed::<f32>(100)?,
    );
    let result = Mirror::bake(&gpu, MirrorBuffers { a: &a, b: &b });
    assert!(
        matches!(
            &result,
            Err(Error::BufferLength { buffer, actual: 100, expected, .. }) if buffer == "b" && expected.starts_with("exactly 64")
        ),
        "{result:?}"
    );
    Ok(())
}

#[test]
fn a_workgroup_over_the_device_limits_is_an_error_at_bake() -> Result<(), Error> {
    graph! {
        #[device_limits]
        graph Wide {
            buffers { y: [f32] = output }
            kernel k(y: write) {
                @compute @workgroup_size(1024, 1024)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) { if (gid.x < arrayLength(&y)) { y[gid.x] = 1.0; } }
            }
        }
    }
    let gpu = gpu();
    let y = gpu.buffer_zeroed::<f32>(64)?;
    let result = Wide::bake(&gpu, WideBuffers { y: &y });
    assert!(
        matches!(
            &result,
            Err(Error::WorkgroupTooLarge {
                node,
                size: [1024, 1024, 1],
                ..
            }) if node == "k"
        ),
        "{result:?}"
    );
    Ok(())
}

/// Whether `result` is the error of `x` bound twice in graph `Check`.
fn bound_twice<T>(result: &Result<T, Error>) -> bool {
    matches!(result, Err(Error::BoundTwice { graph, buffer }) if graph == "Check" && buffer == "x")
}

#[test]
fn a_buffer_bound_twice_is_an_error_by_name_and_by_index() -> Result<(), Error> {
    let gpu = gpu();
    let (x, other) = (
        gpu.buffer_zeroed::<f32>(256)?,
        gpu.buffer_zeroed::<f32>(256)?,
    );
    let y = gpu.buffer_zeroed::<f32>(16)?;
    // Two buffers, or one buffer twice: either way the name is bound twice.
    for second in [&other, &x] {
        let by_name = BakedGraph::bake(
            &gpu,
            Check::DESCRIPTION,
            &[("x", x.as_any()), ("y", y.as_any()), ("x", second.as_any())],
        );
        assert!(bound_twice(&by_name), "{:?}", by_name.map(|_| ()));
        let message = by_name.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("bind each external buffer once"),
            "{message}"
        );
        let by_index = Baked::<Check>::with_buffers(
            &gpu,
            &[(0, x.as_any()), (1, y.as_any()), (0, second.as_any())],
        );
        assert!(bound_twice(&by_index), "{:?}", by_index.map(|_| ()));
    }
    Ok(())
}

#[test]
fn a_buffer_the_graph_does_not_bind_is_an_error_by_name_and_by_index() -> Result<(), Error> {
    graph! {
        graph Owning {
            buffers { x: [f32] = input, scratch: [f32; 4] }
            kernel k(x: read, scratch: write) {
                @compute @workgroup_size(4)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) { scratch[gid.x] = x[gid.x]; }
            }
        }
    }
    let gpu = gpu();
    let x = gpu.buffer_zeroed::<f32>(4)?;
    let unknown = |result: Result<(), Error>, name: &str| {
        assert!(
            matches!(&result, Err(Error::UnknownName { graph, kind: "external buffer", name: n, known })
                if graph == "Owning" && n == name && known.contains("`x`")),
            "{result:?}"
        );
    };
    unknown(
        BakedGraph::bake(
            &gpu,
            Owning::DESCRIPTION,
            &[("x", x.as_any()), ("z", x.as_any())],
        )
        .map(|_| ()),
        "z",
    );
    // A graph-owned buffer is not the caller's to bind.
    unknown(
        BakedGraph::bake(
            &gpu,
            Owning::DESCRIPTION,
            &[("x", x.as_any()), ("scratch", x.as_any())],
        )
        .map(|_| ()),
        "scratch",
    );
    for (index, name) in [(1, "scratch"), (7, "#7")] {
        unknown(
            Baked::<Owning>::with_buffers(&gpu, &[(0, x.as_any()), (index, x.as_any())])
                .map(|_| ()),
            name,
        );
    }
    Ok(())
}
