//! Typed GPU buffers, and their untyped form that the bake checks.

#![forbid(unsafe_code)]

use std::marker::PhantomData;
use std::sync::{Arc, Weak};

use graph_core::types::ValueType;

use crate::element::Element;
use crate::error::Error;
use crate::gpu::Gpu;
use crate::readback::ReadFuture;
use crate::scope::OpScope;

/// A buffer whose element type is known at run time only: what a graph binds.
#[derive(Debug, Clone)]
pub struct AnyBuffer {
    gpu: Gpu,
    buffer: wgpu::Buffer,
    elem: ValueType,
    len: u32,
    /// Shared by this handle and its clones (those of the typed [`Buffer`] around it too): whether the
    /// application still holds one ([`AnyBuffer::holder`]). The runtime's own holders take a
    /// [`detached`](AnyBuffer::detached) clone, which does not count.
    handle: Arc<()>,
}

impl AnyBuffer {
    /// Wraps a wgpu buffer the application made on `gpu`'s device, declaring its element type; its length
    /// is its size divided by the element size. Bake checks that it has the usages the graph needs.
    pub fn from_wgpu(gpu: &Gpu, buffer: wgpu::Buffer, elem: ValueType) -> Result<Self, Error> {
        let elements = buffer.size() / u64::from(elem.size());
        let len = element_count(elements, elem)?;
        Ok(AnyBuffer {
            gpu: gpu.clone(),
            buffer,
            elem,
            len,
            handle: Arc::new(()),
        })
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

    /// The same buffer, as a handle of its own: what a holder inside the runtime keeps, so that it does not
    /// count as the application's ([`AnyBuffer::holder`]).
    pub(crate) fn detached(&self) -> AnyBuffer {
        AnyBuffer {
            handle: Arc::new(()),
            ..self.clone()
        }
    }

    /// What tells whether the application still holds this handle or a clone of it: gone once they all
    /// dropped.
    pub(crate) fn holder(&self) -> Weak<()> {
        Arc::downgrade(&self.handle)
    }
}

/// Lengths travel as `u32` element counts, the most a kernel can index: a longer buffer is an error, not a
/// length cut short.
fn element_count(elements: u64, elem: ValueType) -> Result<u32, Error> {
    u32::try_from(elements).map_err(|_| Error::BufferTooLarge {
        elements,
        elem: elem.wgsl(),
        reason: format!(
            "kernels index elements with `u32`, so a buffer holds at most {}",
            u32::MAX
        ),
    })
}

impl Gpu {
    /// A buffer holding a copy of `data`.
    pub fn buffer_from_slice<T: Element>(&self, data: &[T]) -> Result<Buffer<T>, Error> {
        Buffer::create(self, data.len(), Some(data))
    }

    /// A buffer of `len` zeroed elements.
    pub fn buffer_zeroed<T: Element>(&self, len: usize) -> Result<Buffer<T>, Error> {
        Buffer::create(self, len, None)
    }
}

/// A GPU buffer of `T`, usable as storage and as a copy source and destination.
#[derive(Debug, Clone)]
pub struct Buffer<T> {
    raw: AnyBuffer,
    _elem: PhantomData<T>,
}

impl<T: Element> Buffer<T> {
    /// A buffer of `len` elements, zeroed or holding `contents`. Every size is checked: a length the kernels
    /// cannot index or a size over the device's limit is an error, never a smaller buffer.
    pub(crate) fn create(gpu: &Gpu, len: usize, contents: Option<&[T]>) -> Result<Self, Error> {
        let too_large = |reason: String| Error::BufferTooLarge {
            elements: len as u64,
            elem: T::TYPE.wgsl(),
            reason,
        };
        let count = element_count(len as u64, T::TYPE)?;
        // At least one element: wgpu refuses empty storage bindings.
        // Whole `u32` words (`ValueType::buffer_bytes`): wgpu copies and binds buffers in multiples of 4
        // bytes, so a `u8` buffer of 10 elements takes 12.
        let size = (len.max(1) as u64)
            .checked_mul(size_of::<T>() as u64)
            .ok_or_else(|| too_large("its size in bytes overflows u64".into()))?
            .next_multiple_of(4);
        let limit = gpu.device().limits().max_buffer_size;
        if size > limit {
            return Err(too_large(format!(
                "{size} bytes, over this device's limit of {limit} bytes per buffer"
            )));
        }
        let scope = OpScope::enter(gpu);
        let buffer = gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            // Indirect too: a `u32` buffer may hold the workgroup counts of an indirect dispatch.
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::INDIRECT,
            mapped_at_creation: contents.is_some(),
        });
        if let Some(data) = contents {
            let copied = buffer.get_mapped_range_mut(..).map(|mut view| {
                view.slice(..size_of_val(data))
                    .copy_from_slice(bytemuck::cast_slice(data));
            });
            buffer.unmap();
            copied.map_err(|e| Error::Gpu(e.to_string()))?;
        }
        scope.finish(Ok(()))?;
        Ok(Buffer {
            raw: AnyBuffer {
                gpu: gpu.clone(),
                buffer,
                elem: T::TYPE,
                len: count,
                handle: Arc::new(()),
            },
            _elem: PhantomData,
        })
    }

    /// Wraps a wgpu buffer the application made on `gpu`'s device (for example with other usages).
    pub fn from_wgpu(gpu: &Gpu, buffer: wgpu::Buffer) -> Result<Self, Error> {
        Ok(Buffer {
            raw: AnyBuffer::from_wgpu(gpu, buffer, T::TYPE)?,
            _elem: PhantomData,
        })
    }

    /// `buffer` seen as its first `len` elements: a graph's own buffer, whose last word may hold room for
    /// more `u8` or `u16` elements than the graph's length.
    pub(crate) fn from_wgpu_len(gpu: &Gpu, buffer: wgpu::Buffer, len: u32) -> Result<Self, Error> {
        let mut raw = AnyBuffer::from_wgpu(gpu, buffer, T::TYPE)?;
        raw.len = raw.len.min(len);
        Ok(Buffer {
            raw,
            _elem: PhantomData,
        })
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
        self.raw.gpu.check_lost()?;
        let scope = OpScope::enter(&self.raw.gpu);
        let bytes: &[u8] = bytemuck::cast_slice(data);
        // wgpu writes whole words: the elements of a `u8` or `u16` buffer that end inside one are written
        // with zeros after them, in the rest of the buffer's last word.
        let padded;
        let bytes = match bytes.len() % 4 {
            0 => bytes,
            _ => {
                padded = [bytes, &[0; 3][..4 - bytes.len() % 4]].concat();
                &padded[..]
            }
        };
        self.raw
            .gpu
            .queue()
            .write_buffer(&self.raw.buffer, 0, bytes);
        scope.finish(Ok(()))
    }

    /// Reads the contents back once all work submitted before has finished. The future is woken once, by the
    /// map callback, when the data is there; the `Gpu`'s driver thread drives the device meanwhile, so any
    /// executor works and nothing spins.
    pub fn read(&self) -> ReadFuture<T> {
        ReadFuture::start(&self.raw.gpu, &self.raw.buffer, self.len())
    }

    /// [`Buffer::read`], blocking on the device on this thread until the copy finished.
    pub fn read_blocking(&self) -> Result<Vec<T>, Error> {
        ReadFuture::start(&self.raw.gpu, &self.raw.buffer, self.len()).wait()
    }
}
