//! What `graph!` implements for each graph: its types and its static description.

use std::fmt::Debug;

use crate::buffer::AnyBuffer;
use graph_core::desc::GraphDesc;

/// A graph declared with `graph!`. Implemented by the macro; use the generated `bake` instead of calling these.
pub trait TaskGraph: 'static {
    /// The parameter block, laid out as its WGSL twin.
    type Params: bytemuck::Pod + Default + Debug;
    /// The caller's buffers, by name.
    type Buffers<'a>;
    /// The node enum.
    type Node: Copy + Debug + 'static;
    /// The checked graph, as data.
    const DESCRIPTION: &'static GraphDesc;
    /// The bound buffers with their index in [`GraphDesc::buffers`].
    fn bind<'a>(buffers: &Self::Buffers<'a>) -> Vec<(u32, &'a AnyBuffer)>;
    /// The node at a declaration index.
    fn node(index: usize) -> Option<Self::Node>;
    /// The declaration index of a node.
    fn node_index(node: Self::Node) -> usize;
}
