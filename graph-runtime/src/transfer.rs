//! Upload and readback nodes: host data moving in and out of a replay, in the replay's own submission.
//!
//! An upload node owns a staging buffer made at bake. Between replays the app gives the data
//! ([`Uploads::give`]); the replay writes it into the staging buffer with `Queue::write_buffer`, which wgpu
//! runs ahead of the replay's first submission, and the recorder copies staging into the graph's buffer at the
//! node's place in the partition. The data is taken by that replay: the next replay without new data is an
//! error, never stale data. A replay still in flight is unaffected, since the queue runs the next replay's
//! staging write after the earlier replay's copies.
//!
//! A readback node copies its range into a mappable buffer of a set that belongs to one replay: the set is
//! mapped as soon as the replay is submitted, so once the replay's [`crate::Submission`] is waited for, its
//! [`Finished`] holds that replay's data, whatever replays were submitted since. Sets are reused once the
//! app is done with a finished replay (dropping [`Finished`] unmaps its set and returns it to the pool).

#![forbid(unsafe_code)]

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use graph_core::desc::GraphDesc;
use graph_core::plan::Transfer;
use graph_core::types::ValueType;

use crate::completion::Countdown;
use crate::element::Element;
use crate::error::Error;
use crate::gpu::{Gpu, lock};
use crate::program::Program;
use crate::queue::GpuQueue;
use crate::task_graph::{AnyGraph, TaskGraph};
use crate::texture::{TexelRows, Texture};

/// A typed handle on an upload node of `graph!` graph `G` (`G::UPLOADS.name`): its data is `[T]`. Only a
/// `Baked<G>` takes it: giving it to another graph is a compile error.
pub struct Upload<G, T> {
    node: u32,
    _of: PhantomData<fn(T) -> G>,
}

/// A typed handle on a readback node of `graph!` graph `G` (`G::READBACKS.name`): its data is `[T]`. Only
/// the replays of a `Baked<G>` take it (a [`Finished<G>`]): reading it from another graph's is a compile
/// error, and from a [`BakedGraph`](crate::BakedGraph)'s replay, an error at run time.
pub struct Readback<G, T> {
    node: u32,
    _of: PhantomData<fn() -> (G, T)>,
}

macro_rules! handle {
    ($($handle:ident),*) => {$(
        impl<G, T> $handle<G, T> {
            /// The handle of the node at declaration index `node`; the generated code makes these.
            #[doc(hidden)]
            pub const fn new(node: u32) -> Self {
                $handle { node, _of: PhantomData }
            }

            /// The node's declaration index.
            pub const fn node(self) -> u32 {
                self.node
            }
        }

        // By hand: derived, they would ask `G` and `T` to be `Clone` and `Debug` too.
        impl<G, T> Clone for $handle<G, T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<G, T> Copy for $handle<G, T> {}

        impl<G, T> std::fmt::Debug for $handle<G, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($handle))
                    .field("graph", &std::any::type_name::<G>())
                    .field("node", &self.node)
                    .finish()
            }
        }
    )*};
}

handle!(Upload, Readback);

/// What an upload or readback of a texture moves: its texels' bytes, rows packed one after another, layer
/// after layer (as [`Texture::write`] takes them). `graph!` types a texture's handles with it:
/// `Upload<G, Texels>`, given bytes by [`crate::Baked::upload_texels`] or an image by
/// [`crate::Baked::upload_image`], and `Readback<G, Texels>`, read by [`Finished::read_texels`] or
/// [`Finished::read_image`].
#[derive(Debug, Clone, Copy)]
pub enum Texels {}

/// One upload node's staging buffer and the data waiting for the next replay.
#[derive(Debug)]
struct UploadSlot {
    node: u32,
    staging: wgpu::Buffer,
    elem: ValueType,
    /// The range's size in bytes, from the bound lengths; a texture's padded rows.
    bytes: u64,
    /// The bytes the app gives: `bytes`, less the end of a last word past a `u8` or `u16` buffer's elements
    /// (zeros are staged there).
    data: u64,
    /// For an upload into a texture, how its rows lie: the app gives them packed, staging holds them padded.
    rows: Option<TexelRows>,
    /// The data given for the next replay, when `ready`; the vector is reused, so giving data allocates
    /// only the first time.
    pending: Vec<u8>,
    ready: bool,
}

/// The upload nodes of a baked graph, in replay order: a replay of a graph without uploads walks none.
#[derive(Debug, Default)]
pub(crate) struct Uploads {
    slots: Vec<UploadSlot>,
}

impl Uploads {
    /// Each upload of `program`, by node, with its size and a texture's rows: what staging buffers it
    /// needs.
    pub(crate) fn sizes(
        program: &Program,
        textures: &[Option<Texture>],
    ) -> Vec<(u32, u64, Option<TexelRows>)> {
        program
            .transfers(false)
            .iter()
            .map(|t| (t.node, t.bytes, texel_rows(textures, t.buffer)))
            .collect()
    }

    /// A staging buffer per upload node of `program`.
    pub(crate) fn new(
        gpu: &Gpu,
        desc: &GraphDesc,
        program: &Program,
        textures: &[Option<Texture>],
    ) -> Self {
        let mut slots = Vec::new();
        for t in program.transfers(false) {
            let elem = desc.buffers[t.buffer as usize].elem;
            let staging = gpu.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(&desc.nodes[t.node as usize].name),
                size: t.bytes.max(4),
                usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            slots.push(UploadSlot {
                node: t.node,
                staging,
                elem,
                bytes: t.bytes,
                data: t.data,
                rows: texel_rows(textures, t.buffer),
                pending: Vec::new(),
                ready: false,
            });
        }
        Uploads { slots }
    }

    /// These uploads with `previous`'s slot (staging buffer and pending data) in place of each of the same
    /// node and size: what a rebuild that resized only some transfers keeps.
    pub(crate) fn taking_unchanged(mut self, previous: &mut Uploads) -> Self {
        for slot in &mut self.slots {
            let same = |p: &&mut UploadSlot| {
                p.node == slot.node
                    && p.bytes == slot.bytes
                    && p.data == slot.data
                    && p.rows == slot.rows
                    && p.elem == slot.elem
            };
            if let Some(old) = previous.slots.iter_mut().find(same) {
                std::mem::swap(slot, old);
            }
        }
        self
    }

    /// Stages `data` for node `node`'s next replay; it must be the node's element type (`None`: bytes, taken
    /// as the node's own type) and range length.
    pub(crate) fn give(
        &mut self,
        desc: &GraphDesc,
        node: usize,
        elem: Option<ValueType>,
        data: &[u8],
    ) -> Result<(), Error> {
        let fail = |reason: String| Error::TransferData {
            graph: desc.name.to_string(),
            node: desc.nodes.get(node).map_or("?", |n| &*n.name).to_string(),
            reason,
        };
        let Some(slot) = self.slots.iter_mut().find(|s| s.node as usize == node) else {
            return Err(fail("it is not an upload node".into()));
        };
        if let Some(rows) = slot.rows {
            if elem.is_some() {
                return Err(fail(
                    "it uploads a texture's texels: give their bytes (`upload_bytes`, `upload_texels`)".into(),
                ));
            }
            if data.len() as u64 != rows.packed_bytes() {
                return Err(fail(format!(
                    "it uploads {} rows of {} bytes, {} bytes, not {}",
                    rows.rows,
                    rows.row,
                    rows.packed_bytes(),
                    data.len()
                )));
            }
            rows.pad(data, &mut slot.pending);
            slot.ready = true;
            return Ok(());
        }
        if let Some(elem) = elem
            && elem != slot.elem
        {
            return Err(fail(format!(
                "it uploads `{}` elements, not `{elem}`",
                slot.elem
            )));
        }
        if data.len() as u64 != slot.data {
            let size = u64::from(slot.elem.size());
            return Err(fail(format!(
                "it uploads {} elements, not {}",
                slot.data / size,
                data.len() as u64 / size
            )));
        }
        slot.pending.clear();
        slot.pending.extend_from_slice(data);
        slot.pending.resize(slot.bytes as usize, 0);
        slot.ready = true;
        Ok(())
    }

    /// Stages `image` for node `node`'s next replay: an upload of an `rgba8unorm` 2-D texture of its size.
    pub(crate) fn give_image(
        &mut self,
        desc: &GraphDesc,
        node: usize,
        image: &image::RgbaImage,
    ) -> Result<(), Error> {
        let rows = self
            .slots
            .iter()
            .find(|s| s.node as usize == node)
            .and_then(|s| s.rows);
        let fits = rows.is_some_and(|r| {
            r.format == wgpu::TextureFormat::Rgba8Unorm
                && r.rows == r.height
                && (r.size.width, r.size.height) == image.dimensions()
        });
        if !fits {
            let texture = rows.map_or_else(
                || "no texture".to_string(),
                |r| {
                    format!(
                        "a {:?} texture of {} x {} x {}",
                        r.format, r.size.width, r.size.height, r.size.depth_or_array_layers
                    )
                },
            );
            return Err(Error::TransferData {
                graph: desc.name.to_string(),
                node: desc.nodes.get(node).map_or("?", |n| &*n.name).to_string(),
                reason: format!(
                    "it uploads into {texture}, and the image is {} x {} `rgba8unorm`",
                    image.width(),
                    image.height()
                ),
            });
        }
        self.give(desc, node, None, image.as_raw())
    }

    /// The first upload node without data for this replay.
    pub(crate) fn missing(&self) -> Option<usize> {
        self.slots
            .iter()
            .find(|s| !s.ready)
            .map(|s| s.node as usize)
    }

    /// Writes every upload's data into its staging buffer, taking it: the queue runs these writes before the
    /// replay's first submission.
    pub(crate) fn before_replay(&mut self, queue: &GpuQueue) {
        for slot in &mut self.slots {
            if slot.ready && !slot.pending.is_empty() {
                queue.write_buffer(&slot.staging, 0, &slot.pending);
            }
            slot.ready = false;
        }
    }

    /// Node `node`'s staging buffer.
    pub(crate) fn staging(&self, node: u32) -> Option<&wgpu::Buffer> {
        self.slots
            .iter()
            .find(|s| s.node == node)
            .map(|s| &s.staging)
    }
}

/// One replay's readback buffers, by node index.
pub(crate) type ReadbackSet = Vec<Option<wgpu::Buffer>>;

/// What one replay's copies, uploads and readbacks copy between: the graph's buffers, the upload staging
/// buffers and the replay's readback set. Each recorder records these steps into a wgpu encoder with it.
#[derive(Clone, Copy)]
pub(crate) struct TransferBuffers<'a> {
    pub buffers: &'a [crate::slice::Slice],
    /// The graph's textures, by buffer index.
    pub textures: &'a [Option<Texture>],
    pub uploads: &'a Uploads,
    /// This replay's readback buffers, by node.
    pub readbacks: &'a [Option<wgpu::Buffer>],
}

impl TransferBuffers<'_> {
    /// A copy step: `bytes` from `src_offset` of buffer `src` to `dst_offset` of buffer `dst`; or, where
    /// an end is a texture, the whole texture (bake checked the sizes: `texture::plan_transfers`).
    pub(crate) fn copy(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        (src, src_offset): (u32, u64),
        (dst, dst_offset): (u32, u64),
        bytes: u64,
    ) {
        let buffer = |b: u32| self.buffers.get(b as usize);
        match (self.texture(src), self.texture(dst)) {
            (Some(s), Some(d)) => {
                encoder.copy_texture_to_texture(s.copy(), d.copy(), s.size());
            }
            (None, Some(d)) => {
                if let (Some(s), Ok(rows)) = (buffer(src), d.rows()) {
                    encoder.copy_buffer_to_texture(
                        packed_rows(&s.buffer, s.offset, rows),
                        d.copy(),
                        rows.size,
                    );
                }
            }
            (Some(s), None) => {
                if let (Some(d), Ok(rows)) = (buffer(dst), s.rows()) {
                    encoder.copy_texture_to_buffer(
                        s.copy(),
                        packed_rows(&d.buffer, d.offset, rows),
                        rows.size,
                    );
                }
            }
            (None, None) => {
                if let (Some(src), Some(dst)) = (buffer(src), buffer(dst)) {
                    encoder.copy_buffer_to_buffer(
                        &src.buffer,
                        src.offset + src_offset,
                        &dst.buffer,
                        dst.offset + dst_offset,
                        bytes,
                    );
                }
            }
        }
    }

    /// Buffer `b`, where it is a texture.
    fn texture(&self, b: u32) -> Option<&Texture> {
        self.textures.get(b as usize).and_then(Option::as_ref)
    }

    /// An upload step: its staging buffer into its range, or its texture.
    pub(crate) fn upload(&self, encoder: &mut wgpu::CommandEncoder, t: Transfer) {
        let Some(staging) = self.uploads.staging(t.node) else {
            return;
        };
        if let Some(texture) = self.texture(t.buffer) {
            if let Ok(rows) = texture.rows() {
                encoder.copy_buffer_to_texture(
                    wgpu::TexelCopyBufferInfo {
                        buffer: staging,
                        layout: rows.padded_layout(),
                    },
                    texture.copy(),
                    rows.size,
                );
            }
            return;
        }
        if let Some(dst) = self.buffers.get(t.buffer as usize) {
            encoder.copy_buffer_to_buffer(staging, 0, &dst.buffer, dst.offset + t.offset, t.bytes);
        }
    }

    /// A readback step: its range, or its texture's padded rows, into this replay's readback buffer.
    pub(crate) fn readback(&self, encoder: &mut wgpu::CommandEncoder, t: Transfer) {
        let Some(target) = self.readbacks.get(t.node as usize).and_then(Option::as_ref) else {
            return;
        };
        if let Some(texture) = self.texture(t.buffer) {
            if let Ok(rows) = texture.rows() {
                encoder.copy_texture_to_buffer(
                    texture.copy(),
                    wgpu::TexelCopyBufferInfo {
                        buffer: target,
                        layout: rows.padded_layout(),
                    },
                    rows.size,
                );
            }
            return;
        }
        if let Some(src) = self.buffers.get(t.buffer as usize) {
            encoder.copy_buffer_to_buffer(&src.buffer, src.offset + t.offset, target, 0, t.bytes);
        }
    }
}

/// A graph buffer's bytes from `offset` as a texture's rows, packed (bake checked that they are a multiple
/// of 256 bytes long, or one: which needs no row length, and so no alignment).
fn packed_rows(
    buffer: &wgpu::Buffer,
    offset: u64,
    rows: TexelRows,
) -> wgpu::TexelCopyBufferInfo<'_> {
    let many = rows.rows > 1;
    wgpu::TexelCopyBufferInfo {
        buffer,
        layout: wgpu::TexelCopyBufferLayout {
            offset,
            bytes_per_row: many.then_some(rows.row),
            rows_per_image: many.then_some(rows.height),
        },
    }
}

/// Buffer `b`'s rows, where it is a texture.
fn texel_rows(textures: &[Option<Texture>], b: u32) -> Option<TexelRows> {
    textures.get(b as usize)?.as_ref()?.rows().ok()
}

/// A readback node's element type, the bytes it copies (whole words) and the bytes of its elements, which
/// the app gets.
type ReadbackSize = (ValueType, u64, u64);

/// What a finished replay's readbacks need besides their buffers: names and element types, shared.
#[derive(Debug)]
pub(crate) struct ReadbackInfo {
    graph: String,
    /// Per node: its name, and for a readback node its element type, the bytes it copies (whole words) and
    /// the bytes of its elements, which the app gets.
    nodes: Vec<(String, Option<ReadbackSize>)>,
    /// Per node: a readback of a texture's rows, given to the app packed.
    rows: Vec<Option<TexelRows>>,
    /// Sets unmapped and ready for another replay.
    pool: Mutex<Vec<ReadbackSet>>,
    /// Whether any node is a readback.
    any: bool,
}

/// The readback nodes of a baked graph.
#[derive(Debug, Clone)]
pub(crate) struct Readbacks {
    info: Arc<ReadbackInfo>,
}

impl Readbacks {
    /// The name of the graph they belong to.
    pub(crate) fn graph(&self) -> &str {
        &self.info.graph
    }

    /// Each readback of `program`, by node, with its size and a texture's rows: what its pooled sets hold.
    pub(crate) fn sizes(
        program: &Program,
        textures: &[Option<Texture>],
    ) -> Vec<(u32, u64, Option<TexelRows>)> {
        program
            .transfers(true)
            .iter()
            .map(|t| (t.node, t.bytes, texel_rows(textures, t.buffer)))
            .collect()
    }

    pub(crate) fn new(desc: &GraphDesc, program: &Program, textures: &[Option<Texture>]) -> Self {
        let mut nodes: Vec<(String, Option<ReadbackSize>)> = desc
            .nodes
            .iter()
            .map(|n| (n.name.to_string(), None))
            .collect();
        let mut rows = vec![None; desc.nodes.len()];
        for t in program.transfers(true) {
            nodes[t.node as usize].1 =
                Some((desc.buffers[t.buffer as usize].elem, t.bytes, t.data));
            rows[t.node as usize] = texel_rows(textures, t.buffer);
        }
        Readbacks {
            info: Arc::new(ReadbackInfo {
                graph: desc.name.to_string(),
                any: nodes.iter().any(|n| n.1.is_some()),
                nodes,
                rows,
                pool: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Whether the graph has readback nodes at all (a replay without them takes no set).
    pub(crate) fn any(&self) -> bool {
        self.info.any
    }

    /// A set for one replay: from the pool, or new.
    pub(crate) fn take_set(&self, gpu: &Gpu) -> ReadbackSet {
        if let Some(set) = lock(&self.info.pool).pop() {
            return set;
        }
        self.info
            .nodes
            .iter()
            .map(|(name, readback)| {
                readback.map(|(_, bytes, _)| {
                    gpu.device().create_buffer(&wgpu::BufferDescriptor {
                        label: Some(name),
                        size: bytes.max(4),
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    })
                })
            })
            .collect()
    }

    /// Maps a submitted replay's set: the maps complete once the replay finished (natively, in the poll of the
    /// device that sees it finish). The countdown counts their callbacks.
    pub(crate) fn map(&self, set: &ReadbackSet) -> Arc<Countdown> {
        let mapped = Arc::new(Countdown::new(set.iter().flatten().count()));
        for buffer in set.iter().flatten() {
            let arrived = mapped.clone();
            buffer.map_async(wgpu::MapMode::Read, .., move |result| {
                arrived.arrive(result.map_err(|e| e.to_string()));
            });
        }
        mapped
    }

    /// A finished replay's view of its set.
    pub(crate) fn finished<G>(&self, set: Option<ReadbackSet>) -> Finished<G> {
        Finished {
            info: self.info.clone(),
            set,
            graph: PhantomData,
        }
    }
}

/// A replay of graph `G` that finished on the GPU: what its readback nodes copied out, for this replay
/// alone. A `Baked<G>`'s replay is a `Finished<G>`, read with `G`'s handles (`G::READBACKS.name`); a
/// [`BakedGraph`](crate::BakedGraph)'s is a `Finished` (of [`AnyGraph`]), read by name, or with a handle
/// checked at run time to be of this graph.
#[derive(Debug)]
pub struct Finished<G = AnyGraph> {
    /// The graph's name and nodes (shared by every replay of it).
    info: Arc<ReadbackInfo>,
    /// The replay's own readback buffers; `None` for a graph without readbacks.
    set: Option<ReadbackSet>,
    graph: PhantomData<fn() -> G>,
}

impl<G: TaskGraph> Finished<G> {
    /// What readback node `handle` of this graph copied out in this replay.
    pub fn read<T: Element>(&self, handle: Readback<G, T>) -> Result<Vec<T>, Error> {
        self.read_at(handle.node as usize)
    }

    /// What readback node `handle` of a texture copied out in this replay: its texels' bytes, rows packed.
    pub fn read_texels(&self, handle: Readback<G, Texels>) -> Result<Vec<u8>, Error> {
        self.read_as(handle.node as usize, None)
    }

    /// What readback node `handle` of an `rgba8unorm` 2-D texture copied out in this replay, as an image.
    pub fn read_image(&self, handle: Readback<G, Texels>) -> Result<image::RgbaImage, Error> {
        let index = handle.node as usize;
        let fail = |reason: String| Error::TransferData {
            graph: self.graph(),
            node: self.nodes().get(index).map_or("?", |n| &n.0).to_string(),
            reason,
        };
        let rows = self.info.rows.get(index).copied().flatten();
        let Some(rows) =
            rows.filter(|r| r.format == wgpu::TextureFormat::Rgba8Unorm && r.rows == r.height)
        else {
            return Err(fail("it reads back no 2-D `rgba8unorm` texture".into()));
        };
        let bytes = self.read_as(index, None)?;
        image::RgbaImage::from_raw(rows.size.width, rows.size.height, bytes)
            .ok_or_else(|| fail("its texels are not the image's size".into()))
    }
}

impl Finished {
    /// What readback node `handle` copied out in this replay. The baked graph's type does not say which graph
    /// it is, so the handle is checked here: a handle of another graph (by the graph's name and the node's)
    /// is an error naming both.
    pub fn read<H: TaskGraph, T: Element>(&self, handle: Readback<H, T>) -> Result<Vec<T>, Error> {
        let index = handle.node as usize;
        let theirs = H::DESCRIPTION;
        let their_node = theirs.nodes.get(index).map_or("?", |n| &*n.name);
        let ours = self.nodes().get(index).map(|n| &*n.0);
        if theirs.name != self.graph().as_str() || ours != Some(their_node) {
            return Err(Error::TransferData {
                graph: self.graph(),
                node: their_node.to_string(),
                reason: format!(
                    "the handle is a readback of graph `{}`, not of this one: read each graph's handles from \
                     its own replays",
                    theirs.name
                ),
            });
        }
        self.read_at(index)
    }
}

impl<G> Finished<G> {
    /// What the readback node named `node` copied out in this replay, as `T`s (its element type).
    pub fn read_named<T: Element>(&self, node: &str) -> Result<Vec<T>, Error> {
        self.read_at(self.named(node)?)
    }

    /// What the readback node named `node` copied out in this replay, as bytes (for tools that handle every
    /// element type alike).
    pub fn read_bytes_named(&self, node: &str) -> Result<Vec<u8>, Error> {
        let index = self.named(node)?;
        self.read_as(index, None)
    }

    /// The nodes of the graph, with their readback types.
    fn nodes(&self) -> &[(String, Option<ReadbackSize>)] {
        &self.info.nodes
    }

    fn graph(&self) -> String {
        self.info.graph.clone()
    }

    /// The index of the node named `node`.
    fn named(&self, node: &str) -> Result<usize, Error> {
        self.nodes()
            .iter()
            .position(|n| n.0 == node)
            .ok_or_else(|| Error::TransferData {
                graph: self.graph(),
                node: node.to_string(),
                reason: "the graph has no readback node of this name".into(),
            })
    }

    fn read_at<T: Element>(&self, index: usize) -> Result<Vec<T>, Error> {
        Ok(bytemuck::pod_collect_to_vec(
            &self.read_as(index, Some(T::TYPE))?,
        ))
    }

    /// The bytes of readback node `index`, whose element type must be `wanted`.
    fn read_as(&self, index: usize, wanted: Option<ValueType>) -> Result<Vec<u8>, Error> {
        let fail = |reason: String| Error::TransferData {
            graph: self.graph(),
            node: self.nodes().get(index).map_or("?", |n| &n.0).to_string(),
            reason,
        };
        let Some((elem, _, bytes)) = self.nodes().get(index).and_then(|n| n.1) else {
            return Err(fail("it is not a readback node".into()));
        };
        let rows = self.info.rows.get(index).copied().flatten();
        if rows.is_some() && wanted.is_some() {
            return Err(fail(
                "it reads back a texture's texels: read their bytes (`read_bytes_named`, `read_texels`)".into(),
            ));
        }
        if let Some(wanted) = wanted
            && elem != wanted
        {
            return Err(fail(format!(
                "it reads back `{elem}` elements, not `{wanted}`"
            )));
        }
        let buffer = self
            .set
            .as_ref()
            .and_then(|set| set.get(index)?.as_ref())
            .ok_or_else(|| fail("this replay has no data for it".into()))?;
        let view = buffer
            .get_mapped_range(..)
            .map_err(|e| fail(format!("its data is not mapped: {e}")))?;
        let data = view
            .get(..bytes as usize)
            .map(|padded| match rows {
                Some(rows) => rows.unpad(padded),
                None => padded.to_vec(),
            })
            .ok_or_else(|| fail("its buffer is short".into()));
        drop(view);
        data
    }
}

impl<G> Drop for Finished<G> {
    /// Unmaps the set and gives it back for another replay.
    fn drop(&mut self) {
        if let Some(set) = self.set.take() {
            for buffer in set.iter().flatten() {
                buffer.unmap();
            }
            lock(&self.info.pool).push(set);
        }
    }
}
