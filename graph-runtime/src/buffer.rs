//! Typed GPU buffers, and their untyped form that the bake checks.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use graph_core::types::{Scalar, ValueType};

use crate::{Error, Gpu};

/// A type a buffer can hold: plain 32-bit data with a WGSL twin.
pub trait Element: bytemuck::Pod + Send + Sync {
    const TYPE: ValueType;
}

macro_rules! elements {
    ($($t:ty => $scalar:ident, $n:literal;)*) => {
        $(impl Element for $t {
            const TYPE: ValueType = ValueType::vector(Scalar::$scalar, $n);
        })*
    };
}

elements! {
    f32 => F32, 1; i32 => I32, 1; u32 => U32, 1;
    [f32; 2] => F32, 2; [i32; 2] => I32, 2; [u32; 2] => U32, 2;
    [f32; 4] => F32, 4; [i32; 4] => I32, 4; [u32; 4] => U32, 4;
}

/// A buffer whose element type is known at run time only: what a graph binds.
#[derive(Debug, Clone)]
pub struct AnyBuffer {
    gpu: Gpu,
    buffer: wgpu::Buffer,
    elem: ValueType,
    len: u32,
}

impl AnyBuffer {
    /// Wraps a wgpu buffer the application made, declaring its element type; its length is its size divided
    /// by the element size. Bake checks that it has the usages the graph needs.
    pub fn from_wgpu(gpu: &Gpu, buffer: wgpu::Buffer, elem: ValueType) -> Self {
        let len = (buffer.size() / u64::from(elem.size())).min(u64::from(u32::MAX)) as u32;
        AnyBuffer {
            gpu: gpu.clone(),
            buffer,
            elem,
            len,
        }
    }

    pub fn elem(&self) -> ValueType {
        self.elem
    }

    /// Length in elements.
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn wgpu(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}

/// A GPU buffer of `T`, usable as storage and as a copy source and destination.
#[derive(Debug, Clone)]
pub struct Buffer<T> {
    raw: AnyBuffer,
    _elem: PhantomData<T>,
}

impl<T: Element> Buffer<T> {
    pub(crate) fn create(gpu: &Gpu, len: usize, contents: Option<&[T]>) -> Self {
        let size = (len.max(1) * size_of::<T>()) as u64;
        let buffer = gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: contents.is_some(),
        });
        if let Some(data) = contents {
            if let Ok(mut view) = buffer.get_mapped_range_mut(..) {
                view.slice(..size_of_val(data))
                    .copy_from_slice(bytemuck::cast_slice(data));
            }
            buffer.unmap();
        }
        let len = len.min(u32::MAX as usize) as u32;
        Buffer {
            raw: AnyBuffer {
                gpu: gpu.clone(),
                buffer,
                elem: T::TYPE,
                len,
            },
            _elem: PhantomData,
        }
    }

    /// Wraps a wgpu buffer the application made (for example with other usages).
    pub fn from_wgpu(gpu: &Gpu, buffer: wgpu::Buffer) -> Self {
        Buffer {
            raw: AnyBuffer::from_wgpu(gpu, buffer, T::TYPE),
            _elem: PhantomData,
        }
    }

    /// Length in elements.
    pub fn len(&self) -> usize {
        self.raw.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }

    pub fn wgpu(&self) -> &wgpu::Buffer {
        &self.raw.buffer
    }

    /// The untyped view a graph binds.
    pub fn as_any(&self) -> &AnyBuffer {
        &self.raw
    }

    /// Replaces the contents (queued: it takes effect before the next submission).
    pub fn write(&self, data: &[T]) -> Result<(), Error> {
        if data.len() != self.len() {
            return Err(Error::LengthMismatch {
                what: "Buffer::write",
                expected: self.len(),
                actual: data.len(),
            });
        }
        self.raw
            .gpu
            .queue()
            .write_buffer(&self.raw.buffer, 0, bytemuck::cast_slice(data));
        Ok(())
    }

    /// Reads the contents back once all work submitted before has finished.
    pub fn read(&self) -> ReadFuture<T> {
        let gpu = self.raw.gpu.clone();
        let size = (self.len() * size_of::<T>()) as u64;
        let staging = gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: size.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        if size > 0 {
            encoder.copy_buffer_to_buffer(&self.raw.buffer, 0, &staging, 0, size);
        }
        let submission = gpu.queue().submit([encoder.finish()]);
        let state: Arc<Mutex<MapState>> = Arc::default();
        let callback_state = state.clone();
        staging.map_async(wgpu::MapMode::Read, .., move |result| {
            let mut s = callback_state.lock().unwrap_or_else(|p| p.into_inner());
            s.result = Some(result.map_err(|e| e.to_string()));
            if let Some(w) = s.waker.take() {
                w.wake();
            }
        });
        ReadFuture {
            gpu,
            staging,
            len: self.len(),
            state,
            submission: Some(submission),
            _elem: PhantomData,
        }
    }

    /// [`Buffer::read`], blocking on the device (rather than spinning) until the copy finished.
    pub fn read_blocking(&self) -> Result<Vec<T>, Error> {
        let mut read = self.read();
        let submission = read.submission.take();
        self.raw.gpu.wait_for(submission)?;
        pollster::block_on(read)
    }
}

#[derive(Debug, Default)]
struct MapState {
    result: Option<Result<(), String>>,
    waker: Option<std::task::Waker>,
}

/// The future of [`Buffer::read`]. On native backends it drives the device itself, without blocking.
#[derive(Debug)]
pub struct ReadFuture<T> {
    gpu: Gpu,
    staging: wgpu::Buffer,
    len: usize,
    state: Arc<Mutex<MapState>>,
    /// The copy's submission, for a blocking wait on it.
    submission: Option<wgpu::SubmissionIndex>,
    _elem: PhantomData<T>,
}

impl<T: Element> Future for ReadFuture<T> {
    type Output = Result<Vec<T>, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Native wgpu only runs map callbacks when the device is polled: drive it without blocking.
        if let Err(e) = self.gpu.device().poll(wgpu::PollType::Poll) {
            return Poll::Ready(Err(Error::Wait(e.to_string())));
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(result) = state.result.take() else {
            state.waker = Some(cx.waker().clone());
            drop(state);
            // Nothing else will wake us on native: ask to be polled again.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        };
        drop(state);
        Poll::Ready(self.finish(result))
    }
}

impl<T: Element> ReadFuture<T> {
    fn finish(&self, result: Result<(), String>) -> Result<Vec<T>, Error> {
        self.gpu.check()?;
        result.map_err(Error::Readback)?;
        let view = self
            .staging
            .get_mapped_range(..)
            .map_err(|e| Error::Readback(e.to_string()))?;
        let bytes = &view[..self.len * size_of::<T>()];
        let data = bytemuck::pod_collect_to_vec(bytes);
        drop(view);
        self.staging.unmap();
        Ok(data)
    }
}

/// A buffer's length in a dispatch expression: `threads(x.len())`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Len(pub u32);

impl Len {
    pub const fn len(self) -> u32 {
        self.0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}
