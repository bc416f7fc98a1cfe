//! The memory a transfer between two GPUs goes through, made once and kept for every replay: wgpu has no copy
//! between devices, so a buffer's words go through the host, by one of two paths ([`TransferPath`]).
//!
//! - [`Shared`]: host memory that both Vulkan devices import; the sender's GPU copies into it, the
//!   receiver's out of it, and the host copies nothing.
//! - [`Outbound`] and [`Inbound`]: a mappable staging buffer on each side, the host copying the words from
//!   one to the other (every backend). With a fresh mappable buffer per replay (as a host task's read and
//!   wgpu's queued write make them) 64 MiB took 150 ms on the H100 pair; with these kept, 19-23 ms.

#![forbid(unsafe_code)]

use std::sync::Mutex;

use crate::error::Error;
use crate::gpu::{Gpu, lock};
use crate::native::{self, HostMemory, Side};
use ash::vk;

/// How a graph's transfers between GPUs move words ([`crate::Gpus::set_transfer_path`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransferPath {
    /// Host memory that both GPUs import (Vulkan's `VK_EXT_external_memory_host`): the sending GPU copies
    /// the words into it, the receiving GPU copies them out, the host copies nothing. Vulkan only.
    SharedHostMemory,
    /// A mappable staging buffer on each GPU, the host copying the words from the one to the other. Every
    /// backend.
    Staged,
}

/// A buffer's words: where they are, and how many bytes.
#[derive(Debug, Clone)]
pub(crate) struct Words {
    pub buffer: wgpu::Buffer,
    pub offset: u64,
    pub bytes: u64,
}

/// The sending side: one `MAP_READ` buffer per moved buffer, on the sending GPU.
#[derive(Default)]
pub(crate) struct Outbound {
    staging: Vec<wgpu::Buffer>,
}

impl Outbound {
    /// Copies each of `sources` (a buffer and its bytes) into its staging buffer once the GPU work before
    /// finished, and the staged words into `into` (one `Vec` per source, reused). After an error the staging
    /// buffers are dropped (some may be left mapped or pending), and the next replay makes them again.
    pub(crate) fn read(
        &mut self,
        gpu: &Gpu,
        sources: &[Words],
        into: &mut Vec<Vec<u8>>,
    ) -> Result<(), Error> {
        let read = self.read_staged(gpu, sources, into);
        if read.is_err() {
            self.staging.clear();
        }
        read
    }

    fn read_staged(
        &mut self,
        gpu: &Gpu,
        sources: &[Words],
        into: &mut Vec<Vec<u8>>,
    ) -> Result<(), Error> {
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        for (i, source) in sources.iter().enumerate() {
            let staging = kept(
                &mut self.staging,
                i,
                gpu,
                source.bytes,
                wgpu::BufferUsages::MAP_READ,
            );
            encoder.copy_buffer_to_buffer(&source.buffer, source.offset, staging, 0, source.bytes);
        }
        let index = gpu.queue().submit([encoder.finish()]);
        for staging in &self.staging[..sources.len()] {
            staging.map_async(wgpu::MapMode::Read, .., |_| {});
        }
        gpu.wait_for(Some(index.into()))?;
        into.resize_with(sources.len(), Vec::new);
        for ((staging, source), out) in self.staging.iter().zip(sources).zip(into.iter_mut()) {
            // Mapped once the copy finished, whether or not its callback has run yet.
            let view = staging
                .get_mapped_range(..source.bytes)
                .map_err(|e| Error::Readback(e.to_string()))?;
            out.clear();
            out.extend_from_slice(&view);
            drop(view);
            staging.unmap();
        }
        Ok(())
    }
}

/// The receiving side: one `MAP_WRITE` buffer per moved buffer, on the receiving GPU, mapped again after
/// each copy out of it so that the next replay finds it mapped.
#[derive(Default)]
pub(crate) struct Inbound {
    staging: Vec<wgpu::Buffer>,
    /// The submission whose copies out of the staging buffers the pending maps wait for.
    pending: Option<wgpu::SubmissionIndex>,
}

impl Inbound {
    /// Writes `words[i]` into `targets[i]` (a buffer and its bytes): through its staging buffer, copied on the
    /// GPU ahead of the work submitted after; with `settle`, waits for the copy (a transfer after the part's
    /// last work, which its replay's submission would not cover). After an error the staging buffers are
    /// dropped, and the next replay makes them again.
    pub(crate) fn write(
        &mut self,
        gpu: &Gpu,
        targets: &[Words],
        words: &[Vec<u8>],
        settle: bool,
    ) -> Result<(), Error> {
        let written = self.write_staged(gpu, targets, words, settle);
        if written.is_err() {
            self.staging.clear();
            self.pending = None;
        }
        written
    }

    fn write_staged(
        &mut self,
        gpu: &Gpu,
        targets: &[Words],
        words: &[Vec<u8>],
        settle: bool,
    ) -> Result<(), Error> {
        if let Some(pending) = self.pending.take() {
            gpu.wait_for(Some(pending.into()))?;
        }
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        for (i, (target, data)) in targets.iter().zip(words).enumerate() {
            let bytes = target.bytes;
            if data.len() as u64 != bytes {
                return Err(Error::Readback(format!(
                    "a transfer brought {} bytes for a buffer of {bytes}",
                    data.len()
                )));
            }
            let staging = kept(
                &mut self.staging,
                i,
                gpu,
                bytes,
                wgpu::BufferUsages::MAP_WRITE,
            );
            let mut view = staging
                .get_mapped_range_mut(..bytes)
                .map_err(|e| Error::Readback(e.to_string()))?;
            view.copy_from_slice(data);
            drop(view);
            staging.unmap();
            encoder.copy_buffer_to_buffer(staging, 0, &target.buffer, target.offset, bytes);
        }
        let index = gpu.queue().submit([encoder.finish()]);
        for staging in &self.staging[..targets.len()] {
            staging.map_async(wgpu::MapMode::Write, .., |_| {});
        }
        if settle {
            gpu.wait_for(Some(index.clone().into()))?;
        }
        self.pending = Some(index);
        Ok(())
    }
}

/// Staging buffer `i` of `kept`, of `bytes` and `usage` (with the copy usage of its side), made where missing
/// or of another size: a new one is made mapped for writing, and mapped for reading when a copy has filled it.
fn kept<'a>(
    kept: &'a mut Vec<wgpu::Buffer>,
    i: usize,
    gpu: &Gpu,
    bytes: u64,
    usage: wgpu::BufferUsages,
) -> &'a wgpu::Buffer {
    let writes = usage.contains(wgpu::BufferUsages::MAP_WRITE);
    if kept.get(i).is_none_or(|b| b.size() != bytes) {
        let copy = match writes {
            true => wgpu::BufferUsages::COPY_SRC,
            false => wgpu::BufferUsages::COPY_DST,
        };
        let buffer = gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("transfer between GPUs"),
            size: bytes,
            usage: usage | copy,
            mapped_at_creation: writes,
        });
        match kept.get_mut(i) {
            Some(slot) => *slot = buffer,
            None => kept.push(buffer),
        }
    }
    &kept[i]
}

/// A transfer's words in host memory that both GPUs import, one memory per moved buffer: the sender's GPU
/// copies into it, the receiver's copies out of it.
pub(crate) struct Shared {
    /// Per moved buffer: its bytes, and the memory as a buffer of the sending GPU and of the receiving one.
    buffers: Vec<(u64, wgpu::Buffer, wgpu::Buffer)>,
    /// The receiver's last copy out of the memory: the next send waits for it before writing over the words.
    read: Mutex<Option<(Gpu, wgpu::SubmissionIndex)>>,
    /// The special queue family the two devices hand the memory over through (`native::share_family`).
    family: Option<u32>,
}

impl Shared {
    /// Memory for buffers of these `bytes`, imported by `from` and `to` (each a GPU's index in its set, and
    /// the GPU); an error names the GPU whose import failed.
    pub(crate) fn new(
        from: (usize, &Gpu),
        to: (usize, &Gpu),
        bytes: &[u64],
    ) -> Result<Shared, (usize, Error)> {
        let failed = |g: usize| {
            move |e: String| {
                let hint = "transfers can be staged through the host instead \
                            (`Gpus::set_transfer_path(TransferPath::Staged)`)";
                (g, Error::BetweenGpus(format!("{e}; {hint}")))
            }
        };
        let alignment = native::host_import_alignment(from.1.device())
            .map_err(failed(from.0))?
            .max(native::host_import_alignment(to.1.device()).map_err(failed(to.0))?);
        let mut buffers = Vec::with_capacity(bytes.len());
        for &bytes in bytes {
            // The host's memory, reported as the sender's.
            let memory = HostMemory::new(bytes, alignment).map_err(failed(from.0))?;
            let sent = memory
                .import(from.1.device(), bytes)
                .map_err(failed(from.0))?;
            let received = memory.import(to.1.device(), bytes).map_err(failed(to.0))?;
            buffers.push((bytes, sent, received));
        }
        Ok(Shared {
            buffers,
            read: Mutex::new(None),
            family: native::share_family(from.1.device(), to.1.device()),
        })
    }

    /// Waits for the receiver's copy out of the last replay's words, which the next send writes over: an
    /// error of the receiving GPU. After an error the copy is still waited for by the next send.
    pub(crate) fn wait_for_receiver(&self) -> Result<(), Error> {
        let pending = lock(&self.read).clone();
        if let Some((receiver, index)) = pending {
            receiver.wait_for(Some(index.into()))?;
            *lock(&self.read) = None;
        }
        Ok(())
    }

    /// Copies `sources` (on `gpu`, the sender) into the memory once the GPU work before finished, and waits
    /// for the copy. Call only once [`Shared::wait_for_receiver`] returned.
    pub(crate) fn send(&self, gpu: &Gpu, sources: &[Words]) -> Result<(), Error> {
        self.check(sources)?;
        let shared: Vec<&wgpu::Buffer> = self.buffers.iter().map(|(_, sent, _)| sent).collect();
        let (acquire, release) = self.ownership(gpu, &shared, vk::AccessFlags::TRANSFER_WRITE)?;
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        for (source, shared) in sources.iter().zip(&shared) {
            encoder.copy_buffer_to_buffer(&source.buffer, source.offset, shared, 0, source.bytes);
        }
        let index = gpu.queue().submit([acquire, encoder.finish(), release]);
        gpu.wait_for(Some(index.into()))
    }

    /// Copies the memory into `targets` (on `gpu`, the receiver) ahead of the work submitted after; with
    /// `settle`, waits for the copy (a transfer after the part's last work, which its replay's submission
    /// would not cover). Call only once the send finished.
    pub(crate) fn receive(&self, gpu: &Gpu, targets: &[Words], settle: bool) -> Result<(), Error> {
        self.check(targets)?;
        let shared: Vec<&wgpu::Buffer> = self.buffers.iter().map(|(_, _, got)| got).collect();
        let (acquire, release) = self.ownership(gpu, &shared, vk::AccessFlags::TRANSFER_READ)?;
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        for (target, shared) in targets.iter().zip(&shared) {
            encoder.copy_buffer_to_buffer(shared, 0, &target.buffer, target.offset, target.bytes);
        }
        let index = gpu.queue().submit([acquire, encoder.finish(), release]);
        // The next send waits for this copy, even where the wait below fails.
        *lock(&self.read) = Some((gpu.clone(), index.clone()));
        if settle {
            gpu.wait_for(Some(index.into()))?;
        }
        Ok(())
    }

    /// The command buffers that go before and after a copy of `access` on `gpu` of its `shared` buffers: the
    /// memory's ownership taken from the other device and given back, each in an encoder of raw commands
    /// only (wgpu keeps an encoder to one API, raw or its own).
    fn ownership(
        &self,
        gpu: &Gpu,
        shared: &[&wgpu::Buffer],
        access: vk::AccessFlags,
    ) -> Result<(wgpu::CommandBuffer, wgpu::CommandBuffer), Error> {
        let barrier = |side| {
            let mut encoder = gpu.device().create_command_encoder(&Default::default());
            let side = (side, self.family);
            match native::share_barrier(gpu.device(), &mut encoder, shared, side, access) {
                true => Ok(encoder.finish()),
                false => {
                    gpu.poll_lost()?;
                    Err(Error::BetweenGpus(
                        "no Vulkan command buffer to record a transfer's barrier into".into(),
                    ))
                }
            }
        };
        Ok((barrier(Side::Acquire)?, barrier(Side::Release)?))
    }

    /// Whether `words` are the buffers the memory was made for, as many and of these sizes.
    fn check(&self, words: &[Words]) -> Result<(), Error> {
        let sizes = words.iter().map(|w| w.bytes);
        if sizes.ne(self.buffers.iter().map(|&(bytes, _, _)| bytes)) {
            return Err(Error::BetweenGpus(format!(
                "a transfer made for {} buffers of {:?} bytes was given {:?}",
                self.buffers.len(),
                self.buffers.iter().map(|b| b.0).collect::<Vec<_>>(),
                words.iter().map(|w| w.bytes).collect::<Vec<_>>()
            )));
        }
        Ok(())
    }
}
