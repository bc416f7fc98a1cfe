//! The GPU: an adapter's device and queue, with the features the runtime uses and the errors it reports.

#![forbid(unsafe_code)]

use std::fmt;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[cfg(not(target_arch = "wasm32"))]
use crate::driver::Driver;
use crate::error::Error;
use crate::native::{self, DirectQueue};
use crate::queue::{DirectOn, GpuQueue};
use crate::validation;

/// A wgpu device and queue. Cheap to clone: clones share the device and count as the same `Gpu`.
///
/// Each `Gpu` has an identity of its own, which buffers carry: a graph refuses a buffer made on another
/// `Gpu`. (wgpu's own `Device` equality cannot tell two devices of two instances apart.)
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<GpuInner>,
}

struct GpuInner {
    id: u64,
    device: wgpu::Device,
    queue: GpuQueue,
    info: Option<wgpu::AdapterInfo>,
    /// Size of the push-constant (immediate) block the device accepts; 0 without `IMMEDIATES`.
    max_immediate_size: u32,
    state: Arc<DeviceState>,
    /// The thread that drives the device for async work, started by the first future that needs it.
    #[cfg(not(target_arch = "wasm32"))]
    driver: OnceLock<Driver>,
}

/// What the device reports outside any operation's scope, written by wgpu's callbacks.
#[derive(Default)]
struct DeviceState {
    /// Errors of work outside the runtime's operations (the application's own wgpu calls), in order.
    uncaptured: Mutex<Vec<Error>>,
    /// Why the device was lost, once it was: every later operation fails with it.
    lost: Mutex<Option<String>>,
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary())
    }
}

/// The environment variable that picks an adapter by (part of) its name, or by its index in the list.
pub const ADAPTER_ENV: &str = "GRAPH_RUNTIME_ADAPTER";

/// The environment variable that picks how [`Gpu::new`] submits replays on Vulkan: `wgpu-queue` (the
/// default: the runtime's own submissions, to wgpu's queue under the runtime's lock), `second-queue` (to a
/// second queue of the family where it has two, ordered against wgpu's by a timeline semaphore; else as
/// `wgpu-queue`), or `wgpu` (through wgpu's queue, as on other backends). On the H100 the second queue was
/// no faster anywhere and slower on some shapes (see the README's Performance section).
pub const SUBMIT_ENV: &str = "GRAPH_RUNTIME_SUBMIT";

/// How [`Gpu::new`] submits replays on Vulkan ([`SUBMIT_ENV`]): directly, on which queue, or through wgpu.
fn direct_submission() -> Result<Option<DirectOn>, Error> {
    match std::env::var(SUBMIT_ENV).as_deref() {
        Ok("wgpu") => Ok(None),
        Ok("wgpu-queue") | Ok("") | Err(_) => Ok(Some(DirectOn::WgpuQueue)),
        Ok("second-queue") => Ok(Some(DirectOn::SecondQueue)),
        Ok(other) => Err(Error::RequestDevice {
            adapter: String::new(),
            reason: format!(
                "{SUBMIT_ENV}={other:?} is not one of `wgpu`, `wgpu-queue`, `second-queue`"
            ),
        }),
    }
}

impl Gpu {
    /// The best adapter: high-performance first, or the one `GRAPH_RUNTIME_ADAPTER` names. Asks for
    /// `IMMEDIATES` (push constants) when the adapter has it. In validation mode, fails unless the Vulkan
    /// validation layer is active.
    pub async fn new() -> Result<Gpu, Error> {
        // The native APIs first; GL only when none of them has an adapter (and `WGPU_BACKEND` still rules).
        let mut adapter = None;
        let mut last_error = Error::NoAdapter {
            filter: String::new(),
        };
        for backends in [wgpu::Backends::PRIMARY, wgpu::Backends::SECONDARY] {
            match pick_adapter(&instance(backends)).await {
                Ok(found) => {
                    adapter = Some(found);
                    break;
                }
                Err(e) => last_error = e,
            }
        }
        Gpu::on_adapter(&adapter.ok_or(last_error)?).await
    }

    /// A `Gpu` on `adapter`, as [`Gpu::new`] opens it: what [`crate::Gpus`] makes of each adapter.
    pub(crate) async fn on_adapter(adapter: &wgpu::Adapter) -> Result<Gpu, Error> {
        let info = adapter.get_info();
        // Immediates for parameters; timestamp queries, where offered, for profiled replays; `f16`, where
        // offered, for graphs with `f16` buffers (bake refuses them on a device without it).
        let features = adapter.features()
            & (wgpu::Features::IMMEDIATES
                | wgpu::Features::TIMESTAMP_QUERY
                | wgpu::Features::SHADER_F16);
        let mut limits = adapter.limits();
        if !features.contains(wgpu::Features::IMMEDIATES) {
            limits.max_immediate_size = 0;
        }
        let desc = wgpu::DeviceDescriptor {
            label: Some("graph-runtime"),
            required_features: features,
            required_limits: limits,
            ..Default::default()
        };
        let failed = |reason: String| Error::RequestDevice {
            adapter: info.name.clone(),
            reason,
        };
        // On Vulkan the runtime opens the device itself, as wgpu would: with two queues of wgpu's family for
        // a second queue to submit replays to, and with the import of host memory that transfers between GPUs
        // use, where the device offers it. Elsewhere wgpu opens it.
        let want = direct_submission()?;
        let opened = native::open_device(adapter, &desc, want == Some(DirectOn::SecondQueue));
        let (device, queue, on) = match opened {
            Some(opened) => {
                let (device, queue, second) = opened.map_err(failed)?;
                let on = want.map(|_| match second {
                    true => DirectOn::SecondQueue,
                    false => DirectOn::WgpuQueue,
                });
                (device, queue, on)
            }
            None => {
                let (device, queue) = adapter
                    .request_device(&desc)
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                (device, queue, want.map(|_| DirectOn::WgpuQueue))
            }
        };
        // `None` where the device is not Vulkan, or has no timeline semaphores.
        let direct = match on {
            Some(on) => DirectQueue::new(&device, on).transpose().map_err(failed)?,
            None => None,
        };
        Gpu::wrap(device, GpuQueue::new(queue, direct), Some(info))
    }

    /// [`Gpu::new`], waiting for it. Native targets only: the web cannot block (`Gpu::new().await` there).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new_blocking() -> Result<Gpu, Error> {
        pollster::block_on(Gpu::new())
    }

    /// Uses a device and queue the application already has. Parameters go in push constants if the device
    /// was created with `Features::IMMEDIATES`, else in a uniform buffer.
    ///
    /// The runtime installs its own uncaptured-error handler and device-lost callback on the device,
    /// replacing any the application set, so that those errors come back as [`Error`]s; wrap each device
    /// once. In validation mode the device's instance must have been made with `InstanceFlags::VALIDATION`
    /// on Vulkan, or this fails.
    pub fn from_wgpu(device: wgpu::Device, queue: wgpu::Queue) -> Result<Gpu, Error> {
        Gpu::wrap(device, GpuQueue::new(queue, None), None)
    }

    fn wrap(
        device: wgpu::Device,
        queue: GpuQueue,
        info: Option<wgpu::AdapterInfo>,
    ) -> Result<Gpu, Error> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let state: Arc<DeviceState> = Arc::default();
        let on_error = state.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            lock(&on_error.uncaptured).push(Error::from(e));
        }));
        let on_lost = state.clone();
        device.set_device_lost_callback(move |reason, message| {
            let why = match reason {
                wgpu::DeviceLostReason::Destroyed => format!("it was destroyed ({message})"),
                wgpu::DeviceLostReason::Unknown => message,
            };
            lock(&on_lost.lost).get_or_insert(why);
        });
        let max_immediate_size = if device.features().contains(wgpu::Features::IMMEDIATES) {
            device.limits().max_immediate_size
        } else {
            0
        };
        if validation::requested() {
            validation::prove_active(&device)?;
        }
        Ok(Gpu {
            inner: Arc::new(GpuInner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                device,
                queue,
                info,
                max_immediate_size,
                state,
                #[cfg(not(target_arch = "wasm32"))]
                driver: OnceLock::new(),
            }),
        })
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.inner.device
    }

    /// The queue: every submission and write to the device goes through it (see [`GpuQueue`]).
    pub fn queue(&self) -> &GpuQueue {
        &self.inner.queue
    }

    /// This `Gpu`'s identity, shared by its clones and by nothing else.
    pub(crate) fn id(&self) -> u64 {
        self.inner.id
    }

    /// The push-constant budget in bytes; 0 when parameters must go through a uniform buffer.
    pub fn max_immediate_size(&self) -> u32 {
        self.inner.max_immediate_size
    }

    /// The adapter's backend, where the runtime opened the device (`None` for a device the application
    /// made).
    pub fn backend(&self) -> Option<wgpu::Backend> {
        self.inner.info.as_ref().map(|i| i.backend)
    }

    /// The adapter's name (or what made the device, for one the application made).
    pub fn name(&self) -> String {
        match &self.inner.info {
            Some(i) if !i.name.is_empty() => i.name.clone(),
            Some(i) => format!("an unnamed {:?} adapter", i.backend),
            None => "an application-provided device".to_string(),
        }
    }

    /// One line about the adapter: name, backend, type and push-constant budget.
    pub fn summary(&self) -> String {
        let immediates = match self.inner.max_immediate_size {
            0 => "no push constants (uniform-buffer parameters)".to_string(),
            n => format!("push constants: {n} bytes"),
        };
        let submission = self.inner.queue.submission_path();
        match &self.inner.info {
            // A browser names no adapter (its WebGPU hides it).
            Some(i) if i.name.is_empty() => format!(
                "an unnamed adapter ({:?}, {:?}), {immediates}, replays submitted through {submission}",
                i.backend, i.device_type
            ),
            Some(i) => format!(
                "{} ({:?}, {:?}, driver {}), {immediates}, replays submitted through {submission}",
                i.name, i.backend, i.device_type, i.driver_info
            ),
            None => format!("application-provided device, {immediates}"),
        }
    }

    /// Errors of work that no graph operation owns: the device's loss, then, in order, what wgpu reported of
    /// the application's own calls and what the validation layer reported of calls made on this thread
    /// outside any operation. The first of them, each reported once.
    pub fn check(&self) -> Result<(), Error> {
        match self.take_errors().into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Every error [`Gpu::check`] would report, in order, each once (the device's loss stays).
    pub fn take_errors(&self) -> Vec<Error> {
        let mut errors: Vec<Error> = self.check_lost().err().into_iter().collect();
        errors.append(&mut lock(&self.inner.state.uncaptured));
        errors.extend(validation::take_loose());
        errors
    }

    /// The device's loss, if it happened.
    pub(crate) fn check_lost(&self) -> Result<(), Error> {
        match &*lock(&self.inner.state.lost) {
            Some(why) => Err(Error::DeviceLost(why.clone())),
            None => Ok(()),
        }
    }

    /// Records that the device is gone, as wgpu's device-lost callback would (unless it already did): for
    /// the native recorder, which can see a destroyed device before wgpu reports it.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn mark_lost(&self, why: String) {
        let mut lost = lock(&self.inner.state.lost);
        if lost.is_none() {
            *lost = Some(why);
        }
    }

    /// Lets wgpu notice a loss (it reports one from its maintenance, which a poll runs), without waiting.
    pub(crate) fn poll_lost(&self) -> Result<(), Error> {
        let _ = self.inner.device.poll(wgpu::PollType::Poll);
        self.check_lost()
    }

    /// The thread that drives the device for async work.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn driver(&self) -> &Driver {
        self.inner.driver.get_or_init(Driver::start)
    }

    /// What the device reported by the time awaited work finished: its loss and, on the web, the errors of
    /// every call before (the browser reports them asynchronously, so the runtime opens no error scope there
    /// and they reach the device's list of uncaptured errors: see `scope.rs`). On native targets an
    /// operation's errors were its own scope's, reported as it ended.
    pub(crate) fn check_settled(&self) -> Result<(), Error> {
        #[cfg(target_arch = "wasm32")]
        {
            // The first; the rest stay for the next operation, or `Gpu::check`.
            self.check_lost()?;
            let mut errors = lock(&self.inner.state.uncaptured);
            if errors.is_empty() {
                return Ok(());
            }
            Err(errors.remove(0))
        }
        #[cfg(not(target_arch = "wasm32"))]
        self.check_lost()
    }
}

/// Locks a mutex, taking its data even if a panic poisoned it: the runtime's state stays usable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A wgpu instance of `backends`, with the flags of validation mode, whose layer it installs when asked for.
pub(crate) fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    let validate = validation::requested();
    if validate {
        validation::install();
    }
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    // The Vulkan layer only in validation mode, where its messages are errors. wgpu loads it in every debug
    // build by default; outside validation mode nothing reads its messages, and an old layer has been seen
    // to crash inside `vkCmdDispatch` under parallel tests (Debian 12's 1.3.239).
    desc.flags = if validate {
        wgpu::InstanceFlags::debugging()
    } else {
        // What wgpu keeps in release builds: its own checks of indirect dispatches.
        wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL
    };
    wgpu::Instance::new(desc.with_env())
}

/// The adapter `GRAPH_RUNTIME_ADAPTER` names (by part of its name or its index), else the high-performance one.
async fn pick_adapter(instance: &wgpu::Instance) -> Result<wgpu::Adapter, Error> {
    match std::env::var(ADAPTER_ENV) {
        Ok(wanted) if !wanted.is_empty() => {
            let adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
            let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
            let by_index = wanted
                .parse::<usize>()
                .ok()
                .and_then(|i| adapters.get(i).cloned());
            let by_name = adapters
                .iter()
                .find(|a| {
                    a.get_info()
                        .name
                        .to_lowercase()
                        .contains(&wanted.to_lowercase())
                })
                .cloned();
            by_index.or(by_name).ok_or_else(|| Error::NoAdapter {
                filter: format!(
                    " matching {ADAPTER_ENV}={wanted} (adapters here: {})",
                    names.join(", ")
                ),
            })
        }
        _ => instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            })
            .await
            .map_err(|_| Error::NoAdapter {
                filter: String::new(),
            }),
    }
}
