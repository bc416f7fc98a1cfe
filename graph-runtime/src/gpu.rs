//! The GPU: an adapter's device and queue, with the features the runtime uses and the errors it reports.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::buffer::{Buffer, Element};
use crate::{Error, validation};

/// A wgpu device and queue. Cheap to clone (shared).
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<GpuInner>,
}

struct GpuInner {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: Option<wgpu::AdapterInfo>,
    /// Size of the push-constant (immediate) block the device accepts; 0 without `IMMEDIATES`.
    max_immediate_size: u32,
    /// The first error wgpu reported outside an error scope, or the device loss.
    pending: Arc<Mutex<Option<Error>>>,
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary())
    }
}

/// The environment variable that picks an adapter by (part of) its name, or by its index in the list.
pub const ADAPTER_ENV: &str = "GRAPH_RUNTIME_ADAPTER";

impl Gpu {
    /// The best adapter: high-performance first, or the one `GRAPH_RUNTIME_ADAPTER` names. Asks for
    /// `IMMEDIATES` (push constants) when the adapter has it.
    pub async fn new() -> Result<Gpu, Error> {
        let validate = validation::requested();
        if validate {
            validation::install();
        }
        // The native APIs first; GL only when none of them has an adapter (and `WGPU_BACKEND` still rules).
        let mut adapter = None;
        let mut last_error = Error::NoAdapter {
            filter: String::new(),
        };
        for backends in [wgpu::Backends::PRIMARY, wgpu::Backends::SECONDARY] {
            let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
            desc.backends = backends;
            let mut desc = desc.with_env();
            if validate {
                desc.flags |= wgpu::InstanceFlags::VALIDATION | wgpu::InstanceFlags::DEBUG;
            }
            let instance = wgpu::Instance::new(desc);
            match pick_adapter(&instance).await {
                Ok(found) => {
                    adapter = Some(found);
                    break;
                }
                Err(e) => last_error = e,
            }
        }
        let adapter = adapter.ok_or(last_error)?;
        let info = adapter.get_info();
        let features = adapter.features() & wgpu::Features::IMMEDIATES;
        let mut limits = adapter.limits();
        if !features.contains(wgpu::Features::IMMEDIATES) {
            limits.max_immediate_size = 0;
        }
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("graph-runtime"),
                required_features: features,
                required_limits: limits,
                ..Default::default()
            })
            .await
            .map_err(|e| Error::RequestDevice {
                adapter: info.name.clone(),
                reason: e.to_string(),
            })?;
        Ok(Gpu::wrap(device, queue, Some(info)))
    }

    /// [`Gpu::new`], waiting for it.
    pub fn new_blocking() -> Result<Gpu, Error> {
        pollster::block_on(Gpu::new())
    }

    /// Uses a device and queue the application already has. Parameters go in push constants if the device
    /// was created with `Features::IMMEDIATES`, else in a uniform buffer. The runtime installs its own
    /// uncaptured-error handler and device-lost callback on the device, replacing any the application set, so
    /// that those errors come back as [`Error`]s from waits and replays.
    pub fn from_wgpu(device: wgpu::Device, queue: wgpu::Queue) -> Gpu {
        Gpu::wrap(device, queue, None)
    }

    fn wrap(device: wgpu::Device, queue: wgpu::Queue, info: Option<wgpu::AdapterInfo>) -> Gpu {
        let pending: Arc<Mutex<Option<Error>>> = Arc::default();
        let on_error = pending.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut slot = on_error.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert(Error::from(e));
        }));
        let on_lost = pending.clone();
        device.set_device_lost_callback(move |reason, message| {
            let mut slot = on_lost.lock().unwrap_or_else(|p| p.into_inner());
            if reason != wgpu::DeviceLostReason::Destroyed || slot.is_none() {
                *slot = Some(Error::DeviceLost(format!("{reason:?}: {message}")));
            }
        });
        let max_immediate_size = if device.features().contains(wgpu::Features::IMMEDIATES) {
            device.limits().max_immediate_size
        } else {
            0
        };
        Gpu {
            inner: Arc::new(GpuInner {
                device,
                queue,
                info,
                max_immediate_size,
                pending,
            }),
        }
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.inner.device
    }

    pub fn queue(&self) -> &wgpu::Queue {
        &self.inner.queue
    }

    /// The push-constant budget in bytes; 0 when parameters must go through a uniform buffer.
    pub fn max_immediate_size(&self) -> u32 {
        self.inner.max_immediate_size
    }

    /// One line about the adapter: name, backend, type and push-constant budget.
    pub fn summary(&self) -> String {
        let immediates = match self.inner.max_immediate_size {
            0 => "no push constants (uniform-buffer parameters)".to_string(),
            n => format!("push constants: {n} bytes"),
        };
        match &self.inner.info {
            Some(i) => format!(
                "{} ({:?}, {:?}, driver {}), {immediates}",
                i.name, i.backend, i.device_type, i.driver_info
            ),
            None => format!("application-provided device, {immediates}"),
        }
    }

    /// A buffer holding a copy of `data`.
    pub fn buffer_from_slice<T: Element>(&self, data: &[T]) -> Buffer<T> {
        Buffer::create(self, data.len(), Some(data))
    }

    /// A buffer of `len` zeroed elements.
    pub fn buffer_zeroed<T: Element>(&self, len: usize) -> Buffer<T> {
        Buffer::create(self, len, None)
    }

    /// The first error the device reported since the last check (validation, out of memory, device lost).
    pub fn check(&self) -> Result<(), Error> {
        if let Some(e) = validation::take_error() {
            return Err(e);
        }
        match self
            .inner
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Blocks until `submission` (or all work, with `None`) finished, then reports any device error.
    pub fn wait_for(&self, submission: Option<wgpu::SubmissionIndex>) -> Result<(), Error> {
        let polled = self.inner.device.poll(wgpu::PollType::Wait {
            submission_index: submission,
            timeout: None,
        });
        // A failed wait usually has a cause the device reported (lost, out of memory): that one first.
        self.check()?;
        polled.map(|_| ()).map_err(|e| Error::Wait(e.to_string()))
    }
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
