//! Host tasks: Rust closures that run between GPU partitions and see the buffers they declared.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::Mutex;

use graph_core::desc::{AccessDesc, GraphDesc, OpDesc};

use crate::buffer::Buffer;
use crate::element::Element;
use crate::error::{Error, TaskKind};
use crate::gpu::{Gpu, lock};
use crate::readback::ReadFuture;
use crate::task_graph::TaskGraph;
use crate::texture::Texture;

/// A host task's closure as the runtime keeps it: what [`crate::Baked::on_host`] and
/// [`crate::BakedGraph::on_host`] make of the closure they are given. An error it returns fails the replay, as
/// [`Error::HostTask`] (naming the graph and the task) unless it names them already; its own errors go in with
/// [`Error::task`].
pub type HostTask = Box<dyn FnMut(&HostContext<'_>) -> Result<(), Error> + Send>;

/// What a host task sees: the buffers and textures its node declared, by name, readable or writable as
/// declared (a buffer's elements, a texture's texels as bytes). The GPU work before the task has finished when
/// it runs; what it writes is in place for the GPU work after it.
#[derive(Debug)]
pub struct HostContext<'a> {
    pub(crate) gpu: &'a Gpu,
    /// Declared by host tasks, so never placed in the heap: each slice is its whole buffer.
    pub(crate) buffers: &'a [crate::slice::Slice],
    pub(crate) lens: &'a [u32],
    /// The bound and graph-owned textures, by buffer index.
    pub(crate) textures: &'a [Option<Texture>],
    pub(crate) desc: &'a GraphDesc,
    /// The task's node index in the description.
    pub(crate) node: usize,
    pub(crate) accesses: &'a [AccessDesc],
    /// In an awaited replay, what the phase's tasks read, fetched before the phase: reads take these copies
    /// (and writes update them) instead of blocking.
    pub(crate) prefetched: Option<&'a Prefetched>,
}

/// The buffers and textures a host phase's tasks read, fetched once the partition before it finished, by
/// buffer index: the buffer's words, or the texture's texels. What a task writes goes to the GPU and into
/// this copy too, so a later task of the phase reads it, as it would from the GPU.
#[derive(Debug, Default)]
pub(crate) struct Prefetched(Mutex<HashMap<usize, Vec<u8>>>);

impl Prefetched {
    /// Fetches what host nodes `nodes` of `desc` declared `read` or `read_write`, of `buffers` (whole buffers,
    /// `lens[i]` elements) and `textures`; every read is submitted before the first is awaited.
    pub(crate) async fn fetch(
        gpu: &Gpu,
        desc: &GraphDesc,
        (buffers, lens, textures): (&[crate::slice::Slice], &[u32], &[Option<Texture>]),
        nodes: Vec<u32>,
    ) -> Result<Prefetched, Error> {
        let mut reads = Vec::new();
        let mut texels = Vec::new();
        for n in nodes {
            let Some(OpDesc::Host { accesses }) = desc.nodes.get(n as usize).map(|d| &d.op) else {
                continue;
            };
            for access in accesses.iter().filter(|a| a.mode.reads()) {
                let index = access.buffer as usize;
                if reads.iter().any(|(i, _)| *i == index) || texels.iter().any(|(i, _)| *i == index)
                {
                    continue;
                }
                match textures.get(index).and_then(Option::as_ref) {
                    Some(texture) => texels.push((index, texture.clone())),
                    None => {
                        let (Some(slice), Some(&len)) = (buffers.get(index), lens.get(index))
                        else {
                            continue;
                        };
                        let bytes = desc.buffers[index].elem.buffer_bytes(u64::from(len));
                        reads.push((
                            index,
                            ReadFuture::<u8>::start(gpu, &slice.buffer, bytes as usize),
                        ));
                    }
                }
            }
        }
        let mut fetched = HashMap::new();
        for (index, read) in reads {
            fetched.insert(index, read.await?);
        }
        for (index, texture) in texels {
            fetched.insert(index, texture.read().await?);
        }
        Ok(Prefetched(Mutex::new(fetched)))
    }

    /// The copy of buffer or texture `index`, if it was fetched.
    fn get(&self, index: usize) -> Option<Vec<u8>> {
        lock(&self.0).get(&index).cloned()
    }

    /// Replaces the copy of buffer or texture `index` (a write of a later task's read), if it was fetched.
    fn update(&self, index: usize, bytes: &[u8]) {
        if let Some(copy) = lock(&self.0).get_mut(&index) {
            copy.clear();
            copy.extend_from_slice(bytes);
        }
    }
}

/// A host node of a `graph!` graph, with the typed context the macro generates for it
/// (`Graph::HOSTS.name`): a method per declared buffer, readable or writable as declared, of its element
/// type. Give it its closure with [`crate::Baked::on_host`], which takes only the host nodes of its own
/// graph.
pub trait HostNode: Copy + Send + 'static {
    type Graph: TaskGraph;
    /// What the closure receives.
    type Context<'a>;
    /// The node's declaration index.
    fn index(self) -> usize;
    /// The typed view of the task's context. Only the runtime holds a [`ContextKey`], so only it makes one,
    /// over this node's own context: a typed context reads its accesses by position, and over another
    /// node's (or another graph's) context it would read that node's buffers.
    #[doc(hidden)]
    fn context<'a>(ctx: &'a HostContext<'a>, key: ContextKey) -> Self::Context<'a>;
}

/// What [`HostNode::context`] takes, so that only the runtime can call it; nothing outside the crate can make
/// one.
#[doc(hidden)]
#[derive(Debug)]
pub struct ContextKey(pub(crate) ());

impl HostContext<'_> {
    /// Reads buffer `name`, which the task declared `read` or `read_write`.
    pub fn read<T: Element>(&self, name: &str) -> Result<Vec<T>, Error> {
        let (access, name) = self.named(name);
        let index = self.checked::<T>(access, name, "read")?;
        self.read_buffer(index)
    }

    /// Replaces the contents of buffer `name`, which the task declared `write` or `read_write`.
    pub fn write<T: Element>(&self, name: &str, data: &[T]) -> Result<(), Error> {
        let (access, name) = self.named(name);
        let index = self.checked::<T>(access, name, "write")?;
        self.write_buffer(index, data)
    }

    /// Reads the buffer of the task's access `access` (in declaration order), with the checks of
    /// [`HostContext::read`] but no lookup by name: what the generated typed contexts call.
    #[doc(hidden)]
    pub fn read_access<T: Element>(&self, access: usize) -> Result<Vec<T>, Error> {
        let (access, name) = self.at(access);
        let index = self.checked::<T>(access, name, "read")?;
        self.read_buffer(index)
    }

    /// [`HostContext::write`] by access, as [`HostContext::read_access`].
    #[doc(hidden)]
    pub fn write_access<T: Element>(&self, access: usize, data: &[T]) -> Result<(), Error> {
        let (access, name) = self.at(access);
        let index = self.checked::<T>(access, name, "write")?;
        self.write_buffer(index, data)
    }

    /// Reads every texel of texture `name`, which the task declared `read` or `read_write`: rows one after
    /// another without padding, layer after layer ([`Texture::read_blocking`]'s bytes).
    pub fn read_texels(&self, name: &str) -> Result<Vec<u8>, Error> {
        let (access, name) = self.named(name);
        let index = self.checked_texture(access, name, "read")?;
        self.read_texture(index)
    }

    /// Replaces every texel of texture `name`, which the task declared `write` or `read_write`, with
    /// `texels` laid out as [`HostContext::read_texels`] gives them.
    pub fn write_texels(&self, name: &str, texels: &[u8]) -> Result<(), Error> {
        let (access, name) = self.named(name);
        let index = self.checked_texture(access, name, "write")?;
        self.write_texture(index, texels)
    }

    /// [`HostContext::read_texels`] by access, as [`HostContext::read_access`].
    #[doc(hidden)]
    pub fn read_texels_access(&self, access: usize) -> Result<Vec<u8>, Error> {
        let (access, name) = self.at(access);
        let index = self.checked_texture(access, name, "read")?;
        self.read_texture(index)
    }

    /// [`HostContext::write_texels`] by access, as [`HostContext::read_access`].
    #[doc(hidden)]
    pub fn write_texels_access(&self, access: usize, texels: &[u8]) -> Result<(), Error> {
        let (access, name) = self.at(access);
        let index = self.checked_texture(access, name, "write")?;
        self.write_texture(index, texels)
    }

    /// The `Gpu` the task's buffers are on.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn gpu(&self) -> &Gpu {
        self.gpu
    }

    /// The buffer of access `access`, where its words start in it, and their bytes (whatever its element
    /// type), if the task declared the access `used` (`read` or `write`): what a transfer between GPUs moves
    /// ([`crate::GpusGraph`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn words_of(
        &self,
        access: usize,
        used: &'static str,
    ) -> Result<crate::staging::Words, Error> {
        let (access, name) = self.at(access);
        let index = self.allowed(access, name, used)?;
        let bytes = self.desc.buffers[index]
            .elem
            .buffer_bytes(u64::from(self.lens[index]));
        let slice = &self.buffers[index];
        Ok(crate::staging::Words {
            buffer: slice.buffer.clone(),
            offset: slice.offset,
            bytes,
        })
    }

    fn read_texture(&self, index: usize) -> Result<Vec<u8>, Error> {
        if let Some(texels) = self.prefetched.and_then(|p| p.get(index)) {
            return Ok(texels);
        }
        self.texture(index)?
            .read_blocking()
            .map_err(|e| self.failed(e))
    }

    fn write_texture(&self, index: usize, texels: &[u8]) -> Result<(), Error> {
        let texture = self.texture(index)?;
        let expected = texture.packed_bytes().map_err(|e| self.failed(e))?;
        if texels.len() != expected {
            return Err(self.refused(format!(
                "`{}` holds {expected} bytes of texels, and {} were written: write all of it",
                self.desc.buffers[index].name,
                texels.len()
            )));
        }
        texture.write(texels).map_err(|e| self.failed(e))?;
        if let Some(prefetched) = self.prefetched {
            prefetched.update(index, texels);
        }
        Ok(())
    }

    /// The texture at buffer index `index`: bound, or made by the graph.
    fn texture(&self, index: usize) -> Result<&Texture, Error> {
        self.textures
            .get(index)
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                self.refused(format!(
                    "`{}` has no texture bound",
                    self.desc.buffers[index].name
                ))
            })
    }

    /// The texture of `access` (of the texture named `name`), if it allows this use and is a texture.
    fn checked_texture(
        &self,
        access: Option<&AccessDesc>,
        name: &str,
        used: &'static str,
    ) -> Result<usize, Error> {
        let index = self.allowed(access, name, used)?;
        if self.desc.buffers[index].texture.is_none() {
            return Err(self.refused(format!(
                "`{name}` is a buffer, not a texture: {used} it with `{used}` rather than `{used}_texels`"
            )));
        }
        Ok(index)
    }

    fn read_buffer<T: Element>(&self, index: usize) -> Result<Vec<T>, Error> {
        if let Some(bytes) = self.prefetched.and_then(|p| p.get(index)) {
            let len = self.lens[index] as usize * size_of::<T>();
            return match bytes.get(..len) {
                Some(data) => Ok(bytemuck::pod_collect_to_vec(data)),
                None => Err(self.failed(Error::Readback(format!(
                    "{} bytes were fetched for {len}",
                    bytes.len()
                )))),
            };
        }
        Buffer::<T>::from_wgpu_len(
            self.gpu,
            self.buffers[index].buffer.clone(),
            self.lens[index],
        )
        .and_then(|b| b.read_blocking())
        .map_err(|e| self.failed(e))
    }

    fn write_buffer<T: Element>(&self, index: usize, data: &[T]) -> Result<(), Error> {
        let len = self.lens[index] as usize;
        if data.len() != len {
            return Err(self.refused(format!(
                "`{}` holds {len} elements, and {} were written: write all of it",
                self.desc.buffers[index].name,
                data.len()
            )));
        }
        Buffer::<T>::from_wgpu_len(
            self.gpu,
            self.buffers[index].buffer.clone(),
            self.lens[index],
        )
        .and_then(|b| b.write(data))
        .map_err(|e| self.failed(e))?;
        if let Some(prefetched) = self.prefetched {
            prefetched.update(index, bytemuck::cast_slice(data));
        }
        Ok(())
    }

    /// The task's name.
    fn name(&self) -> &str {
        &self.desc.nodes[self.node].name
    }

    /// A use of the context that the task got wrong, naming the graph and the task.
    fn refused(&self, reason: String) -> Error {
        Error::TransferData {
            graph: self.desc.name.to_string(),
            node: self.name().to_string(),
            reason,
        }
    }

    /// A read or write that failed on the device, naming the graph and the task.
    fn failed(&self, error: Error) -> Error {
        error.of_task(&self.desc.name, self.name(), TaskKind::Host)
    }

    /// The task's access of the buffer or texture named `name`, if it declared one, and the name.
    fn named<'n>(&self, name: &'n str) -> (Option<&AccessDesc>, &'n str) {
        let index = self.desc.buffers.iter().position(|b| b.name == name);
        let access = index.and_then(|i| self.accesses.iter().find(|a| a.buffer as usize == i));
        (access, name)
    }

    /// The task's access `access` (in declaration order), and the name of what it touches.
    fn at(&self, access: usize) -> (Option<&AccessDesc>, &str) {
        let a = self.accesses.get(access);
        let name = a
            .and_then(|a| self.desc.buffers.get(a.buffer as usize))
            .map_or("?", |b| &*b.name);
        (a, name)
    }

    /// The buffer of `access` (of the buffer named `name`), if it allows this use and holds `T`.
    fn checked<T: Element>(
        &self,
        access: Option<&AccessDesc>,
        name: &str,
        used: &'static str,
    ) -> Result<usize, Error> {
        let index = self.allowed(access, name, used)?;
        let b = &self.desc.buffers[index];
        if b.texture.is_some() {
            return Err(self.refused(format!(
                "`{}` is a texture (`{}`), not a buffer: {used} its texels with `{used}_texels`",
                b.name,
                b.texture.as_deref().unwrap_or_default()
            )));
        }
        if b.elem != T::TYPE {
            return Err(self.refused(format!(
                "`{}` holds `{}` elements, not `{}`: {used} it as `{}`",
                b.name,
                b.elem,
                T::TYPE,
                b.elem
            )));
        }
        Ok(index)
    }

    /// The index of what `access` (of `name`) touches, if the node declared it and for this use.
    fn allowed(
        &self,
        access: Option<&AccessDesc>,
        name: &str,
        used: &'static str,
    ) -> Result<usize, Error> {
        let allowed = access.filter(|a| {
            if used == "read" {
                a.mode.reads()
            } else {
                a.mode.writes()
            }
        });
        let Some(b) = allowed.and_then(|a| {
            self.desc
                .buffers
                .get(a.buffer as usize)
                .map(|b| (a.buffer as usize, b))
        }) else {
            return Err(Error::HostAccess {
                graph: self.desc.name.to_string(),
                node: self.name().to_string(),
                kind: "host",
                buffer: name.to_string(),
                used,
            });
        };
        Ok(b.0)
    }
}
