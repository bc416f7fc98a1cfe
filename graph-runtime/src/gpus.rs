//! Several GPUs of one machine, and one graph across them: [`Gpus`], [`GpusGraph`].
//!
//! Bake places every node on a GPU of the set (`graph_core::placement`: where the user placed it, else by
//! the placement pass), splits the graph into one part per GPU with the transfers between them
//! (`graph_core::split`), and bakes each part on its GPU as any graph. A transfer is a pair of host tasks the
//! runtime gives itself, over memory it keeps (`staging.rs`). wgpu has no copy between two devices, so the
//! words go through the host, by one of two paths ([`TransferPath`]): where both devices import host memory
//! (Vulkan), the sending part's task copies the buffers into memory both import once the GPU work before it
//! finished, and says so; the receiving part's waits for that and copies them out ahead of its next work.
//! Elsewhere the sending part's task copies them into a mappable staging buffer and hands their words over;
//! the receiving part's writes them into its own staging buffer and copies them in.
//!
//! One replay drives every part: where no part has host tasks (no transfers) each is submitted in turn from
//! the calling thread, and none waits; otherwise each part replays on a thread of its own, so a part waiting
//! for a transfer never holds up the others, and a part's work that comes before a receive in topological
//! order is submitted before the receive waits (the split orders it so). Native targets only: the web has
//! one adapter, and no threads.

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::sync::{Arc, Condvar, Mutex};

use graph_core::desc::{GraphDesc, InvalidDescription, OpDesc};
use graph_core::placement::{MAX_GPUS, near_textures, node_cost, place};
use graph_core::split::{Transfer, split};

use crate::baked_graph::BakedGraph;
use crate::buffer::AnyBuffer;
use crate::element::{Element, ParamValue};
use crate::error::{Error, panic_message, unknown};
use crate::gpu::{Gpu, instance, lock};
use crate::host::HostContext;
use crate::staging::{Inbound, Outbound, Shared, TransferPath};
use crate::texture::Texture;
use crate::transfer::Finished;
use crate::wait::Submission;

/// Several GPUs, each a [`Gpu`] of its own, that one graph runs across ([`GpusGraph`]). A node placed with
/// `#[on(1)]` runs on the GPU at index 1 of the set.
#[derive(Debug, Clone)]
pub struct Gpus {
    gpus: Vec<Gpu>,
    /// How the transfers of graphs baked on the set move words.
    path: TransferPath,
}

impl Gpus {
    /// A `Gpu` on every adapter of the first backend that has any (Vulkan, Metal, DX12, then GL; one backend,
    /// so that no card is opened twice through two of them), as [`Gpu::new`] opens one: the hardware adapters
    /// where there are any, else the software ones, one per PCI bus address where the driver gives it. At most
    /// [`MAX_GPUS`].
    pub async fn new() -> Result<Gpus, Error> {
        let order = [
            wgpu::Backends::VULKAN,
            wgpu::Backends::METAL,
            wgpu::Backends::DX12,
            wgpu::Backends::GL,
        ];
        for backends in order {
            let mut adapters = instance(backends).enumerate_adapters(backends).await;
            // Two drivers of one API for one card give it twice, at one bus address.
            let mut seen = Vec::new();
            adapters.retain(|a| {
                let bus = a.get_info().device_pci_bus_id;
                bus.is_empty() || {
                    let new = !seen.contains(&bus);
                    seen.push(bus);
                    new
                }
            });
            let hardware: Vec<wgpu::Adapter> = adapters
                .iter()
                .filter(|a| a.get_info().device_type != wgpu::DeviceType::Cpu)
                .cloned()
                .collect();
            let chosen = if hardware.is_empty() {
                adapters
            } else {
                hardware
            };
            if chosen.is_empty() {
                continue;
            }
            let mut gpus = Vec::with_capacity(chosen.len());
            for adapter in chosen.iter().take(MAX_GPUS as usize) {
                gpus.push(Gpu::on_adapter(adapter).await?);
            }
            return Ok(Gpus::of(gpus));
        }
        Err(Error::NoAdapter {
            filter: String::new(),
        })
    }

    /// [`Gpus::new`], waiting for it.
    pub fn new_blocking() -> Result<Gpus, Error> {
        pollster::block_on(Gpus::new())
    }

    /// A set of these `Gpu`s, in this order: two `Gpu`s of one adapter are two devices, between which a
    /// graph moves buffers as between two GPUs. Between 1 and [`MAX_GPUS`] of them, each once.
    pub fn from_gpus(gpus: Vec<Gpu>) -> Result<Gpus, Error> {
        let refused = |reason: String| Error::RequestDevice {
            adapter: String::new(),
            reason,
        };
        if gpus.is_empty() || gpus.len() > MAX_GPUS as usize {
            return Err(refused(format!(
                "a set holds 1 to {MAX_GPUS} GPUs, and {} were given",
                gpus.len()
            )));
        }
        for (i, gpu) in gpus.iter().enumerate() {
            if let Some(j) = gpus[..i].iter().position(|g| g.id() == gpu.id()) {
                return Err(refused(format!(
                    "GPUs {j} and {i} of the set are one `Gpu`: make a `Gpu` for each"
                )));
            }
        }
        Ok(Gpus::of(gpus))
    }

    /// A set of `gpus`, whose transfers go through host memory they all import where they can.
    fn of(gpus: Vec<Gpu>) -> Gpus {
        let path = match Gpus::all_import_host_memory(&gpus) {
            true => TransferPath::SharedHostMemory,
            false => TransferPath::Staged,
        };
        Gpus { gpus, path }
    }

    fn all_import_host_memory(gpus: &[Gpu]) -> bool {
        gpus.iter()
            .all(|g| crate::native::imports_host_memory(g.device()))
    }

    /// How the transfers of graphs baked on the set move words between GPUs: through host memory every GPU
    /// imports ([`TransferPath::SharedHostMemory`]) where each can (Vulkan 1.1 devices opened by
    /// [`Gpu::new`] or [`Gpus::new`], which enable `VK_EXT_external_memory_host` where the driver can import
    /// host memory into a transfer buffer), else staged through the host ([`TransferPath::Staged`]).
    pub fn transfer_path(&self) -> TransferPath {
        self.path
    }

    /// Picks how the transfers of graphs baked on the set after this move words. Refuses
    /// [`TransferPath::SharedHostMemory`] where a GPU of the set does not import host memory.
    pub fn set_transfer_path(&mut self, path: TransferPath) -> Result<(), Error> {
        if path == TransferPath::SharedHostMemory && !Gpus::all_import_host_memory(&self.gpus) {
            let missing: Vec<String> = self
                .gpus
                .iter()
                .enumerate()
                .filter(|(_, g)| !crate::native::imports_host_memory(g.device()))
                .map(|(i, g)| format!("GPU {i} ({})", g.name()))
                .collect();
            return Err(Error::BetweenGpus(format!(
                "{} cannot import host memory (a Vulkan device whose driver offers \
                 VK_EXT_external_memory_host, opened by `Gpu::new` or `Gpus::new`); transfers can be staged \
                 through the host instead (`TransferPath::Staged`)",
                missing.join(", ")
            )));
        }
        self.path = path;
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// The GPU at `index`.
    pub fn get(&self, index: usize) -> Option<&Gpu> {
        self.gpus.get(index)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Gpu> {
        self.gpus.iter()
    }

    /// The index of `gpu` in the set.
    pub fn index_of(&self, gpu: &Gpu) -> Option<usize> {
        self.gpus.iter().position(|g| g.id() == gpu.id())
    }

    /// What the Vulkan driver offers for sharing memory between the set's devices (physical device groups,
    /// host memory imported by each device and the foreign queue family that hands it over, memory as file
    /// descriptors or dma-bufs, which of those each device was opened with): lines for a benchmark or a report. `None` where a device is not Vulkan. Transfers use
    /// imported host memory on [`TransferPath::SharedHostMemory`] ([`Gpus::transfer_path`]), and none of the
    /// rest.
    pub fn external_memory_report(&self) -> Option<String> {
        let devices: Vec<&wgpu::Device> = self.gpus.iter().map(Gpu::device).collect();
        crate::native::external_memory_report(&devices)
    }
}

impl std::ops::Index<usize> for Gpus {
    type Output = Gpu;
    fn index(&self, index: usize) -> &Gpu {
        &self.gpus[index]
    }
}

/// A graph baked across a set of GPUs: one part per GPU, the transfers between them, replayed as one.
///
/// External buffers and textures live on the GPU they were made on. A buffer used on another GPU moves
/// there before its use (and back home at the end of the replay when written away from it), so make each
/// buffer on the GPU that uses it, placing its users there with `#[on(..)]`, to move nothing. Textures do not
/// move yet: a texture's users must run on its GPU.
pub struct GpusGraph {
    gpus: Gpus,
    /// The description as baked: subgraphs flattened, by which names are found.
    desc: GraphDesc,
    /// Per node of `desc`: its GPU.
    gpu_of: Vec<u32>,
    transfers: Vec<Transfer>,
    /// Bytes each transfer moves.
    transfer_bytes: Vec<u64>,
    path: TransferPath,
    /// Per GPU: its part, `None` where the GPU has no work.
    parts: Vec<Option<BakedGraph>>,
    exchange: Arc<Exchange>,
    /// The GPU that failed, and how, once one did: every replay after is refused.
    broken: Arc<Mutex<Option<(usize, String)>>>,
}

impl std::fmt::Debug for GpusGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpusGraph")
            .field("graph", &self.desc.name)
            .field("gpus", &self.gpus.len())
            .field("transfers", &self.transfers.len())
            .finish_non_exhaustive()
    }
}

impl GpusGraph {
    /// Bakes a description on `gpus` with the caller's buffers by name, each on a GPU of the set (see the
    /// type's docs for where they live).
    pub fn bake(
        gpus: &Gpus,
        desc: impl Into<Cow<'static, GraphDesc>>,
        buffers: &[(&str, &AnyBuffer)],
    ) -> Result<Self, Error> {
        Self::bake_with_textures(gpus, desc, buffers, &[])
    }

    /// [`GpusGraph::bake`] for a graph that holds textures, each bound by name.
    pub fn bake_with_textures(
        gpus: &Gpus,
        desc: impl Into<Cow<'static, GraphDesc>>,
        buffers: &[(&str, &AnyBuffer)],
        textures: &[(&str, &Texture)],
    ) -> Result<Self, Error> {
        let desc = desc.into();
        let invalid = |e: InvalidDescription| Error::InvalidDescription {
            graph: desc.name.to_string(),
            reason: e.0,
        };
        desc.validate(desc.params.size as usize).map_err(invalid)?;
        let flat = graph_core::flatten::flatten(&desc)
            .map_err(invalid)?
            .into_owned();
        // Where each external buffer and texture lives, and each buffer's length.
        let count = flat.buffers.len();
        let mut home: Vec<Option<u32>> = vec![None; count];
        let mut lens: Vec<u32> = vec![1; count];
        let mut bound: Vec<Bound<'_>> = vec![Bound::None; count];
        let gpu_index = |gpu: &Gpu, name: &str| {
            gpus.index_of(gpu).map(|g| g as u32).ok_or_else(|| {
                invalid(InvalidDescription(format!(
                    "`{name}` was made on a `Gpu` that is not in the set"
                )))
            })
        };
        for &(name, buffer) in buffers {
            let b = external(&flat, name, false)?;
            home[b] = Some(gpu_index(buffer.gpu(), name)?);
            lens[b] = buffer.len();
            bound[b] = Bound::Buffer(name, buffer);
        }
        for &(name, texture) in textures {
            let b = external(&flat, name, true)?;
            home[b] = Some(gpu_index(texture.gpu(), name)?);
            bound[b] = Bound::Texture(name, texture);
        }
        for (b, buffer) in flat.buffers.iter().enumerate() {
            if !buffer.role.is_external() {
                lens[b] = buffer.len.unwrap_or(1);
            } else if home[b].is_none() {
                return Err(Error::MissingBuffer {
                    graph: flat.name.to_string(),
                    buffer: buffer.name.to_string(),
                });
            }
        }
        let bytes: Vec<u64> = flat
            .buffers
            .iter()
            .zip(&lens)
            .map(|(b, &len)| b.elem.buffer_bytes(u64::from(len)))
            .collect();
        let cost: Vec<u64> = (0..flat.nodes.len() as u32)
            .map(|n| node_cost(&flat, n, &bytes))
            .collect();
        let set = gpus.len() as u32;
        // Textures do not move: their users go where they are, and the pass places the rest around them.
        let gpu_of = place(&near_textures(&flat, &home), set, &cost).map_err(invalid)?;
        let split = split(&flat, set, &gpu_of, &home, &lens).map_err(invalid)?;
        let transfer_bytes = split
            .transfers
            .iter()
            .map(|t| t.buffers.iter().map(|&b| bytes[b as usize]).sum())
            .collect();

        // Per transfer, the host memory both of its GPUs import, on that path.
        let path = gpus.transfer_path();
        let shared: Vec<Option<Arc<Shared>>> = split
            .transfers
            .iter()
            .map(|t| match path {
                TransferPath::Staged => Ok(None),
                TransferPath::SharedHostMemory => {
                    let sizes: Vec<u64> = t.buffers.iter().map(|&b| bytes[b as usize]).collect();
                    let (from, to) = (t.from as usize, t.to as usize);
                    Shared::new((from, &gpus[from]), (to, &gpus[to]), &sizes)
                        .map(|s| Some(Arc::new(s)))
                        .map_err(|(g, e)| on_gpu(gpus, g, e))
                }
            })
            .collect::<Result<_, _>>()?;
        let exchange = Arc::new(Exchange::default());
        let mut parts = Vec::with_capacity(gpus.len());
        for (g, part) in split.parts.into_iter().enumerate() {
            let works = part.nodes.iter().any(|n| !matches!(n.op, OpDesc::Empty));
            if !works {
                parts.push(None);
                continue;
            }
            let on_gpu = |e: Error| on_gpu(gpus, g, e);
            // A receive that nothing of its part follows: its copy comes after the part's last submission.
            let settles = |recv: u32| !part.edges.iter().any(|e| e.from == recv);
            let settle: Vec<bool> = split
                .transfers
                .iter()
                .map(|t| t.to == g as u32 && settles(t.recv))
                .collect();
            let mine = |b: usize| home[b] == Some(g as u32);
            let part_buffers: Vec<(&str, &AnyBuffer)> = bound
                .iter()
                .enumerate()
                .filter_map(|(b, bound)| match *bound {
                    Bound::Buffer(name, buffer) if mine(b) => Some((name, buffer)),
                    _ => None,
                })
                .collect();
            let part_textures: Vec<(&str, &Texture)> = bound
                .iter()
                .enumerate()
                .filter_map(|(b, bound)| match *bound {
                    Bound::Texture(name, texture) if mine(b) => Some((name, texture)),
                    _ => None,
                })
                .collect();
            let mut baked = BakedGraph::bake_with_textures(
                &gpus[g],
                Cow::Owned(part),
                &part_buffers,
                &part_textures,
            )
            .map_err(on_gpu)?;
            for (t, transfer) in split.transfers.iter().enumerate() {
                let (exchange, moved) = (exchange.clone(), transfer.buffers.len());
                let words = move |ctx: &HostContext<'_>, used| {
                    (0..moved)
                        .map(|a| ctx.words_of(a, used))
                        .collect::<Result<Vec<_>, _>>()
                };
                let (sends, receives) = (transfer.from == g as u32, transfer.to == g as u32);
                if let (Some(shared), true) = (shared[t].clone(), sends) {
                    let to = transfer.to as usize;
                    let send = move |ctx: &HostContext<'_>| {
                        // The receiver's failure, not this part's: the wait is on its device.
                        if let Err(e) = shared.wait_for_receiver() {
                            let text = e.to_string();
                            exchange.fail_with(to, e);
                            return Err(Error::BetweenGpus(format!(
                                "GPU {to} failed while its copy out of transfer {t} was waited for: {text}"
                            )));
                        }
                        shared.send(ctx.gpu(), &words(ctx, "read")?)?;
                        exchange.send(t, Vec::new());
                        Ok(())
                    };
                    baked
                        .on_host_at(transfer.send as usize, Box::new(send))
                        .map_err(on_gpu)?;
                } else if let (Some(shared), true) = (shared[t].clone(), receives) {
                    let settle = settle[t];
                    let receive = move |ctx: &HostContext<'_>| {
                        exchange.receive(t)?;
                        shared.receive(ctx.gpu(), &words(ctx, "write")?, settle)
                    };
                    baked
                        .on_host_at(transfer.recv as usize, Box::new(receive))
                        .map_err(on_gpu)?;
                } else if sends {
                    let mut outbound = Outbound::default();
                    let send = move |ctx: &HostContext<'_>| {
                        let mut staged = exchange.spare(t);
                        outbound.read(ctx.gpu(), &words(ctx, "read")?, &mut staged)?;
                        exchange.send(t, staged);
                        Ok(())
                    };
                    baked
                        .on_host_at(transfer.send as usize, Box::new(send))
                        .map_err(on_gpu)?;
                } else if receives {
                    let (mut inbound, settle) = (Inbound::default(), settle[t]);
                    let receive = move |ctx: &HostContext<'_>| {
                        let staged = exchange.receive(t)?;
                        inbound.write(ctx.gpu(), &words(ctx, "write")?, &staged, settle)?;
                        exchange.give_back(t, staged);
                        Ok(())
                    };
                    baked
                        .on_host_at(transfer.recv as usize, Box::new(receive))
                        .map_err(on_gpu)?;
                }
            }
            parts.push(Some(baked));
        }
        Ok(GpusGraph {
            gpus: gpus.clone(),
            desc: flat,
            gpu_of,
            transfers: split.transfers,
            transfer_bytes,
            path,
            parts,
            exchange,
            broken: Arc::default(),
        })
    }

    /// The set the graph runs on.
    pub fn gpus(&self) -> &Gpus {
        &self.gpus
    }

    /// The description as baked (subgraphs flattened), whose node indices [`GpusGraph::placement`] follows.
    pub fn description(&self) -> &GraphDesc {
        &self.desc
    }

    /// Per node of [`GpusGraph::description`]: the GPU it runs on, by its index in the set.
    pub fn placement(&self) -> &[u32] {
        &self.gpu_of
    }

    /// The GPU node `node` runs on.
    pub fn gpu_of(&self, node: &str) -> Result<usize, Error> {
        let n = self.node(node, "node", |_| true)?;
        Ok(self.gpu_of[n] as usize)
    }

    /// What each replay moves between GPUs: the transfers, in the order they run.
    pub fn transfers(&self) -> &[Transfer] {
        &self.transfers
    }

    /// The bytes each replay moves between GPUs.
    pub fn transfer_bytes(&self) -> u64 {
        self.transfer_bytes.iter().sum()
    }

    /// How the transfers move words: the set's [`Gpus::transfer_path`] when the graph was baked.
    pub fn transfer_path(&self) -> TransferPath {
        self.path
    }

    /// GPU `gpu`'s part, as baked there; `None` where it has no work.
    pub fn part(&self, gpu: usize) -> Option<&BakedGraph> {
        self.parts.get(gpu).and_then(Option::as_ref)
    }

    /// Sets parameter `name` on every GPU.
    pub fn set_param<T: ParamValue>(&mut self, name: &str, value: T) -> Result<(), Error> {
        for part in self.parts.iter_mut().flatten() {
            part.set_param(name, value)?;
        }
        Ok(())
    }

    /// The data upload node `node` copies into its buffer at the next replay, on the node's GPU.
    pub fn upload<T: Element>(&mut self, node: &str, data: &[T]) -> Result<(), Error> {
        self.part_of(node, "upload", |op| matches!(op, OpDesc::Upload { .. }))?
            .upload(node, data)
    }

    /// [`GpusGraph::upload`] as bytes (for tools that handle every element type alike).
    pub fn upload_bytes(&mut self, node: &str, bytes: &[u8]) -> Result<(), Error> {
        self.part_of(node, "upload", |op| matches!(op, OpDesc::Upload { .. }))?
            .upload_bytes(node, bytes)
    }

    /// The image upload node `node` copies into its `rgba8` texture at the next replay, on the node's GPU.
    pub fn upload_image(&mut self, node: &str, image: &image::RgbaImage) -> Result<(), Error> {
        self.part_of(node, "upload", |op| matches!(op, OpDesc::Upload { .. }))?
            .upload_image(node, image)
    }

    /// Gives host task `node` its closure; it runs on the host between its GPU's partitions, and sees the
    /// buffers it declared as its GPU holds them.
    pub fn on_host(
        &mut self,
        node: &str,
        task: impl FnMut(&HostContext<'_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        self.part_of(node, "host task", |op| matches!(op, OpDesc::Host { .. }))?
            .on_host(node, task)?;
        Ok(self)
    }

    /// Gives interop task `node` its closure; it records into its GPU's encoder.
    pub fn on_interop(
        &mut self,
        node: &str,
        task: impl FnMut(&mut crate::interop::InteropContext<'_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        self.part_of(node, "interop task", |op| {
            matches!(op, OpDesc::Interop { .. })
        })?
        .on_interop(node, task)?;
        Ok(self)
    }

    /// Makes kernel `choice` the active one of its group of alternatives, on the group's GPU.
    pub fn select(&mut self, choice: &str) -> Result<&mut Self, Error> {
        self.part_of(
            choice,
            "choice of alternatives",
            |op| matches!(op, OpDesc::Kernel(k) if k.alternative.is_some()),
        )?
        .select(choice)?;
        Ok(self)
    }

    /// Turns node `node` on or off, on its GPU.
    pub fn set_enabled(&mut self, node: &str, on: bool) -> Result<&mut Self, Error> {
        self.part_of(node, "node", |_| true)?
            .set_enabled(node, on)?;
        Ok(self)
    }

    /// Runs the graph once on every GPU of the set. Returns without waiting unless a part has host tasks
    /// (transfers are host tasks), which wait for the GPU work before them; each part's submission is in the
    /// result. An error names the GPU that failed ([`Error::OnGpu`]); after a device's error (its loss, an
    /// error the device reported) every later replay is refused: bake again on the GPUs that work.
    pub fn replay(&mut self) -> Result<GpusSubmission, Error> {
        if let Some((g, why)) = lock(&self.broken).clone() {
            return Err(Error::OnGpu {
                gpu: g,
                adapter: self.gpus[g].name(),
                source: Box::new(Error::Wait(format!(
                    "it failed in an earlier replay ({why}); bake the graph again on the GPUs that work"
                ))),
            });
        }
        self.exchange.reset(self.transfers.len());
        let threaded = self.parts.iter().flatten().any(BakedGraph::has_host_phase);
        let exchange = &self.exchange;
        let results: Vec<(usize, Result<Submission, Error>)> = if threaded {
            std::thread::scope(|scope| {
                let running: Vec<_> = self
                    .parts
                    .iter_mut()
                    .enumerate()
                    .filter_map(|(g, part)| part.as_mut().map(|p| (g, p)))
                    .map(|(g, part)| {
                        let thread = scope.spawn(move || {
                            // A panic fails the part here, so no other part waits for its transfers.
                            let replayed =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    part.replay()
                                }))
                                .unwrap_or_else(|panic| Err(panicked(&*panic)));
                            if replayed.is_err() {
                                exchange.fail(g);
                            }
                            replayed
                        });
                        (g, thread)
                    })
                    .collect();
                running
                    .into_iter()
                    .map(|(g, thread)| {
                        // The thread catches its panics; this is what one past that would give.
                        let joined = thread.join().unwrap_or_else(|panic| {
                            exchange.fail(g);
                            Err(panicked(&*panic))
                        });
                        (g, joined)
                    })
                    .collect()
            })
        } else {
            self.parts
                .iter_mut()
                .enumerate()
                .filter_map(|(g, part)| part.as_mut().map(|p| (g, p.replay())))
                .collect()
        };
        // The GPU that failed first: the others' parts may have stopped only because it did. Its error: the
        // one a part saw waiting on its device, else its part's own.
        let first = exchange.first_failure();
        let mut submissions = Vec::with_capacity(results.len());
        let mut failed: Option<(usize, Error)> = exchange.take_cause();
        for (g, result) in results {
            match result {
                Ok(submission) => submissions.push((g, submission)),
                Err(e) if failed.is_none() && first.is_none_or(|f| f == g) => failed = Some((g, e)),
                Err(_) => {}
            }
        }
        if let Some((g, e)) = failed {
            if e.without_graph().is_device_failure() {
                *lock(&self.broken) = Some((g, e.to_string()));
            }
            // What was submitted on the other GPUs still runs; waiting for it keeps their buffers' contents
            // settled before the caller looks at them.
            for (_, submission) in submissions {
                let _ = submission.wait();
            }
            return Err(on_gpu(&self.gpus, g, e));
        }
        Ok(GpusSubmission {
            gpus: self.gpus.clone(),
            submissions,
            readbacks: self.readback_routes(),
            broken: self.broken.clone(),
            graph: self.desc.name.to_string(),
        })
    }

    /// [`GpusGraph::replay`], then waits for every GPU.
    pub fn replay_blocking(&mut self) -> Result<GpusFinished, Error> {
        self.replay()?.wait()
    }

    /// Each readback node's name and its GPU.
    fn readback_routes(&self) -> Arc<[(String, usize)]> {
        self.desc
            .nodes
            .iter()
            .zip(&self.gpu_of)
            .filter(|(n, _)| matches!(n.op, OpDesc::Readback { .. }))
            .map(|(n, &g)| (n.name.to_string(), g as usize))
            .collect()
    }

    /// The index of node `name`, which `fits` describes as `kind`.
    fn node(
        &self,
        name: &str,
        kind: &'static str,
        fits: impl Fn(&OpDesc) -> bool,
    ) -> Result<usize, Error> {
        self.desc
            .nodes
            .iter()
            .position(|n| n.name == name && fits(&n.op))
            .ok_or_else(|| {
                let known = self.desc.nodes.iter().filter(|n| fits(&n.op));
                unknown(
                    &self.desc,
                    kind,
                    name,
                    known.map(|n| format!("`{}`", n.name)),
                )
            })
    }

    /// The part that holds node `name`.
    fn part_of(
        &mut self,
        name: &str,
        kind: &'static str,
        fits: impl Fn(&OpDesc) -> bool,
    ) -> Result<&mut BakedGraph, Error> {
        let n = self.node(name, kind, fits)?;
        let g = self.gpu_of[n] as usize;
        self.parts
            .get_mut(g)
            .and_then(Option::as_mut)
            .ok_or_else(|| Error::Wait(format!("GPU {g} holds `{name}` but has no part")))
    }
}

/// An external buffer or texture of the graph, bound by name.
#[derive(Clone, Copy)]
enum Bound<'a> {
    None,
    Buffer(&'a str, &'a AnyBuffer),
    Texture(&'a str, &'a Texture),
}

/// The index of external buffer (or texture) `name` of `desc`.
fn external(desc: &GraphDesc, name: &str, texture: bool) -> Result<usize, Error> {
    let fits =
        |b: &graph_core::desc::BufferDesc| b.role.is_external() && b.texture.is_some() == texture;
    desc.buffers
        .iter()
        .position(|b| b.name == name && fits(b))
        .ok_or_else(|| {
            let known = desc.buffers.iter().filter(|b| fits(b));
            let kind = if texture {
                "texture"
            } else {
                "external buffer"
            };
            unknown(desc, kind, name, known.map(|b| format!("`{}`", b.name)))
        })
}

/// A part's replay that panicked, as its error.
fn panicked(payload: &(dyn std::any::Any + Send)) -> Error {
    Error::Wait(format!(
        "the replay's thread panicked: {}",
        panic_message(payload)
    ))
}

/// `error`, naming GPU `g` of `gpus`.
fn on_gpu(gpus: &Gpus, g: usize, error: Error) -> Error {
    Error::OnGpu {
        gpu: g,
        adapter: gpus.get(g).map_or_else(String::new, Gpu::name),
        source: Box::new(error),
    }
}

/// One replay of a [`GpusGraph`]: each GPU's submission.
#[derive(Debug)]
pub struct GpusSubmission {
    gpus: Gpus,
    submissions: Vec<(usize, Submission)>,
    readbacks: Arc<[(String, usize)]>,
    broken: Arc<Mutex<Option<(usize, String)>>>,
    graph: String,
}

impl GpusSubmission {
    /// Waits for every GPU's work; its readbacks are then read from the result. An error names the GPU.
    pub fn wait(self) -> Result<GpusFinished, Error> {
        let mut finished = Vec::with_capacity(self.submissions.len());
        let mut failed = None;
        for (g, submission) in self.submissions {
            match submission.wait() {
                Ok(done) => finished.push((g, done)),
                Err(e) => {
                    if failed.is_none() {
                        if e.without_graph().is_device_failure() {
                            *lock(&self.broken) = Some((g, e.to_string()));
                        }
                        failed = Some(on_gpu(&self.gpus, g, e));
                    }
                }
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(GpusFinished {
                finished,
                readbacks: self.readbacks,
                graph: self.graph,
            }),
        }
    }
}

/// A finished replay of a [`GpusGraph`]: what its readback nodes copied out, on whichever GPU.
#[derive(Debug)]
pub struct GpusFinished {
    finished: Vec<(usize, Finished)>,
    readbacks: Arc<[(String, usize)]>,
    graph: String,
}

impl GpusFinished {
    /// What readback node `node` copied out in this replay.
    pub fn read_named<T: Element>(&self, node: &str) -> Result<Vec<T>, Error> {
        self.finished_of(node)?.read_named(node)
    }

    /// [`GpusFinished::read_named`], as bytes.
    pub fn read_bytes_named(&self, node: &str) -> Result<Vec<u8>, Error> {
        self.finished_of(node)?.read_bytes_named(node)
    }

    fn finished_of(&self, node: &str) -> Result<&Finished, Error> {
        let gpu = self
            .readbacks
            .iter()
            .find(|(n, _)| n == node)
            .map(|&(_, g)| g);
        gpu.and_then(|g| self.finished.iter().find(|(f, _)| *f == g))
            .map(|(_, f)| f)
            .ok_or_else(|| {
                let known = self.readbacks.iter().map(|(n, _)| format!("`{n}`"));
                crate::error::unknown_in(&self.graph, "readback", node, known)
            })
    }
}

/// What the transfers of a replay hand over: per transfer, the words of its buffers once sent. A failed part
/// wakes every part waiting for a transfer, so none waits for ever.
#[derive(Default)]
struct Exchange {
    state: Mutex<ExchangeState>,
    changed: Condvar,
}

#[derive(Default)]
struct ExchangeState {
    sent: Vec<Option<Vec<Vec<u8>>>>,
    /// Per transfer, the memory its words last came in, given back by the receiver for the next replay.
    spare: Vec<Vec<Vec<u8>>>,
    /// The GPU whose part failed first in this replay.
    failed: Option<usize>,
    /// Its error, where a part of another GPU saw it (waiting on its device).
    cause: Option<(usize, Error)>,
}

impl Exchange {
    /// Ready for a replay of `transfers` transfers.
    fn reset(&self, transfers: usize) {
        let mut state = lock(&self.state);
        state.sent = vec![None; transfers];
        state.spare.resize_with(transfers, Vec::new);
        state.failed = None;
        state.cause = None;
    }

    /// The memory transfer `t`'s words came in last time, to stage them again.
    fn spare(&self, t: usize) -> Vec<Vec<u8>> {
        lock(&self.state)
            .spare
            .get_mut(t)
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Transfer `t`'s words, written: their memory for the next replay.
    fn give_back(&self, t: usize, words: Vec<Vec<u8>>) {
        if let Some(slot) = lock(&self.state).spare.get_mut(t) {
            *slot = words;
        }
    }

    fn send(&self, t: usize, words: Vec<Vec<u8>>) {
        let mut state = lock(&self.state);
        if let Some(slot) = state.sent.get_mut(t) {
            *slot = Some(words);
        }
        self.changed.notify_all();
    }

    /// Waits for transfer `t`'s words; an error once a part failed.
    fn receive(&self, t: usize) -> Result<Vec<Vec<u8>>, Error> {
        let mut state = lock(&self.state);
        loop {
            if let Some(words) = state.sent.get_mut(t).and_then(Option::take) {
                return Ok(words);
            }
            if let Some(g) = state.failed {
                return Err(Error::Wait(format!(
                    "transfer {t} never came: GPU {g}'s part failed"
                )));
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    fn fail(&self, gpu: usize) {
        let mut state = lock(&self.state);
        state.failed.get_or_insert(gpu);
        self.changed.notify_all();
    }

    /// GPU `gpu` failed with `error`, which a part of another GPU saw.
    fn fail_with(&self, gpu: usize, error: Error) {
        let mut state = lock(&self.state);
        if state.failed.is_none() {
            state.failed = Some(gpu);
            state.cause = Some((gpu, error));
        }
        self.changed.notify_all();
    }

    /// The error [`Exchange::fail_with`] gave for the GPU that failed first.
    fn take_cause(&self) -> Option<(usize, Error)> {
        lock(&self.state).cause.take()
    }

    fn first_failure(&self) -> Option<usize> {
        lock(&self.state).failed
    }
}
