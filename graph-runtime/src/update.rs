//! Executable-graph updates without re-baking (SYCL's `update`, CUDA's `cudaGraphExecUpdate`): rebinding an
//! external buffer, a node's dispatch size, a copy, fill, upload or readback range, and a whole description of
//! the same topology.
//!
//! Every update goes through one rebuild: the new description and buffers are checked as a bake checks them,
//! the program is compiled again (it is cheap and handle-free), and the replaying recorder's objects are
//! built again through the baked graph's caches, so only what changed is created: a pipeline whose code or
//! constants changed, a bind group or descriptor set whose buffers changed. Graph-owned buffers, parameters, host and interop closures, the active alternatives
//! and pending uploads (where their size is unchanged) carry over. Everything is built before anything is
//! replaced: an update that fails leaves the baked graph as it was. A replay already submitted keeps the
//! objects it was recorded with (wgpu keeps them alive until it finishes).

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::ops::Range;

use graph_core::desc::{DispatchDesc, GraphDesc, OpDesc, RangeDesc, SizeDesc};
use graph_core::flatten::flatten;
use graph_core::size::SizeStep;
use graph_core::topology::topology_difference;

use crate::baked_graph::BakedGraph;
use crate::baked_state::{BakedState, UpdateReport};
use crate::buffer::AnyBuffer;
use crate::error::Error;
use crate::scope::OpScope;
use crate::texture::Texture;

/// A kernel node's size, set after bake in place of the one it was declared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    /// Invocations per dimension, rounded up to whole workgroups.
    Threads([u32; 3]),
    /// Workgroups per dimension.
    Workgroups([u32; 3]),
}

impl BakedGraph {
    /// Binds external buffer `name` to `buffer` from the next replay on: of the same element type, a length
    /// the graph accepts (its declared one; one its ranges fit) and the usages it needs, checked as bake
    /// checks them. Only the bind groups of the kernels that use it are created again.
    pub fn rebind(&mut self, name: &str, buffer: &AnyBuffer) -> Result<UpdateReport, Error> {
        let index = self
            .state
            .desc
            .buffers
            .iter()
            .position(|b| b.name == name && b.role.is_external() && b.texture.is_none())
            .ok_or_else(|| {
                let known = self
                    .state
                    .desc
                    .buffers
                    .iter()
                    .filter(|b| b.role.is_external() && b.texture.is_none())
                    .map(|b| format!("`{}`", b.name));
                crate::error::unknown(&self.state.desc, "external buffer", name, known)
            })?;
        self.rebind_indexed(&[(index as u32, buffer)])
    }

    /// Binds texture `name` to `texture` from the next replay on, checked as bake checks it. Only the bind
    /// groups of the kernels that use it are created again.
    pub fn rebind_texture(&mut self, name: &str, texture: &Texture) -> Result<UpdateReport, Error> {
        let desc = &self.state.desc;
        let index = desc
            .buffers
            .iter()
            .position(|b| b.name == name && b.texture.is_some() && b.role.is_external())
            .ok_or_else(|| {
                let known = desc
                    .buffers
                    .iter()
                    .filter(|b| b.texture.is_some() && b.role.is_external())
                    .map(|b| format!("`{}`", b.name));
                crate::error::unknown(desc, "texture", name, known)
            })?;
        let mut textures = self.state.textures.clone();
        textures[index] = Some(texture.clone());
        self.rebuild_with(
            self.state.desc.clone(),
            self.state.externals.clone(),
            textures,
        )
    }

    /// Rebinds the external buffers given by declaration index, in one rebuild.
    pub(crate) fn rebind_indexed(
        &mut self,
        buffers: &[(u32, &AnyBuffer)],
    ) -> Result<UpdateReport, Error> {
        self.rebind_resources_indexed(buffers, &[])
    }

    /// Rebinds the external buffers and the textures given by declaration index, in one rebuild.
    pub(crate) fn rebind_resources_indexed(
        &mut self,
        buffers: &[(u32, &AnyBuffer)],
        textures: &[(u32, &Texture)],
    ) -> Result<UpdateReport, Error> {
        crate::bake::check_bindings(&self.state.desc, buffers)?;
        let mut externals = self.state.externals.clone();
        for &(index, buffer) in buffers {
            match externals.get_mut(index as usize) {
                Some(slot @ Some(_)) => *slot = Some(buffer.clone()),
                _ => return Err(self.refused(format!("buffer {index} is not an external buffer"))),
            }
        }
        let mut bound = self.state.textures.clone();
        for &(index, texture) in textures {
            match bound.get_mut(index as usize) {
                Some(slot @ Some(_)) => *slot = Some(texture.clone()),
                _ => return Err(self.refused(format!("buffer {index} is not a texture"))),
            }
        }
        self.rebuild_with(self.state.desc.clone(), externals, bound)
    }

    /// Sets kernel `node`'s dispatch size from the next replay on, in place of the declared one (which may
    /// read parameters; this one is fixed until set again). Refused for a node of any other kind, a fill
    /// included (its extent is its buffer or its range: see [`BakedGraph::set_range`]), and for a size past
    /// the device's limits; a refused update leaves the graph as it was.
    pub fn set_dispatch(&mut self, node: &str, dispatch: Dispatch) -> Result<UpdateReport, Error> {
        let index = self.node_index(node)?;
        self.set_dispatch_at(index, dispatch)
    }

    pub(crate) fn set_dispatch_at(
        &mut self,
        index: usize,
        dispatch: Dispatch,
    ) -> Result<UpdateReport, Error> {
        let name = self.node_name(index);
        // What each other kind of node has in place of a dispatch size, and how to change it.
        let instead = match self.state.desc.nodes.get(index).map(|n| &n.op) {
            Some(OpDesc::Kernel(k)) if !k.is_fill() => None,
            Some(OpDesc::Kernel(k)) if k.range.is_some() => Some(
                "is a fill: it covers its range, one invocation per element; set the range with `set_range`",
            ),
            Some(OpDesc::Kernel(_)) => Some(
                "is a fill: it covers its whole buffer, one invocation per element; to fill part of it, \
                 declare the fill over a range and set that with `set_range`",
            ),
            Some(OpDesc::Copy { .. }) => {
                Some("is a copy: it moves its ranges; set them with `set_copy_ranges`")
            }
            Some(OpDesc::Upload { .. } | OpDesc::Readback { .. }) => {
                Some("is a transfer: it moves its range; set it with `set_range`")
            }
            Some(OpDesc::Host { .. }) => Some("is a host task: it dispatches nothing"),
            Some(OpDesc::Interop { .. }) => {
                Some("is an interop task: its closure records its own work")
            }
            Some(OpDesc::Empty | OpDesc::Subgraph { .. }) => Some("dispatches nothing"),
            None => Some("is not a node of the graph"),
        };
        if let Some(instead) = instead {
            return Err(self.refused(format!(
                "{name} {instead}; only a kernel's dispatch size can be set"
            )));
        }
        let mut desc = self.state.desc.clone();
        let Some(OpDesc::Kernel(k)) = desc
            .to_mut()
            .nodes
            .to_mut()
            .get_mut(index)
            .map(|n| &mut n.op)
        else {
            return Err(self.refused(format!("{name} is not a kernel")));
        };
        k.dispatch = match dispatch {
            Dispatch::Threads(dims) => DispatchDesc::Threads(dims.map(literal)),
            Dispatch::Workgroups(dims) => DispatchDesc::Workgroups(dims.map(literal)),
        };
        self.rebuild(desc, self.state.externals.clone())
    }

    /// Sets the range of fill, upload or readback `node` from the next replay on: elements `range` of its
    /// buffer, checked against the bound length. A fill's range is a pipeline constant, so its pipeline is
    /// compiled again; only a fill declared with a range has one to set.
    pub fn set_range(&mut self, node: &str, range: Range<u32>) -> Result<UpdateReport, Error> {
        let index = self.node_index(node)?;
        self.set_range_at(index, range)
    }

    pub(crate) fn set_range_at(
        &mut self,
        index: usize,
        range: Range<u32>,
    ) -> Result<UpdateReport, Error> {
        let mut desc = self.state.desc.clone();
        let name = self.node_name(index);
        let op = desc
            .to_mut()
            .nodes
            .to_mut()
            .get_mut(index)
            .map(|n| &mut n.op);
        match op {
            Some(OpDesc::Upload { range: r, .. } | OpDesc::Readback { range: r, .. }) => {
                *r = range_desc(range)
            }
            Some(OpDesc::Kernel(k)) if k.range.is_some() => k.range = Some(range_desc(range)),
            Some(OpDesc::Kernel(_)) => {
                return Err(self.refused(format!(
                    "{name} has no range to set (only a fill declared with a range has one)"
                )));
            }
            _ => {
                return Err(self.refused(format!(
                    "{name} is not a fill, upload or readback (a copy's ranges are set with `set_copy_ranges`)"
                )));
            }
        }
        self.rebuild(desc, self.state.externals.clone())
    }

    /// Sets copy `node`'s source and destination ranges from the next replay on (of one length, each within
    /// its bound buffer).
    pub fn set_copy_ranges(
        &mut self,
        node: &str,
        src: Range<u32>,
        dst: Range<u32>,
    ) -> Result<UpdateReport, Error> {
        let index = self.node_index(node)?;
        self.set_copy_ranges_at(index, src, dst)
    }

    pub(crate) fn set_copy_ranges_at(
        &mut self,
        index: usize,
        src: Range<u32>,
        dst: Range<u32>,
    ) -> Result<UpdateReport, Error> {
        let mut desc = self.state.desc.clone();
        let name = self.node_name(index);
        match desc
            .to_mut()
            .nodes
            .to_mut()
            .get_mut(index)
            .map(|n| &mut n.op)
        {
            Some(OpDesc::Copy {
                src_range,
                dst_range,
                ..
            }) => {
                *src_range = range_desc(src);
                *dst_range = range_desc(dst);
            }
            _ => return Err(self.refused(format!("{name} is not a copy"))),
        }
        self.rebuild(desc, self.state.externals.clone())
    }

    /// Updates the whole graph from `desc` (SYCL's `update(graph)`, CUDA's `cudaGraphExecUpdate`): a
    /// description of the same topology (parameters, buffers, nodes and what they bind, edges) whose kernels'
    /// code, arguments, sizes and ranges may differ. Only the pipelines whose code changed are compiled. A
    /// description of another topology is an error naming the first difference, and the graph is unchanged.
    /// Dispatch sizes and ranges set since bake are replaced by `desc`'s.
    pub fn update(
        &mut self,
        desc: impl Into<Cow<'static, GraphDesc>>,
    ) -> Result<UpdateReport, Error> {
        let desc = desc.into();
        let size = self.state.desc.params.size as usize;
        desc.validate(size)
            .map_err(|e| self.refused(format!("the update is not a valid description: {}", e.0)))?;
        let flat = match flatten(&desc).map_err(|e| self.refused(e.0))? {
            Cow::Owned(flat) => Cow::Owned(flat),
            Cow::Borrowed(_) => desc.clone(),
        };
        if let Some(difference) = topology_difference(&self.state.desc, &flat) {
            return Err(self.refused(format!("its topology differs: {difference}")));
        }
        self.rebuild(flat, self.state.externals.clone())
    }

    /// Builds the graph again where the parameters now size a texture other than it was built at, as a
    /// rebind to a texture of that size would (the texture is made again, its texels undefined; what does
    /// not bind it is kept); where they size one 0 texels along an axis, an error and no rebuild. Every replay, profile and upload asks it first; in a graph without textures
    /// sized by parameters it is a loop over the buffers that finds none.
    pub(crate) fn fit_textures_to_params(&mut self) -> Result<(), Error> {
        let state = &self.state;
        let changed = state.param_extents.iter().enumerate().any(|(i, built)| {
            built.is_some() && crate::texture::param_extent(&state.desc, i, &self.params) != *built
        });
        if changed {
            // A size of 0 is refused before anything is made again: the graph stays as it was.
            let wanted = crate::texture::param_extents(&state.desc, &self.params);
            crate::texture::check_sized(&state.desc, &wanted, 0, &self.params)?;
            let _span = tracing::debug_span!("resize textures to parameters").entered();
            self.rebuild(self.state.desc.clone(), self.state.externals.clone())?;
        }
        Ok(())
    }

    /// An error where the parameters give texture `only` (every texture, for `None`) no texel along some
    /// axis: it has no size to replay or upload at.
    pub(crate) fn check_sized(&self, only: Option<usize>) -> Result<(), Error> {
        let extents = &self.state.param_extents;
        let extents = match only {
            Some(i) => extents.get(i..=i).unwrap_or_default(),
            None => extents,
        };
        let offset = only.unwrap_or(0);
        crate::texture::check_sized(&self.state.desc, extents, offset, &self.params)
    }

    /// Builds everything a replay needs for `desc` over `externals`, reusing what it can, then replaces the
    /// baked graph's with it; on any error nothing is replaced.
    pub(crate) fn rebuild(
        &mut self,
        desc: Cow<'static, GraphDesc>,
        externals: Vec<Option<AnyBuffer>>,
    ) -> Result<UpdateReport, Error> {
        let textures = self.state.textures.clone();
        self.rebuild_with(desc, externals, textures)
    }

    /// [`BakedGraph::rebuild`] over `textures` too.
    fn rebuild_with(
        &mut self,
        desc: Cow<'static, GraphDesc>,
        externals: Vec<Option<AnyBuffer>>,
        textures: Vec<Option<Texture>>,
    ) -> Result<UpdateReport, Error> {
        self.gpu.check_lost()?;
        let gpu = self.gpu.clone();
        let scope = OpScope::enter(&gpu);
        let name = desc.name.to_string();
        // Nodes ever turned off keep dispatches of their own, and what they write memory of its own.
        let apart: Vec<u32> = (0..self.ever_off.len() as u32)
            .filter(|&n| self.ever_off[n as usize])
            .collect();
        let built = BakedState::build(
            &gpu,
            desc,
            externals,
            textures,
            &self.transport,
            &self.params,
            Some(&mut self.state),
            &apart,
        );
        let (state, report) = scope.finish_with(built, |reason| Error::Update {
            graph: name,
            reason,
        })?;
        // Replays through the old command buffers finish before they are freed (their `Drop` waits).
        self.state = state;
        Ok(report)
    }

    fn node_index(&self, name: &str) -> Result<usize, Error> {
        self.state
            .desc
            .nodes
            .iter()
            .position(|n| n.name == name)
            .ok_or_else(|| {
                let known = self
                    .state
                    .desc
                    .nodes
                    .iter()
                    .map(|n| format!("`{}`", n.name));
                crate::error::unknown(&self.state.desc, "node", name, known)
            })
    }

    fn node_name(&self, index: usize) -> String {
        self.state
            .desc
            .nodes
            .get(index)
            .map_or_else(|| format!("node {index}"), |n| format!("node `{}`", n.name))
    }

    fn refused(&self, reason: String) -> Error {
        Error::Update {
            graph: self.state.desc.name.to_string(),
            reason,
        }
    }
}

/// A size that is the number `n`.
fn literal(n: u32) -> SizeDesc {
    SizeDesc {
        text: n.to_string().into(),
        steps: Cow::Owned(vec![SizeStep::Literal(n)]),
    }
}

fn range_desc(range: Range<u32>) -> RangeDesc {
    RangeDesc {
        start: literal(range.start),
        end: literal(range.end),
    }
}
