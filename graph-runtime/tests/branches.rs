//! `if .. else` and `switch` decided on the GPU (CUDA 12.8's IF/ELSE and SWITCH conditional nodes): one gate
//! per block writes the dispatch arguments of the branch that runs and zeros for the rest. From the macro,
//! the builder and a graph file, on both recorders, against the CPU, with outputs poisoned first.

#![forbid(unsafe_code)]

mod common;

use common::{assert_close, gpu, poison_f32, random_f32s, read, rng, use_recorder};
use graph_runtime::ir::AccessMode;
use graph_runtime::{BakedGraph, Buffer, Error, GraphBuilder, KernelSpec, LIBRARY, graph};

/// `flag = x[0] > 0`, `pick = floor(|x[1]| * 5) % 5`: 0 to 4, where 3 and 4 have no arm of their own.
const DECIDE: &str = "@compute @workgroup_size(1)
fn main() {
    flag[0] = select(0u, 1u, x[0] > 0.0);
    pick[0] = u32(abs(x[1]) * 5.0) % 5u;
}";

graph! {
    /// `dst = -src`: a subgraph in an arm.
    graph Negated {
        buffers { src: [f32] = input, dst: [f32] = output }
        kernel flip(src: read, dst: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&dst)) { dst[gid.x] = -src[gid.x]; }
            }
        }
    }
}

graph! {
    /// `y = 2x` if `x[0] > 0`, else `y = -x`; then `z` by the arm `pick` chooses: `y + 1`, `y * y`, a copy of
    /// `y`, `-y` by a subgraph, or 7 (the default arm).
    graph Branches {
        buffers { x: [f32] = input, y: [f32] = output, z: [f32] = output, flag: [u32; 1], pick: [u32; 1] }
        kernel decide(x: read, flag: write, pick: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() {
                flag[0] = select(0u, 1u, x[0] > 0.0);
                pick[0] = u32(abs(x[1]) * 5.0) % 5u;
            }
        }
        if positive(flag) {
            kernel double(x: read, y: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
                }
            }
        } else {
            kernel negate(x: read, y: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&y)) { y[gid.x] = -x[gid.x]; }
                }
            }
        }
        switch choose(pick) {
            0 => {
                kernel plus(y: read, z: write) {
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < arrayLength(&z)) { z[gid.x] = y[gid.x] + 1.0; }
                    }
                }
            }
            1 => {
                kernel square(y: read, z: write) {
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < arrayLength(&z)) { z[gid.x] = y[gid.x] * y[gid.x]; }
                    }
                }
            }
            2 => { copy same(y -> z); }
            3 => { subgraph negated = Negated(src: y: read, dst: z: write); }
            _ => { fill seven(z = 7.0); }
        }
    }
}

/// What `Branches` computes, on the CPU: `(y, z)`.
fn expected(xs: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let y: Vec<f32> = match xs[0] > 0.0 {
        true => xs.iter().map(|x| 2.0 * x).collect(),
        false => xs.iter().map(|x| -x).collect(),
    };
    let z = match (xs[1].abs() * 5.0) as u32 % 5 {
        0 => y.iter().map(|v| v + 1.0).collect(),
        1 => y.iter().map(|v| v * v).collect(),
        2 => y.clone(),
        3 => y.iter().map(|v| -v).collect(),
        _ => vec![7.0; y.len()],
    };
    (y, z)
}

/// Inputs that take each way: `x[0]` of both signs, `x[1]` picking each arm (4: the default).
fn inputs(n: usize) -> Vec<Vec<f32>> {
    let mut rng = rng();
    let mut all = Vec::new();
    for (sign, arm) in [
        (1.0, 0),
        (-1.0, 1),
        (1.0, 2),
        (-1.0, 3),
        (1.0, 4),
        (-1.0, 0),
    ] {
        let mut xs = random_f32s(&mut rng, n);
        xs[0] = sign * (0.5 + xs[0].abs());
        xs[1] = (arm as f32 + 0.5) / 5.0;
        all.push(xs);
    }
    all
}

/// Replays (by `replay`, which says its recorder) over each of [`inputs`], checking `y` and `z`.
fn run_all(
    mut replay: impl FnMut() -> Result<&'static str, Error>,
    (x, y, z): (&Buffer<f32>, &Buffer<f32>, &Buffer<f32>),
    what: &str,
) -> Result<(), Error> {
    for xs in inputs(x.len()) {
        x.write(&xs)?;
        poison_f32(y);
        poison_f32(z);
        let recorder = replay()?;
        let (want_y, want_z) = expected(&xs);
        let case = format!("{what} {recorder} x[0]={} x[1]={}", xs[0], xs[1]);
        assert_close(&read(y), &want_y, &format!("{case}: y"));
        assert_close(&read(z), &want_z, &format!("{case}: z"));
    }
    Ok(())
}

#[test]
fn if_else_and_switch_run_the_branch_the_gpu_picks() -> Result<(), Error> {
    let gpu = gpu();
    let n = 500;
    let x = gpu.buffer_zeroed::<f32>(n)?;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    let z = gpu.buffer_zeroed::<f32>(n)?;
    for native in [true, false] {
        let mut g = Branches::bake(
            &gpu,
            BranchesBuffers {
                x: &x,
                y: &y,
                z: &z,
            },
        )?;
        if !use_recorder(&mut g, &gpu, native) {
            continue;
        }
        let replay = || {
            g.replay()?.wait()?;
            Ok(g.untyped().recorder())
        };
        run_all(replay, (&x, &y, &z), "macro")?;
    }
    Ok(())
}

/// The same graph through the builder.
fn built() -> GraphBuilder {
    let wgsl = |body: &str, out: &str| {
        format!(
            "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    \
             if (gid.x < arrayLength(&{out})) {{ {body} }}\n}}"
        )
    };
    let kernel = |body: &str, (input, out): (&str, &str)| {
        KernelSpec::wgsl(wgsl(body, out))
            .bind(input, input, AccessMode::Read)
            .bind(out, out, AccessMode::Write)
    };
    let mut b = GraphBuilder::new("Branches");
    b.input("x", "f32")
        .output("y", "f32")
        .output("z", "f32")
        .owned("flag", "u32", 1)
        .owned("pick", "u32", 1);
    b.kernel(
        "decide",
        KernelSpec::wgsl(DECIDE)
            .bind("x", "x", AccessMode::Read)
            .bind("flag", "flag", AccessMode::Write)
            .bind("pick", "pick", AccessMode::Write)
            .workgroups(&["1"]),
    )
    .kernel("double", kernel("y[gid.x] = 2.0 * x[gid.x];", ("x", "y")))
    .kernel("negate", kernel("y[gid.x] = -x[gid.x];", ("x", "y")))
    .if_else("positive", "flag", &["double"], &["negate"])
    .kernel("plus", kernel("z[gid.x] = y[gid.x] + 1.0;", ("y", "z")))
    .kernel(
        "square",
        kernel("z[gid.x] = y[gid.x] * y[gid.x];", ("y", "z")),
    )
    .copy("same", "y", "z")
    .subgraph(
        "negated",
        Negated::DESCRIPTION,
        &[
            ("src", "y", AccessMode::Read),
            ("dst", "z", AccessMode::Write),
        ],
    )
    .fill("seven", "z", "7.0")
    .switch(
        "choose",
        "pick",
        &[
            (Some(0), &["plus"]),
            (Some(1), &["square"]),
            (Some(2), &["same"]),
            (Some(3), &["negated"]),
            (None, &["seven"]),
        ],
    );
    b
}

#[test]
fn built_and_loaded_branches_describe_the_same_blocks_and_compute_the_same()
-> Result<(), Box<dyn std::error::Error>> {
    let b = built();
    let desc = b.build(&LIBRARY)?;
    // The blocks say the same as the macro's: members, branches, arm values.
    assert_eq!(desc.blocks, Branches::DESCRIPTION.blocks);
    let positive = &desc.blocks[0];
    assert_eq!(positive.cases, None);
    assert_eq!(&*positive.branches, &[0, 1]);
    let choose = &desc.blocks[1];
    assert_eq!(choose.cases.as_deref(), Some(&[0, 1, 2, 3][..]));
    // A graph file holds both, and describes the same.
    let text = graph_runtime::file::to_json(b.graph());
    assert!(
        text.contains("\"else\"") && text.contains("\"switch\""),
        "{text}"
    );
    let loaded = graph_runtime::file::from_json(&text)?;
    let described = graph_runtime::pipeline::describe_graph_with(loaded, &LIBRARY, b.subgraphs())?;
    assert_eq!(described, desc);
    let gpu = gpu();
    let n = 333;
    let x = gpu.buffer_zeroed::<f32>(n)?;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    let z = gpu.buffer_zeroed::<f32>(n)?;
    for native in [true, false] {
        let mut g = BakedGraph::bake(
            &gpu,
            desc.clone(),
            &[("x", x.as_any()), ("y", y.as_any()), ("z", z.as_any())],
        )?;
        if !use_recorder(&mut g, &gpu, native) {
            continue;
        }
        let replay = || {
            g.replay()?.wait()?;
            Ok(g.recorder())
        };
        run_all(replay, (&x, &y, &z), "built")?;
    }
    Ok(())
}
