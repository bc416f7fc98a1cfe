//! # graph — check, draw and run saved graph files
//!
//! ```text
//! graph check FILE                 every diagnostic at its line and column of FILE (or of a `.wgsl`
//!                                  file it names); exit 1 when there are any; else the graph's size
//!                                  and where bake puts its graph-owned buffers (the memory plan)
//! graph dot FILE [--verbose]       the graph in Graphviz DOT (`| dot -Tsvg > graph.svg`)
//! graph run FILE [--replays N] [--param NAME=VALUE].. [--len BUFFER=N].. [--trace OUT.json]
//!                                  bake on the default adapter and replay, with timings; with
//!                                  --trace, one more replay profiled (GPU time per dispatch) as a
//!                                  Chrome trace
//! ```
//!
//! A file that cannot be read or is not a graph file exits with 2, a graph with mistakes with 1.
//!
//! `run` binds every external buffer to deterministic data (values in `0..1` for `f32`, `0..1024` for
//! integers) of its declared length, or of `--len` (65536 elements unless given) for run-time lengths.
//! Parameters start at zero; `--param` sets one (vectors as `1,2,3`). Host tasks are bound to a stand-in
//! that sums what it may read and fills what it writes with the same kind of deterministic data; interop
//! tasks to one that records nothing. After the
//! replays it prints the sum of every external buffer the graph writes, so two runs can be compared.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use examples::{median, ms};
use graph_runtime::desc::{GraphDesc, OpDesc};
use graph_runtime::ir::{Scalar, ValueType};
use graph_runtime::pipeline::{Detail, describe_graph_with};
use graph_runtime::{AnyBuffer, BakedGraph, Error, Gpu, HostContext, LIBRARY, f16, file};

#[derive(Parser)]
#[command(name = "graph", about = "Check, draw and run saved GPU task graphs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a graph file: every diagnostic with its location.
    Check { file: PathBuf },
    /// Print a graph file as Graphviz DOT.
    Dot {
        file: PathBuf,
        /// Also each node's accesses, dispatch size and the parameters.
        #[arg(long)]
        verbose: bool,
    },
    /// Bake a graph file on the default adapter and replay it, with timings.
    Run {
        file: PathBuf,
        /// Timed replays after the first.
        #[arg(long, default_value_t = 10)]
        replays: usize,
        /// A parameter's value, `NAME=VALUE` (vectors as `1,2,3`).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// The length of an external buffer of run-time length, `BUFFER=N` (65536 when not given).
        #[arg(long = "len", value_name = "BUFFER=N")]
        lens: Vec<String>,
        /// Profile one more replay (GPU timestamps per dispatch) and write it here as Chrome trace JSON.
        #[arg(long, value_name = "OUT.json")]
        trace: Option<PathBuf>,
    },
}

/// How the program ends: 1 for a graph with mistakes or a failed run, 2 for a file that is not a graph.
enum Failure {
    Graph(String),
    File(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Graph(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check { file } => check(&file),
        Command::Dot { file, verbose } => dot(&file, verbose),
        Command::Run {
            file,
            replays,
            params,
            lens,
            trace,
        } => run(&file, replays, &params, &lens, trace.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Graph(message)) => {
            eprintln!("{}", message.trim_end());
            ExitCode::from(1)
        }
        Err(Failure::File(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// The file's graph, with the graph files its subgraph nodes name, checked and described.
fn load(path: &Path) -> Result<GraphDesc, Failure> {
    let (graph, children) = file::load_with_children(path, &LIBRARY)
        .map_err(|e| Failure::File(format!("{}: {e}", path.display())))?;
    describe_graph_with(graph, &LIBRARY, &children).map_err(|e| {
        // Each mistake at its line and column of the file; in words if the file cannot be read again.
        let report = match file::SourceFile::read(path) {
            Ok(source) => e.report_in(&source),
            Err(_) => e.to_string(),
        };
        Failure::Graph(format!("{}: {report}", path.display()))
    })
}

fn check(path: &Path) -> Result<(), Failure> {
    let desc = load(path)?;
    let gpu_partitions = desc
        .partitions
        .iter()
        .filter(|p| matches!(p, graph_runtime::desc::PartitionDesc::Gpu { .. }))
        .count();
    println!(
        "{}: graph `{}` is well-formed: {} nodes, {} edges, {} levels, {} GPU partitions",
        path.display(),
        desc.name,
        desc.nodes.len(),
        desc.edges.len(),
        desc.levels.len(),
        gpu_partitions
    );
    // Where bake puts the graph-owned buffers on a device of WebGPU's default limits.
    match graph_runtime::memory::declared_plan(&desc) {
        Some((plan, names)) => {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            for line in plan.summary(&names) {
                println!("{line}");
            }
        }
        None => println!("memory: planned at bake (a range needs the bound buffers' lengths)"),
    }
    Ok(())
}

fn dot(path: &Path, verbose: bool) -> Result<(), Failure> {
    let desc = load(path)?;
    let detail = if verbose {
        Detail::Verbose
    } else {
        Detail::Plain
    };
    print!("{}", desc.to_dot(detail));
    Ok(())
}

const DEFAULT_LEN: u32 = 65536;

fn run(
    path: &Path,
    replays: usize,
    params: &[String],
    lens: &[String],
    trace: Option<&Path>,
) -> Result<(), Failure> {
    let desc = load(path)?;
    let lens = parse_pairs(lens, "--len")?;
    let params = parse_pairs(params, "--param")?;
    for (name, _) in &lens {
        let buffer = desc
            .buffers
            .iter()
            .find(|b| b.name == *name && b.role.is_external());
        match buffer {
            None => {
                return Err(Failure::Graph(format!(
                    "--len {name}: graph `{}` has no external buffer `{name}`",
                    desc.name
                )));
            }
            Some(b) if b.len.is_some() => {
                return Err(Failure::Graph(format!(
                    "--len {name}: `{name}` has a fixed length in graph `{}`",
                    desc.name
                )));
            }
            Some(_) => {}
        }
    }

    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    let mut buffers: Vec<(String, AnyBuffer)> = Vec::new();
    for (index, b) in desc.buffers.iter().enumerate() {
        if !b.role.is_external() {
            continue;
        }
        let given = lens.iter().find(|(name, _)| *name == b.name);
        let len = match (b.len, given) {
            (Some(fixed), _) => fixed,
            (None, Some((_, text))) => match text.parse::<u32>() {
                Ok(len) if len > 0 => len,
                _ => {
                    return Err(Failure::Graph(format!(
                        "--len {}: `{text}` is not a length (1 to {})",
                        b.name,
                        u32::MAX
                    )));
                }
            },
            (None, None) => DEFAULT_LEN,
        };
        let bytes = deterministic_bytes(b.elem, len as usize, index as u64);
        buffers.push((b.name.to_string(), buffer_of(&gpu, b.elem, &bytes)?));
    }
    let bound: Vec<(&str, &AnyBuffer)> = buffers.iter().map(|(n, b)| (n.as_str(), b)).collect();

    let start = Instant::now();
    let mut graph = BakedGraph::bake(&gpu, desc.clone(), &bound)?;
    println!("bake:    {}", ms(start.elapsed()));
    for group in graph.fused() {
        println!("fused:   {}", group.names.join(" + "));
    }
    for declined in graph.fusion_declined() {
        println!("not fused: {}", declined.names.join(" + "));
        println!("  because {}", declined.reason);
    }
    for (name, value) in &params {
        set_param(&mut graph, name, value)?;
    }
    let len_of = |index: usize| -> usize {
        let b = &desc.buffers[index];
        let bound = buffers.iter().find(|(n, _)| *n == b.name);
        bound.map_or(b.len.unwrap_or(0), |(_, any)| any.len()) as usize
    };
    let host_sums = bind_host_tasks(&mut graph, &desc, len_of)?;
    for node in desc.nodes.iter() {
        if matches!(node.op, OpDesc::Interop { .. }) {
            graph.on_interop(&node.name, |_| Ok(()))?;
        }
    }

    // Upload nodes get generated data before each replay, as `--len` buffers do once.
    let lens: Vec<u32> = (0..desc.buffers.len()).map(|b| len_of(b) as u32).collect();
    let mut uploads = Vec::new();
    for (n, node) in desc.nodes.iter().enumerate() {
        if let OpDesc::Upload { buffer, range } = &node.op {
            let (start, end) =
                graph_runtime::pipeline::evaluate_range(n as u32, *buffer, range, &lens)
                    .map_err(|e| Failure::Graph(format!("upload `{}`: {e:?}", node.name)))?;
            let elem = desc.buffers[*buffer as usize].elem;
            let bytes = deterministic_bytes(elem, (end - start) as usize, u64::from(*buffer));
            uploads.push((node.name.to_string(), bytes));
        }
    }
    let replay = |graph: &mut BakedGraph| {
        for (node, bytes) in &uploads {
            graph.upload_bytes(node, bytes)?;
        }
        graph.replay()
    };

    let start = Instant::now();
    replay(&mut graph)?.wait()?;
    println!("first replay (waited): {}", ms(start.elapsed()));
    // Not `with_capacity(replays)`: a huge count runs until stopped, it does not abort allocating.
    let mut waited: Vec<Duration> = Vec::with_capacity(replays.min(1 << 16));
    let mut finished = None;
    for _ in 0..replays {
        let start = Instant::now();
        finished = Some(replay(&mut graph)?.wait()?);
        waited.push(start.elapsed());
    }
    if replays > 0 {
        let start = Instant::now();
        let mut last = None;
        for _ in 0..replays {
            last = Some(replay(&mut graph)?);
        }
        if let Some(last) = last {
            last.wait()?;
        }
        let back_to_back = start.elapsed() / replays as u32;
        let fastest = waited.iter().min().copied().unwrap_or_default();
        println!(
            "{replays} replays: median {}, fastest {} each (submit to finished); {} each back to back",
            ms(median(&waited)),
            ms(fastest),
            ms(back_to_back)
        );
    }
    if let Some(out) = trace {
        for (node, bytes) in &uploads {
            graph.upload_bytes(node, bytes)?;
        }
        let profile = graph.profile()?;
        std::fs::write(out, profile.to_chrome_trace()).map_err(|e| {
            Failure::Graph(format!("cannot write the trace to {}: {e}", out.display()))
        })?;
        print!("{profile}");
        println!(
            "trace:   {} (chrome://tracing, ui.perfetto.dev)",
            out.display()
        );
    }
    for node in desc.nodes.iter() {
        if let (OpDesc::Readback { buffer, .. }, Some(finished)) = (&node.op, &finished) {
            let bytes = finished.read_bytes_named(&node.name)?;
            let elem = desc.buffers[*buffer as usize].elem;
            println!(
                "readback `{}`: {} elements of {elem}, sum {}",
                node.name,
                bytes.len() / elem.size() as usize,
                sum_bytes(elem, &bytes)
            );
        }
    }
    if let Ok(sums) = host_sums.lock() {
        for (node, sum) in sums.iter() {
            println!("host task `{node}` last read a sum of {sum}");
        }
    }
    for (index, b) in desc.buffers.iter().enumerate() {
        let written = desc.nodes.iter().any(|n| writes(&n.op, index as u32));
        if !written || !b.role.is_external() {
            continue;
        }
        if let Some((_, buffer)) = buffers.iter().find(|(n, _)| *n == b.name) {
            let sum = sum_bytes(b.elem, &read_bytes(&gpu, buffer)?);
            println!(
                "{}: {} elements of {}, sum {sum}",
                b.name,
                buffer.len(),
                b.elem
            );
        }
    }
    Ok(())
}

fn parse_pairs<'a>(items: &'a [String], flag: &str) -> Result<Vec<(&'a str, &'a str)>, Failure> {
    items
        .iter()
        .map(|item| {
            item.split_once('=')
                .ok_or_else(|| Failure::Graph(format!("{flag} {item}: write it as NAME=VALUE")))
        })
        .collect()
}

fn writes(op: &OpDesc, buffer: u32) -> bool {
    match op {
        OpDesc::Kernel(k) => k
            .bindings
            .iter()
            .any(|a| a.buffer == buffer && a.mode.writes()),
        OpDesc::Copy { dst, .. } => *dst == buffer,
        OpDesc::Upload { buffer: b, .. } => *b == buffer,
        OpDesc::Readback { .. } => false,
        OpDesc::Host { accesses } => accesses
            .iter()
            .any(|a| a.buffer == buffer && a.mode.writes()),
        OpDesc::Subgraph { bindings, .. } => bindings
            .iter()
            .any(|b| b.buffer == buffer && b.mode.writes()),
        // What an interop task writes is up to its closure; `run` binds a stand-in that records nothing.
        OpDesc::Interop { .. } | OpDesc::Empty => false,
    }
}

/// Runs `$body` with `$t` the Rust type of buffer elements of type `$elem`.
macro_rules! with_element_type {
    ($elem:expr, $t:ident => $body:expr) => {
        match ($elem.scalar, $elem.components) {
            (Scalar::F32, 1) => {
                type $t = f32;
                $body
            }
            (Scalar::F32, 2) => {
                type $t = [f32; 2];
                $body
            }
            (Scalar::F32, _) => {
                type $t = [f32; 4];
                $body
            }
            (Scalar::I32, 1) => {
                type $t = i32;
                $body
            }
            (Scalar::I32, 2) => {
                type $t = [i32; 2];
                $body
            }
            (Scalar::I32, _) => {
                type $t = [i32; 4];
                $body
            }
            (Scalar::U32, 1) => {
                type $t = u32;
                $body
            }
            (Scalar::U32, 2) => {
                type $t = [u32; 2];
                $body
            }
            (Scalar::U32, _) => {
                type $t = [u32; 4];
                $body
            }
            (Scalar::F16, 1) => {
                type $t = f16;
                $body
            }
            (Scalar::F16, 2) => {
                type $t = [f16; 2];
                $body
            }
            (Scalar::F16, _) => {
                type $t = [f16; 4];
                $body
            }
            (Scalar::U8, _) => {
                type $t = u8;
                $body
            }
            (Scalar::U16, _) => {
                type $t = u16;
                $body
            }
        }
    };
}

/// `len` elements of type `elem` as their bytes: floats in `0..1`, integers in `0..1024` (`0..256` for
/// `u8`), from a generator seeded by `seed`, so every run binds the same data.
fn deterministic_bytes(elem: ValueType, len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut bytes = Vec::with_capacity(len * elem.size() as usize);
    for _ in 0..len * usize::from(elem.components) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let bits = (state >> 40) as u32;
        let unit = bits as f32 / (1u32 << 24) as f32;
        match elem.scalar {
            Scalar::F32 => bytes.extend(unit.to_le_bytes()),
            Scalar::I32 | Scalar::U32 => bytes.extend((bits % 1024).to_le_bytes()),
            Scalar::F16 => bytes.extend(f16::from_f32(unit).to_le_bytes()),
            Scalar::U16 => bytes.extend(((bits % 1024) as u16).to_le_bytes()),
            Scalar::U8 => bytes.push(bits as u8),
        }
    }
    bytes
}

/// The sum of the scalars `bytes` holds, read as `elem`'s.
fn sum_bytes(elem: ValueType, bytes: &[u8]) -> f64 {
    bytes
        .chunks_exact(elem.scalar.bytes() as usize)
        .map(|b| {
            let word = |n: usize| {
                let mut w = [0; 4];
                w[..n].copy_from_slice(&b[..n]);
                u32::from_le_bytes(w)
            };
            match elem.scalar {
                Scalar::F32 => f64::from(f32::from_bits(word(4))),
                Scalar::I32 => f64::from(word(4) as i32),
                Scalar::U32 | Scalar::U16 | Scalar::U8 => f64::from(word(b.len())),
                Scalar::F16 => f64::from(f16::from_bits(word(2) as u16)),
            }
        })
        .sum()
}

/// A buffer of `elem` holding `bytes` (whole elements).
fn buffer_of(gpu: &Gpu, elem: ValueType, bytes: &[u8]) -> Result<AnyBuffer, Error> {
    with_element_type!(elem, T => Ok(gpu
        .buffer_from_slice(&bytemuck::pod_collect_to_vec::<u8, T>(bytes))?
        .as_any()
        .clone()))
}

/// A bound buffer's elements, as bytes.
fn read_bytes(gpu: &Gpu, buffer: &AnyBuffer) -> Result<Vec<u8>, Error> {
    let mut bytes =
        graph_runtime::Buffer::<u8>::from_wgpu(gpu, buffer.wgpu().clone())?.read_blocking()?;
    bytes.truncate(buffer.len() as usize * buffer.elem().size() as usize);
    Ok(bytes)
}

/// Parameter `name` from text, by its declared type.
fn set_param(graph: &mut BakedGraph, name: &str, text: &str) -> Result<(), Failure> {
    let field = graph
        .description()
        .params
        .fields
        .iter()
        .find(|f| f.name == name)
        .map(|f| f.ty);
    let Some(ty) = field else {
        // The runtime's own message, with the parameters the graph has.
        return Err(graph.set_param(name, 0u32).err().map_or_else(
            || Failure::Graph(format!("no parameter `{name}`")),
            Failure::from,
        ));
    };
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != usize::from(ty.components) {
        return Err(Failure::Graph(format!(
            "--param {name}={text}: `{name}` is a `{ty}`, which takes {} value(s)",
            ty.components
        )));
    }
    let bad = || Failure::Graph(format!("--param {name}={text}: not a `{ty}`"));
    // Each value parsed as `$t` (an `f16` as the `f32` it rounds from).
    macro_rules! set {
        ($t:ty) => {
            set!($t, |p: &str| p.parse::<$t>().ok())
        };
        ($t:ty, $parse:expr) => {{
            let values: Vec<$t> = parts
                .iter()
                .map(|p| $parse(p).ok_or_else(bad))
                .collect::<Result<_, _>>()?;
            match values[..] {
                [a] => graph.set_param(name, a)?,
                [a, b] => graph.set_param(name, [a, b])?,
                [a, b, c] => graph.set_param(name, [a, b, c])?,
                [a, b, c, d] => graph.set_param(name, [a, b, c, d])?,
                _ => return Err(bad()),
            }
        }};
    }
    match ty.scalar {
        Scalar::F32 => set!(f32),
        Scalar::I32 => set!(i32),
        Scalar::U32 => set!(u32),
        Scalar::F16 => set!(f16, |p: &str| p.parse::<f32>().ok().map(f16::from_f32)),
        // The checks refuse parameters of these types.
        Scalar::U8 | Scalar::U16 => return Err(bad()),
    }
    Ok(())
}

type HostSums = Arc<Mutex<Vec<(String, f64)>>>;

/// One buffer as a stand-in host task uses it.
struct HostUse {
    buffer: String,
    elem: ValueType,
    mode: graph_runtime::ir::AccessMode,
    len: usize,
    seed: u64,
}

/// Binds every host task to the stand-in described at the top; the sums it reads are kept by node.
fn bind_host_tasks(
    graph: &mut BakedGraph,
    desc: &GraphDesc,
    len_of: impl Fn(usize) -> usize,
) -> Result<HostSums, Error> {
    let sums: HostSums = Arc::new(Mutex::new(Vec::new()));
    for node in desc.nodes.iter() {
        let OpDesc::Host { accesses } = &node.op else {
            continue;
        };
        let uses: Vec<HostUse> = accesses
            .iter()
            .filter_map(|a| {
                let b = desc.buffers.get(a.buffer as usize)?;
                Some(HostUse {
                    buffer: b.name.to_string(),
                    elem: b.elem,
                    mode: a.mode,
                    len: len_of(a.buffer as usize),
                    seed: u64::from(a.buffer),
                })
            })
            .collect();
        let name = node.name.to_string();
        let sums = Arc::clone(&sums);
        graph.on_host(&node.name.clone(), move |ctx: &HostContext<'_>| {
            let mut total = 0.0;
            for u in &uses {
                if u.mode.reads() {
                    total += sum_bytes(u.elem, &host_read(ctx, &u.buffer, u.elem)?);
                }
                if u.mode.writes() {
                    let bytes = deterministic_bytes(u.elem, u.len, u.seed);
                    host_write(ctx, &u.buffer, u.elem, &bytes)?;
                }
            }
            if let Ok(mut sums) = sums.lock() {
                sums.retain(|(n, _)| *n != name);
                sums.push((name.clone(), total));
            }
            Ok(())
        })?;
    }
    Ok(sums)
}

/// A host task's buffer as bytes, read as its declared type (the context checks the type).
fn host_read(ctx: &HostContext<'_>, buffer: &str, elem: ValueType) -> Result<Vec<u8>, Error> {
    with_element_type!(elem, T => Ok(bytemuck::cast_slice(&ctx.read::<T>(buffer)?).to_vec()))
}

fn host_write(
    ctx: &HostContext<'_>,
    buffer: &str,
    elem: ValueType,
    bytes: &[u8],
) -> Result<(), Error> {
    with_element_type!(elem, T => ctx.write::<T>(buffer, &bytemuck::pod_collect_to_vec::<u8, T>(bytes)))
}
