//! Nodes turned off and on again after bake (CUDA's `cudaGraphNodeSetEnabled`): kernels, fills, copies and
//! whole subgraphs, without a re-bake, on both recorders, against the CPU; edges keep ordering the rest, and
//! a kernel that runs fused with others is split out of its group the first time it is turned off.

#![forbid(unsafe_code)]

mod common;

use common::{assert_close, gpu, random_f32s, read, rng, use_recorder};
use graph_runtime::ir::AccessMode;
use graph_runtime::{BakedGraph, Error, GraphBuilder, KernelSpec, LIBRARY, graph};

graph! {
    /// `v = 2 v + 1`.
    graph Double {
        buffers { v: [f32] = inout }
        kernel grow(v: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&v)) { v[gid.x] = 2.0 * v[gid.x] + 1.0; }
            }
        }
    }
}

graph! {
    /// `y = 1`, then `y = y + x`, `y = y * a` (two kernels kept out of fusion), `z = y`, `w = 2 w + 1` by a
    /// subgraph, and `u = u * u + a` then `u = u - 1`, which fuse.
    graph Toggles {
        params { a: f32 }
        buffers { x: [f32] = input, y: [f32] = inout, z: [f32] = inout, w: [f32] = inout, u: [f32] = inout }
        fill reset(y = 1.0);
        #[no_fusion]
        kernel add(x: read, y: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = y[gid.x] + x[gid.x]; }
            }
        }
        #[no_fusion]
        kernel scale(y: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = y[gid.x] * params.a; }
            }
        }
        copy keep(y -> z);
        subgraph twice = Double(v: w: read_write);
        kernel square(u: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&u)) { u[gid.x] = u[gid.x] * u[gid.x] + params.a; }
            }
        }
        kernel less(u: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&u)) { u[gid.x] = u[gid.x] - 1.0; }
            }
        }
    }
}

/// Which of `Toggles`' switchable nodes run.
#[derive(Debug, Clone, Copy)]
struct On {
    reset: bool,
    add: bool,
    scale: bool,
    keep: bool,
    twice: bool,
    square: bool,
}

/// What a replay of `Toggles` leaves in `(y, z, w, u)`, from what they held before it, on the CPU.
fn expected(
    on: On,
    x: &[f32],
    a: f32,
    (y, z, w, u): (&[f32], &[f32], &[f32], &[f32]),
) -> [Vec<f32>; 4] {
    let mut y = y.to_vec();
    let mut z = z.to_vec();
    let mut w = w.to_vec();
    for i in 0..y.len() {
        if on.reset {
            y[i] = 1.0;
        }
        if on.add {
            y[i] += x[i];
        }
        if on.scale {
            y[i] *= a;
        }
        if on.keep {
            z[i] = y[i];
        }
        if on.twice {
            w[i] = 2.0 * w[i] + 1.0;
        }
    }
    let u = u
        .iter()
        .map(|&v| if on.square { v * v + a } else { v } - 1.0)
        .collect();
    [y, z, w, u]
}

#[test]
fn nodes_turned_off_run_nothing_and_on_again_run_without_a_bake() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 700;
    let xs = random_f32s(&mut rng, n);
    let x = gpu.buffer_from_slice(&xs)?;
    let bufs: Vec<_> = (0..4)
        .map(|_| gpu.buffer_zeroed::<f32>(n))
        .collect::<Result<_, _>>()?;
    let (y, z, w, u) = (&bufs[0], &bufs[1], &bufs[2], &bufs[3]);
    assert!(
        Toggles::FUSED
            .iter()
            .any(|g| g.contains(&TogglesNode::Square) && g.contains(&TogglesNode::Less)),
        "the test needs `square` and `less` fused: {:?}",
        Toggles::FUSED
    );
    let all = On {
        reset: true,
        add: true,
        scale: true,
        keep: true,
        twice: true,
        square: true,
    };
    // Each node off alone, two at once, all off, then all on again: every one seen running and not.
    let steps = [
        all,
        On {
            reset: false,
            ..all
        },
        On { add: false, ..all },
        On {
            scale: false,
            keep: false,
            ..all
        },
        On {
            twice: false,
            ..all
        },
        On {
            square: false,
            ..all
        },
        all,
        On {
            reset: false,
            add: false,
            scale: false,
            keep: false,
            twice: false,
            square: false,
        },
        all,
    ];
    for native in [true, false] {
        let mut g = Toggles::bake(&gpu, TogglesBuffers { x: &x, y, z, w, u })?;
        if !use_recorder(&mut g, &gpu, native) {
            continue;
        }
        let a = 1.0 + random_f32s(&mut rng, 1)[0];
        g.params_mut().a = a;
        let mut split = false;
        for on in steps {
            let set = [
                (TogglesToggle::Reset, on.reset),
                (TogglesToggle::Add, on.add),
                (TogglesToggle::Scale, on.scale),
                (TogglesToggle::Keep, on.keep),
                (TogglesToggle::Twice, on.twice),
                (TogglesToggle::Square, on.square),
            ];
            for (node, enabled) in set {
                g.set_enabled(node, enabled)?;
                assert_eq!(g.is_enabled(node), enabled);
            }
            // Fresh values everywhere: what a node turned off leaves is what was there.
            let before: Vec<Vec<f32>> = (0..4).map(|_| random_f32s(&mut rng, n)).collect();
            for (buffer, data) in bufs.iter().zip(&before) {
                buffer.write(data)?;
            }
            // Once `square` was turned off, it runs apart from `less` (split out of the group).
            let fused_square = g.untyped().fused().iter().any(|group| {
                group.names.iter().any(|n| n == "square") && group.names.iter().any(|n| n == "less")
            });
            split |= !on.square;
            assert_eq!(fused_square, !split, "{on:?}");
            g.replay()?.wait()?;
            let want = expected(on, &xs, a, (&before[0], &before[1], &before[2], &before[3]));
            let what = format!("{} {on:?}", g.untyped().recorder());
            for ((name, buffer), want) in ["y", "z", "w", "u"].iter().zip(&bufs).zip(&want) {
                assert_close(&read(buffer), want, &format!("{what}: {name}"));
            }
        }
    }
    Ok(())
}

#[test]
fn only_nodes_that_can_be_turned_off_alone_are_turned_off() -> Result<(), Error> {
    let gpu = gpu();
    let n = 64;
    let x = gpu.buffer_zeroed::<f32>(n)?;
    let bufs: Vec<_> = (0..4)
        .map(|_| gpu.buffer_zeroed::<f32>(n))
        .collect::<Result<_, _>>()?;
    let bindings = [
        ("x", x.as_any()),
        ("y", bufs[0].as_any()),
        ("z", bufs[1].as_any()),
        ("w", bufs[2].as_any()),
        ("u", bufs[3].as_any()),
    ];
    let mut g = BakedGraph::bake(&gpu, Toggles::DESCRIPTION, &bindings)?;
    // A subgraph's own kernel by its flattened name, and the whole subgraph by its node.
    g.set_enabled("twice.grow", false)?;
    assert!(!g.is_enabled("twice.grow")?);
    g.set_enabled("twice", true)?;
    assert!(
        g.is_enabled("twice.grow")?,
        "turning the subgraph on turns its nodes on"
    );
    let unknown = g.set_enabled("nope", false).err().map(|e| e.to_string());
    assert!(
        unknown.as_deref().is_some_and(|t| t.contains("`nope`")),
        "{unknown:?}"
    );

    // Host tasks, uploads and readbacks cannot be turned off, nor a subgraph holding one.
    let mut child = GraphBuilder::new("Child");
    child
        .input("v", "f32")
        .host("look", &[("v", AccessMode::Read)]);
    let child = child.build(&LIBRARY)?;
    let mut b = GraphBuilder::new("Parent");
    b.inout("v", "f32")
        .upload("load", "v")
        .kernel(
            "bump",
            KernelSpec::wgsl(
                "@compute @workgroup_size(64)
                 fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                     if (gid.x < arrayLength(&v)) { v[gid.x] = v[gid.x] + 1.0; }
                 }",
            )
            .bind("v", "v", AccessMode::ReadWrite),
        )
        .subgraph("looks", &child, &[("v", "v", AccessMode::Read)])
        .readback("out", "v");
    let mut g = BakedGraph::bake(&gpu, b.build(&LIBRARY)?, &[("v", x.as_any())])?;
    for node in ["load", "out", "looks.look"] {
        let refused = g.set_enabled(node, false).err();
        assert!(
            matches!(refused, Some(Error::NotANode { .. })),
            "{node}: {refused:?}"
        );
    }
    let holds = g.set_enabled("looks", false).err().map(|e| e.to_string());
    assert!(
        holds
            .as_deref()
            .is_some_and(|t| t.contains("`looks`") && t.contains("looks.look")),
        "{holds:?}"
    );
    g.set_enabled("bump", false)?;
    Ok(())
}

graph! {
    /// `y = 2 (x + 1)` through graph-owned `t`, then `z = 3x` through graph-owned `s`: `t` (steps 0-1) and
    /// `s` (steps 2-3) share memory, until `bump` (which writes `t`) is turned off.
    #[no_fusion]
    graph Shared {
        buffers { x: [f32; 256] = input, y: [f32; 256] = output, z: [f32; 256] = output, t: [f32; 256], s: [f32; 256] }
        kernel bump(x: read, t: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { t[gid.x] = x[gid.x] + 1.0; }
        }
        kernel twice(t: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { y[gid.x] = 2.0 * t[gid.x]; }
        }
        kernel triple(y: read, x: read, s: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { s[gid.x] = 3.0 * x[gid.x] + 0.0 * y[gid.x]; }
        }
        kernel keep(s: read, z: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { z[gid.x] = s[gid.x]; }
        }
    }
}

#[test]
fn a_buffer_a_node_turned_off_writes_keeps_what_it_held_and_no_other_buffers_bytes()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 256;
    let index = |name: &str| {
        Shared::DESCRIPTION
            .buffers
            .iter()
            .position(|b| b.name == name)
    };
    let (t, s) = (index("t").expect("t"), index("s").expect("s"));
    for native in [true, false] {
        let x = gpu.buffer_zeroed::<f32>(n)?;
        let y = gpu.buffer_zeroed::<f32>(n)?;
        let z = gpu.buffer_zeroed::<f32>(n)?;
        let mut g = Shared::bake(
            &gpu,
            SharedBuffers {
                x: &x,
                y: &y,
                z: &z,
            },
        )?;
        if !use_recorder(&mut g, &gpu, native) {
            continue;
        }
        let plan = g.untyped().memory_plan();
        let shares = |plan: &graph_runtime::memory::MemoryPlan| match (
            plan.placements[t],
            plan.placements[s],
        ) {
            (Some(pt), Some(ps)) => pt.shares_memory(&ps),
            _ => false,
        };
        assert!(
            shares(plan),
            "the test needs `t` and `s` to share memory at bake"
        );
        let first = random_f32s(&mut rng, n);
        x.write(&first)?;
        g.replay()?.wait()?;
        g.set_enabled(SharedToggle::Bump, false)?;
        assert!(
            !shares(g.untyped().memory_plan()),
            "`t` keeps memory of its own once `bump` is off"
        );
        // `t` holds nothing `bump` wrote since the rebuild: zeros, and never `s`'s bytes.
        let second = random_f32s(&mut rng, n);
        x.write(&second)?;
        g.replay()?.wait()?;
        g.set_enabled(SharedToggle::Bump, true)?;
        x.write(&first)?;
        g.replay()?.wait()?;
        let want: Vec<f32> = first.iter().map(|v| 2.0 * (v + 1.0)).collect();
        assert_close(&read(&y), &want, "bump on again");
        // Off once more: no rebuild now, and `t` holds what `bump` wrote last.
        g.set_enabled(SharedToggle::Bump, false)?;
        x.write(&second)?;
        g.replay()?.wait()?;
        assert_close(&read(&y), &want, "bump off: what it wrote last");
        let tripled: Vec<f32> = second.iter().map(|v| 3.0 * v).collect();
        assert_close(&read(&z), &tripled, "the rest runs");
    }
    Ok(())
}
