//! What a bake builds and every update builds again: one value, made by one function, which the baked graph
//! swaps whole. A failed build changes nothing.

#![forbid(unsafe_code)]

use std::borrow::Cow;

use graph_core::desc::GraphDesc;
use graph_core::fusion::ValidModules;

use crate::bake::{
    BoundBuffers, Built, Fused, FusionInput, KernelCache, PreviousFusion, build_kernels,
    build_replay,
};
use crate::buffer::AnyBuffer;
use crate::error::Error;
use crate::gate::Gates;
use crate::gpu::Gpu;
use crate::native_recorder::NativeReplay;
use crate::params::ParamsTransport;
use crate::program::Program;
use crate::recorder::{self, NativeParamsIn};
use crate::replay::Kernels;
use crate::scope::OpScope;
use crate::texture::Texture;
use crate::transfer::{Readbacks, Uploads};

/// What an update created; everything else it reused. The wgpu pipelines and bind groups are the portable
/// recorder's kernels', made only for a graph that replays through it, and its gates' (made whichever
/// recorder replays: the native recorder uses the gates' buffers, and records gates of its own); the native
/// recorder's Vulkan pipelines and descriptor sets are counted apart (zero when the graph replays through
/// the portable recorder).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdateReport {
    /// wgpu compute pipelines compiled (kernels whose code, workgroup size or pipeline constants changed,
    /// gates of blocks whose gated members moved, and the native recorder's one-binding pipelines that
    /// first bind a texture of a type and access it has not bound before).
    pub pipelines_built: usize,
    /// wgpu bind groups created (kernels whose buffers changed, gates whose flag buffer changed or whose
    /// gated members moved).
    pub bind_groups_built: usize,
    /// The native recorder's Vulkan compute pipelines compiled (kernels, gates and checks of indirect counts
    /// whose code or pipeline constants changed).
    pub native_pipelines_built: usize,
    /// The native recorder's Vulkan descriptor sets written (one per list of buffers a kernel binds that no
    /// kernel bound before, and the parameter buffer's when it is new).
    pub native_sets_built: usize,
}

/// A baked graph's description, its bound buffers and everything a replay records from.
pub(crate) struct BakedState {
    /// The description as baked (subgraphs flattened), by which names are found.
    pub desc: Cow<'static, GraphDesc>,
    /// The caller's buffer bound to each external buffer, by index (`None` for owned ones): what an update
    /// rebinds from.
    pub externals: Vec<Option<AnyBuffer>>,
    /// The caller's texture bound to each texture, by buffer index (`None` for buffers).
    pub textures: Vec<Option<Texture>>,
    pub bound: BoundBuffers,
    /// The portable recorder's pipelines and bind groups: made only for a graph that replays through it
    /// (see [`BakedState::portable_kernels`]).
    pub kernels: Option<Kernels>,
    /// The executable program: what either recorder replays.
    pub program: Program,
    pub uploads: Uploads,
    pub readbacks: Readbacks,
    /// Layouts and pipelines, kept for updates.
    pub cache: KernelCache,
    /// Fused modules naga accepted, kept for updates: the fusion pass after an update validates only those
    /// it has not seen.
    pub valid_modules: ValidModules,
    /// The gates of blocks under GPU control, if the graph has gated blocks.
    pub gates: Option<Gates>,
    /// The kernels replayed as one, over the bound buffers (see [`graph_core::fusion`]).
    pub fused: Fused,
    /// The fused description the program was compiled from (`desc` with fused kernels merged).
    pub replayed: GraphDesc,
    /// What fusion was given, so that an update that gives it the same takes `fused` and `replayed` again.
    pub fusion_input: FusionInput,
    /// The native recorder's command buffers, where the graph replays through them.
    pub native: Option<NativeReplay>,
    /// The size of each texture that parameters size, by buffer index, as built: a replay whose parameters
    /// give another builds again ([`BakedGraph::fit_textures_to_params`](crate::BakedGraph)).
    pub param_extents: Vec<Option<[u32; 3]>>,
    /// The recorder asked for: what every rebuild asks for again.
    pub recorder: (recorder::Choice, NativeParamsIn),
}

/// The most fused modules a baked graph keeps known valid between updates: a few graphs' worth of groups.
const MAX_VALID_MODULES: usize = 256;

impl BakedState {
    /// Builds the state of `desc` (validated and flattened) over `externals`, with parameters as `transport`
    /// carries them: fusion over the bound lengths, the bound buffers, the executable program, the portable
    /// recorder's kernels (through
    /// `previous`'s cache, its pipelines of unchanged code and bind groups over unchanged buffers), the gates,
    /// the native recorder's command buffers and the transfers. What it reused from `previous` it counts in
    /// the report. On success it has taken `previous`'s transfers where their sizes are unchanged (their
    /// staging, pools and pending upload data); on an error `previous` is as it was. Kernels `apart` (turned
    /// off) are left out of the fusion pass.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        gpu: &Gpu,
        desc: Cow<'static, GraphDesc>,
        externals: Vec<Option<AnyBuffer>>,
        textures: Vec<Option<Texture>>,
        transport: &ParamsTransport,
        params: &[u8],
        previous: Option<&mut BakedState>,
        apart: &[u32],
    ) -> Result<(BakedState, UpdateReport), Error> {
        let bound_externals: Vec<(u32, &AnyBuffer)> = externals
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.as_ref().map(|b| (i as u32, b)))
            .collect();
        // Built on a copy of the cache: a failed update must not leave pipelines of its own in it.
        let mut cache = previous
            .as_ref()
            .map(|p| p.cache.clone())
            .unwrap_or_default();
        // Modules that validated stay valid; a failed update leaves the ones it added in `previous`'s copy
        // only. Past a bound (updates that keep changing kernels' code) the set starts again.
        let mut valid_modules = previous
            .as_ref()
            .map(|p| p.valid_modules.clone())
            .filter(|v| v.len() <= MAX_VALID_MODULES)
            .unwrap_or_default();
        // An update keeps the recorder the graph replays through (the environment's at bake, or the one the
        // application chose since), so a rebuild no replay asked for switches nothing.
        let recorder = previous
            .as_ref()
            .map_or((recorder::choice(), NativeParamsIn::default()), |p| {
                p.recorder
            });
        let r = build_replay(
            gpu,
            &desc,
            &bound_externals,
            &textures,
            params,
            previous.as_ref().map(|p| &p.bound),
            &mut valid_modules,
            previous.as_ref().map(|p| PreviousFusion {
                input: &p.fusion_input,
                fused: &p.fused,
                replayed: &p.replayed,
            }),
            apart,
        )?;
        let (gates, gates_built) = {
            let _span = tracing::debug_span!("gates").entered();
            Gates::new(
                gpu,
                &desc,
                &r.program.gates,
                &r.bound.buffers,
                previous.as_ref().and_then(|p| p.gates.as_ref()),
            )
        };
        let native = NativeReplay::new(
            gpu,
            &r.desc,
            &r.program,
            &r.bound,
            gates.as_ref(),
            transport.storage(),
            recorder.0,
            recorder.1,
            previous.as_ref().and_then(|p| p.native.as_ref()),
        )?;
        // Only the recorder that replays gets its pipelines: the portable one's are made here when it
        // replays, or at its first replay after `use_portable_recorder` (see `portable_kernels`).
        let (kernels, built) = match &native {
            Some(_) => (None, Built::default()),
            None => {
                let _span = tracing::debug_span!("portable pipelines").entered();
                let (kernels, built) = build_kernels(
                    gpu,
                    &r.program,
                    &r.bound,
                    transport,
                    &mut cache,
                    previous.as_ref().and_then(|p| p.kernels.as_ref()),
                );
                (Some(kernels), built)
            }
        };
        // Nothing fails past here: take the transfers of an unchanged size (with their pending data).
        let (uploads, readbacks) = match previous {
            Some(p) => (
                if Uploads::sizes(&r.program, &r.bound.textures)
                    == Uploads::sizes(&p.program, &p.bound.textures)
                {
                    std::mem::take(&mut p.uploads)
                } else {
                    Uploads::new(gpu, &desc, &r.program, &r.bound.textures)
                        .taking_unchanged(&mut p.uploads)
                },
                if Readbacks::sizes(&r.program, &r.bound.textures)
                    == Readbacks::sizes(&p.program, &p.bound.textures)
                {
                    p.readbacks.clone()
                } else {
                    Readbacks::new(&desc, &r.program, &r.bound.textures)
                },
            ),
            None => (
                Uploads::new(gpu, &desc, &r.program, &r.bound.textures),
                Readbacks::new(&desc, &r.program, &r.bound.textures),
            ),
        };
        let native_built = native.as_ref().map(|n| n.built).unwrap_or_default();
        let report = UpdateReport {
            pipelines_built: built.pipelines + gates_built.pipelines + native_built.init_pipelines,
            bind_groups_built: built.bind_groups + gates_built.bind_groups,
            native_pipelines_built: native_built.pipelines,
            native_sets_built: native_built.sets,
        };
        let state = BakedState {
            desc,
            externals,
            textures,
            bound: r.bound,
            kernels,
            program: r.program,
            uploads,
            readbacks,
            cache,
            valid_modules,
            gates,
            fused: r.fused,
            replayed: r.desc,
            fusion_input: r.fusion_input,
            native,
            param_extents: r.param_extents,
            recorder,
        };
        Ok((state, report))
    }

    /// The portable recorder's kernels, made now (through a copy of the cache, kept only if the device
    /// reports nothing) if the graph replayed through the native recorder until now: bake makes only the
    /// replaying recorder's pipelines. A failure is a bake error, and the next call tries again.
    pub(crate) fn portable_kernels(
        &mut self,
        gpu: &Gpu,
        transport: &ParamsTransport,
    ) -> Result<&Kernels, Error> {
        if self.kernels.is_none() {
            let scope = OpScope::enter(gpu);
            let mut cache = self.cache.clone();
            let (kernels, _) =
                build_kernels(gpu, &self.program, &self.bound, transport, &mut cache, None);
            let graph = self.desc.name.to_string();
            scope.finish_with(Ok(()), |reason| Error::Bake {
                graph,
                reason: format!("the portable recorder's pipelines: {reason}"),
            })?;
            self.cache = cache;
            self.kernels = Some(kernels);
        }
        self.kernels.as_ref().ok_or_else(|| Error::Bake {
            graph: self.desc.name.to_string(),
            reason: "the portable recorder's pipelines were not made".into(),
        })
    }
}
