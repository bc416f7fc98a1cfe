//! What `graph!` implements for each graph: its types and its static description.

#![forbid(unsafe_code)]

use std::fmt::Debug;

use crate::buffer::AnyBuffer;
use crate::texture::Texture;
use graph_core::desc::GraphDesc;

/// A graph declared with `graph!`. Implemented by the macro; use the generated `bake` instead of calling these.
///
/// Each typed handle names its graph: the node sets below are enums of this graph's nodes of one role, and
/// the upload and readback handles are `Upload<Self, T>` and `Readback<Self, T>`, so a node of another
/// graph, or of the wrong role, is a compile error where it is given to [`crate::Baked`].
pub trait TaskGraph: 'static {
    /// The parameter block, laid out as its WGSL twin.
    type Params: bytemuck::Pod + Default + Debug;
    /// The caller's buffers, by name.
    type Buffers<'a>;
    /// The node enum: every node.
    type Node: Copy + Debug + 'static;
    /// The kernels (`NameKernel`): what [`crate::Baked::set_dispatch`] takes.
    type KernelNode: GraphNode;
    /// The choices of groups of alternatives (`NameChoice`): what [`crate::Baked::select`] takes.
    type ChoiceNode: GraphNode;
    /// The nodes with a range to set, fills declared with a range, uploads and readbacks (`NameRanged`):
    /// what [`crate::Baked::set_range`] takes.
    type RangedNode: GraphNode;
    /// The copies (`NameCopy`): what [`crate::Baked::set_copy_ranges`] takes.
    type CopyNode: GraphNode;
    /// The interop tasks (`NameInterop`): what [`crate::Baked::on_interop`] takes.
    type InteropNode: GraphNode;
    /// The nodes that can be turned off, kernels, fills, copies and subgraphs (`NameToggle`): what
    /// [`crate::Baked::set_enabled`] takes.
    type ToggleNode: GraphNode;
    /// The checked graph, as data.
    const DESCRIPTION: &'static GraphDesc;
    /// The bound buffers with their index in [`GraphDesc::buffers`].
    fn bind<'a>(buffers: &Self::Buffers<'a>) -> Vec<(u32, &'a AnyBuffer)>;
    /// The bound textures with their index in [`GraphDesc::buffers`] (none for a graph without textures).
    fn bind_textures<'a>(buffers: &Self::Buffers<'a>) -> Vec<(u32, &'a Texture)> {
        let _ = buffers;
        Vec::new()
    }
    /// The node at a declaration index.
    fn node(index: usize) -> Option<Self::Node>;
    /// The declaration index of a node.
    fn node_index(node: Self::Node) -> usize;
}

/// A node of one role of a `graph!` graph: one of the enums the macro generates beside the node enum
/// (`NameKernel`, `NameChoice`, ..), whose variants are the graph's nodes of that role. A graph with no node
/// of a role has an enum without variants, so no call that takes one can be written.
pub trait GraphNode: Copy + Debug + Send + Sync + 'static {
    /// The node's declaration index (its index in the graph's description).
    fn index(self) -> usize;
}

/// The graph of a [`crate::Submission`] or [`crate::Finished`] whose type does not say which graph it is:
/// a replay of a [`crate::BakedGraph`]. The handles given to it are checked at run time.
#[derive(Debug)]
pub enum AnyGraph {}
