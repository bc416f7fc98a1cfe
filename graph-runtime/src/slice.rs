//! A buffer as the graph binds it: an external buffer whole, or a graph-owned buffer, which is a buffer of
//! its own or a range of the graph's transient heap ([`graph_core::memory`]). Every recorder binds, copies
//! and clears through these, so a placed buffer is never touched past its range.

#![forbid(unsafe_code)]

use std::num::NonZeroU64;

/// `size` bytes of `buffer` from `offset`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Slice {
    pub buffer: wgpu::Buffer,
    pub offset: u64,
    pub size: u64,
}

impl Slice {
    /// All of `buffer`.
    pub(crate) fn whole(buffer: wgpu::Buffer) -> Self {
        let size = buffer.size();
        Slice {
            buffer,
            offset: 0,
            size,
        }
    }

    /// The range as a binding: whole buffers bind whole (a zero size would mean the rest of the buffer).
    pub(crate) fn binding(&self) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.buffer,
            offset: self.offset,
            size: NonZeroU64::new(self.size),
        })
    }
}
