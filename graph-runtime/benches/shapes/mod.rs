//! The benchmark's DAG shapes, shared by `replay_vs_hand_written.rs` (native) and the web benchmark
//! (`tests/web_bench.rs`, in a browser): the kernels, the shapes, their graphs (through the builder) and their
//! f64 references.

#![allow(dead_code)] // Each includer uses its own part.

use graph_runtime::{Error, GraphBuilder, KernelSpec, LIBRARY};

/// Elements per buffer.
pub const N: usize = 64 * 1024;

/// The kernels, with generic names: the same statements as the graphs'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `dst = dst * 0.999 + src`
    Step,
    /// `dst = src * 0.999 + 1`
    Scale,
    /// `dst = a + b`
    Add,
    /// `dst[i] = 0.25 src[i - 1] + 0.5 src[i] + 0.25 src[i + 1]`, zero past the ends
    Stencil,
    /// `dst = dst * params.c + src`, `c` a parameter (0.999 when checked)
    StepParam,
}

pub const KINDS: [Kind; 5] = [
    Kind::Step,
    Kind::Scale,
    Kind::Add,
    Kind::Stencil,
    Kind::StepParam,
];

impl Kind {
    /// The buffers it reads, by their generic names, then the one it writes.
    pub fn bindings(self) -> &'static [&'static str] {
        match self {
            Kind::Add => &["a", "b", "dst"],
            _ => &["src", "dst"],
        }
    }

    /// The entry point, over the buffers named in `names` (in the order of [`Kind::bindings`]).
    pub fn code(self, names: &[&str]) -> String {
        let body = match self {
            Kind::Step => "if (i < arrayLength(&DST)) { DST[i] = DST[i] * 0.999 + SRC[i]; }",
            Kind::StepParam => {
                "if (i < arrayLength(&DST)) { DST[i] = DST[i] * params.c + SRC[i]; }"
            }
            Kind::Scale => "if (i < arrayLength(&DST)) { DST[i] = SRC[i] * 0.999 + 1.0; }",
            Kind::Add => "if (i < arrayLength(&DST)) { DST[i] = A[i] + B[i]; }",
            Kind::Stencil => {
                "let n = arrayLength(&DST);
    if (i >= n) { return; }
    var l = 0.0;
    if (i > 0u) { l = SRC[i - 1u]; }
    var r = 0.0;
    if (i + 1u < n) { r = SRC[i + 1u]; }
    DST[i] = 0.25 * l + 0.5 * SRC[i] + 0.25 * r;"
            }
        };
        let mut body = body.to_string();
        for (generic, name) in self.bindings().iter().zip(names) {
            body = body.replace(&generic.to_uppercase(), name);
        }
        format!(
            "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let i = gid.x;
    {body}
}}"
        )
    }

    /// The whole module the hand-written side compiles.
    pub fn wgsl(self) -> String {
        let bindings = self.bindings();
        let declarations: String = bindings
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let access = if i + 1 == bindings.len() {
                    "read_write"
                } else {
                    "read"
                };
                format!("@group(0) @binding({i}) var<storage, {access}> {name}: array<f32>;\n")
            })
            .collect();
        let params = match self {
            Kind::StepParam => {
                "struct Params { c: f32 }\n@group(1) @binding(0) var<uniform> params: Params;\n"
            }
            _ => "",
        };
        format!("{declarations}{params}{}", self.code(bindings))
    }
}

/// One node: its kernel, the buffers it reads (besides its output for `Step`) and the one it writes.
pub struct Node {
    pub kind: Kind,
    pub inputs: Vec<usize>,
    pub output: usize,
}

/// A shape: buffer 0 is `x`; `state` buffers start from data and are updated in place; `outputs` are
/// overwritten; `checked` are compared with the reference.
pub struct Dag {
    pub name: &'static str,
    pub buffers: usize,
    pub state: Vec<usize>,
    pub checked: Vec<usize>,
    pub nodes: Vec<Node>,
    pub levels: usize,
}

pub fn chain_dag(name: &'static str, length: usize) -> Dag {
    Dag {
        name,
        buffers: 2,
        state: vec![1],
        checked: vec![1],
        nodes: (0..length)
            .map(|_| Node {
                kind: Kind::Step,
                inputs: vec![0],
                output: 1,
            })
            .collect(),
        levels: length,
    }
}

pub fn fan_dag() -> Dag {
    Dag {
        name: "fan",
        buffers: 101,
        state: vec![],
        checked: (1..=100).collect(),
        nodes: (1..=100)
            .map(|o| Node {
                kind: Kind::Scale,
                inputs: vec![0],
                output: o,
            })
            .collect(),
        levels: 1,
    }
}

/// `count` chains of `length` side by side, in declaration order chain by chain.
pub fn chains_dag(name: &'static str, count: usize, length: usize) -> Dag {
    Dag {
        name,
        buffers: count + 1,
        state: (1..=count).collect(),
        checked: (1..=count).collect(),
        nodes: (1..=count)
            .flat_map(|c| {
                (0..length).map(move |_| Node {
                    kind: Kind::Step,
                    inputs: vec![0],
                    output: c,
                })
            })
            .collect(),
        levels: length,
    }
}

/// `count` stencil chains of `length` (even), each between its own two buffers, ending where it started.
pub fn stencil_dag(name: &'static str, count: usize, length: usize) -> Dag {
    Dag {
        name,
        buffers: 2 * count + 1,
        state: (0..count).map(|c| 1 + 2 * c).collect(),
        checked: (0..count).map(|c| 1 + 2 * c).collect(),
        nodes: (0..count)
            .flat_map(|c| {
                let (a, b) = (1 + 2 * c, 2 + 2 * c);
                (0..length).map(move |k| Node {
                    kind: Kind::Stencil,
                    inputs: vec![if k % 2 == 0 { a } else { b }],
                    output: if k % 2 == 0 { b } else { a },
                })
            })
            .collect(),
        levels: length,
    }
}

/// Buffers 1..=64 the leaves, then each level's sums; the last buffer is the root.
pub fn tree_dag() -> Dag {
    let mut nodes: Vec<Node> = (1..=64)
        .map(|o| Node {
            kind: Kind::Scale,
            inputs: vec![0],
            output: o,
        })
        .collect();
    let (mut level_start, mut width, mut next) = (1, 64, 65);
    while width > 1 {
        for j in 0..width / 2 {
            nodes.push(Node {
                kind: Kind::Add,
                inputs: vec![level_start + 2 * j, level_start + 2 * j + 1],
                output: next + j,
            });
        }
        level_start = next;
        next += width / 2;
        width /= 2;
    }
    Dag {
        name: "tree",
        buffers: next,
        state: vec![],
        checked: vec![next - 1],
        nodes,
        levels: 7,
    }
}

/// Every shape, in the tables' order.
pub fn all_shapes() -> [Dag; 8] {
    [
        chain_dag("single", 1),
        chain_dag("chain", 100),
        fan_dag(),
        chains_dag("chains 10x10", 10, 10),
        chains_dag("chains 20x20", 20, 20),
        tree_dag(),
        stencil_dag("stencil chain", 1, 100),
        stencil_dag("stencil 10x10", 10, 10),
    ]
}

/// Per-element reference in f64, and the most f32 may differ from it: each operation rounds once (or a
/// multiply-add once when fused), and earlier errors pass through scaled by the operation.
pub fn reference(dag: &Dag, x: &[f32], state: &[f32]) -> Expected {
    const U: f64 = f32::EPSILON as f64 / 2.0;
    let c = f64::from(0.999f32);
    let mut values: Vec<Vec<f64>> = vec![vec![0.0; N]; dag.buffers];
    let mut bounds: Vec<Vec<f64>> = vec![vec![0.0; N]; dag.buffers];
    values[0] = x.iter().map(|&v| f64::from(v)).collect();
    for &s in &dag.state {
        values[s] = state.iter().map(|&v| f64::from(v)).collect();
    }
    for node in &dag.nodes {
        for i in 0..N {
            let (value, bound) = match node.kind {
                Kind::Step | Kind::StepParam => {
                    let (d, s) = (values[node.output][i], values[node.inputs[0]][i]);
                    let v = d * c + s;
                    (
                        v,
                        c * bounds[node.output][i]
                            + bounds[node.inputs[0]][i]
                            + U * ((d * c).abs() + v.abs()),
                    )
                }
                Kind::Scale => {
                    let s = values[node.inputs[0]][i];
                    let v = s * c + 1.0;
                    (
                        v,
                        c * bounds[node.inputs[0]][i] + U * ((s * c).abs() + v.abs()),
                    )
                }
                Kind::Add => {
                    let (a, b) = (node.inputs[0], node.inputs[1]);
                    let v = values[a][i] + values[b][i];
                    (v, bounds[a][i] + bounds[b][i] + U * v.abs())
                }
                Kind::Stencil => {
                    let s = node.inputs[0];
                    let at = |k: Option<usize>| {
                        k.filter(|&k| k < N)
                            .map_or((0.0, 0.0), |k| (values[s][k], bounds[s][k]))
                    };
                    let (l, c, r) = (at(i.checked_sub(1)), at(Some(i)), at(Some(i + 1)));
                    let v = 0.25 * l.0 + 0.5 * c.0 + 0.25 * r.0;
                    let magnitude = 0.25 * l.0.abs() + 0.5 * c.0.abs() + 0.25 * r.0.abs();
                    (
                        v,
                        0.25 * l.1 + 0.5 * c.1 + 0.25 * r.1 + 3.0 * U * (magnitude + v.abs()),
                    )
                }
            };
            values[node.output][i] = value;
            bounds[node.output][i] = bound * 1.000_001;
        }
    }
    dag.checked
        .iter()
        .map(|&b| (values[b].clone(), bounds[b].clone()))
        .collect()
}

/// Per checked buffer: the reference values and the most the GPU's may differ from them.
pub type Expected = Vec<(Vec<f64>, Vec<f64>)>;

/// What buffer `b` (not `x`) holds before a checked run: the state's starting values, or NaN for an output,
/// so an element the GPU fails to write cannot pass for a right one.
pub fn fresh(dag: &Dag, b: usize, state: &[f32]) -> Vec<f32> {
    match dag.state.contains(&b) {
        true => state.to_vec(),
        false => vec![f32::NAN; N],
    }
}

/// Buffer `b`'s contents `got` against the reference `(values, bounds)`: the first element off by more than its
/// bound (or NaN), in words naming the shape and the side.
pub fn compare(
    dag: &Dag,
    side: &str,
    b: usize,
    got: &[f32],
    (values, bounds): &(Vec<f64>, Vec<f64>),
) -> Result<(), String> {
    let bad = got
        .iter()
        .zip(values.iter().zip(bounds))
        .position(|(&g, (&v, &bound))| (f64::from(g) - v).abs() > bound || g.is_nan());
    match bad {
        Some(i) => Err(format!(
            "{} / {side}: buffer {b}[{i}] is {}, the reference {} (bound {:e})",
            dag.name, got[i], values[i], bounds[i]
        )),
        None if got.len() != values.len() => Err(format!(
            "{} / {side}: buffer {b} has {} elements, the reference {}",
            dag.name,
            got.len(),
            values.len()
        )),
        None => Ok(()),
    }
}

/// The input `x`, the state buffers' starting values, and the reference outputs.
pub fn inputs(dag: &Dag) -> (Vec<f32>, Vec<f32>, Expected) {
    let x: Vec<f32> = (0..N).map(|i| (i % 97) as f32 * 0.01).collect();
    let state: Vec<f32> = (0..N).map(|i| (i % 13) as f32 * 0.1).collect();
    let expected = reference(dag, &x, &state);
    (x, state, expected)
}

/// The graph's buffer names: `x`, then `b1`...
pub fn names_of(dag: &Dag) -> Vec<String> {
    (0..dag.buffers)
        .map(|b| {
            if b == 0 {
                "x".to_string()
            } else {
                format!("b{b}")
            }
        })
        .collect()
}

/// The shape as a graph description: buffer 0 is the input `x`, the others `b1`.. bound from outside;
/// with `fusion` off, every kernel is marked `no_fusion`.
pub fn graph_of(dag: &Dag, fusion: bool) -> Result<graph_runtime::GraphDesc, Error> {
    let names = names_of(dag);
    let name = |b: usize| names[b].clone();
    let mut builder = GraphBuilder::new(dag.name.replace(' ', "_"));
    if dag.nodes.iter().any(|n| n.kind == Kind::StepParam) {
        builder.param("c", "f32");
    }
    builder.input("x", "f32");
    for b in 1..dag.buffers {
        builder.inout(&name(b), "f32");
    }
    for (k, node) in dag.nodes.iter().enumerate() {
        let names: Vec<String> = node
            .inputs
            .iter()
            .chain([&node.output])
            .map(|&b| name(b))
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut spec = KernelSpec::wgsl(node.kind.code(&refs));
        for input in &refs[..refs.len() - 1] {
            spec = spec.read(input);
        }
        spec = match node.kind {
            Kind::Step | Kind::StepParam => spec.read_write(refs[refs.len() - 1]),
            _ => spec.write(refs[refs.len() - 1]),
        };
        builder.kernel(&format!("n{k}"), spec);
        if !fusion {
            builder.no_fusion(&format!("n{k}"));
        }
    }
    builder
        .build(&LIBRARY)
        .map_err(|e| Error::Gpu(format!("{}: {e}", dag.name)))
}
