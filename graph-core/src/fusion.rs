//! The fusion pass: pointwise kernels of one extent merged into one kernel, vertically along chains and
//! horizontally across independent branches, so the replay pays one dispatch (and no barrier) where it paid
//! one per kernel.
//!
//! It runs on a checked, flattened description and returns another description of the same graph: each
//! group's first member (in topological order) becomes the fused kernel, named after its members, which it
//! calls in topological order from one invocation; the other members become empty nodes ordered after it.
//! Every edge into or out of a member is an edge of the fused kernel, so the plan sees one node. Node
//! indices are unchanged: updates, transfers and host tasks keep addressing the description they were given,
//! and the pass runs again after each update.
//!
//! Two kernels may share a group when both are pointwise (each invocation touches only its own elements:
//! [`KernelDesc::pointwise`], proved from naga's IR), have the same dispatch and workgroup (a kernel
//! dispatched per element of a buffer that takes only its index is called with its element's index, so its
//! workgroup does not matter; a group of only such kernels runs 256-wide), are in no block
//! and no group of alternatives, fill no range, and are not marked `#[no_fusion]` nor placed on a GPU (`#[on(..)]`: a set's bake fuses each GPU's part, placed nowhere); and when merging them
//! leaves the graph acyclic (no path from one to the other through a node outside the group). Kernels over
//! textures at their own texels join groups too: a kernel that binds only textures in any launch shape (the
//! group's dispatch and workgroup are then its own), and no member may read a texture another member writes
//! (one kernel binds a texture once, for reading or for writing). A group binds
//! at most as many buffers as the caller allows: [`MAX_FUSED_BINDINGS`], what every WebGPU device offers one
//! shader stage, at compile time; the device's own limit at bake.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::desc::{
    AccessDesc, DispatchDesc, EdgeDesc, EdgeOriginDesc, GraphDesc, KernelDesc, NodeDesc, OpDesc,
    SizeDesc,
};
pub use crate::fusion_parts::{MAX_FUSED_BINDINGS, declared_lengths};
use crate::fusion_parts::{member_of, touchers, validate_once};
use crate::ir::{AccessMode, Role};
use crate::schedule::topological_order;
use crate::size::SizeStep;
use crate::stencil::{self, Tiling};
use crate::stencil_kernel;
use crate::wgsl;

/// The workgroup of a wide fused kernel: the widest every WebGPU device runs, which on the H100 copied 16M
/// elements in half the time of 64-wide ones.
pub const WIDE_WORKGROUP: u32 = 256;

/// The invocations a wide kernel keeps before it gives each more than one element: about what an H100 holds
/// at once (132 multiprocessors of 2048 invocations). Fewer, and each would wait on its loads alone; on the
/// H100 over the benchmark's 64K-element buffers, 4 elements per invocation took 1.4-1.8x the GPU time of 1
/// on every fused shape.
pub const WIDE_MIN_INVOCATIONS: u64 = 1 << 18;

/// The most elements one invocation of a wide kernel runs: a copy of 16M `f32` on the H100 took 104 us at
/// one element per invocation, 60 at four and no less at eight.
pub const WIDE_MAX_ELEMENTS: u32 = 4;

/// Elements each invocation of a wide kernel over `elements` runs the members for, a grid apart (so that
/// neighbouring invocations touch neighbouring elements): the most, up to [`WIDE_MAX_ELEMENTS`], that leave
/// [`WIDE_MIN_INVOCATIONS`]; one where the length is not known.
pub fn wide_elements(elements: Option<u64>) -> u32 {
    let Some(elements) = elements else {
        return 1;
    };
    let mut per = 1;
    while per < WIDE_MAX_ELEMENTS && elements / u64::from(2 * per) >= WIDE_MIN_INVOCATIONS {
        per *= 2;
    }
    per
}

/// How many of the latest groups of its extent a kernel tries to join: enough for the branches of one
/// level, and it keeps the pass linear in the node count.
const GROUPS_TRIED: usize = 8;

/// The most WGSL of its members' own code one fused kernel holds: half of what one module may have
/// ([`wgsl::MAX_WGSL_BYTES`]), leaving room for the renaming and the calls, so that a driver compiles a
/// kernel of bounded size. (A fused module that still comes out too long fails validation, and its group
/// runs unfused.)
pub const MAX_FUSED_SOURCE_BYTES: usize = wgsl::MAX_WGSL_BYTES / 2;

/// A graph after fusion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fusion<'a> {
    /// The graph with each group merged into its first member; the input itself when nothing fused.
    pub desc: Cow<'a, GraphDesc>,
    /// What was fused, in topological order of the fused kernels.
    pub groups: Vec<FusedGroup>,
    /// Kernels the grouping put together whose fused kernel could not be made, each with the reason: the
    /// group is then fused in the largest runs that can be made, and these members stay apart.
    pub declined: Vec<Declined>,
    /// Pointwise kernels that run alone, made wide as a fused kernel is ([`wide_elements`] elements per
    /// invocation, workgroups of [`WIDE_WORKGROUP`]) by [`widen`]: those over buffers long enough for more
    /// than one element per invocation. Empty until [`widen`] runs.
    pub widened: Vec<u32>,
}

/// Kernels merged into one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FusedGroup {
    /// The node that runs the fused kernel: the first member.
    pub node: u32,
    /// Every member, in the order the fused kernel runs them.
    pub members: Vec<u32>,
    /// The members' names, in that order.
    pub names: Vec<String>,
    /// Graph-owned buffers only this group touches, kept in registers (each invocation's element a private
    /// variable of the fused kernel) or in a tile of workgroup memory; the buffer is not bound.
    pub registers: Vec<u32>,
    /// For a chain of neighbourhood kernels run by overlapped tiling ([`crate::stencil`]): its tile and halo.
    /// `None` for pointwise kernels run from one invocation.
    pub tiling: Option<Tiling>,
}

/// Kernels that were to run as one but do not, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declined {
    /// The kernels whose fused kernel could not be made, in the order it would have run them.
    pub members: Vec<u32>,
    /// Their names, in that order.
    pub names: Vec<String>,
    /// Why, in words (naga's message when the fused module does not validate).
    pub reason: String,
}

impl std::fmt::Display for Declined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` not fused: {}", self.names.join(" + "), self.reason)
    }
}

impl Fusion<'_> {
    /// Whether node `n` was merged into another node's kernel (it runs nothing itself).
    pub fn absorbed(&self, n: u32) -> bool {
        self.groups
            .iter()
            .any(|g| g.node != n && g.members.contains(&n))
    }

    /// The names of each group's members, for the generated constants and messages.
    pub fn member_names(&self) -> Vec<Vec<String>> {
        self.groups.iter().map(|g| g.names.clone()).collect()
    }

    /// Every buffer kept in registers, which a bake need not allocate.
    pub fn registers(&self) -> Vec<u32> {
        self.groups
            .iter()
            .flat_map(|g| g.registers.iter().copied())
            .collect()
    }
}

/// Fuses what can be fused in `desc` (a checked description, flattened: see [`crate::flatten`]), with the
/// lengths its buffers are known to have (the declared ones at compile time, [`declared_lengths`]; the
/// bound ones at bake) and at most `max_bindings` buffers per fused kernel. Kernels dispatched one
/// invocation per element of different buffers fuse when the buffers' lengths are known and equal.
pub fn fuse<'a>(desc: &'a GraphDesc, lengths: &[Option<u64>], max_bindings: usize) -> Fusion<'a> {
    fuse_with(desc, lengths, max_bindings, &mut ValidModules::default())
}

/// Fused modules naga accepted, by their text: a pass validates each distinct module once, and a caller that
/// fuses one graph again and again (a baked graph's updates) keeps them between passes, so that an update
/// validates only modules it has not seen (the flagship's tiled blur took about 2 ms of every update on the
/// H100 before). Each is a kernel's whole module, so a caller bounds how many it keeps.
pub type ValidModules = HashSet<String>;

/// [`fuse`], with the modules `validated` holds taken as valid without validating them again, and those it
/// validates added.
pub fn fuse_with<'a>(
    desc: &'a GraphDesc,
    lengths: &[Option<u64>],
    max_bindings: usize,
    validated: &mut ValidModules,
) -> Fusion<'a> {
    let mut nodes: Vec<NodeDesc> = desc.nodes.to_vec();
    let mut fused_groups = Vec::new();
    let mut declined = Vec::new();
    let tiled = stencil::groups(desc, lengths);
    // Groups of one shape make one module: each distinct module is validated once.
    let mut taken = vec![false; desc.nodes.len()];
    for group in tiled {
        for &m in &group.members {
            taken[m as usize] = true;
        }
        let names = member_names(desc, &group.members);
        match stencil_kernel::kernel(desc, &group, validated) {
            Ok(kernel) => {
                absorb(desc, &mut nodes, &group.members, &names, kernel);
                fused_groups.push(FusedGroup {
                    node: group.members[0],
                    members: group.members,
                    names,
                    registers: group.layout.unbound,
                    tiling: Some(group.layout.tiling),
                });
            }
            Err(reason) => declined.push(Declined {
                members: group.members,
                names,
                reason,
            }),
        }
    }
    let context = Context {
        lengths,
        touchers: touchers(desc),
    };
    for members in pointwise_groups(desc, lengths, max_bindings, &taken) {
        let runs = buildable_runs(desc, &members, &context, &mut declined, validated);
        for (members, kernel, registers) in runs {
            let names = member_names(desc, &members);
            absorb(desc, &mut nodes, &members, &names, kernel);
            fused_groups.push(FusedGroup {
                node: members[0],
                members,
                names,
                registers,
                tiling: None,
            });
        }
    }
    let position = topological_positions(desc);
    fused_groups.sort_by_key(|g| position[g.node as usize]);
    if fused_groups.is_empty() {
        return Fusion {
            desc: Cow::Borrowed(desc),
            groups: Vec::new(),
            declined,
            widened: Vec::new(),
        };
    }
    match rewire(desc, nodes, &fused_groups) {
        Some(fused) => Fusion {
            desc: Cow::Owned(fused),
            groups: fused_groups,
            declined,
            widened: Vec::new(),
        },
        // Grouping keeps the graph acyclic (`Contraction::may_join`); should it not, the graph runs unfused,
        // and says so.
        None => {
            declined.extend(fused_groups.into_iter().map(|g| Declined {
                members: g.members,
                names: g.names,
                reason: "merging the group would order its kernels in a cycle".into(),
            }));
            Fusion {
                desc: Cow::Borrowed(desc),
                groups: Vec::new(),
                declined,
                widened: Vec::new(),
            }
        }
    }
}

/// `fusion` with each pointwise kernel, and each library image kernel (`KernelDesc::grid`), that runs alone made
/// wide, as a wide fused kernel of one member is,
/// where it may fuse, takes only its index and runs over a buffer long enough for more than one element per
/// invocation ([`wide_elements`]); those kernels listed in [`Fusion::widened`]. A kernel whose wide form does
/// not validate stays as it is. Bake runs it after [`fuse`], over the bound lengths; what fuses, and so the
/// macro's `FUSED`, does not depend on it.
pub fn widen<'a>(fusion: Fusion<'a>, lengths: &[Option<u64>], max_bindings: usize) -> Fusion<'a> {
    widen_with(fusion, lengths, max_bindings, &mut ValidModules::default())
}

/// [`widen`], with the modules `validated` holds taken as valid ([`fuse_with`]).
pub fn widen_with<'a>(
    mut fusion: Fusion<'a>,
    lengths: &[Option<u64>],
    max_bindings: usize,
    validated: &mut ValidModules,
) -> Fusion<'a> {
    for n in 0..fusion.desc.nodes.len() {
        // A fused group's kernel is dispatched by threads, a tiled one is no pointwise kernel, an absorbed
        // member is empty: only kernels that run alone pass.
        // Pointwise kernels, and image kernels (which read neighbours: their invocations share nothing all
        // the same, by `GridShape` for the library's and by the proof for the user's, `wgsl::grid`).
        let independent = |k: &KernelDesc| k.pointwise || k.grid.is_some();
        let Some((k, extent)) =
            candidate_where(&fusion.desc, lengths, max_bindings, n, independent)
        else {
            continue;
        };
        let DispatchDesc::BufferLen(sized_by) = k.dispatch else {
            continue;
        };
        let long = wide_elements(lengths.get(sized_by as usize).copied().flatten()) > 1;
        if !long || extent.workgroup_size.is_some() {
            continue;
        }
        // A pointwise kernel's elements are cached, so that the invocation's loads are all issued before
        // its stores (`fused_kernel`); an image kernel reads its neighbours, so its buffers stay buffers.
        let caches: &[bool] = if k.pointwise {
            &[true, false]
        } else {
            &[false]
        };
        let wide = caches.iter().find_map(|&cache| {
            fused_kernel(&fusion.desc, &[n as u32], lengths, &[], cache, validated).ok()
        });
        if let Some(kernel) = wide {
            let name = fusion.desc.nodes[n].name.clone();
            let on = fusion.desc.nodes[n].on;
            fusion.desc.to_mut().nodes.to_mut()[n] = NodeDesc {
                name,
                op: OpDesc::Kernel(kernel),
                on,
            };
            fusion.widened.push(n as u32);
        }
    }
    fusion
}

/// `nodes` with `members`' kernel at the first member and the others empty.
fn absorb(
    desc: &GraphDesc,
    nodes: &mut [NodeDesc],
    members: &[u32],
    names: &[String],
    kernel: KernelDesc,
) {
    nodes[members[0] as usize] = NodeDesc {
        name: names.join(" + ").into(),
        op: OpDesc::Kernel(kernel),
        on: desc.nodes[members[0] as usize].on,
    };
    for &m in &members[1..] {
        nodes[m as usize] = NodeDesc {
            name: format!("{} (fused)", desc.nodes[m as usize].name).into(),
            op: OpDesc::Empty,
            on: desc.nodes[m as usize].on,
        };
    }
}

/// The names of nodes `members`, in order.
fn member_names(desc: &GraphDesc, members: &[u32]) -> Vec<String> {
    members
        .iter()
        .map(|&m| desc.nodes[m as usize].name.to_string())
        .collect()
}

/// What making each group's kernel reads of the whole graph, computed once per pass: the buffers' lengths,
/// and by buffer the nodes that touch it (whether a buffer is only the group's walked the whole graph for
/// every buffer of every group, most of a 1000-node chain's bake).
struct Context<'a> {
    lengths: &'a [Option<u64>],
    touchers: Vec<Vec<u32>>,
}

/// A group's fused kernel, or, when it cannot be made, the group cut into the longest runs (in its order)
/// whose kernels can, each break written down in `declined`. Each run is a group of two or more; a run of
/// the group's order keeps the contracted graph acyclic, since the whole group did (a path out of a run and
/// back into it would have left the group and come back).
fn buildable_runs(
    desc: &GraphDesc,
    members: &[u32],
    context: &Context<'_>,
    declined: &mut Vec<Declined>,
    validated: &mut HashSet<String>,
) -> Vec<(Vec<u32>, KernelDesc, Vec<u32>)> {
    let mut runs = Vec::new();
    let whole = match build_group(desc, members, context, validated) {
        Ok((kernel, registers)) => {
            runs.push((members.to_vec(), kernel, registers));
            return runs;
        }
        Err(reason) => reason,
    };
    let mut run = vec![members[0]];
    let mut built: Option<(KernelDesc, Vec<u32>)> = None;
    let mut breaks = 0;
    for &m in &members[1..] {
        let mut longer = run.clone();
        longer.push(m);
        match build_group(desc, &longer, context, validated) {
            Ok(b) => {
                run = longer;
                built = Some(b);
            }
            Err(reason) => {
                breaks += 1;
                declined.push(Declined {
                    names: member_names(desc, &longer),
                    members: longer,
                    reason,
                });
                if let Some((kernel, registers)) = built.take() {
                    runs.push((std::mem::take(&mut run), kernel, registers));
                }
                run = vec![m];
            }
        }
    }
    if let Some((kernel, registers)) = built {
        runs.push((run, kernel, registers));
    }
    if breaks == 0 {
        // Every run of the group's order built but not the whole: say why the whole did not.
        declined.push(Declined {
            members: members.to_vec(),
            names: member_names(desc, members),
            reason: whole,
        });
    }
    runs
}

/// The kernel that runs `members`, with its intermediates in registers and the elements it reads cached
/// where they can be; should that not validate, with less. The reason of the last try when none can be made.
fn build_group(
    desc: &GraphDesc,
    members: &[u32],
    context: &Context<'_>,
    validated: &mut HashSet<String>,
) -> Result<(KernelDesc, Vec<u32>), String> {
    let lengths = context.lengths;
    let registers = register_candidates(desc, members, context);
    let mut reason = String::new();
    for (registers, cache) in [
        (&registers[..], true),
        (&registers[..], false),
        (&[][..], false),
    ] {
        match fused_kernel(desc, members, lengths, registers, cache, validated) {
            Ok(kernel) => return Ok((kernel, registers.to_vec())),
            Err(why) => reason = why,
        }
    }
    Err(reason)
}

/// What a kernel must share with the others of its group: its invocations and its workgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Extent<'a> {
    invocations: Invocations<'a>,
    /// `None` for a kernel that runs whatever the fused kernel's workgroup (called with its element's
    /// index); a group's is its first member's that needs one.
    workgroup_size: Option<[u32; 3]>,
}

impl Extent<'_> {
    /// Whether a kernel of extent `other` may join a group of this one: the same invocations, and no two
    /// different workgroups needed.
    fn joins(&self, other: &Extent<'_>) -> bool {
        self.invocations == other.invocations
            && match (self.workgroup_size, other.workgroup_size) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }

    /// This group's extent once a kernel of extent `other` joined it.
    fn absorb(&mut self, other: &Extent<'_>) {
        self.workgroup_size = self.workgroup_size.or(other.workgroup_size);
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Invocations<'a> {
    /// One per element of a buffer whose length is known.
    Elements(u64),
    /// As the dispatch says, evaluated at replay.
    Dispatch(&'a DispatchDesc),
}

/// The kernel of node `n` and its extent, if the pass may fuse it.
fn candidate<'a>(
    desc: &'a GraphDesc,
    lengths: &[Option<u64>],
    max_bindings: usize,
    n: usize,
) -> Option<(&'a KernelDesc, Extent<'a>)> {
    candidate_where(desc, lengths, max_bindings, n, |k| k.pointwise)
}

/// [`candidate`], for kernels `independent` accepts instead of pointwise ones: kernels whose invocations
/// share nothing (no workgroup memory, barriers or local ids), which [`widen`] may call several times in
/// one invocation whatever they read.
fn candidate_where<'a>(
    desc: &'a GraphDesc,
    lengths: &[Option<u64>],
    max_bindings: usize,
    n: usize,
    independent: impl Fn(&KernelDesc) -> bool,
) -> Option<(&'a KernelDesc, Extent<'a>)> {
    let OpDesc::Kernel(k) = &desc.nodes[n].op else {
        return None;
    };
    let one = |d: &SizeDesc| *d.steps == [SizeStep::Literal(1)];
    // Buffers are indexed in one row (the cached elements are loaded at the folded index). A kernel that binds
    // no buffer, only textures at its own coordinate, runs in any shape: its group shares its dispatch and
    // workgroup.
    let binds_buffers = k.bindings.iter().any(|b| {
        desc.buffers
            .get(b.buffer as usize)
            .is_none_or(|d| d.is_buffer())
    });
    let one_dimensional = match &k.dispatch {
        DispatchDesc::BufferLen(_) => true,
        DispatchDesc::Threads(d) | DispatchDesc::Workgroups(d) => {
            (one(&d[1]) && one(&d[2])) || !binds_buffers
        }
        DispatchDesc::Indirect(_) => false,
    };
    let in_block = desc.blocks.iter().any(|b| b.nodes.contains(&(n as u32)));
    // A node placed on a GPU of a set is fused only inside its GPU's part, which is placed nowhere.
    let placed = desc.nodes[n].on.is_some();
    let fusable = independent(k)
        && !k.no_fusion
        && !placed
        && k.overrides.is_empty()
        && k.range.is_none()
        && k.alternative.is_none()
        && one_dimensional
        && !in_block
        && k.bindings.len() <= max_bindings;
    // Code the renaming handles (no directives, `override`s or names of its own prefix).
    let member = wgsl::member(&k.source, &k.entry, wgsl::FUSED_PREFIX, &HashMap::new());
    let fusable = fusable && member.is_some();
    // A kernel dispatched per element of a buffer that takes no builtin but its index and the workgroup
    // count runs in a wide fused kernel, called with each element's index: its own workgroup does not
    // matter, so kernels of any width group. Others share their workgroup.
    let width_free = matches!(k.dispatch, DispatchDesc::BufferLen(_))
        && member.is_some_and(|m| index_only(&m.builtins));
    let invocations = match k.dispatch {
        DispatchDesc::BufferLen(b) => match lengths.get(b as usize).copied().flatten() {
            Some(len) => Invocations::Elements(len),
            None => Invocations::Dispatch(&k.dispatch),
        },
        _ => Invocations::Dispatch(&k.dispatch),
    };
    fusable.then_some((
        k,
        Extent {
            invocations,
            workgroup_size: (!width_free).then_some(k.workgroup_size),
        },
    ))
}

/// The groups of two or more kernels [`fuse`] merges, by node index, each in the order its kernel runs them,
/// without making the kernels: what the macro's `FUSED` constant lists.
pub fn groups(desc: &GraphDesc, lengths: &[Option<u64>], max_bindings: usize) -> Vec<Vec<u32>> {
    let mut taken = vec![false; desc.nodes.len()];
    let mut groups: Vec<Vec<u32>> = stencil::groups(desc, lengths)
        .into_iter()
        .map(|g| g.members)
        .collect();
    for &m in groups.iter().flatten() {
        taken[m as usize] = true;
    }
    groups.extend(pointwise_groups(desc, lengths, max_bindings, &taken));
    let position = topological_positions(desc);
    groups.sort_by_key(|g| g.first().map(|&n| position[n as usize]));
    groups
}

/// Each node's place in the description's topological order.
fn topological_positions(desc: &GraphDesc) -> Vec<usize> {
    let mut position = vec![0; desc.nodes.len()];
    for (i, &n) in desc.topological_order.iter().enumerate() {
        position[n as usize] = i;
    }
    position
}

/// The groups of two or more pointwise kernels among those not `taken` by stencil groups.
fn pointwise_groups(
    desc: &GraphDesc,
    lengths: &[Option<u64>],
    max_bindings: usize,
    taken: &[bool],
) -> Vec<Vec<u32>> {
    group(desc, lengths, max_bindings, taken)
        .into_iter()
        .filter(|g| g.len() > 1)
        .collect()
}

/// Every group, each in topological order. Within WebGPU's default binding limit, every candidate joins the
/// latest group of its extent that it can join (bindings and code within the limits, the graph still
/// acyclic), or starts one: what the macro's `FUSED` lists, over the declared lengths. A device that binds
/// more joins those groups, whole, into larger ones the same way (over the lengths given): joining single
/// kernels greedily up to the larger limit would cut across the groups `FUSED` promised (a chain's groups of
/// 7 kernels against groups of 31 straddle at kernel 31).
fn group(
    desc: &GraphDesc,
    lengths: &[Option<u64>],
    max_bindings: usize,
    taken: &[bool],
) -> Vec<Vec<u32>> {
    let singles = |lengths: &[Option<u64>], max_bindings| -> Vec<Vec<usize>> {
        (0..desc.nodes.len())
            .filter(|&n| !taken[n] && candidate(desc, lengths, max_bindings, n).is_some())
            .map(|n| vec![n])
            .collect()
    };
    let groups = if max_bindings > MAX_FUSED_BINDINGS {
        let declared = declared_lengths(desc);
        let units = join_units(
            desc,
            &declared,
            MAX_FUSED_BINDINGS,
            singles(&declared, MAX_FUSED_BINDINGS),
        );
        // The kernels that only the larger limit or the given lengths make candidates join as themselves.
        let mut placed = vec![false; desc.nodes.len()];
        for &n in units.iter().flatten() {
            placed[n] = true;
        }
        let mut units = units;
        units.extend(
            singles(lengths, max_bindings)
                .into_iter()
                .filter(|unit| !placed[unit[0]]),
        );
        join_units(desc, lengths, max_bindings, units)
    } else {
        join_units(desc, lengths, max_bindings, singles(lengths, max_bindings))
    };
    groups
        .into_iter()
        .map(|members| members.into_iter().map(|m| m as u32).collect())
        .collect()
}

/// Joins `units` (candidate kernels, each unit in topological order and of one extent) into groups, in a
/// topological order of the graph with each unit contracted: each unit joins the latest group of its extent
/// it can join (bindings and code within the limits, the graph still acyclic), or starts one. Returns every
/// group, each in topological order.
fn join_units(
    desc: &GraphDesc,
    lengths: &[Option<u64>],
    max_bindings: usize,
    units: Vec<Vec<usize>>,
) -> Vec<Vec<usize>> {
    let n = desc.nodes.len();
    // Items: the units, then every other node alone.
    let mut item_of = vec![usize::MAX; n];
    for (i, unit) in units.iter().enumerate() {
        for &m in unit {
            item_of[m] = i;
        }
    }
    let mut items = units;
    for (node, item) in item_of.iter_mut().enumerate() {
        if *item == usize::MAX {
            *item = items.len();
            items.push(vec![node]);
        }
    }
    let edges: Vec<(usize, usize)> = desc
        .edges
        .iter()
        .map(|e| (item_of[e.from as usize], item_of[e.to as usize]))
        .filter(|(a, b)| a != b)
        .collect();
    // A topological order of the items that takes the earliest ready one in the description's own order,
    // by its first kernel: with units of one kernel each, exactly the description's order.
    let mut position = vec![0; n];
    for (i, &node) in desc.topological_order.iter().enumerate() {
        position[node as usize] = i;
    }
    let Some(order) = items_in_order(&items, &edges, &position) else {
        // Contracting groups the grouping kept acyclic makes no cycle; should it, nothing joins.
        return items.into_iter().filter(|i| i.len() > 1).collect();
    };
    let mut contraction = Contraction::of(items.len(), &order, edges.into_iter());
    // Each group's shape, at its id in `contraction`.
    let mut groups: Vec<Shape<'_>> = Vec::new();
    for &item in &order {
        let item = item as usize;
        let Some(shape) = unit_shape(desc, lengths, max_bindings, &items[item]) else {
            continue;
        };
        let joined = (0..groups.len())
            .rev()
            .filter(|&g| groups[g].extent.joins(&shape.extent))
            .take(GROUPS_TRIED)
            .find_map(|g| {
                let group = &groups[g];
                let mut union = group.buffers.clone();
                union.extend(shape.buffers.iter().filter(|b| !group.buffers.contains(b)));
                let fits = union.len() <= max_bindings
                    && group.bytes + shape.bytes <= MAX_FUSED_SOURCE_BYTES
                    && !textures_clash(&group.textures, &shape.textures);
                (fits && contraction.may_join(item, g)).then_some((g, union))
            });
        match joined {
            Some((g, union)) => {
                contraction.join(item, g);
                let group = &mut groups[g];
                group.extent.absorb(&shape.extent);
                group.buffers = union;
                group.bytes += shape.bytes;
                add_textures(&mut group.textures, &shape.textures);
            }
            None => {
                contraction.start_group(item);
                groups.push(shape);
            }
        }
    }
    debug_assert!(contraction.is_acyclic());
    contraction
        .members
        .into_iter()
        .map(|joined| {
            joined
                .into_iter()
                .flat_map(|item| items[item].iter().copied())
                .collect()
        })
        .collect()
}

/// Kahn's algorithm over `items` (groups of nodes) and the `edges` between them, taking the ready item whose
/// first node comes first by `position`; `None` if the items' graph has a cycle.
fn items_in_order(
    items: &[Vec<usize>],
    edges: &[(usize, usize)],
    position: &[usize],
) -> Option<Vec<u32>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let key = |item: usize| items[item].first().map_or(usize::MAX, |&n| position[n]);
    let mut indegree = vec![0usize; items.len()];
    let mut successors = vec![Vec::new(); items.len()];
    for &(from, to) in edges {
        indegree[to] += 1;
        successors[from].push(to);
    }
    let mut ready: BinaryHeap<Reverse<(usize, usize)>> = (0..items.len())
        .filter(|&i| indegree[i] == 0)
        .map(|i| Reverse((key(i), i)))
        .collect();
    let mut order = Vec::with_capacity(items.len());
    while let Some(Reverse((_, item))) = ready.pop() {
        order.push(item as u32);
        for &next in &successors[item] {
            indegree[next] -= 1;
            if indegree[next] == 0 {
                ready.push(Reverse((key(next), next)));
            }
        }
    }
    (order.len() == items.len()).then_some(order)
}

/// What a unit of kernels (or a group) shares with those it may join.
struct Shape<'a> {
    extent: Extent<'a>,
    /// Everything its kernels bind: buffers, textures and samplers.
    buffers: Vec<u32>,
    /// Each texture its kernels bind, with how they use it together.
    textures: Vec<(u32, AccessMode)>,
    /// Bytes of its kernels' code.
    bytes: usize,
}

/// Whether two sets of texture uses may not be one kernel's: one writes a texture the other reads. A fused
/// kernel binds a texture once, and wgpu binds it in a dispatch either for reading (sampled or read-only
/// storage) or for writing, not both; the read would also see the texel the other member stored, after the
/// format's conversion, where the unfused kernels saw it only after the dispatch.
fn textures_clash(a: &[(u32, AccessMode)], b: &[(u32, AccessMode)]) -> bool {
    let reads = |m: AccessMode| m != AccessMode::Write;
    let writes = |m: AccessMode| m != AccessMode::Read;
    a.iter().any(|&(t, ma)| {
        b.iter()
            .any(|&(u, mb)| t == u && ((reads(ma) && writes(mb)) || (writes(ma) && reads(mb))))
    })
}

/// `into` with `uses` added: each texture once, with the union of its modes.
fn add_textures(into: &mut Vec<(u32, AccessMode)>, uses: &[(u32, AccessMode)]) {
    for &(t, mode) in uses {
        match into.iter_mut().find(|(u, _)| *u == t) {
            Some((_, m)) if *m != mode => *m = AccessMode::ReadWrite,
            Some(_) => {}
            None => into.push((t, mode)),
        }
    }
}

/// A unit's shape, if every kernel of it is a candidate of one extent under these lengths and limit, and
/// none writes a texture another reads.
fn unit_shape<'a>(
    desc: &'a GraphDesc,
    lengths: &[Option<u64>],
    max_bindings: usize,
    unit: &[usize],
) -> Option<Shape<'a>> {
    let mut shape: Option<Shape<'a>> = None;
    for &node in unit {
        let (kernel, extent) = candidate(desc, lengths, max_bindings, node)?;
        let textures: Vec<(u32, AccessMode)> = kernel
            .bindings
            .iter()
            .filter(|b| {
                desc.buffers
                    .get(b.buffer as usize)
                    .is_some_and(|d| d.texture.is_some())
            })
            .map(|b| (b.buffer, b.mode))
            .collect();
        let shape = shape.get_or_insert_with(|| Shape {
            extent: extent.clone(),
            buffers: Vec::new(),
            textures: Vec::new(),
            bytes: 0,
        });
        if !shape.extent.joins(&extent) || textures_clash(&shape.textures, &textures) {
            return None;
        }
        shape.extent.absorb(&extent);
        for b in kernel.bindings.iter().map(|b| b.buffer) {
            if !shape.buffers.contains(&b) {
                shape.buffers.push(b);
            }
        }
        add_textures(&mut shape.textures, &textures);
        shape.bytes += kernel.source.len();
    }
    shape.filter(|s| s.buffers.len() <= max_bindings)
}

/// The graph with each group contracted to one node, as [`group`] builds it in topological order. A node
/// outside every group stands for itself, with an id past the groups' (`node_count + node`). It stays
/// acyclic: a node joins a group only where that makes no cycle.
struct Contraction {
    node_count: usize,
    /// Each node's contracted id.
    group_of: Vec<usize>,
    /// Each group's members, in the order they joined (topological).
    members: Vec<Vec<usize>>,
    /// Each node's place in the topological order the groups are built in.
    position: Vec<usize>,
    successors: Vec<Vec<usize>>,
    predecessors: Vec<Vec<usize>>,
    /// The contracted ids one search has reached: those marked with the search's number.
    reached: Vec<u32>,
    search: u32,
}

impl Contraction {
    /// The graph of `n` nodes and `edges`, no node in a group yet, to be grouped in `order`.
    fn of(n: usize, order: &[u32], edges: impl Iterator<Item = (usize, usize)>) -> Self {
        let mut position = vec![0; n];
        for (i, &node) in order.iter().enumerate() {
            position[node as usize] = i;
        }
        let mut successors = vec![Vec::new(); n];
        let mut predecessors = vec![Vec::new(); n];
        for (from, to) in edges {
            successors[from].push(to);
            predecessors[to].push(from);
        }
        Contraction {
            node_count: n,
            group_of: (0..n).map(|i| n + i).collect(),
            members: Vec::new(),
            position,
            successors,
            predecessors,
            reached: vec![0; 2 * n],
            search: 0,
        }
    }

    fn start_group(&mut self, node: usize) {
        self.group_of[node] = self.members.len();
        self.members.push(vec![node]);
    }

    fn join(&mut self, node: usize, group: usize) {
        self.group_of[node] = group;
        self.members[group].push(node);
    }

    /// Whether `node`, the latest node placed in topological order (all it depends on are placed, nothing
    /// after it is), may join `group` with the contracted graph still acyclic.
    ///
    /// The graph was acyclic before, so a new cycle runs through the joined group: out of `group`, through
    /// other contracted nodes, and back in by an edge into `node` (a node not yet placed leads only to nodes
    /// placed after it, so no cycle passes one, nor `node`'s own successors). One exists exactly when the
    /// contracted id of one of `node`'s predecessors, other than `group`, is reachable from `group`; this
    /// searches for that over the placed nodes alone, in time linear in what it visits. (A topological sort
    /// of the whole contracted graph per join made grouping quadratic: most of `graph!`'s expansion time
    /// for a 5000-kernel chain.)
    fn may_join(&mut self, node: usize, group: usize) -> bool {
        let targets: Vec<usize> = self.predecessors[node]
            .iter()
            .map(|&p| self.group_of[p])
            .filter(|&id| id != group)
            .collect();
        if targets.is_empty() {
            return true;
        }
        self.search += 1;
        let mark = self.search;
        let Contraction {
            node_count,
            group_of,
            members,
            position,
            successors,
            reached,
            ..
        } = self;
        reached[group] = mark;
        let mut ids = vec![group];
        while let Some(id) = ids.pop() {
            let alone;
            let nodes: &[usize] = match id.checked_sub(*node_count) {
                Some(single) => {
                    alone = [single];
                    &alone
                }
                None => &members[id],
            };
            for to in nodes.iter().flat_map(|&m| successors[m].iter().copied()) {
                if position[to] >= position[node] {
                    continue;
                }
                let id = group_of[to];
                if targets.contains(&id) {
                    return false;
                }
                if reached[id] != mark {
                    reached[id] = mark;
                    ids.push(id);
                }
            }
        }
        true
    }

    /// Whether the contracted graph has no cycle, by a topological sort of all of it (for debug builds).
    fn is_acyclic(&self) -> bool {
        let contracted: Vec<(usize, usize)> = self
            .successors
            .iter()
            .enumerate()
            .flat_map(|(a, to)| to.iter().map(move |&b| (a, b)))
            .map(|(a, b)| (self.group_of[a], self.group_of[b]))
            .filter(|(a, b)| a != b)
            .collect();
        topological_order(2 * self.node_count, &contracted).is_some()
    }
}

/// The buffers a group may keep in registers: graph-owned, of one element per invocation of the group, touched
/// by no node outside it (nor by a block's flag), and first touched by a member that overwrites it (`write`:
/// it reads none of the old contents, so the replay before needs to leave nothing in it).
fn register_candidates(desc: &GraphDesc, members: &[u32], context: &Context<'_>) -> Vec<u32> {
    let lengths = context.lengths;
    let kernels: Vec<&KernelDesc> = members
        .iter()
        .filter_map(|&m| match &desc.nodes[m as usize].op {
            OpDesc::Kernel(k) => Some(k),
            _ => None,
        })
        .collect();
    let Some(DispatchDesc::BufferLen(sized_by)) = kernels.first().map(|k| &k.dispatch) else {
        return Vec::new();
    };
    let invocations = lengths.get(*sized_by as usize).copied().flatten();
    let mut candidates: Vec<u32> = Vec::new();
    for b in kernels
        .iter()
        .flat_map(|k| k.bindings.iter().map(|a| a.buffer))
    {
        let buffer = &desc.buffers[b as usize];
        let sized = buffer.len.map(u64::from).is_some() && buffer.len.map(u64::from) == invocations;
        if buffer.role != Role::Owned || !sized || !buffer.is_buffer() || candidates.contains(&b) {
            continue;
        }
        let first_mode = kernels
            .iter()
            .find_map(|k| k.bindings.iter().find(|a| a.buffer == b).map(|a| a.mode));
        if first_mode != Some(AccessMode::Write) {
            continue;
        }
        let only_here = context.touchers[b as usize]
            .iter()
            .all(|n| members.contains(n))
            && desc.blocks.iter().all(|block| block.flag != Some(b));
        if only_here {
            candidates.push(b);
        }
    }
    candidates
}

/// The kernel that runs `members` (in topological order) in one invocation, with the buffers `registers` in
/// private variables; `Err` (in words) when one of them is code the renaming does not handle, or the fused
/// module does not validate.
///
/// With `cache`, each bound buffer whose first member reads it is cached too: the invocation loads its own
/// element into a private variable once, the members read and write that, and it is stored back once if a
/// member writes it. Every access of a pointwise member is at the invocation's own index (the proof), so
/// this is what the members' loads and stores give, without a trip through memory between one member's
/// store and the next one's load. A buffer whose first member only writes it is left as it is: caching it
/// would load every element for nothing (that member may write only some of them, so the load cannot be
/// left out), which made the benchmark's tree, 126 buffers written then read, slower on the H100.
fn fused_kernel(
    desc: &GraphDesc,
    members: &[u32],
    lengths: &[Option<u64>],
    registers: &[u32],
    cache: bool,
    validated: &mut HashSet<String>,
) -> Result<KernelDesc, String> {
    let name = |i: usize| &desc.nodes[members[i] as usize].name;
    let kernels: Vec<&KernelDesc> = members
        .iter()
        .map(|&m| match &desc.nodes[m as usize].op {
            OpDesc::Kernel(k) => Ok(k),
            _ => Err(format!("`{}` is not a kernel", desc.nodes[m as usize].name)),
        })
        .collect::<Result<_, _>>()?;
    // The fused bindings: each buffer once, read-only only if every member only reads it.
    let mut bindings: Vec<AccessDesc> = Vec::new();
    for b in kernels.iter().flat_map(|k| k.bindings.iter()) {
        match bindings.iter_mut().find(|f| f.buffer == b.buffer) {
            Some(f) if f.mode != b.mode => f.mode = AccessMode::ReadWrite,
            Some(_) => {}
            None => bindings.push(*b),
        }
    }
    let binding_name = |buffer: u32| {
        let slot = bindings
            .iter()
            .position(|f| f.buffer == buffer)
            .unwrap_or(0);
        format!("{}b{slot}", wgsl::FUSED_PREFIX)
    };
    let declarations = wgsl::resource_declarations(
        bindings
            .iter()
            .filter(|b| !registers.contains(&b.buffer))
            .map(|b| {
                let resource = resource(desc, b.buffer)?;
                // The names live as long as this call; `resource_declarations` copies them.
                Ok((binding_name(b.buffer), resource, b.mode))
            })
            .collect::<Result<Vec<_>, String>>()?
            .iter()
            .map(|(name, resource, mode)| (name.as_str(), *resource, *mode)),
        &[],
    );

    // The cached buffers, and whether a member writes each.
    let first_mode = |buffer: u32| {
        kernels
            .iter()
            .find_map(|k| k.bindings.iter().find(|a| a.buffer == buffer))
            .map(|a| a.mode)
    };
    // Textures are not cached: a texel's load and store convert it to and from the format.
    let cached: Vec<(u32, bool)> = bindings
        .iter()
        .filter(|b| cache && !registers.contains(&b.buffer))
        .filter(|b| desc.buffers[b.buffer as usize].is_buffer())
        .filter(|b| first_mode(b.buffer) != Some(AccessMode::Write))
        .map(|b| (b.buffer, b.mode != AccessMode::Read))
        .collect();

    let mut source = String::new();
    for r in registers.iter().chain(cached.iter().map(|(b, _)| b)) {
        let elem = desc.buffers[*r as usize].elem.wgsl();
        let name = binding_name(*r);
        let private = if registers.contains(r) {
            register_name(&name)
        } else {
            cache_name(&name)
        };
        source.push_str(&format!("var<private> {private}: {elem};\n"));
    }
    let mut calls = String::new();
    let mut builtins: Vec<String> = Vec::new();
    // The workgroup the first member that needs one has; whether a member is called with its element's index.
    let mut needed_width: Option<[u32; 3]> = None;
    let mut any_width_free = false;
    for (i, k) in kernels.iter().enumerate() {
        let prefix = format!("{}k{i}_", wgsl::FUSED_PREFIX);
        let member = member_of(&mut source, name(i), k, &prefix, &|b| {
            binding_name(b.buffer)
        })?;
        let mut code = member.code;
        let register_use = |buffer: u32| {
            format!(
                "`{}` uses buffer `{}` other than by indexing it",
                name(i),
                desc.buffers[buffer as usize].name
            )
        };
        for &r in registers {
            let len = desc.buffers[r as usize]
                .len
                .ok_or_else(|| "a buffer kept in registers has no declared length".to_string())?;
            let binding = binding_name(r);
            code = wgsl::in_register(
                &code,
                &binding,
                &register_name(&binding),
                Some(u64::from(len)),
            )
            .ok_or_else(|| register_use(r))?;
        }
        for &(b, _) in &cached {
            let binding = binding_name(b);
            code = wgsl::in_register(&code, &binding, &cache_name(&binding), None)
                .ok_or_else(|| register_use(b))?;
        }
        source.push_str(&code);
        source.push('\n');
        // A member that takes only its index (and the workgroup count, to fold it) is called with its
        // element's index as `gid.x` of one row, whatever the fused kernel's workgroup.
        let width_free =
            index_only(&member.builtins) && matches!(k.dispatch, DispatchDesc::BufferLen(_));
        if !width_free && needed_width.is_none() {
            needed_width = Some(k.workgroup_size);
        }
        let args: Vec<String> = member
            .builtins
            .iter()
            .map(|b| match (width_free, b.as_str()) {
                (true, "global_invocation_id") => format!("{}element", wgsl::FUSED_PREFIX),
                _ => format!("{}{b}", wgsl::FUSED_PREFIX),
            })
            .collect();
        any_width_free |= width_free && !member.builtins.is_empty();
        calls.push_str(&format!("    {}({});\n", member.function, args.join(", ")));
        for b in member.builtins {
            if !builtins.contains(&b) {
                builtins.push(b);
            }
        }
    }
    // A group dispatched one invocation per element of a buffer, whose members take no builtin but their
    // index and the workgroup count (which a pointwise member uses only to fold its index), runs in wide
    // workgroups, each invocation calling the members for `per` elements a grid apart (`wide`); another
    // keeps its members' workgroup, one element per invocation.
    let wide = match kernels[0].dispatch {
        DispatchDesc::BufferLen(sized_by) => index_only(&builtins).then(|| {
            let per = wide_elements(lengths.get(sized_by as usize).copied().flatten());
            (sized_by, per)
        }),
        _ => None,
    };
    let [x, y, z] = match wide {
        Some(_) => [WIDE_WORKGROUP, 1, 1],
        None => needed_width.unwrap_or(kernels[0].workgroup_size),
    };
    // Around the calls: the cached elements loaded at the invocation's own index, and stored back. Members
    // are dispatched in one row (`candidate`), folded into two only when every member indexes in the folded
    // form (`foldable`), so the folded form is each member's index (`gid.y` is 0 in one row). A wide kernel
    // passes each element's index to its members as `gid.x` of one row.
    let (mut load, mut store) = (String::new(), String::new());
    if wide.is_some() || any_width_free {
        for b in ["global_invocation_id", "num_workgroups"] {
            if !builtins.iter().any(|have| have == b) {
                builtins.push(b.to_string());
            }
        }
    }
    // The element's index, for the members called with it: in one row, folded by the fused kernel's width.
    let element = format!(
        "    let {p}element = vec3<u32>({p}global_invocation_id.x + {p}global_invocation_id.y * {p}num_workgroups.x * {x}u, 0u, 0u);\n",
        p = wgsl::FUSED_PREFIX
    );
    // One element per invocation: the cached elements loaded at its own index and stored back (a wide
    // kernel loads and stores its elements its own way, below).
    if wide.is_none() && !cached.is_empty() {
        for b in ["global_invocation_id", "num_workgroups"] {
            if !builtins.iter().any(|have| have == b) {
                builtins.push(b.to_string());
            }
        }
        let p = wgsl::FUSED_PREFIX;
        load.push_str(&format!(
            "    let {p}index = {p}global_invocation_id.x + {p}global_invocation_id.y * {p}num_workgroups.x * {x}u;\n"
        ));
        for &(b, written) in &cached {
            let (name, private) = (binding_name(b), cache_name(&binding_name(b)));
            let inside = format!("{p}index < arrayLength(&{name})");
            load.push_str(&format!(
                "    if ({inside}) {{ {private} = {name}[{p}index]; }}\n"
            ));
            if written {
                store.push_str(&format!(
                    "    if ({inside}) {{ {name}[{p}index] = {private}; }}\n"
                ));
            }
        }
    }
    let p = wgsl::FUSED_PREFIX;
    let entry = format!("{p}main");
    match wide {
        None => {
            let parameters: Vec<String> = builtins
                .iter()
                .map(|b| {
                    let ty = wgsl::builtin_type(b).unwrap_or("u32");
                    format!("@builtin({b}) {p}{b}: {ty}")
                })
                .collect();
            let element = if any_width_free { element.as_str() } else { "" };
            source.push_str(&format!(
                "@compute @workgroup_size({x}, {y}, {z})\nfn {entry}({}) {{\n{element}{load}{calls}{store}}}\n",
                parameters.join(", ")
            ));
        }
        Some((sized_by, per)) => {
            // The elements the unfused kernels ran for: the sizing buffer's, bound or (kept in registers)
            // of its declared length.
            let elements = match registers.contains(&sized_by) {
                false => format!("arrayLength(&{})", binding_name(sized_by)),
                true => format!("{}u", desc.buffers[sized_by as usize].len.unwrap_or(0)),
            };
            // The cached elements of all the invocation's elements are loaded before any member runs and
            // stored after the last: a member's store could alias the next element's load for all the
            // compiler knows, so loads and stores interleaved element by element wait on each other (an
            // in-place `scale` alone took 1.5x a copy's time on the H100). Members are pointwise, so an
            // element's cached value is its own whatever the order. The elements are written out one by one
            // (`per` is 2 or 4), their values in variables of their own: an array indexed by a loop counter
            // took a copy from 61 to 67 us, and `axpy` from 79 to 110, on the H100.
            let head = format!(
                "@compute @workgroup_size({WIDE_WORKGROUP})\n\
                 fn {entry}(@builtin(global_invocation_id) {p}g: vec3<u32>, @builtin(num_workgroups) {p}groups: vec3<u32>) {{\n\
                 \x20   let {p}first = {p}g.x + {p}g.y * {p}groups.x * {WIDE_WORKGROUP}u;\n\
                 \x20   let {p}threads = {p}groups.x * {p}groups.y * {WIDE_WORKGROUP}u;\n\
                 \x20   let {p}elements = {elements};\n"
            );
            let element = |at: &str| {
                format!(
                    "        let {p}global_invocation_id = vec3<u32>({at}, 0u, 0u);\n\
                     \x20       let {p}num_workgroups = {p}groups;\n\
                     \x20       let {p}element = {p}global_invocation_id;\n"
                )
            };
            if cached.is_empty() {
                source.push_str(&format!(
                    "{head}\
                     \x20   for (var {p}e = 0u; {p}e < {per}u; {p}e++) {{\n\
                     \x20       let {p}at = {p}first + {p}e * {p}threads;\n\
                     \x20       if ({p}at >= {p}elements) {{ break; }}\n\
                     {}{calls}\
                     \x20   }}\n\
                     }}\n",
                    element(&format!("{p}at"))
                ));
            } else {
                let (mut loads, mut runs, mut stores) =
                    (String::new(), String::new(), String::new());
                for e in 0..per {
                    let at = format!("{p}at{e}");
                    loads.push_str(&format!("    let {at} = {p}first + {e}u * {p}threads;\n"));
                    let (mut take, mut give) = (String::new(), String::new());
                    for &(b, written) in &cached {
                        let (name, private) = (binding_name(b), cache_name(&binding_name(b)));
                        let elem = desc.buffers[b as usize].elem.wgsl();
                        let held = format!("{private}_{e}");
                        let inside = format!("{at} < {p}elements && {at} < arrayLength(&{name})");
                        loads.push_str(&format!(
                            "    var {held}: {elem};\n    if ({inside}) {{ {held} = {name}[{at}]; }}\n"
                        ));
                        take.push_str(&format!("        {private} = {held};\n"));
                        if written {
                            give.push_str(&format!("        {held} = {private};\n"));
                            stores.push_str(&format!(
                                "    if ({inside}) {{ {name}[{at}] = {held}; }}\n"
                            ));
                        }
                    }
                    runs.push_str(&format!(
                        "    if ({at} < {p}elements) {{\n{}{take}{calls}{give}    }}\n",
                        element(&at)
                    ));
                }
                source.push_str(&format!("{head}{loads}{runs}{stores}}}\n"));
            }
        }
    }
    let kernel = KernelDesc {
        declarations: declarations.into(),
        args: Cow::Owned(Vec::new()),
        source: source.into(),
        entry: entry.into(),
        workgroup_size: [x, y, z],
        bindings: bindings
            .into_iter()
            .filter(|b| !registers.contains(&b.buffer))
            .collect(),
        dispatch: match wide {
            Some((sized_by, per)) => wide_dispatch(desc, sized_by, per),
            None => kernels[0].dispatch.clone(),
        },
        // A wide kernel folds its own index, whatever its members do.
        foldable: wide.is_some() || kernels.iter().all(|k| k.foldable),
        range: None,
        alternative: None,
        // A wide kernel alone may read neighbours ([`widen`]).
        pointwise: kernels.iter().all(|k| k.pointwise),
        reach: None,
        grid: None,
        no_fusion: false,
        overrides: Default::default(),
    };
    validate_once(&kernel, desc, validated)
        .map_err(|message| format!("the fused kernel does not validate: {message}"))?;
    Ok(kernel)
}

/// What binding `buffer` of `desc` is in a kernel: a buffer of its element type, a texture of its declared
/// type, or a sampler.
fn resource(desc: &GraphDesc, buffer: u32) -> Result<wgsl::Resource, String> {
    let b = &desc.buffers[buffer as usize];
    match (&b.texture, &b.sampler) {
        (None, None) => Ok(wgsl::Resource::Buffer(b.elem)),
        (Some(_), _) => b
            .texture_type()
            .map(wgsl::Resource::Texture)
            .ok_or_else(|| format!("texture `{}` has a type that does not parse", b.name)),
        (None, Some(_)) => b
            .sampler_type()
            .map(wgsl::Resource::Sampler)
            .ok_or_else(|| format!("sampler `{}` has a type that does not parse", b.name)),
    }
}

/// Whether a kernel taking `builtins` takes only its index and the workgroup count (which a pointwise kernel
/// uses only to fold its index).
fn index_only(builtins: &[String]) -> bool {
    builtins
        .iter()
        .all(|b| b == "global_invocation_id" || b == "num_workgroups")
}

/// A wide kernel's dispatch: one invocation per `per` elements of buffer `sized_by`.
fn wide_dispatch(desc: &GraphDesc, sized_by: u32, per: u32) -> DispatchDesc {
    let name = &desc.buffers[sized_by as usize].name;
    let threads = SizeDesc::len_div_ceil(sized_by, name, per);
    DispatchDesc::Threads([threads, SizeDesc::ONE, SizeDesc::ONE])
}

/// The private variable that caches binding `binding`'s element: `fuse_b3` -> `fuse_c3`.
fn cache_name(binding: &str) -> String {
    binding.replacen("_b", "_c", 1)
}

/// The private variable that holds binding `binding`'s element: `fuse_b3` -> `fuse_r3`.
fn register_name(binding: &str) -> String {
    binding.replacen("_b", "_r", 1)
}

/// `desc` with `nodes` in place of its nodes: each member's edges moved to its group's node, absorbed members
/// ordered after it, the schedule computed again. `None` if that has a cycle.
fn rewire(desc: &GraphDesc, nodes: Vec<NodeDesc>, groups: &[FusedGroup]) -> Option<GraphDesc> {
    let mut owner: Vec<u32> = (0..desc.nodes.len() as u32).collect();
    for g in groups {
        for &m in &g.members {
            owner[m as usize] = g.node;
        }
    }
    let mut edges: Vec<EdgeDesc> = Vec::new();
    for e in desc.edges.iter() {
        let (from, to) = (owner[e.from as usize], owner[e.to as usize]);
        if from != to && !edges.iter().any(|f| f.from == from && f.to == to) {
            edges.push(EdgeDesc { from, to, ..*e });
        }
    }
    for g in groups {
        for &m in &g.members[1..] {
            edges.push(EdgeDesc {
                from: g.node,
                to: m,
                origin: EdgeOriginDesc::Explicit,
            });
        }
    }
    crate::flatten::with_schedule(
        desc,
        desc.buffers.clone(),
        nodes,
        edges,
        desc.blocks.clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::Contraction;
    use proptest::prelude::*;

    proptest! {
        /// On random DAGs grouped in topological order, each join `may_join` allows is one after which a
        /// topological sort of the whole contracted graph still succeeds, and each it refuses is one after
        /// which it fails.
        #[test]
        fn may_join_answers_as_a_whole_sort_does(
            n in 2usize..14,
            edge_bits in prop::collection::vec(any::<bool>(), 91),
            choices in prop::collection::vec(any::<u8>(), 14),
        ) {
            let edges: Vec<(usize, usize)> = (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .enumerate()
                .filter(|(i, _)| edge_bits[*i])
                .map(|(_, e)| e)
                .collect();
            let order: Vec<u32> = (0..n as u32).collect();
            let mut c = Contraction::of(n, &order, edges.iter().copied());
            for (node, &choice) in choices.iter().enumerate().take(n) {
                let groups = c.members.len();
                // Some nodes try a group (chosen at random), the others start one.
                let tried = (groups > 0 && choice % 3 != 0).then(|| choice as usize % groups);
                let Some(group) = tried else {
                    c.start_group(node);
                    continue;
                };
                let answer = c.may_join(node, group);
                c.group_of[node] = group;
                let acyclic = c.is_acyclic();
                c.group_of[node] = n + node;
                prop_assert_eq!(answer, acyclic, "node {} into group {:?} of {:?}", node, c.members[group], edges);
                if answer {
                    c.join(node, group);
                } else {
                    c.start_group(node);
                }
            }
            prop_assert!(c.is_acyclic());
        }
    }

    /// The two answers, each once: `0 -> 1 -> 2` with 1 apart refuses 2 into 0's group (the path through 1
    /// would turn into a cycle), and `0 -> 2`, `1` alone, allows it.
    #[test]
    fn a_path_through_another_node_is_refused_and_a_direct_edge_is_not() {
        let order = [0, 1, 2];
        let mut through = Contraction::of(3, &order, [(0, 1), (1, 2)].into_iter());
        through.start_group(0);
        through.start_group(1);
        assert!(!through.may_join(2, 0));
        let mut direct = Contraction::of(3, &order, [(0, 2)].into_iter());
        direct.start_group(0);
        direct.start_group(1);
        assert!(direct.may_join(2, 0));
    }
}
