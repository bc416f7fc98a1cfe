//! What one submission and its wait cost beneath the runtime, on the device `Gpu::new_blocking` picks: the
//! floor under every replay's wall and CPU time in `replay_vs_hand_written`.
//!
//! - **wgpu**: `queue.submit` of nothing, of one empty encoder, and of one encoder that fills a 256 KiB
//!   buffer, each waited for with `device.poll(Wait)` (what a hand-written wgpu program does);
//! - **Vulkan**, on the same device and queue through wgpu's hal interop: a command buffer recorded once
//!   (empty, or the same fill), `vkQueueSubmit` with a fence, then `vkWaitForFences`;
//! - **word**: the same command buffer followed by a barrier and a 4-byte fill of host-visible memory, the
//!   host reading that word in a loop: when the host can see the work finish, as the native recorder's wait
//!   does, against when the fence says so (printed beside it);
//! - **timeline**: the command buffer recorded once, submitted signalling a timeline semaphore, the host
//!   reading the semaphore's value in a loop (`vkGetSemaphoreCounterValue`): what a direct replay's wait
//!   reads, against the word.
//!
//! Printed: medians (and the 10th and 90th percentiles) of submit-to-finished wall time, the median CPU time
//! of the submit call, and for the word rows the median time from the submit until the word was seen. Run: `cargo bench -p graph-runtime --bench submission_floor [-- --runs N]` (default
//! 2000). Only on a Vulkan device.
//!
//! This file and `graph-runtime/src/native.rs` are the only places that call Vulkan directly: here to measure
//! the driver beneath wgpu. Each `unsafe` block says what it relies on; none of it outlives `main`, which
//! waits for the device before destroying what it made.

use std::time::{Duration, Instant};

use ash::vk;
use graph_runtime::{Error, Gpu, wgpu};

const FILL_BYTES: u64 = 256 << 10;

/// Prints one row: `sample` runs once per iteration and returns (wall, submit CPU, optional extra time).
fn row(
    name: &str,
    runs: usize,
    mut sample: impl FnMut() -> (Duration, Duration, Option<Duration>),
) {
    for _ in 0..runs / 10 {
        sample();
    }
    let (mut walls, mut cpus, mut extras) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (wall, cpu, extra) = sample();
        walls.push(wall);
        cpus.push(cpu);
        extras.extend(extra);
    }
    let us = |v: &mut Vec<Duration>, q: usize| {
        v.sort();
        v.get(v.len() * q / 100)
            .map_or(0.0, |d| d.as_secs_f64() * 1e6)
    };
    let seen = if extras.is_empty() {
        "-".to_string()
    } else {
        format!("{:.1}", us(&mut extras, 50))
    };
    println!(
        "| {name:<40} | {:>6.1} | {:>6.1} | {:>6.1} | {:>10.1} | {seen:>9} |",
        us(&mut walls, 50),
        us(&mut walls, 10),
        us(&mut walls, 90),
        us(&mut cpus, 50),
    );
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(2000);
    // wgpu's own queue, beneath the runtime: the runtime does not submit replays itself here.
    // SAFETY: set before any other thread exists.
    unsafe { std::env::set_var(graph_runtime::env::SUBMIT_ENV, "wgpu") };
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    println!(
        "medians of {runs} runs (after {} warm-up runs), microseconds",
        runs / 10
    );
    println!();
    println!("| side | wall | p10 | p90 | submit CPU | word seen |");
    println!("|---|---:|---:|---:|---:|---:|");
    let device = gpu.device();
    let queue = gpu
        .queue()
        .wgpu()
        .expect("wgpu's queue: the runtime was asked not to submit itself");
    let target = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("submission floor fill"),
        size: FILL_BYTES,
        usage: wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let wait = |index: wgpu::SubmissionIndex| {
        let _ = device.poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: None,
        });
    };
    let submit = |encoder: Option<wgpu::CommandEncoder>| {
        let start = Instant::now();
        let index = queue.submit(encoder.map(wgpu::CommandEncoder::finish));
        let cpu = start.elapsed();
        wait(index);
        (start.elapsed(), cpu, None)
    };
    row("wgpu: nothing", runs, || submit(None));
    row("wgpu: one empty encoder", runs, || {
        submit(Some(device.create_command_encoder(&Default::default())))
    });
    row("wgpu: one encoder, a 256 KiB fill", runs, || {
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.clear_buffer(&target, 0, None);
        submit(Some(encoder))
    });
    match Vulkan::new(&gpu, &target) {
        Some(Ok(vulkan)) => {
            let measured = vulkan.rows(runs);
            vulkan.destroy();
            measured?;
        }
        Some(Err(e)) => return Err(Error::Gpu(e)),
        None => println!("(not a Vulkan device: no Vulkan rows)"),
    }
    Ok(())
}

/// What the raw Vulkan rows use, made on wgpu's device. Invariants: every handle was made on `raw`, the
/// device behind `gpu`, which outlives this struct; `destroy` waits for the device first; `word` points at
/// `memory`, mapped until `destroy`.
struct Vulkan<'a> {
    gpu: &'a Gpu,
    raw: ash::Device,
    queue: vk::Queue,
    fill: vk::Buffer,
    pool: vk::CommandPool,
    /// Empty, the fill; then each again with the word's write, recorded at each run.
    recorded: [vk::CommandBuffer; 2],
    with_word: [vk::CommandBuffer; 2],
    fence: vk::Fence,
    timeline: vk::Semaphore,
    word_buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    word: *const u32,
}

fn vk_err(what: &'static str) -> impl Fn(vk::Result) -> String {
    move |e| format!("Vulkan: {what}: {e}")
}

impl<'a> Vulkan<'a> {
    fn new(gpu: &'a Gpu, fill: &wgpu::Buffer) -> Option<Result<Self, String>> {
        // SAFETY: the hal objects are only read for their handles and function tables while `gpu` and `fill`
        // are alive, which they are for the whole of `main`.
        let (raw, family, properties, queue, fill) = unsafe {
            let device = gpu.device().as_hal::<wgpu::hal::api::Vulkan>()?;
            let properties = device
                .shared_instance()
                .raw_instance()
                .get_physical_device_memory_properties(device.raw_physical_device());
            let queue = gpu
                .queue()
                .wgpu()?
                .as_hal::<wgpu::hal::api::Vulkan>()?
                .as_raw();
            let fill = fill.as_hal::<wgpu::hal::api::Vulkan>()?.raw_handle();
            (
                device.raw_device().clone(),
                device.queue_family_index(),
                properties,
                queue,
                fill,
            )
        };
        let mut vulkan = Vulkan {
            gpu,
            raw,
            queue,
            fill,
            pool: vk::CommandPool::null(),
            recorded: [vk::CommandBuffer::null(); 2],
            with_word: [vk::CommandBuffer::null(); 2],
            fence: vk::Fence::null(),
            timeline: vk::Semaphore::null(),
            word_buffer: vk::Buffer::null(),
            memory: vk::DeviceMemory::null(),
            word: std::ptr::null(),
        };
        let made = vulkan.make(family, &properties);
        Some(match made {
            Ok(()) => Ok(vulkan),
            Err(e) => {
                vulkan.destroy();
                Err(e)
            }
        })
    }

    fn make(
        &mut self,
        family: u32,
        properties: &vk::PhysicalDeviceMemoryProperties,
    ) -> Result<(), String> {
        let raw = &self.raw;
        // SAFETY: plain object creation on a live device, each handle stored at once for `destroy`; the
        // word's memory is host-visible and host-coherent, bound to the buffer it was sized for, and mapped
        // once; the command buffers name only `fill` (alive for `main`) and are recorded once.
        unsafe {
            self.pool = raw
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default().queue_family_index(family),
                    None,
                )
                .map_err(vk_err("command pool"))?;
            let buffers = raw
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(4),
                )
                .map_err(vk_err("command buffers"))?;
            self.recorded = [buffers[0], buffers[1]];
            self.with_word = [buffers[2], buffers[3]];
            for (i, &cb) in self.recorded.iter().enumerate() {
                raw.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                    .map_err(vk_err("begin"))?;
                if i == 1 {
                    raw.cmd_fill_buffer(cb, self.fill, 0, FILL_BYTES, 0);
                }
                raw.end_command_buffer(cb).map_err(vk_err("end"))?;
            }
            self.fence = raw
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(vk_err("fence"))?;
            let mut kind = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            self.timeline = raw
                .create_semaphore(
                    &vk::SemaphoreCreateInfo::default().push_next(&mut kind),
                    None,
                )
                .map_err(vk_err("timeline semaphore"))?;
            self.word_buffer = raw
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(4)
                        .usage(vk::BufferUsageFlags::TRANSFER_DST),
                    None,
                )
                .map_err(vk_err("word buffer"))?;
            let needs = raw.get_buffer_memory_requirements(self.word_buffer);
            let wanted =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let kind = properties
                .memory_types_as_slice()
                .iter()
                .enumerate()
                .position(|(i, t)| {
                    needs.memory_type_bits & (1 << i) != 0 && t.property_flags.contains(wanted)
                })
                .ok_or("no host-visible, host-coherent memory")?;
            self.memory = raw
                .allocate_memory(
                    &vk::MemoryAllocateInfo::default()
                        .allocation_size(needs.size)
                        .memory_type_index(kind as u32),
                    None,
                )
                .map_err(vk_err("word memory"))?;
            raw.bind_buffer_memory(self.word_buffer, self.memory, 0)
                .map_err(vk_err("bind"))?;
            let mapped = raw
                .map_memory(self.memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .map_err(vk_err("map"))?;
            self.word = mapped.cast::<u32>();
            mapped.cast::<u32>().write_volatile(0);
        }
        Ok(())
    }

    /// The Vulkan rows.
    fn rows(&self, runs: usize) -> Result<(), Error> {
        let raw = &self.raw;
        let mut failed = None;
        for (name, cb) in [
            ("Vulkan: empty, fence", self.recorded[0]),
            ("Vulkan: a 256 KiB fill, fence", self.recorded[1]),
        ] {
            row(name, runs, || {
                let start = Instant::now();
                let submitted = self.submit(cb);
                let cpu = start.elapsed();
                let waited = submitted.and_then(|()| self.wait());
                if let Err(e) = waited {
                    failed.get_or_insert(e);
                }
                (start.elapsed(), cpu, None)
            });
        }
        let mut value = 0u32;
        for (i, name) in [
            "Vulkan: empty, word then fence",
            "Vulkan: a 256 KiB fill, word then fence",
        ]
        .into_iter()
        .enumerate()
        {
            let cb = self.with_word[i];
            row(name, runs, || {
                value += 1;
                let before = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
                    .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)];
                let after = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                    .dst_access_mask(vk::AccessFlags::HOST_READ)];
                // SAFETY: `cb` is not pending (the run before waited for its fence), so it may be recorded
                // again; it names `fill` and the word's buffer, both alive.
                let submitted = unsafe {
                    raw.begin_command_buffer(
                        cb,
                        &vk::CommandBufferBeginInfo::default()
                            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                    )
                    .and_then(|()| {
                        if i == 1 {
                            raw.cmd_fill_buffer(cb, self.fill, 0, FILL_BYTES, 0);
                        }
                        raw.cmd_pipeline_barrier(
                            cb,
                            vk::PipelineStageFlags::ALL_COMMANDS,
                            vk::PipelineStageFlags::TRANSFER,
                            vk::DependencyFlags::empty(),
                            &before,
                            &[],
                            &[],
                        );
                        raw.cmd_fill_buffer(cb, self.word_buffer, 0, 4, value);
                        raw.cmd_pipeline_barrier(
                            cb,
                            vk::PipelineStageFlags::TRANSFER,
                            vk::PipelineStageFlags::HOST,
                            vk::DependencyFlags::empty(),
                            &after,
                            &[],
                            &[],
                        );
                        raw.end_command_buffer(cb)
                    })
                };
                let start = Instant::now();
                let submitted = submitted.and_then(|()| self.submit(cb));
                let cpu = start.elapsed();
                let mut seen = None;
                // A second at most: a word that never comes is a failure, reported after the fence's wait.
                while submitted.is_ok() && start.elapsed() < Duration::from_secs(1) {
                    // SAFETY: `word` points at mapped, host-coherent memory of ours; the GPU writes it whole.
                    if unsafe { self.word.read_volatile() } == value {
                        seen = Some(start.elapsed());
                        break;
                    }
                    std::hint::spin_loop();
                }
                if submitted.is_ok() && seen.is_none() {
                    failed.get_or_insert(vk::Result::TIMEOUT);
                }
                let waited = submitted.and_then(|()| self.wait());
                if let Err(e) = waited {
                    failed.get_or_insert(e);
                }
                (start.elapsed(), cpu, seen)
            });
        }
        let mut signalled = 0u64;
        for (name, cb) in [
            ("Vulkan: empty, timeline", self.recorded[0]),
            ("Vulkan: a 256 KiB fill, timeline", self.recorded[1]),
        ] {
            row(name, runs, || {
                signalled += 1;
                let buffers = [cb];
                let signals = [self.timeline];
                let values = [signalled];
                let mut timeline =
                    vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
                let info = vk::SubmitInfo::default()
                    .command_buffers(&buffers)
                    .signal_semaphores(&signals)
                    .push_next(&mut timeline);
                let start = Instant::now();
                // SAFETY: `cb` is recorded and not pending (each run waits for its value before the next
                // submits); the queue is wgpu's, which nothing else submits to meanwhile.
                let submitted = unsafe { raw.queue_submit(self.queue, &[info], vk::Fence::null()) };
                let cpu = start.elapsed();
                let mut seen = None;
                while submitted.is_ok() && start.elapsed() < Duration::from_secs(1) {
                    // SAFETY: a live timeline semaphore of ours.
                    match unsafe { raw.get_semaphore_counter_value(self.timeline) } {
                        Ok(v) if v >= signalled => {
                            seen = Some(start.elapsed());
                            break;
                        }
                        Ok(_) => std::hint::spin_loop(),
                        Err(e) => {
                            failed.get_or_insert(e);
                            break;
                        }
                    }
                }
                if let Err(e) = submitted {
                    failed.get_or_insert(e);
                } else if seen.is_none() {
                    failed.get_or_insert(vk::Result::TIMEOUT);
                }
                (start.elapsed(), cpu, seen)
            });
        }
        match failed {
            Some(e) => Err(Error::Gpu(format!("Vulkan: {e}"))),
            None => Ok(()),
        }
    }

    /// Submits `cb` with the fence.
    fn submit(&self, cb: vk::CommandBuffer) -> Result<(), vk::Result> {
        let buffers = [cb];
        // SAFETY: `cb` is recorded and not pending (each run waits for the fence before the next submits);
        // the queue is wgpu's, which nothing else submits to meanwhile (one thread, no wgpu call between).
        unsafe {
            self.raw.queue_submit(
                self.queue,
                &[vk::SubmitInfo::default().command_buffers(&buffers)],
                self.fence,
            )
        }
    }

    /// Waits for the fence, then resets it for the next run.
    fn wait(&self) -> Result<(), vk::Result> {
        // SAFETY: `fence` is ours; it is reset only once signalled, when no submission uses it.
        unsafe {
            self.raw.wait_for_fences(&[self.fence], true, u64::MAX)?;
            self.raw.reset_fences(&[self.fence])
        }
    }

    /// Waits for the device, then destroys what `make` made (null handles are ignored).
    fn destroy(self) {
        let _ = self.gpu.device().poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        });
        // SAFETY: no submission is pending (each run waited for its fence, and wgpu's work is waited for
        // above); every handle was made on `raw` and is destroyed once.
        unsafe {
            self.raw.destroy_fence(self.fence, None);
            self.raw.destroy_semaphore(self.timeline, None);
            self.raw.destroy_command_pool(self.pool, None);
            self.raw.destroy_buffer(self.word_buffer, None);
            self.raw.free_memory(self.memory, None);
        }
    }
}
