//! The recorder seam: what a replay asks of the GPU side, and the one loop over partitions and host tasks
//! that asks it. The portable wgpu recorder ([`crate::wgpu_recorder`]) is one implementation; a native one
//! (explicit barriers from the plan, reusable command buffers) fits behind the same trait without touching
//! the loop, the plan or the host-task handling.

#![forbid(unsafe_code)]

use graph_core::plan::{BufferHazard, Plan, PlanPartition, PlanStep, Transfer};

use crate::error::Error;

/// Turns a plan's GPU partitions into submitted GPU work.
pub(crate) trait Recorder {
    /// A submitted partition, which the loop may wait for.
    type Submitted: Clone;

    /// A GPU partition starts.
    fn begin(&mut self);
    /// The level about to be recorded must be ordered after these hazards (never empty).
    fn barrier(&mut self, hazards: &[BufferHazard]);
    /// Node `node`'s kernel with these workgroup counts.
    fn dispatch(&mut self, node: u32, workgroups: [u32; 3]);
    /// Block `block`'s gate, before one of its runs.
    fn gate(&mut self, block: u32);
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
    /// Gives `record` a wgpu command encoder at the current step, in order with what was recorded before
    /// and after (an interop task's place).
    fn with_encoder(
        &mut self,
        record: &mut dyn FnMut(&mut wgpu::CommandEncoder) -> Result<(), Error>,
    ) -> Result<(), Error>;
}

/// Records and submits `plan` through `recorder`, running each host phase (by `host`, with the phase's nodes
/// in order) once the partition before it has finished, and each interop task (by `interop`, with the
/// recorder, whose encoder it records into) in its place in its partition. `workgroups[n]` are node `n`'s
/// counts for this replay. Returns the replay's last submission, if it made any, also when a host phase
/// after it already waited for it: a replay's readbacks are mapped by a poll of the device after their
/// submission, which only a wait for it makes (see [`crate::Submission::wait`]).
pub(crate) fn record_replay<R: Recorder + ?Sized>(
    plan: &Plan,
    workgroups: &[[u32; 3]],
    recorder: &mut R,
    mut host: impl FnMut(&[u32]) -> Result<(), Error>,
    mut interop: impl FnMut(u32, &mut R) -> Result<(), Error>,
) -> Result<Option<R::Submitted>, Error> {
    // The last submission, and the one the next host phase must wait for (none once it was waited for).
    let (mut last, mut unwaited) = (None, None);
    for partition in &plan.partitions {
        match partition {
            PlanPartition::Gpu { levels } => {
                recorder.begin();
                for level in levels {
                    if !level.hazards.is_empty() {
                        recorder.barrier(&level.hazards);
                    }
                    for step in &level.steps {
                        match *step {
                            PlanStep::Dispatch { node } => {
                                let counts = workgroups.get(node as usize).copied();
                                let counts = counts.unwrap_or([0; 3]);
                                // No workgroups (an inactive alternative, a size of zero): nothing to record.
                                if !counts.contains(&0) {
                                    recorder.dispatch(node, counts);
                                }
                            }
                            PlanStep::Copy {
                                src,
                                src_offset,
                                dst,
                                dst_offset,
                                bytes,
                                ..
                            } => recorder.copy(src, src_offset, dst, dst_offset, bytes),
                            PlanStep::Upload(t) => recorder.upload(t),
                            PlanStep::Readback(t) => recorder.readback(t),
                            PlanStep::Interop { node } => interop(node, recorder)?,
                            PlanStep::Gate { block } => recorder.gate(block),
                        }
                    }
                }
                let submitted = recorder.submit()?;
                last = Some(submitted.clone());
                unwaited = Some(submitted);
            }
            PlanPartition::Host { nodes } => {
                // Only this replay's partition before: nothing to wait for when the graph starts here.
                if let Some(submitted) = unwaited.take() {
                    recorder.wait(submitted)?;
                }
                host(nodes)?;
            }
        }
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use graph_core::builder::{GraphBuilder, KernelSpec};
    use graph_core::ir::AccessMode;
    use graph_core::library::Library;
    use graph_core::plan::plan;

    use super::*;

    /// Records what it is asked to do, as words.
    #[derive(Default)]
    struct Log {
        calls: Vec<String>,
        submitted: usize,
    }

    impl Recorder for Log {
        type Submitted = usize;

        fn begin(&mut self) {
            self.calls.push("begin".into());
        }
        fn barrier(&mut self, hazards: &[BufferHazard]) {
            let buffers: Vec<String> = hazards.iter().map(|h| h.buffer.to_string()).collect();
            self.calls.push(format!("barrier {}", buffers.join(",")));
        }
        fn dispatch(&mut self, node: u32, workgroups: [u32; 3]) {
            self.calls.push(format!("dispatch {node} {workgroups:?}"));
        }
        fn gate(&mut self, block: u32) {
            self.calls.push(format!("gate {block}"));
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
        let plan = plan(&desc, &[8, 8, 8, 8]).expect("a plan");
        let workgroups = [[1, 1, 1], [0; 3], [0; 3], [2, 1, 1]];
        let mut log = Log::default();
        let mut ran = Vec::new();
        let last = record_replay(
            &plan,
            &workgroups,
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
                "dispatch 0 [1, 1, 1]",
                "barrier 1",
                "copy 1@0->3@0 32",
                "submit 1",
                "wait 1",
                "begin",
                "dispatch 3 [2, 1, 1]",
                "submit 2",
            ]
        );
        assert_eq!(ran, [2]);
        assert_eq!(last, Some(2));
    }

    #[test]
    fn a_submission_a_trailing_host_phase_waited_for_is_still_the_replays_last() {
        let mut b = GraphBuilder::new("Trailing");
        b.input("x", "f32").output("y", "f32");
        b.kernel("k", add_one("x", "y"));
        b.host("h", &[("y", AccessMode::Read)]);
        let desc = b.build(&Library::EMPTY).expect("a good graph");
        let plan = plan(&desc, &[8, 8]).expect("a plan");
        let mut log = Log::default();
        let last = record_replay(&plan, &[[1; 3]; 2], &mut log, |_| Ok(()), |_, _| Ok(()))
            .expect("recorded");
        assert_eq!(
            log.calls,
            ["begin", "dispatch 0 [1, 1, 1]", "submit 1", "wait 1"]
        );
        // Waiting for the replay waits for it again, which maps what its readbacks copied.
        assert_eq!(last, Some(1));
    }

    #[test]
    fn a_failing_host_task_stops_the_replay_before_the_next_partition() {
        let desc = split();
        let plan = plan(&desc, &[8, 8, 8, 8]).expect("a plan");
        let mut log = Log::default();
        let result = record_replay(
            &plan,
            &[[1; 3]; 4],
            &mut log,
            |_| Err(Error::Gpu("planted".into())),
            |_, _| Ok(()),
        );
        assert!(matches!(result, Err(Error::Gpu(_))));
        assert_eq!(log.calls.last().map(String::as_str), Some("wait 1"));
        assert_eq!(log.submitted, 1, "nothing after the failed host phase");
    }
}
