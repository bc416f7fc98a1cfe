//! The recorder seam: what a replay asks of the GPU side, and the one loop over the program's partitions and
//! host tasks that asks it. Both recorders read the executable program ([`crate::program`]) and nothing
//! else: the portable wgpu recorder ([`crate::wgpu_recorder`]) records each segment's dispatches at every
//! replay, the native one ([`crate::native_recorder`]) executes the command buffer it recorded from the same
//! segment.

#![forbid(unsafe_code)]

use graph_core::plan::Transfer;

use crate::error::Error;
use crate::gpu::Gpu;
use crate::host::Prefetched;
use crate::program::{Partition, Program, Segment, Step};
use crate::scope::OpScope;
use crate::wait::Work;

/// The environment variable that picks the recorder: `portable`, `native`, or unset (native where it can).
pub const RECORDER_ENV: &str = "GRAPH_RUNTIME_RECORDER";

/// Where the native recorder's kernels read the graph's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NativeParamsIn {
    /// A uniform buffer written (a queued write) before each replay whose parameters changed: new values
    /// record nothing again.
    #[default]
    Buffer,
    /// Push constants recorded into the command buffers: a replay with new values records them again, after
    /// the graph's previous replay has finished. Only for a graph whose parameters are push constants.
    PushConstants,
}

/// Which recorder is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Choice {
    Portable,
    /// Native where the graph and device allow it, else portable.
    Prefer,
    /// Native or an error.
    Require,
}

/// What the environment asks for ([`RECORDER_ENV`]).
pub(crate) fn choice() -> Choice {
    match std::env::var(RECORDER_ENV).as_deref() {
        Ok("portable") => Choice::Portable,
        Ok("native") => Choice::Require,
        _ => Choice::Prefer,
    }
}

/// The native pipelines and descriptor sets a [`NativeReplay`] made, rather than took from the one before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct NativeBuilt {
    pub pipelines: usize,
    pub sets: usize,
    /// wgpu pipelines of the init pass compiled (one per texture binding not seen before).
    pub init_pipelines: usize,
}

/// Turns a program's GPU partitions into submitted GPU work.
pub(crate) trait Recorder {
    /// A submitted partition, which the loop may wait for.
    type Submitted: Clone;

    /// A GPU partition starts.
    fn begin(&mut self);
    /// Segment `index` of the program, `segment`, with node `n`'s workgroup counts for this replay at
    /// `workgroups[n]` (a dispatch of none is not recorded).
    fn segment(&mut self, index: usize, segment: &Segment, workgroups: &[[u32; 3]]);
    /// `bytes` of buffer `src` from byte `src_offset` into buffer `dst` at byte `dst_offset`.
    fn copy(&mut self, src: u32, src_offset: u64, dst: u32, dst_offset: u64, bytes: u64);
    /// Upload node `t.node`'s staged data into its buffer.
    fn upload(&mut self, t: Transfer);
    /// Readback node `t.node`'s range of its buffer, out to this replay's readback buffer.
    fn readback(&mut self, t: Transfer);
    /// The partition is recorded: submit it.
    fn submit(&mut self) -> Result<Self::Submitted, Error>;
    /// Blocks until a submitted partition has finished.
    fn wait(&mut self, submitted: Self::Submitted) -> Result<(), Error>;
    /// Readies a submitted partition to be awaited rather than waited for ([`Waiting::Async`]), as `wait`
    /// would before it blocks; the work to await (`None` where there is nothing to await it by).
    fn to_await(&mut self, submitted: Self::Submitted) -> Option<Work>;
    /// Gives `record` a wgpu command encoder at the current step, in order with what was recorded before
    /// and after (an interop task's place).
    fn with_encoder(
        &mut self,
        record: &mut dyn FnMut(&mut wgpu::CommandEncoder) -> Result<(), Error>,
    ) -> Result<(), Error>;
}

/// How the loop waits for the partition before a host phase.
pub(crate) enum Waiting<'a, 's> {
    /// Blocking this thread ([`Recorder::wait`]); the host tasks read what they read when they read it.
    Blocking,
    /// By awaiting the GPU's finishing ([`Gpu::work_done`]); then the buffers the phase's tasks read are
    /// fetched, awaited too ([`Prefetched`]), and the tasks read those copies. The web's only way.
    ///
    /// The operation's scope (`scope`) covers only what runs between awaits: it is finished before each
    /// await and opened again after it, so a scope never stays open while other work on this thread runs
    /// (wgpu's scopes are a stack per thread, which two awaited replays interleaving would break).
    Async(&'a Gpu, &'s mut Option<OpScope<'a>>),
}

impl<'a> Waiting<'a, '_> {
    /// Finishes the scope before an await; its error, if the device reported one meanwhile.
    fn suspend(&mut self) -> Result<(), Error> {
        match self {
            Waiting::Async(_, scope) => match scope.take() {
                Some(open) => open.finish(Ok(())),
                None => Ok(()),
            },
            Waiting::Blocking => Ok(()),
        }
    }

    /// Opens the scope again after an await.
    fn resume(&mut self) {
        if let Waiting::Async(gpu, scope) = self {
            **scope = Some(OpScope::enter(gpu));
        }
    }
}

/// [`replay_partitions`], blocking before host phases (what a replay does), with no fetching: the unit tests'
/// way into the loop.
#[cfg(test)]
pub(crate) fn record_replay<R: Recorder + ?Sized>(
    program: &Program,
    workgroups: &[[u32; 3]],
    enabled: &[bool],
    recorder: &mut R,
    mut host: impl FnMut(&[u32]) -> Result<(), Error>,
    interop: impl FnMut(u32, &mut R) -> Result<(), Error>,
) -> Result<Option<R::Submitted>, Error> {
    let replay = replay_partitions(
        (program, workgroups, enabled),
        recorder,
        Waiting::Blocking,
        |_| std::future::ready(Ok(Prefetched::default())),
        |nodes, _| host(nodes),
        interop,
    );
    now(replay)?
}

/// Records and submits `program` through `recorder`, running each host phase (by `host`, with the phase's
/// nodes in order) once the partition before it has finished, and each interop task (by `interop`, with the
/// recorder, whose encoder it records into) in its place in its partition. `workgroups[n]` are node `n`'s
/// counts for this replay; a copy node `n` with `enabled[n]` false is left out (where `enabled` has no entry
/// for it, it runs). Returns the replay's last submission, if it made any, also when a host phase
/// after it already waited for it: a replay's readbacks are mapped by a poll of the device after their
/// submission, which only a wait for it makes (see [`crate::Submission::wait`]).
///
/// Waits before host phases as `waiting` says: with [`Waiting::Async`], `prefetch` fetches what a phase's
/// tasks read (after the partition before it finished) and `host` runs them over it.
pub(crate) async fn replay_partitions<R, F>(
    (program, workgroups, enabled): (&Program, &[[u32; 3]], &[bool]),
    recorder: &mut R,
    mut waiting: Waiting<'_, '_>,
    mut prefetch: impl FnMut(&[u32]) -> F,
    mut host: impl FnMut(&[u32], Option<&Prefetched>) -> Result<(), Error>,
    mut interop: impl FnMut(u32, &mut R) -> Result<(), Error>,
) -> Result<Option<R::Submitted>, Error>
where
    R: Recorder + ?Sized,
    F: Future<Output = Result<Prefetched, Error>>,
{
    // The last submission, and the one the next host phase must wait for (none once it was waited for).
    let (mut last, mut unwaited) = (None, None);
    for partition in &program.partitions {
        match partition {
            Partition::Gpu(steps) => {
                recorder.begin();
                for step in steps {
                    match *step {
                        Step::Segment(index) => {
                            if let Some(segment) = program.segments.get(index) {
                                recorder.segment(index, segment, workgroups);
                            }
                        }
                        Step::Copy { node, .. }
                            if !enabled.get(node as usize).copied().unwrap_or(true) => {}
                        Step::Copy {
                            src,
                            src_offset,
                            dst,
                            dst_offset,
                            bytes,
                            ..
                        } => recorder.copy(src, src_offset, dst, dst_offset, bytes),
                        Step::Upload(t) => recorder.upload(t),
                        Step::Readback(t) => recorder.readback(t),
                        Step::Interop(node) => interop(node, recorder)?,
                    }
                }
                let submitted = recorder.submit()?;
                last = Some(submitted.clone());
                unwaited = Some(submitted);
            }
            Partition::Host(nodes) => match waiting {
                Waiting::Blocking => {
                    // Only this replay's partition before: nothing to wait for when the graph starts here.
                    if let Some(submitted) = unwaited.take() {
                        recorder.wait(submitted)?;
                    }
                    host(nodes, None)?;
                }
                Waiting::Async(gpu, _) => {
                    let work = unwaited.take().and_then(|s| recorder.to_await(s));
                    let fetch = prefetch(nodes);
                    waiting.suspend()?;
                    if let Some(work) = work {
                        gpu.work_done(work).await?;
                    }
                    let prefetched = fetch.await;
                    waiting.resume();
                    host(nodes, Some(&prefetched?))?;
                }
            },
        }
    }
    Ok(last)
}

/// The output of a future that never waits (a replay that blocks before its host phases), from one poll;
/// an error if it did wait, which would be the runtime's bug.
pub(crate) fn now<F: Future>(future: F) -> Result<F::Output, Error> {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    {
        std::task::Poll::Ready(output) => Ok(output),
        std::task::Poll::Pending => Err(Error::Wait(
            "a blocking replay was left waiting on a future (a bug of graph-runtime)".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::program::{DeviceLimits, Op};
    use graph_core::builder::{GraphBuilder, KernelSpec};
    use graph_core::ir::AccessMode;
    use graph_core::library::Library;

    use super::*;

    const LIMITS: DeviceLimits = DeviceLimits::WEBGPU_DEFAULTS;

    fn compile(desc: &graph_core::desc::GraphDesc, lens: &[u32]) -> Program {
        Program::compile(desc, lens, LIMITS, crate::program::MemoryOptions::APART)
            .expect("a program")
    }

    /// Records what it is asked to do, as words.
    #[derive(Default)]
    struct Log {
        calls: Vec<String>,
        submitted: usize,
    }

    impl Recorder for Log {
        type Submitted = usize;

        fn to_await(&mut self, _submitted: usize) -> Option<Work> {
            None
        }

        fn begin(&mut self) {
            self.calls.push("begin".into());
        }
        fn segment(&mut self, index: usize, segment: &Segment, workgroups: &[[u32; 3]]) {
            self.calls.push(format!("segment {index}"));
            for level in &segment.levels {
                if !level.hazards.is_empty() {
                    let buffers: Vec<String> =
                        level.hazards.iter().map(|h| h.buffer.to_string()).collect();
                    self.calls.push(format!("barrier {}", buffers.join(",")));
                }
                for op in &level.ops {
                    match *op {
                        Op::Dispatch(node) => {
                            let counts = workgroups[node as usize];
                            if !counts.contains(&0) {
                                self.calls.push(format!("dispatch {node} {counts:?}"));
                            }
                        }
                        Op::Gate(block) => self.calls.push(format!("gate {block}")),
                    }
                }
            }
        }
        fn copy(&mut self, src: u32, src_offset: u64, dst: u32, dst_offset: u64, bytes: u64) {
            self.calls.push(format!(
                "copy {src}@{src_offset}->{dst}@{dst_offset} {bytes}"
            ));
        }
        fn upload(&mut self, t: Transfer) {
            self.calls.push(format!(
                "upload {}->{}@{} {}",
                t.node, t.buffer, t.offset, t.bytes
            ));
        }
        fn readback(&mut self, t: Transfer) {
            self.calls.push(format!(
                "readback {}@{}->{} {}",
                t.buffer, t.offset, t.node, t.bytes
            ));
        }
        fn submit(&mut self) -> Result<usize, Error> {
            self.submitted += 1;
            self.calls.push(format!("submit {}", self.submitted));
            Ok(self.submitted)
        }
        fn wait(&mut self, submitted: usize) -> Result<(), Error> {
            self.calls.push(format!("wait {submitted}"));
            Ok(())
        }
        fn with_encoder(
            &mut self,
            _: &mut dyn FnMut(&mut wgpu::CommandEncoder) -> Result<(), Error>,
        ) -> Result<(), Error> {
            self.calls.push("encoder".into());
            Ok(())
        }
    }

    fn add_one(src: &str, dst: &str) -> KernelSpec {
        KernelSpec::wgsl(format!(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                 if (gid.x < arrayLength(&{dst})) {{ {dst}[gid.x] = {src}[gid.x] + 1.0; }}
             }}"
        ))
        .read(src)
        .write(dst)
    }

    /// `k1: x -> y`, `c: y -> w`, host `h` reads y, `k2: y -> z` after it.
    fn split() -> graph_core::desc::GraphDesc {
        let mut b = GraphBuilder::new("Split");
        b.input("x", "f32")
            .output("y", "f32")
            .output("z", "f32")
            .output("w", "f32");
        b.kernel("k1", add_one("x", "y"));
        b.copy("c", "y", "w");
        b.host("h", &[("y", AccessMode::Read)]);
        b.kernel("k2", add_one("y", "z"));
        b.edge("h", "k2");
        b.build(&Library::EMPTY).expect("a good graph")
    }

    #[test]
    fn the_loop_records_levels_waits_before_host_tasks_and_returns_the_last_submission() {
        let desc = split();
        let program = compile(&desc, &[8, 8, 8, 8]);
        let workgroups = [[1, 1, 1], [0; 3], [0; 3], [2, 1, 1]];
        let mut log = Log::default();
        let mut ran = Vec::new();
        let last = record_replay(
            &program,
            &workgroups,
            &[],
            &mut log,
            |nodes| {
                ran.extend_from_slice(nodes);
                Ok(())
            },
            |node, log: &mut Log| {
                log.calls.push(format!("interop {node}"));
                Ok(())
            },
        )
        .expect("recorded");
        assert_eq!(
            log.calls,
            [
                "begin",
                "segment 0",
                "dispatch 0 [1, 1, 1]",
                "barrier 1",
                "copy 1@0->3@0 32",
                "segment 1",
                "submit 1",
                "wait 1",
                "begin",
                "segment 2",
                "dispatch 3 [2, 1, 1]",
                "submit 2",
            ]
        );
        assert_eq!(ran, [2]);
        assert_eq!(last, Some(2));
    }

    #[test]
    fn a_copy_turned_off_is_left_out_and_the_rest_is_recorded_as_before() {
        let desc = split();
        let program = compile(&desc, &[8, 8, 8, 8]);
        let workgroups = [[1, 1, 1], [0; 3], [0; 3], [2, 1, 1]];
        let mut log = Log::default();
        record_replay(
            &program,
            &workgroups,
            &[true, false, true, true],
            &mut log,
            |_| Ok(()),
            |_, _| Ok(()),
        )
        .expect("recorded");
        assert!(log.calls.iter().any(|c| c == "dispatch 0 [1, 1, 1]"));
        assert!(
            !log.calls.iter().any(|c| c.starts_with("copy")),
            "{:?}",
            log.calls
        );
        assert!(log.calls.iter().any(|c| c == "dispatch 3 [2, 1, 1]"));
    }

    #[test]
    fn a_submission_a_trailing_host_phase_waited_for_is_still_the_replays_last() {
        let mut b = GraphBuilder::new("Trailing");
        b.input("x", "f32").output("y", "f32");
        b.kernel("k", add_one("x", "y"));
        b.host("h", &[("y", AccessMode::Read)]);
        let desc = b.build(&Library::EMPTY).expect("a good graph");
        let program = compile(&desc, &[8, 8]);
        let mut log = Log::default();
        let last = record_replay(
            &program,
            &[[1; 3]; 2],
            &[],
            &mut log,
            |_| Ok(()),
            |_, _| Ok(()),
        )
        .expect("recorded");
        assert_eq!(
            log.calls,
            [
                "begin",
                "segment 0",
                "dispatch 0 [1, 1, 1]",
                "submit 1",
                "wait 1"
            ]
        );
        // Waiting for the replay waits for it again, which maps what its readbacks copied.
        assert_eq!(last, Some(1));
    }

    #[test]
    fn a_failing_host_task_stops_the_replay_before_the_next_partition() {
        let desc = split();
        let program = compile(&desc, &[8, 8, 8, 8]);
        let mut log = Log::default();
        let result = record_replay(
            &program,
            &[[1; 3]; 4],
            &[],
            &mut log,
            |_| Err(Error::Gpu("planted".into())),
            |_, _| Ok(()),
        );
        assert!(matches!(result, Err(Error::Gpu(_))));
        assert_eq!(log.calls.last().map(String::as_str), Some("wait 1"));
        assert_eq!(log.submitted, 1, "nothing after the failed host phase");
    }
}
