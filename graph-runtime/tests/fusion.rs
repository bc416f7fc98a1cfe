//! The fusion pass on the GPU: a graph replayed fused gives what the same graph gives unfused
//! (`#[no_fusion]`), and both what the CPU gives, on fresh random inputs with outputs poisoned first.

#![forbid(unsafe_code)]

mod common;

use common::{assert_within, gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{BakedGraph, Error, graph};

/// One graph, fused or not: `$attr` is `no_fusion` for the unfused twin.
macro_rules! pipeline {
    ($name:ident $(#[$attr:ident])?) => {
        graph! {
            /// Pointwise kernels (inline, folded, from the library, a fill), split by a stencil that
            /// cannot be fused.
            $(#[$attr])?
            graph $name {
                params { a: f32 }
                buffers { x: [f32] = input, y: [f32] = inout, z: [f32] = output, w: [f32] = output }
                kernel mix(x: read, y: read_write) {
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        let i = gid.x;
                        if (i >= arrayLength(&y)) { return; }
                        y[i] = y[i] * params.a + x[i];
                    }
                }
                kernel half = kernels::scale(data: y, alpha: 0.5);
                kernel square(y: read, z: write) {
                    const ONE: f32 = 1.0;
                    fn sq(v: f32) -> f32 { return v * v; }
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
                        let i = gid.x + gid.y * groups.x * 64u;
                        if (i < arrayLength(&z)) { z[i] = sq(y[i]) + ONE; }
                    }
                }
                kernel spread(z: read, w: write) {
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        let i = gid.x;
                        let n = arrayLength(&w);
                        if (i >= n) { return; }
                        w[i] = z[max(i, 1u) - 1u] + z[min(i + 1u, n - 1u)];
                    }
                }
                kernel offset(w: read_write) {
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < arrayLength(&w)) { w[gid.x] = w[gid.x] - 3.0; }
                    }
                }
                kernel twice = kernels::scale(data: w, alpha: 2.0);
                fill clear_y(y = 0.25);
            }
        }
    };
}

pipeline!(Fused);
pipeline!(Unfused #[no_fusion]);

/// The CPU's answer: `(y, z, w)`.
fn expected(x: &[f32], y: &[f32], a: f32) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = x.len();
    let y1: Vec<f64> = (0..n)
        .map(|i| (f64::from(y[i]) * f64::from(a) + f64::from(x[i])) * 0.5)
        .collect();
    let z: Vec<f64> = y1.iter().map(|v| v * v + 1.0).collect();
    let w: Vec<f64> = (0..n)
        .map(|i| (z[i.max(1) - 1] + z[(i + 1).min(n - 1)] - 3.0) * 2.0)
        .collect();
    (vec![0.25; n], z, w)
}

#[test]
fn a_fused_graph_gives_what_the_unfused_graph_and_the_cpu_give() -> Result<(), Error> {
    let mut rng = rng();
    // Past one workgroup, and not a multiple of one.
    fused_against_unfused(2 + random_u32(&mut rng, 5000) as usize, 1)
}

#[test]
fn over_long_buffers_fused_kernels_run_several_elements_per_invocation() -> Result<(), Error> {
    let mut rng = rng();
    // Two and four elements per invocation, the last invocations' share cut short.
    fused_against_unfused((1 << 19) + 1 + random_u32(&mut rng, 1000) as usize, 2)?;
    fused_against_unfused((1 << 20) + 1 + 4 * random_u32(&mut rng, 1000) as usize, 4)
}

/// Replays [`Fused`] and [`Unfused`] over `n` elements and compares both with the CPU and each other; the
/// fused kernels run `per` elements per invocation.
fn fused_against_unfused(n: usize, per: u32) -> Result<(), Error> {
    assert_eq!(
        graph_runtime::pipeline::fusion::wide_elements(Some(n as u64)),
        per,
        "{n} elements"
    );
    let gpu = gpu();
    let mut rng = rng();
    let xs = random_f32s(&mut rng, n);
    let ys = random_f32s(&mut rng, n);
    let a = 0.5 + random_f32s(&mut rng, 1)[0].abs();
    let (want_y, want_z, want_w) = expected(&xs, &ys, a);
    let bound = |v: &[f64]| -> Vec<f64> { v.iter().map(|v| 1e-5 * (1.0 + v.abs())).collect() };

    let mut outputs = Vec::new();
    for fused in [true, false] {
        let x = gpu.buffer_from_slice(&xs)?;
        let y = gpu.buffer_from_slice(&ys)?;
        let (z, w) = (gpu.buffer_zeroed::<f32>(n)?, gpu.buffer_zeroed::<f32>(n)?);
        poison_f32(&z);
        poison_f32(&w);
        // Baked by description, so one path runs both twins.
        let desc = if fused {
            Fused::DESCRIPTION
        } else {
            Unfused::DESCRIPTION
        };
        let bindings = [
            ("x", x.as_any()),
            ("y", y.as_any()),
            ("z", z.as_any()),
            ("w", w.as_any()),
        ];
        let mut g = BakedGraph::bake(&gpu, desc, &bindings)?;
        g.set_param("a", a)?;
        g.replay()?.wait()?;
        let groups = g.fused().to_vec();
        // The drawing says what runs in which kernel.
        let dot = g.to_dot(graph_runtime::pipeline::Detail::Plain);
        let marked = dot.lines().filter(|l| l.contains("fused: ")).count();
        assert_eq!(
            marked,
            if fused { 6 } else { 0 },
            "members marked in\n{dot}"
        );
        let what = if fused { "fused" } else { "unfused" };
        assert_within(&read(&y), &want_y, &bound(&want_y), &format!("{what} y"));
        assert_within(&read(&z), &want_z, &bound(&want_z), &format!("{what} z"));
        assert_within(&read(&w), &want_w, &bound(&want_w), &format!("{what} w"));
        outputs.push((read(&z), read(&w), groups));
    }
    let (fused, unfused) = (&outputs[0], &outputs[1]);
    // What fused: the chain before the stencil (`square` joins over `z`, bound at the length of `y`), and
    // the two kernels after it, with the fill of `y` (after `square`, which reads `y`; the stencil does not).
    let names: Vec<Vec<String>> = fused.2.iter().map(|g| g.names.clone()).collect();
    assert_eq!(
        names,
        vec![
            vec!["mix", "half", "square"],
            vec!["offset", "twice", "clear_y"]
        ],
        "the groups fused"
    );
    assert!(unfused.2.is_empty(), "`#[no_fusion]` fused {:?}", unfused.2);
    assert_eq!(fused.0, unfused.0, "z fused and unfused");
    assert_eq!(fused.1, unfused.1, "w fused and unfused");
    Ok(())
}

graph! {
    /// Three pointwise kernels that cannot fuse (their extents differ), each alone: the library's `copy`, a
    /// kernel of 64-wide workgroups that folds its index, and the library's `scale`, in place.
    graph Alone {
        buffers { x: [f32] = input, y: [f32] = output, s: [f32] = input, t: [f32] = output, u: [f32] = inout }
        kernel copy = kernels::copy(input: x, output: y);
        kernel triple = kernels::scale(data: u, alpha: 3.0);
        kernel affine(s: read, t: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
                let i = gid.x + gid.y * groups.x * 64u;
                if (i < arrayLength(&t)) { t[i] = s[i] * 2.0 + 1.0; }
            }
        }
    }
}

#[test]
fn over_long_buffers_a_kernel_alone_runs_several_elements_per_invocation() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    // `x` and `y` long enough for four elements per invocation, `s`, `t` and `u` for two; none a multiple,
    // `u` longer than `s`. `u`, read and written, is cached: every element of an invocation loaded before
    // any is stored.
    let n = (1 << 20) + 1 + random_u32(&mut rng, 4000) as usize;
    let m = (1 << 19) + 1 + random_u32(&mut rng, 4000) as usize;
    let l = (1 << 19) + 5001 + random_u32(&mut rng, 4000) as usize;
    let (xs, ss, us) = (
        random_f32s(&mut rng, n),
        random_f32s(&mut rng, m),
        random_f32s(&mut rng, l),
    );
    let (x, s, u) = (
        gpu.buffer_from_slice(&xs)?,
        gpu.buffer_from_slice(&ss)?,
        gpu.buffer_from_slice(&us)?,
    );
    let (y, t) = (gpu.buffer_zeroed::<f32>(n)?, gpu.buffer_zeroed::<f32>(m)?);
    poison_f32(&y);
    poison_f32(&t);
    let mut g = Alone::bake(
        &gpu,
        AloneBuffers {
            x: &x,
            y: &y,
            s: &s,
            t: &t,
            u: &u,
        },
    )?;
    assert!(Alone::FUSED.is_empty() && g.untyped().fused().is_empty());
    assert_eq!(g.untyped().widened(), &[0, 1, 2], "all three run wide");
    g.replay()?.wait()?;
    let tripled: Vec<f32> = us.iter().map(|v| v * 3.0).collect();
    let got = read(&u);
    let wrong = (0..l).find(|&i| got[i] != tripled[i]);
    assert_eq!(wrong, None, "u differs from the CPU's");
    assert!(read(&y) == xs, "the copy differs from its input");
    let want: Vec<f32> = ss.iter().map(|v| v * 2.0 + 1.0).collect();
    let got = read(&t);
    let wrong = (0..m).find(|&i| got[i] != want[i]);
    assert_eq!(wrong, None, "t differs from the CPU's");
    Ok(())
}

#[test]
fn the_compile_time_constant_lists_what_fuses_whatever_is_bound() {
    // By declaration: `mix` and `half` (dispatched over `y`), `offset` and `twice` (over `w`). `square` is
    // dispatched over `z`, whose length is only known at bake; so the fill of `y`, after `square`, cannot
    // join `mix` and `half`.
    assert_eq!(
        Fused::FUSED,
        &[
            &[FusedNode::Mix, FusedNode::Half][..],
            &[FusedNode::Offset, FusedNode::Twice][..],
        ]
    );
    assert!(Unfused::FUSED.is_empty());
}

#[test]
fn a_profile_times_each_dispatch_and_names_fused_kernels_after_their_members() -> Result<(), Error>
{
    let gpu = gpu();
    let n = 4096;
    let x = gpu.buffer_from_slice(&vec![1.0f32; n])?;
    let y = gpu.buffer_from_slice(&vec![2.0f32; n])?;
    let (z, w) = (gpu.buffer_zeroed::<f32>(n)?, gpu.buffer_zeroed::<f32>(n)?);
    let mut g = Fused::bake(
        &gpu,
        FusedBuffers {
            x: &x,
            y: &y,
            z: &z,
            w: &w,
        },
    )?;
    g.params_mut().a = 1.0;
    if !gpu
        .device()
        .features()
        .contains(graph_runtime::wgpu::Features::TIMESTAMP_QUERY)
    {
        // Without timestamps, profiling is refused in words, and the replay path is untouched.
        let refused = g.profile().expect_err("no timestamps, no profile");
        assert!(
            refused.to_string().contains("timestamp queries"),
            "{refused}"
        );
        g.replay()?.wait()?;
        return Ok(());
    }
    let profile = g.profile()?;
    let labels: Vec<String> = profile.dispatches.iter().map(|d| d.label()).collect();
    assert_eq!(
        labels,
        vec!["mix + half + square", "spread", "offset + twice + clear_y"],
        "one dispatch per fused kernel and per unfused node, in order"
    );
    for d in &profile.dispatches {
        assert!(d.end_ns >= d.start_ns, "{d:?} ends before it starts");
    }
    // The profiled replay computed what a replay computes.
    assert_eq!(read(&y), vec![0.25; n]);

    let trace: serde_json::Value =
        serde_json::from_str(&profile.to_chrome_trace()).expect("the trace is JSON");
    let events = trace["traceEvents"].as_array().expect("an event list");
    let complete: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(complete, labels, "one complete event per dispatch");

    let dot = profile.to_dot(
        g.untyped().description(),
        graph_runtime::pipeline::Detail::Plain,
    );
    for member in [
        "mix", "half", "square", "spread", "offset", "twice", "clear_y",
    ] {
        let line = dot
            .lines()
            .find(|l| l.contains(&format!("\\n{member}\\n")))
            .unwrap_or_else(|| panic!("no node `{member}` with a time in\n{dot}"));
        assert!(line.contains(" us"), "no time on `{member}`: {line}");
    }
    Ok(())
}

/// A graph-owned intermediate between two pointwise kernels, fused or not.
macro_rules! intermediate {
    ($name:ident $(#[$attr:ident])?) => {
        graph! {
            $(#[$attr])?
            graph $name {
                buffers { x: [f32] = input, t: [f32; 4096], y: [f32] = output }
                kernel lift(x: read, t: write) {
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < arrayLength(&t)) { t[gid.x] = x[gid.x] * 3.0 + 1.0; }
                    }
                }
                kernel square(t: read, y: write) {
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < arrayLength(&y)) { y[gid.x] = t[gid.x] * t[gid.x]; }
                    }
                }
            }
        }
    };
}

intermediate!(InRegisters);
intermediate!(InMemory #[no_fusion]);

#[test]
fn an_intermediate_only_the_fused_kernel_touches_lives_in_registers() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let xs = random_f32s(&mut rng, 4096);
    let want: Vec<f64> = xs
        .iter()
        .map(|&v| (f64::from(v) * 3.0 + 1.0).powi(2))
        .collect();
    let bound: Vec<f64> = want.iter().map(|v| 1e-5 * (1.0 + v.abs())).collect();
    let mut outputs = Vec::new();
    for desc in [InRegisters::DESCRIPTION, InMemory::DESCRIPTION] {
        let x = gpu.buffer_from_slice(&xs)?;
        let y = gpu.buffer_zeroed::<f32>(4096)?;
        poison_f32(&y);
        let mut g = BakedGraph::bake(&gpu, desc, &[("x", x.as_any()), ("y", y.as_any())])?;
        g.replay()?.wait()?;
        assert_within(&read(&y), &want, &bound, &desc.name);
        outputs.push((read(&y), g.fused().to_vec(), g.owned_bytes()));
    }
    let (fused, unfused) = (&outputs[0], &outputs[1]);
    assert_eq!(fused.0, unfused.0, "y in registers and in memory");
    let t = InRegisters::DESCRIPTION
        .buffers
        .iter()
        .position(|b| b.name == "t")
        .expect("t") as u32;
    assert_eq!(fused.1.len(), 1);
    assert_eq!(fused.1[0].registers, vec![t], "t kept in registers");
    // No memory in registers (the placeholder such buffers are bound to is not theirs), against the whole
    // buffer when it is not fused.
    assert_eq!((fused.2, unfused.2), (0, 4096 * 4), "bytes the graphs own");
    Ok(())
}

graph! {
    /// A pointwise chain whose middle kernel has two entry points and runs `go`.
    graph TwoEntries {
        buffers { x: [f32; 1000] = input, y: [f32; 1000] = inout, z: [f32; 1000] = output }
        kernel first(x: read, y: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = y[gid.x] + x[gid.x]; }
            }
        }
        kernel second(y: read, z: write) entry(go) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&z)) { z[gid.x] = y[gid.x]; }
            }
            @compute @workgroup_size(64)
            fn go(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {
                let i = g.x;
                if (i < arrayLength(&z) && l < 64u) { z[i] = 3.0 * y[i]; }
            }
        }
        kernel third(z: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&z)) { z[gid.x] = z[gid.x] - 1.0; }
            }
        }
    }
}

#[test]
fn bake_fuses_what_the_constant_lists_with_a_member_of_two_entry_points() -> Result<(), Error> {
    // The constant promises one kernel of all three; bake once made none of it, silently.
    assert_eq!(
        TwoEntries::FUSED,
        &[&[
            TwoEntriesNode::First,
            TwoEntriesNode::Second,
            TwoEntriesNode::Third
        ][..]]
    );
    let gpu = gpu();
    let mut rng = rng();
    let n = 1000;
    let xs = random_f32s(&mut rng, n);
    let ys = random_f32s(&mut rng, n);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_from_slice(&ys)?;
    let z = gpu.buffer_zeroed::<f32>(n)?;
    poison_f32(&z);
    let mut g = TwoEntries::bake(
        &gpu,
        TwoEntriesBuffers {
            x: &x,
            y: &y,
            z: &z,
        },
    )?;
    g.replay()?.wait()?;
    let names: Vec<Vec<String>> = g
        .untyped()
        .fused()
        .iter()
        .map(|f| f.names.clone())
        .collect();
    assert_eq!(names, vec![vec!["first", "second", "third"]]);
    assert!(
        g.untyped().fusion_declined().is_empty(),
        "{:?}",
        g.untyped().fusion_declined()
    );
    // `go` ran, not `main`: z = 3 (x + y) - 1.
    let want: Vec<f64> = (0..n)
        .map(|i| 3.0 * (f64::from(xs[i]) + f64::from(ys[i])) - 1.0)
        .collect();
    let bound: Vec<f64> = want.iter().map(|v| 1e-5 * (1.0 + v.abs())).collect();
    assert_within(&read(&z), &want, &bound, "z");
    Ok(())
}

/// Kernels over textures at their own texels, fused or not: `$attr` is `no_fusion` for the unfused twin.
macro_rules! texel_pipeline {
    ($name:ident $(#[$attr:ident])?) => {
        graph! {
            /// Grey and inverted from one frame (one fused kernel), then a mask from the grey (apart: it
            /// reads a texture the group writes).
            $(#[$attr])?
            graph $name {
                params { width: u32, height: u32 }
                textures {
                    frame: texture_2d<rgba8unorm> = input,
                    grey: texture_2d<r32float> = output,
                    inverted: texture_2d<rgba8unorm> = output,
                    mask: texture_2d<r32uint> = output,
                }
                kernel weigh(frame: read, grey: write) threads(params.width, params.height) {
                    @compute @workgroup_size(8, 8)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x >= params.width || gid.y >= params.height) { return; }
                        let c = textureLoad(frame, vec2<i32>(gid.xy), 0);
                        textureStore(grey, gid.xy, vec4<f32>(0.25 * c.r + 0.5 * c.g + 0.25 * c.b, 0.0, 0.0, 1.0));
                    }
                }
                kernel invert(frame: read, inverted: write) threads(params.width, params.height) {
                    @compute @workgroup_size(8, 8)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x >= params.width || gid.y >= params.height) { return; }
                        let c = textureLoad(frame, gid.xy, 0);
                        textureStore(inverted, vec2<u32>(gid.x, gid.y), vec4<f32>(1.0 - c.rgb, c.a));
                    }
                }
                kernel threshold(grey: read, mask: write) threads(params.width, params.height) {
                    @compute @workgroup_size(8, 8)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x >= params.width || gid.y >= params.height) { return; }
                        let bright = textureLoad(grey, gid.xy, 0).r > 0.5;
                        textureStore(mask, gid.xy, vec4<u32>(select(0u, 1u, bright), 0u, 0u, 1u));
                    }
                }
            }
        }
    };
}

texel_pipeline!(FusedTexels);
texel_pipeline!(UnfusedTexels #[no_fusion]);

#[test]
fn kernels_at_their_own_texels_fused_give_what_the_unfused_graph_and_the_cpu_give()
-> Result<(), Error> {
    // By declaration: the two kernels reading only the frame; not the threshold, which reads `grey`.
    assert_eq!(
        FusedTexels::FUSED,
        &[&[FusedTexelsNode::Weigh, FusedTexelsNode::Invert][..]]
    );
    assert!(UnfusedTexels::FUSED.is_empty());
    let gpu = gpu();
    let mut rng = rng();
    let (width, height) = (37u32, 23u32);
    let size = [width, height, 1];
    let pixels: Vec<u8> = (0..width * height * 4)
        .map(|_| random_u32(&mut rng, 256) as u8)
        .collect();
    let texel = |p: &[u8], k: usize| f32::from(p[k]) / 255.0;
    let want_grey: Vec<f32> = pixels
        .chunks(4)
        .map(|p| 0.25 * texel(p, 0) + 0.5 * texel(p, 1) + 0.25 * texel(p, 2))
        .collect();
    // unorm8 of 1 - c, c = byte / 255: exactly the byte 255 - b.
    let want_inverted: Vec<u8> = pixels
        .chunks(4)
        .flat_map(|p| [255 - p[0], 255 - p[1], 255 - p[2], p[3]])
        .collect();
    for fused in [true, false] {
        let desc = if fused {
            FusedTexels::DESCRIPTION
        } else {
            UnfusedTexels::DESCRIPTION
        };
        let frame = gpu.texture("texture_2d<rgba8unorm>", size)?;
        let grey = gpu.texture("texture_2d<r32float>", size)?;
        let inverted = gpu.texture("texture_2d<rgba8unorm>", size)?;
        let mask = gpu.texture("texture_2d<r32uint>", size)?;
        let mut g = BakedGraph::bake_with_textures(
            &gpu,
            desc,
            &[],
            &[
                ("frame", &frame),
                ("grey", &grey),
                ("inverted", &inverted),
                ("mask", &mask),
            ],
        )?;
        let names: Vec<Vec<String>> = g.fused().iter().map(|f| f.names.clone()).collect();
        let want_names: Vec<Vec<String>> = if fused {
            vec![vec!["weigh".into(), "invert".into()]]
        } else {
            Vec::new()
        };
        assert_eq!(names, want_names);
        g.set_param("width", width)?;
        g.set_param("height", height)?;
        frame.write(&pixels)?;
        // Each recorder in turn (the native one where the device has it).
        for native in [true, false] {
            if !common::use_recorder(&mut g, &gpu, native) {
                continue;
            }
            let what = format!(
                "{} on the {} recorder",
                if fused { "fused" } else { "unfused" },
                g.recorder()
            );
            for (texture, byte) in [(&grey, 0xff), (&inverted, 0x5a), (&mask, 0xee)] {
                let len = texture.read_blocking()?.len();
                texture.write(&vec![byte; len])?;
            }
            g.replay()?.wait()?;
            let got_grey: Vec<f32> = bytemuck::cast_slice(&grey.read_blocking()?).to_vec();
            for (i, (got, want)) in got_grey.iter().zip(&want_grey).enumerate() {
                assert!(
                    (got - want).abs() <= 1e-6,
                    "{what}: grey[{i}] {got}, CPU {want}"
                );
            }
            assert_eq!(inverted.read_blocking()?, want_inverted, "{what}: inverted");
            let got_mask: Vec<u32> = bytemuck::cast_slice(&mask.read_blocking()?).to_vec();
            for (i, (m, g)) in got_mask.chunks(1).zip(&got_grey).enumerate() {
                assert_eq!(m[0], u32::from(*g > 0.5), "{what}: mask[{i}] of grey {g}");
            }
        }
    }
    Ok(())
}

/// An update fuses again over what it binds: a rebind of `z` to a buffer of another length takes `square`
/// (dispatched over `z`) out of the group over `y`'s length, and a rebind back puts it in; an update that
/// changes nothing keeps the groups. (A rebuild takes the previous fusion whole only when the description,
/// the lengths and the binding limit are all the same.)
#[test]
fn an_update_fuses_again_over_the_lengths_it_binds() -> Result<(), Error> {
    let gpu = gpu();
    let n = 1000;
    let x = gpu.buffer_from_slice(&vec![1.0f32; n])?;
    let y = gpu.buffer_from_slice(&vec![2.0f32; n])?;
    let (z, w) = (gpu.buffer_zeroed::<f32>(n)?, gpu.buffer_zeroed::<f32>(n)?);
    let shorter = gpu.buffer_zeroed::<f32>(n - 1)?;
    let bindings = [
        ("x", x.as_any()),
        ("y", y.as_any()),
        ("z", z.as_any()),
        ("w", w.as_any()),
    ];
    let mut g = BakedGraph::bake(&gpu, Fused::DESCRIPTION, &bindings)?;
    let names = |g: &BakedGraph| -> Vec<Vec<String>> {
        g.fused().iter().map(|f| f.names.clone()).collect()
    };
    let with_square = names(&g);
    assert_eq!(with_square[0], ["mix", "half", "square"]);
    g.rebind("z", shorter.as_any())?;
    assert_eq!(names(&g)[0], ["mix", "half"], "z of another length");
    g.rebind("z", z.as_any())?;
    assert_eq!(names(&g), with_square, "z back");
    g.update(Fused::DESCRIPTION.clone())?;
    assert_eq!(names(&g), with_square, "the same description");
    Ok(())
}
