//! Interop tasks (Codeplay's `interop_task`): closures given the native wgpu objects, which record their own
//! wgpu work into the graph's command encoder, in order with the graph through the accesses they declared.
//! This is how a third-party wgpu library joins a graph.

#![forbid(unsafe_code)]

use graph_core::desc::{AccessDesc, GraphDesc};

use crate::error::Error;
use crate::queue::GpuQueue;

/// An interop task's closure, given to [`crate::Baked::on_interop`] or [`crate::BakedGraph::on_interop`]. An
/// error it returns fails the replay, as [`Error::InteropTask`] (naming the graph and the task) unless it
/// names them already; its own errors go in with [`Error::task`].
pub type InteropTask = Box<dyn FnMut(&mut InteropContext<'_>) -> Result<(), Error> + Send>;

/// What an interop task sees while its replay records: the device, the queue, the command encoder of its GPU
/// partition (no compute pass is open), and the buffers and textures it declared. Work it records runs after the nodes it
/// depends on and before the nodes that depend on it; it must touch only the buffers it declared, as it
/// declared them.
pub struct InteropContext<'a> {
    pub(crate) device: &'a wgpu::Device,
    pub(crate) queue: &'a GpuQueue,
    pub(crate) encoder: &'a mut wgpu::CommandEncoder,
    pub(crate) buffers: &'a [crate::slice::Slice],
    /// The graph's textures, by buffer index.
    pub(crate) textures: &'a [Option<crate::texture::Texture>],
    pub(crate) desc: &'a GraphDesc,
    /// The task's node index in the description.
    pub(crate) node: usize,
    pub(crate) accesses: &'a [AccessDesc],
}

impl std::fmt::Debug for InteropContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteropContext")
            .field("node", &self.desc.nodes[self.node].name)
            .finish_non_exhaustive()
    }
}

impl InteropContext<'_> {
    pub fn device(&self) -> &wgpu::Device {
        self.device
    }

    pub fn queue(&self) -> &GpuQueue {
        self.queue
    }

    /// The command encoder of the task's GPU partition: what is recorded here is submitted with the replay.
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.encoder
    }

    /// The wgpu buffer bound to `name`, which the task declared (a clone of the handle).
    pub fn buffer(&self, name: &str) -> Result<wgpu::Buffer, Error> {
        let i = self.declared(name, false)?;
        // Declared by an interop task, so never placed in the heap: the slice is the whole buffer.
        Ok(self.buffers[i].buffer.clone())
    }

    /// The wgpu texture bound to (or made by bake for) `name`, a texture the task declared (a clone of the
    /// handle). wgpu tracks its layout through what the task records.
    pub fn texture(&self, name: &str) -> Result<wgpu::Texture, Error> {
        let i = self.declared(name, true)?;
        match self.textures.get(i).and_then(Option::as_ref) {
            Some(texture) => Ok(texture.wgpu().clone()),
            None => Err(self.undeclared(name)),
        }
    }

    /// The wgpu buffer of the task's access `access` (in declaration order): what an eager stream's interop
    /// task reads its buffers by, whatever the recording named them.
    pub(crate) fn buffer_at(&self, access: usize) -> Option<wgpu::Buffer> {
        let a = self.accesses.get(access)?;
        let is_buffer = self.desc.buffers.get(a.buffer as usize)?.is_buffer();
        is_buffer.then(|| {
            self.buffers
                .get(a.buffer as usize)
                .map(|s| s.buffer.clone())
        })?
    }

    /// The task's graph and node names, for messages.
    pub(crate) fn names(&self) -> (&str, &str) {
        (&self.desc.name, &self.desc.nodes[self.node].name)
    }

    /// The index of buffer (or, with `texture`, texture) `name`, which the task declared.
    fn declared(&self, name: &str, texture: bool) -> Result<usize, Error> {
        let index = self
            .desc
            .buffers
            .iter()
            .position(|b| b.name == name && b.texture.is_some() == texture);
        if index.is_none() && self.desc.buffers.iter().any(|b| b.name == name) {
            let (is, call) = match texture {
                true => ("a buffer", "buffer"),
                false => ("a texture", "texture"),
            };
            return Err(Error::Texture {
                texture: name.to_string(),
                reason: format!(
                    "it is {is}: interop task `{}` gets it with `{call}`",
                    self.desc.nodes[self.node].name
                ),
            });
        }
        index
            .filter(|&i| self.accesses.iter().any(|a| a.buffer as usize == i))
            .ok_or_else(|| self.undeclared(name))
    }

    fn undeclared(&self, name: &str) -> Error {
        Error::HostAccess {
            graph: self.desc.name.to_string(),
            node: self.desc.nodes[self.node].name.to_string(),
            kind: "interop",
            buffer: name.to_string(),
            used: "use",
        }
    }
}
