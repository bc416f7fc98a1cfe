//! GPU tests in a browser, on WebGPU: `cargo xtask test --web` runs them with `wasm-bindgen-test` in headless
//! Chromium (SwiftShader). Everything is awaited: the web cannot block. Each test compares against the CPU on
//! fresh random inputs (the seed is printed), with outputs poisoned first: the front doors' agreement, fusion,
//! transfers, alternatives, GPU-side control flow, updates, host tasks between partitions, and what blocking
//! calls say there.

#![cfg(target_arch = "wasm32")]
#![forbid(unsafe_code)]

mod host_chain;

use graph_runtime::{BakedGraph, Buffer, Error, Gpu, GraphBuilder, KernelSpec, LIBRARY, graph};
use graph_runtime::{kernels::cpu, pipeline};
use host_chain::{Chain, HostChain, expected};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// The browser's WebGPU adapter, or a failure that says how to get one.
async fn gpu() -> Gpu {
    match Gpu::new().await {
        Ok(gpu) => {
            console_log!("adapter: {}", gpu.summary());
            gpu
        }
        Err(e) => panic!(
            "the web tests need WebGPU and found no adapter: {e}. Headless Chromium offers SwiftShader's only \
             with `--enable-unsafe-webgpu` (see xtask/web/webdriver.json)"
        ),
    }
}

/// A xorshift generator seeded from the browser's clock and `Math.random`, its seed printed.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = (js_sys::Math::random() * 2f64.powi(53)) as u64 ^ js_sys::Date::now() as u64;
        console_log!("seed: {seed}");
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A whole number in `0..below`.
    fn below(&mut self, below: u32) -> u32 {
        (self.next() % u64::from(below)) as u32
    }

    /// `n` values in `-1..1`, each a multiple of 2^-10: sums and products of a few stay exact in `f32`.
    fn values(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| (self.below(2048) as f32 - 1024.0) / 1024.0)
            .collect()
    }
}

/// A buffer of `len` NaNs: an output no one wrote shows.
fn poisoned(gpu: &Gpu, len: usize) -> Buffer<f32> {
    gpu.buffer_from_slice(&vec![f32::NAN; len])
        .expect("a poisoned buffer")
}

/// Whether `got` is `want`, element by element within `tolerance` (relative above 1); the first difference
/// otherwise.
fn differs(got: &[f32], want: &[f32], tolerance: f32) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements for {}", got.len(), want.len()));
    }
    got.iter().zip(want).enumerate().find_map(|(i, (g, w))| {
        let close = (g - w).abs() <= tolerance * w.abs().max(1.0);
        (!close).then(|| format!("[{i}]: GPU {g}, CPU {w}"))
    })
}

fn assert_close(got: &[f32], want: &[f32], tolerance: f32, what: &str) {
    if let Some(difference) = differs(got, want, tolerance) {
        panic!("{what}: {difference}");
    }
}

/// The checker's positive control: it reports a difference in one element, a NaN and a short result.
#[wasm_bindgen_test]
fn the_checker_sees_a_difference() {
    let want = [1.0, 2.0, 3.0];
    assert!(differs(&[1.0, 2.0, 3.0], &want, 0.0).is_none());
    assert!(differs(&[1.0, 2.5, 3.0], &want, 1e-3).is_some());
    assert!(differs(&[1.0, f32::NAN, 3.0], &want, 1e-3).is_some());
    assert!(differs(&[1.0, 2.0], &want, 1e-3).is_some());
}

graph! {
    /// y = a*x + y, then y scaled by 2.
    graph Saxpy {
        params { a: f32, n: u32 }
        buffers { x: [f32] = input, y: [f32] = inout }
        kernel axpy(x: read, y: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < params.n) { y[i] = params.a * x[i] + y[i]; }
            }
        }
        kernel twice = kernels::scale(data: y, alpha: 2.0);
        readback out(y);
    }
}

/// [`Saxpy`] through the builder.
fn saxpy_built() -> GraphBuilder {
    let mut b = GraphBuilder::new("Saxpy");
    b.param("a", "f32").param("n", "u32");
    b.input("x", "f32").inout("y", "f32");
    let axpy = KernelSpec::wgsl(
        "@compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
             let i = gid.x;
             if (i < params.n) { y[i] = params.a * x[i] + y[i]; }
         }",
    );
    b.kernel(
        "axpy",
        axpy.read("x").read_write("y").threads(&["params.n"]),
    );
    b.library("twice", "scale", &[("data", "y")], &[("alpha", "2.0")]);
    b.readback("out", "y");
    b
}

#[wasm_bindgen_test]
async fn the_macro_the_builder_and_a_file_give_one_graph_and_one_result() {
    let gpu = gpu().await;
    let mut rng = Rng::new();
    // The builder's description, and a file's: the same nodes and buffers as the macro's.
    let built = saxpy_built();
    let desc = built.build(&LIBRARY).expect("the built graph checks");
    let loaded = graph_runtime::file::from_json(&graph_runtime::file::to_json(built.graph()))
        .expect("the saved graph loads");
    let described = pipeline::describe_graph(loaded, &LIBRARY).expect("the loaded graph checks");
    assert_eq!(described, desc);
    let shape = |d: &graph_runtime::GraphDesc| {
        let nodes: Vec<String> = d.nodes.iter().map(|n| n.name.to_string()).collect();
        let buffers: Vec<String> = d.buffers.iter().map(|b| b.name.to_string()).collect();
        (nodes, buffers, d.edges.len())
    };
    assert_eq!(shape(&desc), shape(Saxpy::DESCRIPTION));

    let n = 1 + rng.below(3000) as usize;
    let (xs, ys) = (rng.values(n), rng.values(n));
    let a = 0.75;
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| (a * x + y) * 2.0).collect();
    let x = gpu.buffer_from_slice(&xs).expect("x");

    // From the macro.
    let y = gpu.buffer_from_slice(&ys).expect("y");
    let mut g = Saxpy::bake(&gpu, SaxpyBuffers { x: &x, y: &y }).expect("bake");
    *g.params_mut() = SaxpyParams { a, n: n as u32 };
    let finished = g.replay().expect("replay").await.expect("the replay");
    assert_close(
        &finished.read(Saxpy::READBACKS.out).expect("out"),
        &want,
        0.0,
        "macro",
    );
    assert_close(&y.read().await.expect("y"), &want, 0.0, "macro's y");

    // From the builder and from the file.
    for (front, desc) in [("builder", desc), ("file", described)] {
        let y = gpu.buffer_from_slice(&ys).expect("y");
        let mut g =
            BakedGraph::bake(&gpu, desc, &[("x", x.as_any()), ("y", y.as_any())]).expect("bake");
        g.set_param("a", a).expect("a");
        g.set_param("n", n as u32).expect("n");
        let finished = g.replay().expect("replay").await.expect("the replay");
        assert_close(
            &finished.read_named::<f32>("out").expect("out"),
            &want,
            0.0,
            front,
        );
    }
}

graph! {
    /// Pointwise kernels that fuse into one dispatch, then a stencil that does not.
    graph Pointwise {
        params { a: f32 }
        buffers { x: [f32] = input, y: [f32] = output, z: [f32] = output }
        kernel mix(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x] * params.a + 1.0; }
            }
        }
        kernel half = kernels::scale(data: y, alpha: 0.5);
        kernel spread(y: read, z: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                let n = arrayLength(&z);
                if (i < n) { z[i] = y[max(i, 1u) - 1u] + y[min(i + 1u, n - 1u)]; }
            }
        }
    }
}

#[wasm_bindgen_test]
async fn fused_kernels_give_what_the_cpu_gives() {
    assert!(
        Pointwise::FUSED.iter().any(|group| group.len() >= 2),
        "mix and half fuse: {:?}",
        Pointwise::FUSED
    );
    let gpu = gpu().await;
    let mut rng = Rng::new();
    let n = 2 + rng.below(5000) as usize;
    let xs = rng.values(n);
    let (y, z) = (poisoned(&gpu, n), poisoned(&gpu, n));
    let x = gpu.buffer_from_slice(&xs).expect("x");
    let mut g = Pointwise::bake(
        &gpu,
        PointwiseBuffers {
            x: &x,
            y: &y,
            z: &z,
        },
    )
    .expect("bake");
    g.params_mut().a = -1.5;
    g.replay().expect("replay").await.expect("the replay");
    let ys: Vec<f32> = xs.iter().map(|v| (v * -1.5 + 1.0) * 0.5).collect();
    let zs: Vec<f32> = (0..n)
        .map(|i| ys[i.max(1) - 1] + ys[(i + 1).min(n - 1)])
        .collect();
    assert_close(&y.read().await.expect("y"), &ys, 0.0, "y");
    assert_close(&z.read().await.expect("z"), &zs, 0.0, "z");
}

graph! {
    /// Data in, moved about on the GPU, data out, in one replay.
    graph Moves {
        buffers { a: [f32] = inout, b: [f32] = output, c: [f32] = output }
        upload fresh(a);
        copy across(a -> b);
        fill ones(c = 1.0);
        copy part(a[1..] -> c[..a.len() - 1]);
        readback early(b);
        readback late(c);
    }
}

#[wasm_bindgen_test]
async fn uploads_copies_fills_and_readbacks_move_exactly_their_data() {
    let gpu = gpu().await;
    let mut rng = Rng::new();
    let n = 2 + rng.below(4000) as usize;
    let (a, b, c) = (poisoned(&gpu, n), poisoned(&gpu, n), poisoned(&gpu, n));
    let mut g = Moves::bake(
        &gpu,
        MovesBuffers {
            a: &a,
            b: &b,
            c: &c,
        },
    )
    .expect("bake");
    // Two replays in flight, each with its own upload and its own readbacks.
    let (first, second) = (rng.values(n), rng.values(n));
    g.upload(Moves::UPLOADS.fresh, &first).expect("upload");
    let one = g.replay().expect("first replay");
    g.upload(Moves::UPLOADS.fresh, &second).expect("upload");
    let two = g.replay().expect("second replay");
    for (data, replay) in [(&first, one), (&second, two)] {
        let finished = replay.await.expect("the replay");
        let mut shifted = data[1..].to_vec();
        shifted.push(1.0);
        assert_close(
            &finished.read(Moves::READBACKS.early).expect("early"),
            data,
            0.0,
            "b",
        );
        assert_close(
            &finished.read(Moves::READBACKS.late).expect("late"),
            &shifted,
            0.0,
            "c",
        );
    }
    // A replay without its upload is refused, never stale data.
    assert!(matches!(g.replay(), Err(Error::UploadMissing { .. })));
}

graph! {
    /// Edges of a grey image by Sobel or by Scharr, switched after bake.
    graph Edges {
        params { width: u32, height: u32 }
        buffers { image: [f32] = input, gradient: [f32] = output }
        alternatives edge_filter {
            kernel sobel = kernels::sobel(input: image, output: gradient, width: params.width, height: params.height);
            kernel scharr = kernels::scharr(input: image, output: gradient, width: params.width, height: params.height);
        }
    }
}

#[wasm_bindgen_test]
async fn alternatives_switch_without_a_rebake() {
    let gpu = gpu().await;
    let mut rng = Rng::new();
    let (w, h) = (3 + rng.below(60) as usize, 3 + rng.below(40) as usize);
    let pixels = rng.values(w * h);
    let image = gpu.buffer_from_slice(&pixels).expect("image");
    let gradient = poisoned(&gpu, w * h);
    let mut g = Edges::bake(
        &gpu,
        EdgesBuffers {
            image: &image,
            gradient: &gradient,
        },
    )
    .expect("bake");
    *g.params_mut() = EdgesParams {
        width: w as u32,
        height: h as u32,
    };
    for scharr in [false, true, false] {
        let choice = if scharr {
            EdgesChoice::Scharr
        } else {
            EdgesChoice::Sobel
        };
        g.select(choice).expect("select");
        gradient.write(&vec![f32::NAN; w * h]).expect("poison");
        g.replay().expect("replay").await.expect("the replay");
        let mut want = vec![0.0; w * h];
        if scharr {
            cpu::scharr(&pixels, &mut want, w, h);
        } else {
            cpu::sobel(&pixels, &mut want, w, h);
        }
        assert_close(
            &gradient.read().await.expect("gradient"),
            &want,
            1e-5,
            "gradient",
        );
    }
}

graph! {
    /// Halves `x[0]` until it is below 1, at most 100 times, and doubles `y` only when `x[0]` started
    /// positive: a loop and a branch the GPU decides.
    graph Decides {
        buffers { x: [f32; 1] = inout, steps: [u32; 1] = output, y: [f32] = inout, going: [u32; 1], positive: [u32; 1] }
        kernel test(x: read, positive: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() { positive[0] = select(0u, 1u, x[0] > 0.0); }
        }
        if doubling(positive) {
            kernel double(y: read_write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * y[gid.x]; }
                }
            }
        }
        fill start(going = 1u);
        fill zero(steps = 0u);
        repeat halving(100, while: going) {
            kernel step(x: read_write, steps: read_write, going: write) workgroups(1) {
                @compute @workgroup_size(1)
                fn main() {
                    x[0] = x[0] * 0.5;
                    steps[0] = steps[0] + 1u;
                    going[0] = select(1u, 0u, x[0] < 1.0);
                }
            }
        }
        test -> start;
    }
}

#[wasm_bindgen_test]
async fn the_gpu_decides_branches_and_loops() {
    let gpu = gpu().await;
    let mut rng = Rng::new();
    for start in [-3.0f32, 1000.0 + rng.below(100_000) as f32, 0.5] {
        let n = 1 + rng.below(1000) as usize;
        let ys = rng.values(n);
        let x = gpu.buffer_from_slice(&[start]).expect("x");
        let steps = gpu.buffer_from_slice(&[u32::MAX]).expect("steps");
        let y = gpu.buffer_from_slice(&ys).expect("y");
        let mut g = Decides::bake(
            &gpu,
            DecidesBuffers {
                x: &x,
                steps: &steps,
                y: &y,
            },
        )
        .expect("bake");
        g.replay().expect("replay").await.expect("the replay");
        // The CPU: one halving at least (a `while` loop checks after its body), until below 1.
        let (mut value, mut count) = (start, 0u32);
        loop {
            value *= 0.5;
            count += 1;
            if value < 1.0 || count == 100 {
                break;
            }
        }
        assert_eq!(x.read().await.expect("x"), [value], "x from {start}");
        assert_eq!(
            steps.read().await.expect("steps"),
            [count],
            "steps from {start}"
        );
        let want: Vec<f32> = ys
            .iter()
            .map(|v| if start > 0.0 { 2.0 * v } else { *v })
            .collect();
        assert_close(&y.read().await.expect("y"), &want, 0.0, "y");
    }
}

#[wasm_bindgen_test]
async fn parameters_and_rebound_buffers_take_effect_without_a_rebake() {
    let gpu = gpu().await;
    let mut rng = Rng::new();
    let n = 1 + rng.below(2000) as usize;
    let (xs, ys) = (rng.values(n), rng.values(n));
    let x = gpu.buffer_from_slice(&xs).expect("x");
    let y = gpu.buffer_from_slice(&ys).expect("y");
    let mut g = Saxpy::bake(&gpu, SaxpyBuffers { x: &x, y: &y }).expect("bake");
    *g.params_mut() = SaxpyParams {
        a: 0.5,
        n: n as u32,
    };
    g.replay().expect("replay").await.expect("the replay");
    let once: Vec<f32> = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (0.5 * x + y) * 2.0)
        .collect();
    assert_close(&y.read().await.expect("y"), &once, 0.0, "first");

    // Other buffers, of another length, and another `a`.
    let m = 1 + rng.below(3000) as usize;
    let (xs, ys) = (rng.values(m), rng.values(m));
    let (x2, y2) = (
        gpu.buffer_from_slice(&xs).expect("x"),
        gpu.buffer_from_slice(&ys).expect("y"),
    );
    g.rebind(SaxpyBuffers { x: &x2, y: &y2 }).expect("rebind");
    *g.params_mut() = SaxpyParams {
        a: -2.0,
        n: m as u32,
    };
    let finished = g.replay().expect("replay").await.expect("the replay");
    let want: Vec<f32> = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (-2.0 * x + y) * 2.0)
        .collect();
    assert_close(
        &finished.read(Saxpy::READBACKS.out).expect("out"),
        &want,
        0.0,
        "rebound",
    );
    // The first buffers were left alone.
    assert_close(&y.read().await.expect("y"), &once, 0.0, "the old y");
}

#[wasm_bindgen_test]
async fn host_tasks_run_between_partitions_in_an_awaited_replay() {
    let gpu = gpu().await;
    let mut rng = Rng::new();
    let n = 1 + rng.below(3000) as usize;
    let xs = rng.values(n);
    let Chain { mut graph, a, out } = host_chain::bake(&gpu, &xs, 0.25).expect("bake");
    // `replay` would block between the partitions: refused before anything is submitted.
    let refused = graph.replay();
    assert!(
        matches!(refused.as_ref().map_err(Error::without_graph), Err(Error::Wait(why)) if why.contains("replay_async")),
        "{refused:?}"
    );
    assert!(out.read().await.expect("out").iter().all(|v| v.is_nan()));

    let finished = graph
        .replay_async()
        .await
        .expect("the replay up to its last partition")
        .await
        .expect("the replay");
    let got = finished.read(HostChain::READBACKS.result).expect("result");
    assert_close(&got, &expected(&xs, 0.25), 0.0, "result");

    // Again, over new data: the fetched copies are this replay's.
    let ys = rng.values(n);
    a.write(&ys).expect("a");
    let finished = graph
        .replay_async()
        .await
        .expect("the second replay up to its last partition")
        .await
        .expect("the second replay");
    let got = finished.read(HostChain::READBACKS.result).expect("result");
    assert_close(&got, &expected(&ys, 0.25), 0.0, "second result");
}

#[wasm_bindgen_test]
async fn blocking_calls_are_errors_that_name_the_awaited_way() {
    let gpu = gpu().await;
    let x = gpu.buffer_from_slice(&[1.0f32, 2.0]).expect("x");
    let y = gpu.buffer_from_slice(&[3.0f32, 4.0]).expect("y");
    let blocked = x.read_blocking();
    assert!(
        matches!(&blocked, Err(Error::Wait(why)) if why.contains(".await")),
        "{blocked:?}"
    );
    let mut g = Saxpy::bake(&gpu, SaxpyBuffers { x: &x, y: &y }).expect("bake");
    *g.params_mut() = SaxpyParams { a: 1.0, n: 2 };
    let blocked = g.replay().expect("replay").wait();
    assert!(
        matches!(blocked.as_ref().map_err(Error::without_graph), Err(Error::Wait(why)) if why.contains(".await")),
        "{blocked:?}"
    );
    // The replay ran all the same, and awaiting a read sees it.
    assert_eq!(y.read().await.expect("y"), [8.0, 12.0]);
}
