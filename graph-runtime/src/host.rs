//! Host tasks: Rust closures that run between GPU partitions and see the buffers they declared.

use graph_core::desc::{AccessDesc, GraphDesc};

use crate::buffer::Buffer;
use crate::element::Element;
use crate::error::Error;
use crate::gpu::Gpu;

/// A host task's closure, given to [`crate::Baked::on_host`] or [`crate::BakedGraph::on_host`].
pub type HostTask = Box<dyn FnMut(&HostContext<'_>) -> Result<(), Error> + Send>;

/// What a host task sees: the buffers its node declared, by name, readable or writable as declared. The GPU
/// work before the task has finished when it runs; what it writes is in place for the GPU work after it.
#[derive(Debug)]
pub struct HostContext<'a> {
    pub(crate) gpu: &'a Gpu,
    pub(crate) buffers: &'a [wgpu::Buffer],
    pub(crate) lens: &'a [u32],
    pub(crate) desc: &'a GraphDesc,
    /// The task's node index in the description.
    pub(crate) node: usize,
    pub(crate) accesses: &'a [AccessDesc],
}

impl HostContext<'_> {
    /// Reads buffer `name`, which the task declared `read` or `read_write`.
    pub fn read<T: Element>(&self, name: &str) -> Result<Vec<T>, Error> {
        let index = self.declared::<T>(name, "read")?;
        Buffer::<T>::from_wgpu(self.gpu, self.buffers[index].clone())?.read_blocking()
    }

    /// Replaces the contents of buffer `name`, which the task declared `write` or `read_write`.
    pub fn write<T: Element>(&self, name: &str, data: &[T]) -> Result<(), Error> {
        let index = self.declared::<T>(name, "write")?;
        let len = self.lens[index] as usize;
        if data.len() != len {
            return Err(Error::LengthMismatch {
                what: "HostContext::write",
                expected: len,
                actual: data.len(),
            });
        }
        Buffer::<T>::from_wgpu(self.gpu, self.buffers[index].clone())?.write(data)
    }

    /// The buffer's index, if the node declared it for this use and it holds `T`.
    fn declared<T: Element>(&self, name: &str, used: &'static str) -> Result<usize, Error> {
        let index = self.desc.buffers.iter().position(|b| b.name == name);
        let access = index.and_then(|i| self.accesses.iter().find(|a| a.buffer as usize == i));
        let allowed = access.is_some_and(|a| {
            if used == "read" {
                a.mode.reads()
            } else {
                a.mode.writes()
            }
        });
        let (Some(index), true) = (index, allowed) else {
            return Err(Error::HostAccess {
                graph: self.desc.name.to_string(),
                node: self.desc.nodes[self.node].name.to_string(),
                buffer: name.to_string(),
                used,
            });
        };
        let b = &self.desc.buffers[index];
        if b.elem != T::TYPE {
            return Err(Error::BufferType {
                graph: self.desc.name.to_string(),
                buffer: b.name.to_string(),
                expected: b.elem.wgsl(),
                actual: T::TYPE.wgsl(),
            });
        }
        Ok(index)
    }
}
