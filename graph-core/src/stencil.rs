//! Stencil fusion by overlapped tiling: a chain of neighbourhood kernels over one extent runs as one dispatch.
//! Each workgroup owns a tile and computes every step over the tile plus a halo, in workgroup memory: a step
//! whose output a later step reads at distance `r` computes `r` more elements on each side than that step
//! (recomputing what the neighbouring workgroups compute too), so the last step's tile needs nothing from
//! another workgroup. Each buffer a step writes lives in a workgroup array (its *tile*) and goes back to
//! memory once, at the end, where the graph still needs it. The kernel is made by [`crate::stencil_kernel`].
//!
//! Two shapes ([`Shape`]):
//!
//! - **A line**: kernels each of whose invocations reads within a reach of its own element and writes its
//!   own, proved from naga's IR ([`KernelDesc::reach`]); tiles of up to [`MAX_TILE`] elements.
//! - **An image**: kernels that read pixels at most some columns and rows away, clamped into a `width` x
//!   `height` image ([`KernelDesc::grid`]): the library's image kernels (`blur_h`, `blur_v`, `sobel`,
//!   `scharr`; stated by the library, their sizes their arguments), and the user's that the image proof finds
//!   ([`crate::wgsl::grid`]; position-free, their sizes the parameters their code reads); 2-D tiles at
//!   least [`MIN_TILE_WIDTH`] wide, of the shape that recomputes least.
//!   Only images of at most [`MAX_TILED_PIXELS`] are tiled: past that the kernels' arithmetic, not memory or
//!   latency, bounds them, and the halo adds to it.
//!
//! Candidates of one extent (a length, and for an image its width and height as the kernels' arguments give
//! them) connected through the buffers they bind form a *lane* (a chain, whatever else the topological order
//! interleaves with it). A group is a run of a lane, in topological order, with at least two kernels that
//! read neighbours, that can run as one node (no path leaves it and comes back). It is valid when:
//!
//! - every buffer it writes back is read from memory by no member that reads beyond its own tile (another
//!   workgroup may already have written it back);
//! - a buffer it does not write back is dead after it: graph-owned and touched by no other node, first
//!   overwritten by the group; or overwritten, whole and unread, by the next node that touches it;
//! - its arrays fit [`TILE_MEMORY_BYTES`] with a tile of at least [`MIN_TILE`] elements, the halo recomputes
//!   at most a quarter of the work, it binds at most [`MAX_FUSED_BINDINGS`] buffers, and (a line) it needs at
//!   most [`MAX_WORKGROUPS`] workgroups.
//!
//! Every limit is WebGPU's default, on every device, so the macro's `FUSED` constant lists what bake fuses.
//! Of a lane, the longest valid run from its start (at most [`MAX_STEPS`] kernels, tried from two up: `cut`)
//! becomes a group, and the rest is grouped the same way. A ping-pong chain (`a -> b`, `b -> a`, ..) gets
//! groups of odd length: a group of even length would write back the buffer its first step reads beyond its
//! tile.

use std::collections::HashMap;
use std::fmt;

use crate::desc::{AccessDesc, DispatchDesc, GraphDesc, KernelDesc, OpDesc, SizeDesc};
use crate::fusion_parts::{MAX_FUSED_BINDINGS, declared_lengths, touchers};
use crate::ir::{AccessMode, Role};
use crate::size::SizeStep;
use crate::types::ValueType;
use crate::wgsl;

/// The workgroup memory a group's tiles may use: what every WebGPU device offers a compute shader
/// (`maxComputeWorkgroupStorageSize`).
pub const TILE_MEMORY_BYTES: u32 = 16384;

/// Invocations of a tiled kernel's workgroup: WebGPU's default `maxComputeInvocationsPerWorkgroup`.
pub const WORKGROUP: u32 = 256;

/// The largest tile: 4 elements per invocation per step, enough that the halo is a small part of the work.
pub const MAX_TILE: u32 = 1024;

/// The smallest tile worth a group: below it the halo costs more than the dispatches it saves.
pub const MIN_TILE: u32 = 64;

/// The largest image a group tiles. On an H100 the flagship's blur pair and the blur then Sobel took 0.91x
/// as long tiled as step by step over 512 x 512 pixels, 1.09-1.17x over 724 x 724 and 1.53-1.79x over 4096 x 4096
/// (`library_speed`): the image kernels' arithmetic bounds them there, and the tiles' halos add to it.
pub const MAX_TILED_PIXELS: u64 = 1 << 18;

/// The narrowest tile of an image: a row of it is 128 bytes of `f32`, one memory transaction of a warp.
pub const MIN_TILE_WIDTH: u32 = 32;

/// The workgroups a tiled dispatch aims for when the buffers are short: a large GPU's cores each with several
/// (an H100 has 132).
pub const TARGET_WORKGROUPS: u64 = 512;

/// The most workgroups a tiled dispatch has: WebGPU's default `maxComputeWorkgroupsPerDimension`.
pub const MAX_WORKGROUPS: u32 = 65535;

/// The most kernels one tiled dispatch runs.
pub const MAX_STEPS: usize = 128;

/// How many longer runs of a lane are tried after one is refused, before the longest valid one so far is
/// taken: keeps the grouping near linear in the node count.
const MISSES_TRIED: usize = 8;

/// How a group is tiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    /// Elements each workgroup writes: `tile[0]` columns of `tile[1]` rows of an image, or `tile[0]`
    /// elements of a line (`tile[1]` is 1).
    pub tile: [u32; 2],
    /// Elements the first step computes past the tile on each side, along each axis.
    pub halo: [u32; 2],
    /// The group runs over an image ([`Shape::Image`]).
    pub image: bool,
}

impl fmt::Display for Tiling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Tiling {
            tile: [tx, ty],
            halo: [hx, hy],
            image,
        } = *self;
        match image {
            true => write!(
                f,
                "tiles of {tx} x {ty} pixels with a halo of {hx} columns and {hy} rows"
            ),
            false => write!(f, "tiles of {tx} with a halo of {hx}"),
        }
    }
}

/// What a candidate runs over, besides its length: a line of elements (a kernel with a proved
/// [`KernelDesc::reach`]), or an image of `width` x `height` pixels, stored row by row (a library image
/// kernel, [`KernelDesc::grid`]), its sizes as the kernel's arguments give them. Kernels of one lane share it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Shape {
    Line,
    Image { width: String, height: String },
}

/// A group of neighbourhood kernels, with how it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The members, in topological order.
    pub members: Vec<u32>,
    pub layout: Layout,
}

/// Where each buffer of a group lives, and how far each step computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub tiling: Tiling,
    pub shape: Shape,
    /// Per member: its reach, and how many elements past the tile on each side it computes, along each axis.
    pub(crate) reach: Vec<[u32; 2]>,
    pub(crate) radius: Vec<[u32; 2]>,
    /// Buffers the members write, each in a workgroup array, in the order first written.
    pub(crate) tiles: Vec<u32>,
    /// An image group's buffers read from memory, each staged whole into a workgroup array before the
    /// first step, as far past the tile as given.
    pub(crate) staged: Vec<(u32, [u32; 2])>,
    /// Every buffer with a workgroup array: the tiles, then the staged buffers that are not tiles too.
    pub(crate) arrays: Vec<u32>,
    /// The tiles written back to their buffers at the end.
    pub(crate) written_back: Vec<u32>,
    /// Buffers bound: read from memory, or written back.
    pub(crate) bound: Vec<AccessDesc>,
    /// Per member: the buffers it writes and also reads, with no earlier member having written them: their
    /// tiles are loaded from memory before the member runs.
    pub(crate) preloaded: Vec<Vec<u32>>,
    /// Tiles neither bound nor needed after the group: graph-owned buffers a bake need not allocate.
    pub unbound: Vec<u32>,
}

/// What the grouping needs of the graph, computed once.
struct Graph<'a> {
    desc: &'a GraphDesc,
    lengths: &'a [Option<u64>],
    position: Vec<usize>,
    successors: Vec<Vec<u32>>,
    /// Each buffer's nodes that read or write it.
    touchers: Vec<Vec<u32>>,
}

/// Why a run of a lane is not a group, and whether a longer run cannot be one either.
struct Refusal {
    /// Tiles, halos and paths only grow with the run.
    for_longer_too: bool,
}

impl Refusal {
    fn this() -> Self {
        Refusal {
            for_longer_too: false,
        }
    }

    fn longer_too() -> Self {
        Refusal {
            for_longer_too: true,
        }
    }
}

impl<'a> Graph<'a> {
    fn new(desc: &'a GraphDesc, lengths: &'a [Option<u64>]) -> Self {
        let mut position = vec![0; desc.nodes.len()];
        for (i, &n) in desc.topological_order.iter().enumerate() {
            position[n as usize] = i;
        }
        let mut successors = vec![Vec::new(); desc.nodes.len()];
        for e in desc.edges.iter() {
            successors[e.from as usize].push(e.to);
        }
        let touchers = touchers(desc);
        Graph {
            desc,
            lengths,
            position,
            successors,
            touchers,
        }
    }

    fn kernel(&self, n: u32) -> Option<&'a KernelDesc> {
        match &self.desc.nodes.get(n as usize)?.op {
            OpDesc::Kernel(k) => Some(k),
            _ => None,
        }
    }

    /// The number of elements of every buffer kernel `n` binds and of its invocations, and what they form,
    /// if it is a neighbourhood kernel the pass may tile.
    fn extent(&self, n: u32) -> Option<(u64, Shape)> {
        let k = self.kernel(n)?;
        let in_block = self.desc.blocks.iter().any(|b| b.nodes.contains(&n));
        let grid_reach = k.grid.as_ref().and_then(|g| g.reach);
        if (k.reach.is_none() && grid_reach.is_none())
            || k.no_fusion
            || self.desc.nodes[n as usize].on.is_some()
            || k.range.is_some()
            || k.alternative.is_some()
            || !k.overrides.is_empty()
            || in_block
        {
            return None;
        }
        let one = |d: &SizeDesc| *d.steps == [SizeStep::Literal(1)];
        let sized_by = match &k.dispatch {
            DispatchDesc::BufferLen(b) => *b,
            DispatchDesc::Threads([x, y, z]) if one(y) && one(z) => match *x.steps {
                [SizeStep::Len(b)] => b,
                _ => return None,
            },
            _ => return None,
        };
        let len = self.lengths.get(sized_by as usize).copied().flatten()?;
        let equal = k
            .bindings
            .iter()
            .all(|a| self.lengths.get(a.buffer as usize).copied().flatten() == Some(len));
        if !equal || len == 0 {
            return None;
        }
        let shape = match grid_reach {
            None => Shape::Line,
            // A large image is not tiled: its kernels wait on their own instructions, not on memory or
            // latency, and a tile's halo and phases only add to those.
            Some(_) if len > MAX_TILED_PIXELS => return None,
            Some(_) => {
                // The tiled dispatch is sized by the image's sizes: only sizes it can compute.
                let size = |value: String| image_size(self.desc, &value).map(|_| value);
                // A user kernel's sizes as its code reads them, a library kernel's as its arguments.
                let [width, height] = match k.grid.as_ref().and_then(|g| g.image.as_ref()) {
                    Some([w, h]) => [size(w.to_string())?, size(h.to_string())?],
                    None => {
                        let arg = |name: &str| {
                            size(k.args.iter().find(|a| a.name == name)?.value.to_string())
                        };
                        [arg("width")?, arg("height")?]
                    }
                };
                Shape::Image { width, height }
            }
        };
        Some((len, shape))
    }

    /// A candidate's extent, when its code can also be renamed into a fused module.
    fn candidate(&self, n: u32) -> Option<(u64, Shape)> {
        let extent = self.extent(n)?;
        let k = self.kernel(n)?;
        wgsl::member(&k.source, &k.entry, wgsl::FUSED_PREFIX, &HashMap::new())?;
        Some(extent)
    }

    /// Whether `members` (in topological order) can run as one node: no path leaves them and comes back.
    fn contractible(&self, members: &[u32]) -> bool {
        let Some(&last) = members.last() else {
            return true;
        };
        let last = self.position[last as usize];
        // Paths out of the group that could come back pass only nodes placed before its last member.
        let mut reached = vec![false; self.desc.nodes.len()];
        let mut stack: Vec<u32> = members.to_vec();
        while let Some(n) = stack.pop() {
            for &s in &self.successors[n as usize] {
                let outside = !members.contains(&s);
                if !outside {
                    if !members.contains(&n) {
                        return false;
                    }
                    continue;
                }
                if self.position[s as usize] < last && !reached[s as usize] {
                    reached[s as usize] = true;
                    stack.push(s);
                }
            }
        }
        true
    }

    /// Whether buffer `b` is not needed after `members` have written it: graph-owned and touched by nothing
    /// else, first overwritten by the group; or overwritten, whole and without being read, by the next node
    /// that touches it, with every later one after that node.
    fn dead_after(
        &self,
        members: &[u32],
        after_group: &[bool],
        b: u32,
        extent: &(u64, Shape),
    ) -> bool {
        let desc = self.desc;
        if desc.blocks.iter().any(|block| block.flag == Some(b)) {
            return false;
        }
        let mode_in = |n: u32| {
            self.kernel(n)
                .and_then(|k| k.bindings.iter().find(|a| a.buffer == b))
                .map(|a| a.mode)
        };
        let outside: Vec<u32> = self.touchers[b as usize]
            .iter()
            .copied()
            .filter(|n| !members.contains(n))
            .collect();
        if outside.is_empty() {
            let first = members.iter().find_map(|&m| mode_in(m));
            return desc.buffers[b as usize].role == Role::Owned
                && first == Some(AccessMode::Write);
        }
        // The nodes that touch it after the group: those a path from a member reaches.
        let after: Vec<u32> = outside
            .into_iter()
            .filter(|&n| after_group[n as usize])
            .collect();
        let Some(&next) = after.iter().min_by_key(|&&n| self.position[n as usize]) else {
            return false;
        };
        if mode_in(next) != Some(AccessMode::Write) || self.extent(next).as_ref() != Some(extent) {
            return false;
        }
        // Every later node that touches `b` comes after `next`.
        let after_next = self.reached_from(&[next]);
        after.iter().all(|&n| n == next || after_next[n as usize])
    }

    /// The nodes a path from one of `nodes` reaches (not those nodes themselves, unless by a path).
    fn reached_from(&self, nodes: &[u32]) -> Vec<bool> {
        let mut reached = vec![false; self.desc.nodes.len()];
        let mut stack = nodes.to_vec();
        while let Some(n) = stack.pop() {
            for &s in &self.successors[n as usize] {
                if !reached[s as usize] {
                    reached[s as usize] = true;
                    stack.push(s);
                }
            }
        }
        reached
    }

    /// How `members` (consecutive candidates of extent `len`) run as one tiled kernel; `Err` in words when
    /// they cannot.
    fn layout(&self, members: &[u32], extent: &(u64, Shape)) -> Result<Layout, Refusal> {
        let (len, shape) = extent;
        let kernels: Vec<&KernelDesc> = members
            .iter()
            .map(|&m| self.kernel(m).ok_or_else(Refusal::longer_too))
            .collect::<Result<_, _>>()?;
        let reach: Vec<[u32; 2]> = kernels.iter().map(|k| reach_of(k)).collect();
        // Fewer than two kernels that read neighbours: for the pointwise pass.
        if reach.iter().filter(|r| **r != [0, 0]).count() < 2 {
            return Err(Refusal::this());
        }
        // Which member wrote each buffer last, before each member; what each reads from memory.
        let mut last_writer: HashMap<u32, usize> = HashMap::new();
        let mut tiles: Vec<u32> = Vec::new();
        let mut preloaded: Vec<Vec<u32>> = vec![Vec::new(); members.len()];
        // (member, buffer): a read of the buffer's memory, not of a tile.
        let mut from_memory: Vec<(usize, u32)> = Vec::new();
        // (reader, writer): the reader reads a tile the writer wrote.
        let mut reads_of: Vec<(usize, usize)> = Vec::new();
        for (j, k) in kernels.iter().enumerate() {
            for a in k.bindings.iter() {
                let writes = a.mode != AccessMode::Read;
                let reads = a.mode != AccessMode::Write;
                match last_writer.get(&a.buffer) {
                    Some(&w) if reads => reads_of.push((j, w)),
                    Some(_) => {}
                    None if reads && writes => {
                        preloaded[j].push(a.buffer);
                        from_memory.push((j, a.buffer));
                    }
                    None if reads => from_memory.push((j, a.buffer)),
                    None => {}
                }
            }
            for a in k.bindings.iter().filter(|a| a.mode != AccessMode::Read) {
                last_writer.insert(a.buffer, j);
                if !tiles.contains(&a.buffer) {
                    tiles.push(a.buffer);
                }
            }
        }
        // How far each step computes past the tile: as far as the steps that read its output need, plus
        // their reach (members in reverse topological order).
        let mut radius = vec![[0u32; 2]; members.len()];
        for j in (0..members.len()).rev() {
            for axis in 0..2 {
                radius[j][axis] = reads_of
                    .iter()
                    .filter(|&&(_, w)| w == j)
                    .map(|&(r, _)| radius[r][axis] + reach[r][axis])
                    .max()
                    .unwrap_or(0);
            }
        }
        let halo = [0, 1].map(|axis| radius.iter().map(|r| r[axis]).max().unwrap_or(0));

        let mut written_back = Vec::new();
        let mut unbound = Vec::new();
        let after_group = self.reached_from(members);
        for &b in &tiles {
            if !self.dead_after(members, &after_group, b, extent) {
                written_back.push(b);
            } else if !from_memory.iter().any(|&(_, read)| read == b) {
                unbound.push(b);
            }
        }
        let owned_unneeded: Vec<u32> = unbound
            .iter()
            .copied()
            .filter(|&b| {
                let outside = self.touchers[b as usize]
                    .iter()
                    .any(|n| !members.contains(n));
                self.desc.buffers[b as usize].role == Role::Owned && !outside
            })
            .collect();
        // Another workgroup may have written a buffer back before this one reads it past its tile.
        let races = from_memory.iter().any(|&(j, b)| {
            written_back.contains(&b) && (radius[j] != [0, 0] || reach[j] != [0, 0])
        });
        if races {
            return Err(Refusal::this());
        }
        let mut bound: Vec<AccessDesc> = Vec::new();
        for &(_, b) in &from_memory {
            if !bound.iter().any(|a| a.buffer == b) {
                bound.push(AccessDesc {
                    buffer: b,
                    mode: AccessMode::Read,
                });
            }
        }
        for &b in &written_back {
            match bound.iter_mut().find(|a| a.buffer == b) {
                Some(a) => a.mode = AccessMode::ReadWrite,
                None => bound.push(AccessDesc {
                    buffer: b,
                    mode: AccessMode::Write,
                }),
            }
        }
        if bound.is_empty() || bound.len() > MAX_FUSED_BINDINGS {
            return Err(Refusal::this());
        }
        // An image group reads every buffer through its tiles, in tile coordinates (`image_kernel`): the
        // buffers it reads from memory are staged into arrays of their own first, as far past the tile as
        // their readers compute plus their reach.
        let mut staged: Vec<(u32, [u32; 2])> = Vec::new();
        if matches!(shape, Shape::Image { .. }) {
            for &(j, b) in &from_memory {
                let margin = [0, 1].map(|axis| radius[j][axis] + reach[j][axis]);
                match staged.iter_mut().find(|(s, _)| *s == b) {
                    Some((_, m)) => *m = [0, 1].map(|axis| m[axis].max(margin[axis])),
                    None => staged.push((b, margin)),
                }
            }
        }
        let mut arrays = tiles.clone();
        for &(b, _) in &staged {
            if !arrays.contains(&b) {
                arrays.push(b);
            }
        }
        // The arrays span the tile and the widest margin past it of any step or staged buffer.
        let halo = [0, 1].map(|axis| {
            staged
                .iter()
                .map(|(_, m)| m[axis])
                .max()
                .unwrap_or(0)
                .max(halo[axis])
        });
        let stride: u32 = arrays
            .iter()
            .map(|&b| element_stride(self.desc.buffers[b as usize].elem))
            .sum();
        let tile = match shape {
            Shape::Line => line_tile(*len, stride, &radius)?,
            Shape::Image { .. } => image_tile(stride, halo, &radius)?,
        };
        Ok(Layout {
            tiling: Tiling {
                tile,
                halo,
                image: matches!(shape, Shape::Image { .. }),
            },
            shape: shape.clone(),
            reach,
            radius,
            tiles,
            staged,
            arrays,
            written_back,
            bound,
            preloaded,
            unbound: owned_unneeded,
        })
    }
}

/// The size an image kernel's `width` or `height` argument gives (`value`, its WGSL), as a dispatch computes
/// it: a `u32` parameter (`params.name`) or a literal; `None` for anything else.
pub(crate) fn image_size(desc: &GraphDesc, value: &str) -> Option<SizeDesc> {
    let value = value.trim();
    let step = match value.strip_prefix("params.") {
        Some(name) => {
            let field = desc
                .params
                .fields
                .iter()
                .find(|f| *f.name == *name && f.ty == ValueType::U32)?;
            SizeStep::Param(field.offset)
        }
        None => SizeStep::Literal(wgsl::value::literal_u32(value)?),
    };
    Some(SizeDesc {
        text: value.to_string().into(),
        steps: vec![step].into(),
    })
}

/// A kernel's reach along each axis: along the line, or across and down the image.
fn reach_of(k: &KernelDesc) -> [u32; 2] {
    match k.grid.as_ref().and_then(|g| g.reach) {
        Some(reach) => reach,
        None => [k.reach.unwrap_or(0), 0],
    }
}

/// The tile of a line of `len` elements whose steps compute `radius` past it, `stride` bytes per element
/// across the tiles (see [`tile_for`]), if the tiles fit and the halo's work is small enough.
fn line_tile(len: u64, stride: u32, radius: &[[u32; 2]]) -> Result<[u32; 2], Refusal> {
    let halo = radius.iter().map(|r| r[0]).max().unwrap_or(0);
    // The tiles do not fit the workgroup memory.
    let tile = tile_size(stride, halo).ok_or_else(Refusal::longer_too)?;
    // The halo's extra work: each step computes `2 * radius` elements besides its tile.
    let extra: u64 = radius.iter().map(|r| 2 * u64::from(r[0])).sum();
    // The halo would recompute more than a quarter of the work.
    if 4 * extra > radius.len() as u64 * u64::from(tile) {
        return Err(Refusal::longer_too());
    }
    // More workgroups than one dimension of a dispatch may have on every device (the tiled kernel is not
    // folded into two).
    let tile = tile_for(len, tile);
    if len.div_ceil(u64::from(tile)) > u64::from(MAX_WORKGROUPS) {
        return Err(Refusal::longer_too());
    }
    Ok([tile, 1])
}

/// The tile of an image whose steps compute `radius` columns and rows past it, `stride` bytes per pixel
/// across the arrays, which span `halo` past it: of the shapes whose arrays fit [`TILE_MEMORY_BYTES`], whose halo recomputes at most a
/// quarter of the work, between [`MIN_TILE`] and [`MAX_TILE`] pixels and at least [`MIN_TILE_WIDTH`] wide
/// (rows of a tile are read and written whole, as one access of a warp), the one that computes fewest
/// pixels per pixel written; of equals, the larger, then the wider.
fn image_tile(stride: u32, halo: [u32; 2], radius: &[[u32; 2]]) -> Result<[u32; 2], Refusal> {
    let mut best: Option<(u64, [u32; 2])> = None;
    for width in [
        MIN_TILE_WIDTH,
        2 * MIN_TILE_WIDTH,
        4 * MIN_TILE_WIDTH,
        8 * MIN_TILE_WIDTH,
    ] {
        for height in [1, 2, 4, 8, 16, 32, 64] {
            let area = width * height;
            if !(MIN_TILE..=MAX_TILE).contains(&area) {
                continue;
            }
            let span = u64::from(width + 2 * halo[0]) * u64::from(height + 2 * halo[1]);
            if span * u64::from(stride.max(1)) > u64::from(TILE_MEMORY_BYTES) {
                continue;
            }
            let computed: u64 = radius
                .iter()
                .map(|r| u64::from(width + 2 * r[0]) * u64::from(height + 2 * r[1]))
                .sum();
            let written = radius.len() as u64 * u64::from(area);
            if 4 * (computed - written) > written {
                continue;
            }
            // Pixels computed per pixel written, in thousandths, then larger and wider tiles first.
            let cost = computed * 1000 / u64::from(area);
            let better = best.is_none_or(|(c, [w, h])| {
                (cost, u32::MAX - area, u32::MAX - width) < (c, u32::MAX - w * h, u32::MAX - w)
            });
            if better {
                best = Some((cost, [width, height]));
            }
        }
    }
    best.map(|(_, tile)| tile).ok_or_else(Refusal::longer_too)
}

/// The tile for buffers of `len` elements, at most `largest`: one that makes about [`TARGET_WORKGROUPS`]
/// workgroups, a multiple of [`MIN_TILE`]. A chain of steps is latency-bound while the buffers are short: more,
/// smaller tiles put more of the GPU's cores to work and each step loops fewer times over its tile, for some
/// more halo. Long buffers get the largest tile, where the halo costs least.
fn tile_for(len: u64, largest: u32) -> u32 {
    let wanted = len / TARGET_WORKGROUPS / u64::from(MIN_TILE) * u64::from(MIN_TILE);
    u32::try_from(wanted)
        .unwrap_or(u32::MAX)
        .clamp(MIN_TILE, largest.max(MIN_TILE))
}

/// Bytes one element takes in a workgroup array (a `vec3` is padded to 16).
fn element_stride(elem: ValueType) -> u32 {
    elem.size().next_multiple_of(elem.align())
}

/// The largest tile (a multiple of [`MIN_TILE`], at most [`MAX_TILE`]) whose arrays, `stride` bytes per
/// element across the tiles, with `halo` elements on each side, fit [`TILE_MEMORY_BYTES`].
fn tile_size(stride: u32, halo: u32) -> Option<u32> {
    let elements = TILE_MEMORY_BYTES / stride.max(1);
    let tile = elements.checked_sub(2 * halo)?.min(MAX_TILE) / MIN_TILE * MIN_TILE;
    (tile >= MIN_TILE).then_some(tile)
}

/// The groups of `desc` (checked, flattened) over the buffer `lengths` given. The macro's `FUSED` lists the
/// groups over the declared lengths, and bake must keep each: when the groups over the given lengths contain
/// them all, those; otherwise the declared ones, then, among the kernels left, those only the given lengths
/// allow.
pub fn groups(desc: &GraphDesc, lengths: &[Option<u64>]) -> Vec<Group> {
    let declared = declared_lengths(desc);
    let none = vec![false; desc.nodes.len()];
    let promised = groups_over(&Graph::new(desc, &declared), &none);
    if declared.as_slice() == lengths {
        return promised;
    }
    let graph = Graph::new(desc, lengths);
    let whole = groups_over(&graph, &none);
    let keeps_promise = promised.iter().all(|p| {
        whole
            .iter()
            .any(|w| p.members.iter().all(|m| w.members.contains(m)))
    });
    if keeps_promise {
        return whole;
    }
    let mut taken = none;
    for &m in promised.iter().flat_map(|g| &g.members) {
        taken[m as usize] = true;
    }
    let mut groups = promised;
    groups.extend(groups_over(&graph, &taken));
    groups.sort_by_key(|g| graph.position[g.members[0] as usize]);
    groups
}

/// The groups among the candidates not `taken`: the candidates split into *lanes*, those of one extent
/// connected through the buffers they bind (a chain, say, whatever else the topological order interleaves
/// with it), each lane in topological order cut into its longest valid prefixes.
fn groups_over(graph: &Graph<'_>, taken: &[bool]) -> Vec<Group> {
    let candidates: Vec<(u32, (u64, Shape))> = graph
        .desc
        .topological_order
        .iter()
        .filter(|&&n| !taken[n as usize])
        .filter_map(|&n| graph.candidate(n).map(|extent| (n, extent)))
        .collect();
    // Union-find over the candidates: two of one extent that bind one buffer share a lane.
    let mut parent: Vec<usize> = (0..candidates.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut binder: HashMap<(u32, &(u64, Shape)), usize> = HashMap::new();
    for (i, (n, extent)) in candidates.iter().enumerate() {
        for a in graph.kernel(*n).map_or(&[][..], |k| &k.bindings[..]) {
            match binder.get(&(a.buffer, extent)) {
                Some(&other) => {
                    let (x, y) = (root(&mut parent, i), root(&mut parent, other));
                    parent[x] = y;
                }
                None => {
                    binder.insert((a.buffer, extent), i);
                }
            }
        }
    }
    let mut lanes: Vec<(usize, Vec<u32>)> = Vec::new();
    for (i, &(n, _)) in candidates.iter().enumerate() {
        let r = root(&mut parent, i);
        match lanes.iter_mut().find(|(lane, _)| *lane == r) {
            Some((_, members)) => members.push(n),
            None => lanes.push((r, vec![n])),
        }
    }
    let mut groups = Vec::new();
    for (lane, members) in lanes {
        cut(graph, &members, &candidates[lane].1, &mut groups);
    }
    groups.sort_by_key(|g| graph.position[g.members[0] as usize]);
    groups
}

/// `lane` (candidates of extent `len`, in topological order) cut into groups: from its start, the longest
/// valid run of at most [`MAX_STEPS`] kernels, then the same from where it ends; a start with none moves on
/// by one. Runs are tried from two kernels up, until one is refused for a reason a longer run shares (no
/// way back into the group, tiles or halos too large) or [`MISSES_TRIED`] in a row are refused for others
/// (too many bindings, a buffer written back that a member reads past its tile: a ping-pong chain's runs of
/// even length are refused, odd ones not).
fn cut(graph: &Graph<'_>, lane: &[u32], extent: &(u64, Shape), groups: &mut Vec<Group>) {
    // Kernels that read neighbours, counted up to each place in the lane: a run with fewer than two is not
    // tried (a lane of pointwise kernels is left to the pointwise pass at no cost).
    let mut stencils_before = vec![0usize; lane.len() + 1];
    for (i, &n) in lane.iter().enumerate() {
        let reads_neighbours = graph.kernel(n).is_some_and(|k| reach_of(k) != [0, 0]);
        stencils_before[i + 1] = stencils_before[i] + usize::from(reads_neighbours);
    }
    let mut start = 0;
    while lane.len() - start >= 2 && stencils_before[lane.len()] - stencils_before[start] >= 2 {
        let longest = (lane.len() - start).min(MAX_STEPS);
        let mut found: Option<Group> = None;
        let mut misses = 0;
        for count in 2..=longest {
            if stencils_before[start + count] - stencils_before[start] < 2 {
                continue;
            }
            let members = &lane[start..start + count];
            if !graph.contractible(members) {
                break;
            }
            match graph.layout(members, extent) {
                Ok(layout) => {
                    found = Some(Group {
                        members: members.to_vec(),
                        layout,
                    });
                    misses = 0;
                }
                Err(refusal) if refusal.for_longer_too => break,
                Err(_) => {
                    misses += 1;
                    if misses >= MISSES_TRIED {
                        break;
                    }
                }
            }
        }
        match found {
            Some(group) => {
                start += group.members.len();
                groups.push(group);
            }
            None => start += 1,
        }
    }
}
