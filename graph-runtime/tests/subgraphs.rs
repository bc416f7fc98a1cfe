//! Subgraph nodes: a child graph bound into a parent, flattened at bake and replayed as part of it, from the
//! macro and from the builder alike, against a CPU reference.

#![forbid(unsafe_code)]

mod common;

use common::{assert_exact, gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::ir::AccessMode;
use graph_runtime::{BakedGraph, Error, GraphBuilder, KernelSpec, LIBRARY, graph};

graph! {
    /// `dst = (src + 1) * scale`, through a graph-owned intermediate.
    graph Shift {
        params { n: u32, scale: f32 }
        buffers { src: [f32] = input, dst: [f32] = output, tmp: [f32; 4096] }
        kernel plus_one(src: read, tmp: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { tmp[gid.x] = src[gid.x] + 1.0; }
            }
        }
        kernel times(tmp: read, dst: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { dst[gid.x] = tmp[gid.x] * params.scale; }
            }
        }
    }
}

graph! {
    /// `z = shift(shift(3x)) + 1`: the child twice, its parameters declared here in another order (so at
    /// other offsets), a node before it and one after it.
    graph Twice {
        params { bias: vec4<f32>, scale: f32, n: u32 }
        buffers { x: [f32] = input, z: [f32] = output, y: [f32; 4096], w: [f32; 4096] }
        kernel pre(x: read, y: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { y[gid.x] = 3.0 * x[gid.x]; }
            }
        }
        subgraph first = Shift(src: y: read, dst: w: write);
        subgraph second = Shift(src: w: read, dst: z: write);
        kernel post(z: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { z[gid.x] = z[gid.x] + params.bias.x; }
            }
        }
    }
}

fn expected(xs: &[f32], scale: f32, bias: f32) -> Vec<f32> {
    let shift = |v: f32| (v + 1.0) * scale;
    xs.iter().map(|&x| shift(shift(3.0 * x)) + bias).collect()
}

#[test]
fn a_macro_subgraph_runs_in_order_with_its_parents_parameters() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for len in [1, 2 + random_u32(&mut rng, 4000) as usize] {
        let xs = random_f32s(&mut rng, len);
        let x = gpu.buffer_from_slice(&xs)?;
        let z = gpu.buffer_zeroed::<f32>(len)?;
        let mut g = Twice::bake(&gpu, TwiceBuffers { x: &x, z: &z })?;
        for _ in 0..2 {
            poison_f32(&z);
            let (scale, bias) = (random_f32s(&mut rng, 1)[0], random_f32s(&mut rng, 1)[0]);
            *g.params_mut() = TwiceParams::new([bias, 0.0, 0.0, 0.0], scale, len as u32);
            g.replay()?.wait()?;
            assert_exact(&read(&z), &expected(&xs, scale, bias), "z");
        }
    }
    Ok(())
}

#[test]
fn a_flattened_subgraph_keeps_the_parents_indices_and_orders_around_the_child() {
    let flat = graph_runtime::pipeline::flatten(Twice::DESCRIPTION).expect("flattens");
    let names: Vec<&str> = flat.nodes.iter().map(|n| &*n.name).collect();
    assert_eq!(
        names,
        [
            "pre",
            "first",
            "second",
            "post",
            "first.plus_one",
            "first.times",
            "second.plus_one",
            "second.times"
        ]
    );
    let buffers: Vec<&str> = flat.buffers.iter().map(|b| &*b.name).collect();
    assert_eq!(buffers, ["x", "z", "y", "w", "first.tmp", "second.tmp"]);
    let order: Vec<&str> = flat
        .topological_order
        .iter()
        .map(|&n| names[n as usize])
        .collect();
    assert_eq!(
        order,
        [
            "pre",
            "first",
            "first.plus_one",
            "first.times",
            "second",
            "second.plus_one",
            "second.times",
            "post"
        ]
    );
}

/// The same two graphs through the builder.
fn built_twice() -> Result<graph_runtime::GraphDesc, graph_runtime::GraphErrors> {
    let kernel = |body: &str| {
        KernelSpec::wgsl(format!(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{ if (gid.x < params.n) {{ {body} }} }}"
        ))
        .threads(&["params.n"])
    };
    let mut child = GraphBuilder::new("Shift");
    child
        .param("n", "u32")
        .param("scale", "f32")
        .input("src", "f32")
        .output("dst", "f32")
        .owned("tmp", "f32", 4096);
    child.kernel(
        "plus_one",
        kernel("tmp[gid.x] = src[gid.x] + 1.0;")
            .read("src")
            .write("tmp"),
    );
    child.kernel(
        "times",
        kernel("dst[gid.x] = tmp[gid.x] * params.scale;")
            .read("tmp")
            .write("dst"),
    );
    let child = child.build(&LIBRARY)?;
    let mut parent = GraphBuilder::new("Twice");
    parent
        .param("bias", "vec4<f32>")
        .param("scale", "f32")
        .param("n", "u32")
        .input("x", "f32")
        .output("z", "f32")
        .owned("y", "f32", 4096)
        .owned("w", "f32", 4096);
    parent.kernel(
        "pre",
        kernel("y[gid.x] = 3.0 * x[gid.x];").read("x").write("y"),
    );
    parent.subgraph(
        "first",
        &child,
        &[
            ("src", "y", AccessMode::Read),
            ("dst", "w", AccessMode::Write),
        ],
    );
    parent.subgraph(
        "second",
        &child,
        &[
            ("src", "w", AccessMode::Read),
            ("dst", "z", AccessMode::Write),
        ],
    );
    parent.kernel(
        "post",
        kernel("z[gid.x] = z[gid.x] + params.bias.x;").read_write("z"),
    );
    parent.build(&LIBRARY)
}

#[test]
fn a_built_subgraph_is_the_macros() -> Result<(), Box<dyn std::error::Error>> {
    let desc = built_twice()?;
    // Flattened, the macro's description, but for the kernels' whitespace (the macro writes WGSL from tokens).
    let without_source = |desc: &graph_runtime::GraphDesc| {
        let mut desc = graph_runtime::pipeline::flatten(desc).map(|d| d.into_owned())?;
        for node in desc.nodes.to_mut() {
            if let graph_runtime::desc::OpDesc::Kernel(k) = &mut node.op {
                k.source = "".into();
            }
        }
        Ok::<_, graph_runtime::desc::InvalidDescription>(desc)
    };
    assert_eq!(without_source(&desc)?, without_source(Twice::DESCRIPTION)?);
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 4096) as usize;
    let xs = random_f32s(&mut rng, len);
    let x = gpu.buffer_from_slice(&xs)?;
    let z = gpu.buffer_zeroed::<f32>(len)?;
    poison_f32(&z);
    let mut g = BakedGraph::bake(&gpu, desc, &[("x", x.as_any()), ("z", z.as_any())])?;
    g.set_param("n", len as u32)?;
    g.set_param("scale", 0.5f32)?;
    g.set_param("bias", [2.0f32, 0.0, 0.0, 0.0])?;
    g.replay()?.wait()?;
    assert_exact(&read(&z), &expected(&xs, 0.5, 2.0), "z");
    Ok(())
}

graph! {
    /// A child whose input has a fixed length, bound to a parent buffer whose length is known only at bake.
    graph Fixed {
        buffers { src: [f32; 64] = input, dst: [f32; 64] = output }
        copy c(src -> dst);
    }
}

graph! {
    graph HoldsFixed {
        buffers { a: [f32] = input, b: [f32; 64] = output }
        subgraph f = Fixed(src: a: read, dst: b: write);
    }
}

#[test]
fn a_childs_fixed_length_is_required_of_the_buffer_bound_at_bake() -> Result<(), Error> {
    let gpu = gpu();
    let b = gpu.buffer_zeroed::<f32>(64)?;
    let wrong = gpu.buffer_zeroed::<f32>(65)?;
    match HoldsFixed::bake(&gpu, HoldsFixedBuffers { a: &wrong, b: &b }) {
        Err(Error::BufferLength { buffer, actual, .. }) => {
            assert_eq!((buffer.as_str(), actual), ("a", 65));
        }
        other => panic!("expected a length error for `a`, got {other:?}"),
    }
    // Positive control: the right length bakes and copies.
    let mut rng = rng();
    let xs = random_f32s(&mut rng, 64);
    let a = gpu.buffer_from_slice(&xs)?;
    poison_f32(&b);
    HoldsFixed::bake(&gpu, HoldsFixedBuffers { a: &a, b: &b })?
        .replay()?
        .wait()?;
    assert_exact(&read(&b), &xs, "b");
    Ok(())
}

graph! {
    /// A subgraph whose child has subgraphs itself, and a host task in a child.
    graph Outer {
        params { n: u32, scale: f32, bias: vec4<f32> }
        buffers { a: [f32] = input, b: [f32] = output }
        subgraph twice = Twice(x: a: read, z: b: write);
        subgraph seen = Seen(v: b: read);
    }
}

graph! {
    /// A host task that reads its input.
    graph Seen {
        buffers { v: [f32] = input }
        host look(v: read);
    }
}

#[test]
fn subgraphs_nest_and_their_host_tasks_run_between_partitions() -> Result<(), Error> {
    let flat = graph_runtime::pipeline::flatten(Outer::DESCRIPTION).map_err(|e| {
        Error::InvalidDescription {
            graph: "Outer".into(),
            reason: e.0,
        }
    })?;
    let names: Vec<&str> = flat.nodes.iter().map(|n| &*n.name).collect();
    assert!(
        names.contains(&"twice.first.plus_one") && names.contains(&"seen.look"),
        "{names:?}"
    );
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 4096) as usize;
    let xs = random_f32s(&mut rng, len);
    let a = gpu.buffer_from_slice(&xs)?;
    let b = gpu.buffer_zeroed::<f32>(len)?;
    poison_f32(&b);
    let mut g = Outer::bake(&gpu, OuterBuffers { a: &a, b: &b })?;
    *g.params_mut() = OuterParams::new(len as u32, 1.5, [-1.0, 0.0, 0.0, 0.0]);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = seen.clone();
    // By its name in the flattened graph; the child's `v` is this graph's `b`, bound to it.
    g.on_host("seen.look", move |ctx| {
        *into.lock().expect("not poisoned") = ctx.read::<f32>("b")?;
        Ok(())
    })?;
    g.replay()?.wait()?;
    let want = expected(&xs, 1.5, -1.0);
    assert_exact(&read(&b), &want, "b");
    assert_exact(
        &seen.lock().expect("not poisoned"),
        &want,
        "what the child's host task read",
    );
    Ok(())
}
