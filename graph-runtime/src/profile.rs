//! Per-node GPU time: a profiled replay writes GPU timestamps around each dispatch and reads them back once
//! the replay has finished. The result is exported as a Chrome/Perfetto trace and as DOT annotated with the
//! times.
//!
//! Each recorder times in its own way. The portable recorder records each dispatch in a compute pass of its
//! own, with timestamps at the pass's start and end (WebGPU's portable timestamp queries): one pass per
//! dispatch lets the GPU finish each before the next starts where wgpu sees a hazard. The native recorder
//! records its command buffers once with a timestamp when each level may start (its barrier passed) and one
//! after each dispatch, written once that dispatch and everything before it have finished: each dispatch's
//! bar ends when it and those recorded before it in its level have finished. Either way, a profiled replay is
//! not a timed replay: a timestamp that waits for the work before it holds back the work after it (about
//! 3.7 us a dispatch on the H100, so a level's dispatches no longer overlap). It says where the time goes,
//! node by node; the benchmarks say how long a replay takes.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::fmt::Write;

use graph_core::desc::GraphDesc;
use graph_core::dot::Detail;
use graph_core::fusion::FusedGroup;

use crate::error::Error;
use crate::gpu::Gpu;
use crate::readback::ReadFuture;

/// The GPU time of each dispatch of one profiled replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The graph's name.
    pub graph: String,
    /// The recorder that replayed it, `"portable"` (a pass per dispatch) or `"native"` (the recorded command
    /// buffers, a timestamp per level and per dispatch). Either way the timestamps hold back the dispatches
    /// after them: a profile says where time goes, not how long a replay takes.
    pub recorder: &'static str,
    /// Each dispatch, in the order it was recorded.
    pub dispatches: Vec<DispatchTime>,
    /// Where bake put the graph-owned buffers, in words (`MemoryPlan::summary`: which share a heap, at which
    /// offsets, over which steps); the trace shows it as an event at its start.
    pub memory: Vec<String>,
}

/// One dispatch's time, in nanoseconds from the profiled replay's first timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchTime {
    /// The node that ran it, by index in the baked graph's description.
    pub node: u32,
    /// The nodes it ran: the node itself, or the members of its fused kernel, by name.
    pub nodes: Vec<String>,
    pub start_ns: f64,
    pub end_ns: f64,
}

impl DispatchTime {
    pub fn duration_ns(&self) -> f64 {
        self.end_ns - self.start_ns
    }

    /// How the trace and the drawing name it: `a`, or `a + b + c` for a fused kernel.
    pub fn label(&self) -> String {
        self.nodes.join(" + ")
    }
}

impl Profile {
    /// The profile as Chrome trace JSON (the Trace Event Format, which `chrome://tracing` and Perfetto's UI
    /// open): one complete event per dispatch, times in microseconds. Dispatches that start together (one
    /// native level) go on tracks of their own, side by side; the rest on the first track.
    pub fn to_chrome_trace(&self) -> String {
        let mut lanes = Vec::with_capacity(self.dispatches.len());
        let mut previous: Option<(f64, usize)> = None;
        for d in &self.dispatches {
            let lane = match previous {
                Some((start, lane)) if start == d.start_ns => lane + 1,
                _ => 0,
            };
            lanes.push(lane);
            previous = Some((d.start_ns, lane));
        }
        let events = self.dispatches.iter().zip(&lanes).map(|(d, lane)| {
            serde_json::json!({
                "name": d.label(),
                "cat": if d.nodes.len() > 1 { "fused kernel" } else { "kernel" },
                "ph": "X",
                "pid": 1,
                "tid": lane + 1,
                "ts": d.start_ns / 1000.0,
                "dur": d.duration_ns() / 1000.0,
                "args": { "node": d.node, "nodes": d.nodes },
            })
        });
        let tracks = lanes.iter().max().map_or(1, |&lane| lane + 1);
        let names = (0..tracks).map(|lane| {
            let name = match lane {
                0 => format!("GPU ({} recorder)", self.recorder),
                _ => format!("GPU ({} recorder), beside {lane}", self.recorder),
            };
            serde_json::json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": lane + 1,
                "args": {"name": name}})
        });
        let process = serde_json::json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": self.graph}});
        // The memory plan: a global instant event at the start, its lines as arguments.
        let memory = (!self.memory.is_empty()).then(|| {
            serde_json::json!({"name": "memory plan", "cat": "memory", "ph": "i", "s": "g", "pid": 1,
                "tid": 1, "ts": 0.0, "args": {"plan": self.memory}})
        });
        let all: Vec<serde_json::Value> = std::iter::once(process)
            .chain(names)
            .chain(memory)
            .chain(events)
            .collect();
        serde_json::json!({ "traceEvents": all, "displayTimeUnit": "ns" }).to_string()
    }

    /// `desc` (the baked graph's description) in DOT, each node's label followed by its GPU time; a member of
    /// a fused kernel shows the fused kernel's time.
    pub fn to_dot(&self, desc: &GraphDesc, detail: Detail) -> String {
        let mut notes: HashMap<String, String> = HashMap::new();
        for d in &self.dispatches {
            let us = d.duration_ns() / 1000.0;
            let note = match d.nodes.len() {
                1 => format!("{us:.1} us"),
                n => format!("{us:.1} us, fused with {} other(s)", n - 1),
            };
            for name in &d.nodes {
                notes.insert(name.clone(), note.clone());
            }
        }
        desc.to_dot_annotated(detail, &|name: &str| notes.get(name).cloned())
    }

    /// Total GPU time of the dispatches (not the replay's wall time: gaps between them are not counted, and
    /// dispatches that overlap are counted once each).
    pub fn busy_ns(&self) -> f64 {
        self.dispatches.iter().map(DispatchTime::duration_ns).sum()
    }
}

impl std::fmt::Display for Profile {
    /// A table: each dispatch's start and duration.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        let _ = writeln!(out, "{:>10} {:>10}  dispatch", "start us", "GPU us");
        for d in &self.dispatches {
            let _ = writeln!(
                out,
                "{:>10.1} {:>10.1}  {}",
                d.start_ns / 1000.0,
                d.duration_ns() / 1000.0,
                d.label()
            );
        }
        f.write_str(&out)
    }
}

/// The queries of one profiled replay: two per dispatch, in recording order.
#[derive(Debug)]
pub(crate) struct Timestamps {
    queries: wgpu::QuerySet,
    capacity: u32,
    /// The node of each dispatch recorded so far.
    nodes: Vec<u32>,
}

impl Timestamps {
    /// Room for `dispatches` dispatches; an error naming the feature when the device has no timestamps.
    pub(crate) fn new(gpu: &Gpu, graph: &str, dispatches: usize) -> Result<Self, Error> {
        check_timestamps(gpu, graph)?;
        // At least one query: a query set may not be empty.
        let capacity = (2 * dispatches.max(1)) as u32;
        let queries = gpu.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("graph-runtime profile"),
            ty: wgpu::QueryType::Timestamp,
            count: capacity,
        });
        Ok(Timestamps {
            queries,
            capacity,
            nodes: Vec::new(),
        })
    }

    /// The timestamp writes of node `node`'s pass; `None` once the queries are used up.
    pub(crate) fn writes(&mut self, node: u32) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let first = 2 * self.nodes.len() as u32;
        if first + 1 >= self.capacity {
            return None;
        }
        self.nodes.push(node);
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(first),
            end_of_pass_write_index: Some(first + 1),
        })
    }

    /// Resolves the written queries (after the replay's work, on the queue), waits, and reads them as times
    /// from the first, with each dispatch's nodes named from `desc` and `fused`.
    pub(crate) fn read(
        self,
        gpu: &Gpu,
        desc: &GraphDesc,
        fused: &[FusedGroup],
    ) -> Result<Profile, Error> {
        let count = 2 * self.nodes.len() as u32;
        let bytes = u64::from(count.max(2)) * wgpu::QUERY_SIZE as u64;
        let device = gpu.device();
        let resolved = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("graph-runtime profile"),
            size: bytes,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        if count > 0 {
            let mut encoder = device.create_command_encoder(&Default::default());
            encoder.resolve_query_set(&self.queries, 0..count, &resolved, 0);
            gpu.queue().submit([encoder.finish()]);
        }
        // Each timestamp is a little-endian u64, read as two u32 words.
        let words = ReadFuture::<u32>::start(gpu, &resolved, 2 * count as usize).wait()?;
        let ticks: Vec<u64> = words
            .chunks_exact(2)
            .map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32))
            .collect();
        let spans = self
            .nodes
            .iter()
            .enumerate()
            .map(|(k, &node)| (node, ticks[2 * k], ticks[2 * k + 1]));
        Ok(profile_of(gpu, desc, fused, "portable", spans))
    }
}

/// An error naming the feature when the device has no timestamp queries.
pub(crate) fn check_timestamps(gpu: &Gpu, graph: &str) -> Result<(), Error> {
    if gpu
        .device()
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        return Ok(());
    }
    Err(Error::Unsupported {
        graph: graph.to_string(),
        what: format!(
            "profiling needs timestamp queries, which adapter `{}` does not offer",
            gpu.summary()
        ),
    })
}

/// The profile of dispatches timed as `(node, start, end)` in the device's ticks, in recording order, with
/// times from the earliest start and each dispatch's nodes named from `desc` and `fused`.
pub(crate) fn profile_of(
    gpu: &Gpu,
    desc: &GraphDesc,
    fused: &[FusedGroup],
    recorder: &'static str,
    spans: impl Iterator<Item = (u32, u64, u64)> + Clone,
) -> Profile {
    let period = f64::from(gpu.queue().get_timestamp_period());
    let origin = spans.clone().map(|(_, start, _)| start).min().unwrap_or(0);
    let ns = |t: u64| t.saturating_sub(origin) as f64 * period;
    let dispatches = spans
        .map(|(node, start, end)| {
            let nodes = match fused.iter().find(|g| g.node == node) {
                Some(g) => g.names.clone(),
                None => vec![
                    desc.nodes
                        .get(node as usize)
                        .map_or_else(|| format!("node {node}"), |n| n.name.to_string()),
                ],
            };
            DispatchTime {
                node,
                nodes,
                start_ns: ns(start),
                end_ns: ns(end),
            }
        })
        .collect();
    Profile {
        graph: desc.name.to_string(),
        recorder,
        dispatches,
        // Filled in by the baked graph, which has the plan.
        memory: Vec::new(),
    }
}

/// The timestamp queries a profiled recording writes: one when its level may start, one when it has ended.
pub(crate) struct TimedDispatch {
    pub node: u32,
    pub start_query: u32,
    pub end_query: u32,
}
