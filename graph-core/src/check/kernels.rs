//! Kernels: each one's WGSL, composed with its declarations, validated by naga and held to what the graph
//! says of it.

use super::sizes::SizeUse;
use super::values::ValueOf;
use super::{CheckedDispatch, CheckedKernel, CheckedRange, Checker, SizeProgram, Space};
use crate::deps::BufferAccess;
use crate::desc::GridDesc;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{
    AccessMode, DispatchSpec, Kernel, KernelSource, NodeKind, ParamsStorage, WorkgroupLimits,
};
use crate::layout::ParamsLayout;
use crate::library::{GENERIC, GridReach, LibraryKernel};
use crate::names::{escaped, unknown};
use crate::size::{SizeOp, SizeStep};
use crate::texture::{SampleKind, TexelFormat};
use crate::types::ValueType;
use crate::wgsl::{self, Composed, Segment, WgslError};

/// WebGPU's default compute limits, which every backend offers: invocations per workgroup in x, y and z, and
/// in all.
pub const PORTABLE_WORKGROUP: ([u32; 3], u32) = ([256, 256, 64], 256);

impl Checker<'_> {
    /// Each kernel's WGSL, composed with its declarations, validates with naga and matches what the graph says
    /// of it: parameters it names exist, one compute entry point is chosen, and each binding is used as
    /// declared. Fills become the built-in fill kernel for their buffer's element type.
    pub(super) fn check_kernels(&mut self) -> Vec<Option<CheckedKernel>> {
        let layout = self.params_layout();
        let graph = self.graph;
        (0..graph.nodes.len())
            .map(|n| match &graph.nodes[n].kind {
                NodeKind::Kernel(kernel) => self.check_kernel(n, kernel, &layout),
                NodeKind::Fill { value, .. } => self.check_fill(n, value, &layout),
                NodeKind::Copy { .. }
                | NodeKind::Upload { .. }
                | NodeKind::Readback { .. }
                | NodeKind::Host { .. }
                | NodeKind::Interop { .. }
                | NodeKind::Empty {}
                | NodeKind::Barrier {}
                | NodeKind::Subgraph { .. } => None,
            })
            .collect()
    }

    /// What each binding holds: a buffer of its type, a texture of its declared type, or a sampler.
    fn resources(&self, bindings: &[BufferAccess], types: &[ValueType]) -> Vec<wgsl::Resource> {
        bindings
            .iter()
            .zip(types)
            .map(
                |(b, &t)| match (self.textures[b.buffer], self.samplers[b.buffer]) {
                    (Some(texture), _) => wgsl::Resource::Texture(texture),
                    (_, Some(sampler)) => wgsl::Resource::Sampler(sampler),
                    (None, None) => wgsl::Resource::Buffer(t),
                },
            )
            .collect()
    }

    /// Whether kernels can be validated at all: with a parameter refused, the struct they see is not the
    /// graph's, and naga would only repeat that error.
    pub(super) fn params_usable(&self) -> bool {
        self.param_types.iter().all(Option::is_some) && !self.badly_named_params
    }

    /// The values given to kernel `n`'s `override` constants (`declared` by its WGSL), each resolved to a
    /// program over buffer lengths keyed as the pipeline names the constant; every `override` without a
    /// default needs one. `None` after reporting each problem.
    fn check_overrides(
        &mut self,
        n: usize,
        kernel: &Kernel,
        declared: &[crate::wgsl::OverrideInfo],
        layout: &ParamsLayout,
    ) -> Option<Vec<(String, SizeProgram)>> {
        let node = self.graph.nodes[n].name.clone();
        let first_slot = kernel.dispatch.dims().len();
        let (mut out, mut ok, mut misnamed) = (Vec::new(), true, false);
        for (i, given) in kernel.overrides.iter().enumerate() {
            let slot = first_slot + i;
            let loc = Loc::SizeTerm {
                node: n,
                dim: slot,
                term: 0,
            };
            let name = &given.name;
            if kernel.overrides[..i].iter().any(|o| o.name == *name) {
                self.diags.push(Diagnostic::new(
                    loc,
                    format!("kernel `{node}` gives override `{name}` twice"),
                ));
                ok = false;
                continue;
            }
            let Some(info) = declared.iter().find(|d| d.name == *name) else {
                let known: Vec<&str> = declared.iter().map(|d| d.name.as_str()).collect();
                let help = match crate::names::did_you_mean(name, known.iter().copied()) {
                    Some(near) => format!("did you mean `{near}`?"),
                    None if known.is_empty() => {
                        format!("declare it in the kernel's WGSL: `override {name}: u32;`")
                    }
                    None => format!("its WGSL declares `{}`", known.join("`, `")),
                };
                self.diags.push(
                    Diagnostic::new(loc, format!("kernel `{node}` has no override `{name}`"))
                        .with_help(help),
                );
                (ok, misnamed) = (false, true);
                continue;
            };
            if !info.unsigned {
                self.diags.push(
                    Diagnostic::new(
                        loc,
                        format!(
                            "override `{name}` of kernel `{node}` has type `{}`, but a size gives a `u32`",
                            info.ty
                        ),
                    )
                    .with_help(format!("declare it `override {name}: u32;`")),
                );
                ok = false;
                continue;
            }
            match self.resolve_size(n, slot, &given.value, layout, SizeUse::Override) {
                Some(program) => out.push((info.key.clone(), program)),
                None => ok = false,
            }
        }
        // A misnamed value is most likely the missing one's: one error, not two.
        for d in declared.iter().filter(|_| !misnamed) {
            if !d.has_default && !kernel.overrides.iter().any(|o| o.name == d.name) {
                self.diags.push(
                    Diagnostic::new(
                        Loc::Node(n),
                        format!(
                            "override `{}` of kernel `{node}` has no value: its WGSL gives none",
                            d.name
                        ),
                    )
                    .with_help(format!(
                        "give it one with `overrides({}: ..)`, or a default in the WGSL",
                        d.name
                    )),
                );
                ok = false;
            }
        }
        ok.then_some(out)
    }

    fn check_kernel(
        &mut self,
        n: usize,
        kernel: &Kernel,
        layout: &ParamsLayout,
    ) -> Option<CheckedKernel> {
        // Sizes first: their mistakes are independent of the kernel's WGSL.
        let sizes = match &kernel.dispatch {
            DispatchSpec::Auto | DispatchSpec::Indirect(_) => None,
            spec => Some(self.resolve_sizes(n, spec, layout)),
        };
        let bindings: Vec<BufferAccess> =
            self.accesses[n].iter().copied().collect::<Option<_>>()?;
        if bindings
            .iter()
            .any(|b| self.badly_named_buffers.contains(&b.buffer))
            || self.badly_named_bindings.contains(&n)
        {
            return None;
        }
        let names: Vec<&str> = kernel.accesses.iter().map(|a| a.binding.as_str()).collect();
        let types: Vec<ValueType> = bindings
            .iter()
            .map(|b| self.buffer_types[b.buffer])
            .collect::<Option<_>>()?;
        let library = self.library_kernels[n];
        let (source, file) = match (&kernel.source, library) {
            (KernelSource::Wgsl { text, file }, _) => (text.clone(), file.as_deref()),
            (KernelSource::Library(_), Some(lib)) => (lib.source.to_string(), None),
            (KernelSource::Library(_), None) => return None,
        };
        if self.check_no_nul(n, &source, file) {
            return None;
        }
        let unknown_params = self.check_param_uses(n, &source, file);
        // Each argument is one expression of its type, checked alone before it joins the module.
        let args = match library {
            Some(lib) => self.check_library_args(n, kernel, lib)?,
            None => {
                self.check_no_args(n, kernel);
                Vec::new()
            }
        };
        if unknown_params || !self.params_usable() {
            return None;
        }
        let params_struct = layout.wgsl_struct();
        let atomic: Vec<&str> = library.map_or_else(Vec::new, |lib| {
            lib.bindings
                .iter()
                .filter(|b| b.atomic)
                .map(|b| b.name)
                .collect()
        });
        let resources = self.resources(&bindings, &types);
        let declarations = wgsl::resource_declarations(
            names
                .iter()
                .zip(&bindings)
                .zip(&resources)
                .map(|((name, b), r)| (*name, *r, b.mode)),
            &atomic,
        );
        let composed = wgsl::compose(
            &declarations,
            &params_struct,
            &layout.f16_params(),
            Some(self.graph.params_storage),
            &arg_refs(&args),
            &source,
        );
        let reflection = match wgsl::validate(&composed.source) {
            Ok(r) => r,
            Err(e) => {
                let store_to_read = library.is_none()
                    && self.report_write_to_read(
                        n,
                        kernel,
                        &names,
                        &bindings,
                        &resources,
                        &composed,
                        &e,
                        &params_struct,
                        &source,
                    );
                if !store_to_read {
                    self.report_wgsl_error(n, &composed, &e, file);
                }
                return None;
            }
        };
        self.check_other_storage(n, &declarations, &params_struct, &arg_refs(&args), &source);
        let entry_index =
            self.choose_entry_point(n, &reflection.entry_points, kernel.entry.as_deref())?;
        let detail = &reflection.details[entry_index];
        if self.check_kernel_resources(n, &composed, &reflection, &names) {
            return None;
        }
        // A workgroup sized by overrides (`@workgroup_size(w)`, `overrides(w: x.len() / 8)`) is known at
        // bake, which checks it against the device (`KernelDesc::workgroup_size` holds 0 on those axes).
        if let Some(Err(what)) = &detail.workgroup_size_overrides {
            self.diags.push(
                Diagnostic::new(
                    Loc::Node(n),
                    format!(
                        "kernel `{}` sizes its workgroup with {what}, which the graph cannot compute at bake",
                        self.graph.nodes[n].name
                    ),
                )
                .with_help(
                    "name one `override` on each axis it sizes (`@workgroup_size(width, 1)`) and give its \
                     value in `overrides(width: x.len() / 8)`",
                ),
            );
            return None;
        }
        let sized_by_overrides = detail.workgroup_size_overrides.is_some();
        if library.is_none() {
            self.check_binding_uses(n, &bindings, detail);
            self.check_filtering(n, &bindings, detail);
            self.check_workgroup_size(n, &source, file, detail.workgroup_size);
        }
        let overrides = self.check_overrides(n, kernel, &reflection.overrides, layout);
        let indirect = match &kernel.dispatch {
            DispatchSpec::Indirect(_) => Some(self.indirect.get(n).copied().flatten()?),
            _ => None,
        };
        let overrides = overrides?;
        let dispatch = match (sizes, indirect) {
            (_, Some(b)) => CheckedDispatch::Indirect(b),
            (Some(sizes), None) => match &kernel.dispatch {
                DispatchSpec::Workgroups(_) => CheckedDispatch::Workgroups(sizes?),
                _ => CheckedDispatch::Threads(sizes?),
            },
            (None, None) => match sized_by(library, kernel, &bindings) {
                Some(b) if self.textures[b.buffer].is_some() => {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::Node(n),
                            format!(
                                "kernel `{}` writes texture `{}` first, and a texture has no length to size it by",
                                self.graph.nodes[n].name, self.graph.buffers[b.buffer].name
                            ),
                        )
                        .with_help(format!(
                            "give it `threads(..)` over the texture's size, as `threads({0}.width(), {0}.height())`, \
                             or `workgroups(..)`",
                            self.graph.buffers[b.buffer].name
                        )),
                    );
                    return None;
                }
                Some(b) => {
                    let (per, most) =
                        library.map_or((1, 0), |l| (l.per_invocation, l.most_invocations));
                    match (per, most) {
                        (0 | 1, 0) => CheckedDispatch::BufferLen(b.buffer),
                        _ => CheckedDispatch::Threads(vec![default_threads(
                            &self.graph.buffers[b.buffer].name,
                            b.buffer as u32,
                            per.max(1),
                            most,
                        )]),
                    }
                }
                None => {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::Node(n),
                            format!(
                                "kernel `{}` writes no buffer, so its size cannot be inferred",
                                self.graph.nodes[n].name
                            ),
                        )
                        .with_help("give it `threads(..)` or `workgroups(..)`"),
                    );
                    return None;
                }
            },
        };
        // The neighbourhood proofs look at storage buffers only: a kernel over a texture or a sampler runs
        // in no tiled group. The pointwise proof reads texels too (at the invocation's own coordinate).
        let textured = resources
            .iter()
            .any(|r| !matches!(r, wgsl::Resource::Buffer(_)));
        // Fusion's modules (cached elements, wide invocations, tiles) are written for elements WGSL indexes
        // one by one in 32 bits: a kernel over `f16` or packed `u8`/`u16` elements runs alone.
        let narrow = resources.iter().any(
            |r| matches!(r, wgsl::Resource::Buffer(t) if t.is_f16() || t.scalar.packed().is_some()),
        );
        let distinct = !narrow
            && !sized_by_overrides
            && detail
                .pointwise
                .is_some_and(|p| p.distinct_in(detail.workgroup_size, dispatch.one_along()));
        let grid = match library {
            Some(l) => grid_reach(l, &args),
            None => detail.grid.as_ref().and_then(user_grid),
        };
        Some(CheckedKernel {
            bindings,
            declarations,
            args,
            source,
            overrides,
            entry: reflection.entry_points[entry_index].clone(),
            workgroup_size: detail.workgroup_size,
            dispatch,
            pointwise: distinct && library.is_none_or(|l| l.pointwise),
            reach: detail
                .reach
                .filter(|_| !textured && !narrow && !sized_by_overrides),
            grid: grid.filter(|_| !textured && !narrow && !sized_by_overrides),
            foldable: library.is_some(),
            range: None,
        })
    }

    /// The library's arguments in its order, each given once (as [`Checker::check_library_bindings`] made
    /// sure), as `(name, WGSL type, expression)`; `None` when one is not a value of its type.
    fn check_library_args(
        &mut self,
        n: usize,
        kernel: &Kernel,
        lib: &LibraryKernel,
    ) -> Option<Vec<(String, String, String)>> {
        let mut args = Vec::new();
        let mut refused = false;
        for a in lib.args {
            let Some(index) = kernel.args.iter().position(|g| g.name == a.name) else {
                continue;
            };
            let ty = self.library_arg_type(n, lib, a.ty);
            let of = ValueOf::Argument {
                name: a.name,
                path: lib.path,
            };
            let loc = Loc::KernelArg { node: n, index };
            match self.check_value(loc, &kernel.args[index].wgsl, &ty, of) {
                Some(expression) => args.push((a.name.to_string(), ty, expression)),
                None => refused = true,
            }
        }
        (!refused).then_some(args)
    }

    /// A kernel's WGSL holds no NUL. naga takes one in a comment, but a validating device gets the source
    /// inside the SPIR-V (wgpu's debug information), whose strings a NUL ends: the module is then invalid
    /// there. Returns whether one was found.
    fn check_no_nul(&mut self, n: usize, source: &str, file: Option<&str>) -> bool {
        let Some(at) = source.find('\0') else {
            return false;
        };
        let range = at..at + 1;
        let mut d = Diagnostic::new(
            Loc::Wgsl {
                node: n,
                range: range.clone(),
            },
            format!(
                "the WGSL of kernel `{}` holds a NUL character, which ends a string in the SPIR-V it \
                 becomes",
                self.graph.nodes[n].name
            ),
        )
        .with_help("remove it");
        if let Some(path) = file {
            d = d.with_note(snippet(source, &range, path));
        }
        self.diags.push(d);
        true
    }

    /// A kernel of WGSL of its own takes no arguments (only a graph file can give it some): they would be
    /// dropped without a word.
    fn check_no_args(&mut self, n: usize, kernel: &Kernel) {
        if let Some(first) = kernel.args.first() {
            self.diags.push(
                Diagnostic::new(
                    Loc::KernelArg { node: n, index: 0 },
                    format!(
                        "kernel `{}` is WGSL of its own and takes no arguments, but is given `{}`",
                        self.graph.nodes[n].name,
                        escaped(&first.name)
                    ),
                )
                .with_help(
                    "arguments are for library kernels (`kernels::scale`); a kernel of its own reads \
                     parameters as `params.NAME`",
                ),
            );
        }
    }

    /// A fill's value is one WGSL expression of its buffer's element type, exactly: no conversion hides a
    /// parameter of another type.
    fn check_fill(
        &mut self,
        n: usize,
        value: &str,
        layout: &ParamsLayout,
    ) -> Option<CheckedKernel> {
        let target = self.accesses[n].first().copied().flatten()?;
        let elem = self.buffer_types[target.buffer]?;
        if let Some(texture) = self.textures[target.buffer] {
            return self.check_texture_fill(n, target, texture, value, layout);
        }
        let ranged = matches!(
            &self.graph.nodes[n].kind,
            NodeKind::Fill { range: Some(_), .. }
        );
        let range = match self.ranges.get(n).cloned().flatten()?.pop() {
            Some(range) if ranged => Some(range),
            _ => None,
        };
        let source = match (range.is_some(), elem.scalar.packed()) {
            (_, Some(per_word)) => crate::fill::packed_wgsl(per_word),
            (true, None) => crate::fill::RANGE_WGSL.to_string(),
            (false, None) => crate::fill::WGSL.to_string(),
        };
        let declarations =
            wgsl::binding_declarations([(crate::fill::BINDING, elem, AccessMode::Write)], &[]);
        let args = self.fill_module(n, target, elem, value, layout, &declarations, &source)?;
        Some(CheckedKernel {
            overrides: Vec::new(),
            bindings: vec![target],
            declarations,
            args,
            source,
            entry: crate::fill::ENTRY.to_string(),
            workgroup_size: [crate::fill::WORKGROUP, 1, 1],
            dispatch: match &range {
                Some(r) => CheckedDispatch::Threads(vec![range_len(r)]),
                None => CheckedDispatch::BufferLen(target.buffer),
            },
            // A fill of `f16` or packed elements runs alone, as kernels over them do.
            pointwise: !elem.is_f16() && elem.scalar.packed().is_none(),
            reach: None,
            grid: None,
            foldable: true,
            range,
        })
    }

    /// A fill's value checked as `elem` (its target's element type), and the fill's module (`declarations`
    /// and `source` with the value) validated: the module's arguments, or `None` once a problem is reported.
    #[allow(clippy::too_many_arguments)]
    fn fill_module(
        &mut self,
        n: usize,
        target: BufferAccess,
        elem: ValueType,
        value: &str,
        layout: &ParamsLayout,
        declarations: &str,
        source: &str,
    ) -> Option<Vec<(String, String, String)>> {
        let of = ValueOf::Fill {
            node: &self.graph.nodes[n].name,
            buffer: &self.graph.buffers[target.buffer].name,
            elem,
        };
        let loc = Loc::KernelArg { node: n, index: 0 };
        let expression = self.check_value(loc, value, &elem.value_wgsl(), of)?;
        if self.badly_named_buffers.contains(&target.buffer) {
            return None;
        }
        let args = vec![(
            crate::fill::VALUE.to_string(),
            elem.value_wgsl(),
            expression,
        )];
        let composed = wgsl::compose(
            declarations,
            &layout.wgsl_struct(),
            &layout.f16_params(),
            Some(self.graph.params_storage),
            &arg_refs(&args),
            source,
        );
        if let Err(e) = wgsl::validate(&composed.source) {
            // The value validated alone: what fails now is the fill's module itself.
            self.diags.push(Diagnostic::new(
                Loc::Node(n),
                format!(
                    "fill `{}` does not validate: {}",
                    self.graph.nodes[n].name, e.message
                ),
            ));
            return None;
        }
        Some(args)
    }

    /// The fill of a whole texture: the built-in texture fill of its dimension, storing the value (of the
    /// texels' `vec4`) into each texel, dispatched over the texture's size.
    fn check_texture_fill(
        &mut self,
        n: usize,
        target: BufferAccess,
        texture: crate::texture::TextureType,
        value: &str,
        layout: &ParamsLayout,
    ) -> Option<CheckedKernel> {
        let (source, workgroup_size) = crate::fill::texture_wgsl(texture.dim);
        let declarations = wgsl::resource_declarations(
            [(
                crate::fill::BINDING,
                wgsl::Resource::Texture(texture),
                AccessMode::Write,
            )],
            &[],
        );
        let args = self.fill_module(
            n,
            target,
            texture.texel_type(),
            value,
            layout,
            &declarations,
            source,
        )?;
        let name = &self.graph.buffers[target.buffer].name;
        // Width, height, and layers or depth, as far as the dimension has them.
        let dims = crate::size::Axis::ALL
            .into_iter()
            .filter(|&a| crate::texture::has_axis(texture.dim, a))
            .map(|axis| SizeProgram {
                text: format!("{name}.{}()", axis.method()),
                steps: vec![SizeStep::Extent {
                    texture: target.buffer as u32,
                    axis,
                }],
            })
            .collect();
        Some(CheckedKernel {
            overrides: Vec::new(),
            bindings: vec![target],
            declarations,
            args,
            source: source.to_string(),
            entry: crate::fill::ENTRY.to_string(),
            workgroup_size,
            dispatch: CheckedDispatch::Threads(dims),
            // Each invocation stores its own texel, over a launch of one invocation per texel (the pointwise
            // proof agrees: `fill`'s tests).
            pointwise: true,
            reach: None,
            grid: None,
            foldable: false,
            range: None,
        })
    }

    /// Without `#[device_limits]`, a kernel's workgroup fits WebGPU's defaults, which every backend offers.
    fn check_workgroup_size(&mut self, n: usize, source: &str, file: Option<&str>, size: [u32; 3]) {
        if self.graph.workgroup_limits == WorkgroupLimits::Device {
            return;
        }
        let (per_dim, total) = PORTABLE_WORKGROUP;
        let over_dim = (0..3).find(|&d| size[d] > per_dim[d]);
        let invocations = size.iter().map(|&d| u64::from(d)).product::<u64>();
        let problem = match over_dim {
            Some(d) => format!(
                "{} invocations in {}, over the portable limit of {}",
                size[d],
                ["x", "y", "z"][d],
                per_dim[d]
            ),
            None if invocations > u64::from(total) => {
                format!("{invocations} invocations in all, over the portable limit of {total}")
            }
            None => return,
        };
        let range = workgroup_attribute(source);
        let loc = range
            .clone()
            .map_or(Loc::KernelSource(n), |range| Loc::Wgsl { node: n, range });
        let mut d = Diagnostic::new(
            loc,
            format!(
                "kernel `{}` has workgroup size ({}, {}, {}): {problem}",
                self.graph.nodes[n].name, size[0], size[1], size[2]
            ),
        )
        .with_help(
            "every backend offers 256 invocations in x and y, 64 in z and 256 in all (WebGPU's defaults); \
             mark the graph `#[device_limits]` to check against the device's own limits at bake instead",
        );
        if let (Some(path), Some(range)) = (file, range) {
            d = d.with_note(snippet(source, &range, path));
        }
        self.diags.push(d);
    }

    /// The graph provides every resource a kernel sees: its listed buffers and `params`. A kernel that
    /// declares its own `@group @binding` variable would bind something the graph knows nothing about.
    /// Returns whether one was found.
    fn check_kernel_resources(
        &mut self,
        n: usize,
        composed: &Composed,
        reflection: &wgsl::Reflection,
        generated: &[&str],
    ) -> bool {
        let mut found = false;
        for (name, range) in &reflection.resources {
            if generated.contains(&name.as_str()) || name == "params" {
                continue;
            }
            found = true;
            let loc = match range.as_ref().map(|r| composed.locate(r)) {
                Some((Segment::User, rel)) => Loc::Wgsl {
                    node: n,
                    range: rel,
                },
                _ => Loc::Node(n),
            };
            self.diags.push(
                Diagnostic::new(
                    loc,
                    format!("kernel `{}` declares its own resource `{name}`", self.graph.nodes[n].name),
                )
                .with_help(
                    "declare buffers in the graph's `buffers { .. }` and list them in the kernel's access list; \
                     the macro declares them for the kernel",
                ),
            );
        }
        found
    }

    /// `params.x` names a declared parameter. Returns whether an unknown one was found.
    fn check_param_uses(&mut self, n: usize, source: &str, file: Option<&str>) -> bool {
        let mut found = false;
        for u in wgsl::param_uses(source) {
            if self.params.get(&u.name).is_none() {
                found = true;
                let loc = Loc::Wgsl {
                    node: n,
                    range: u.range.clone(),
                };
                let mut d = self.unknown_name(Space::Param, &u.name, loc);
                if let Some(path) = file {
                    d = d.with_note(snippet(source, &u.range, path));
                }
                self.diags.push(d);
            }
        }
        found
    }

    fn report_wgsl_error(
        &mut self,
        n: usize,
        composed: &Composed,
        e: &WgslError,
        file: Option<&str>,
    ) {
        let kernel = &self.graph.nodes[n].name;
        let (range, label) = e.labels.first().cloned().unwrap_or((0..0, String::new()));
        let (segment, rel) = composed.locate(&range);
        let loc = match segment {
            Segment::User => Loc::Wgsl {
                node: n,
                range: rel.clone(),
            },
            Segment::Arg(i) => self.arg_loc(n, i),
            Segment::Generated => Loc::KernelSource(n),
        };
        let mut message = format!("WGSL error in kernel `{kernel}`: {}", e.message);
        if !label.is_empty() && !e.message.contains(&label) {
            message.push_str(&format!(" ({label})"));
        }
        let argument = match (&segment, self.library_kernels[n]) {
            (Segment::Arg(i), Some(lib)) => lib.args.get(*i).map(|arg| (lib, arg)),
            _ => None,
        };
        let arg_type = argument.map(|(lib, arg)| self.library_arg_type(n, lib, arg.ty));
        if let (Some((lib, arg)), Some(ty)) = (argument, &arg_type) {
            let value = self.given_arg(n, arg.name).unwrap_or_default();
            message = match value_type_instead(composed, value, ty) {
                Some(actual) => format!(
                    "argument `{}` of `kernels::{}` takes a `{ty}`, but `{}` is a `{actual}`",
                    arg.name,
                    lib.path,
                    value.trim()
                ),
                None => format!(
                    "WGSL error in argument `{}` of `kernels::{}`: {}",
                    arg.name, lib.path, e.message
                ),
            };
        }
        let mut d = Diagnostic::new(loc, message);
        if let Some(help) = self.undeclared_name_help(n, &e.message) {
            d = d.with_help(help);
        }
        // The user's code comes after the generated declarations, so it cannot write `enable f16;` itself.
        if e.message.contains("`f16` enable extension") {
            d = d.with_help(
                "a kernel's module enables `f16` when the kernel binds a buffer of `f16` elements (`[f16]`, \
                 `[vec4<f16>]`) or the graph has an `f16` parameter; bake then needs a device with \
                 `SHADER_F16`",
            );
        }
        if let (Some((lib, arg)), Some(ty)) = (argument, &arg_type) {
            d = d.with_help(format!(
                "argument `{}` of `kernels::{}` takes a `{ty}`: a literal, or a parameter declared `{ty}`",
                arg.name, lib.path
            ));
        }
        match (segment, file) {
            (Segment::User, Some(path)) => d = d.with_note(snippet(&composed.user, &rel, path)),
            (Segment::Generated, _) => d = d.with_note(e.rendered.clone()),
            _ => {}
        }
        self.diags.push(d);
    }

    /// naga's "no definition in scope" for a name the graph declares: how to bring it into the kernel.
    fn undeclared_name_help(&self, n: usize, message: &str) -> Option<String> {
        let name = message
            .strip_prefix("no definition in scope for identifier: `")?
            .strip_suffix('`')?;
        let kernel = &self.graph.nodes[n].name;
        if self.buffers.get(name).is_some() {
            Some(format!(
                "`{name}` is a buffer of the graph, but a kernel sees only the buffers it lists: add `{name}: read` \
                 (or `write`, `read_write`) to `kernel {kernel}(..)`"
            ))
        } else if self.params.get(name).is_some() {
            Some(format!(
                "parameters are fields of `params`: write `params.{name}`"
            ))
        } else {
            None
        }
    }

    /// A kernel that validates with its parameters in push constants must also validate with them in a uniform
    /// buffer: the runtime falls back to one on a device without push constants (or with too few), so both
    /// forms are checked here, at compile time, rather than at some user's bake.
    fn check_other_storage(
        &mut self,
        n: usize,
        declarations: &str,
        params_struct: &str,
        args: &[(&str, &str, &str)],
        source: &str,
    ) {
        if params_struct.is_empty() {
            return;
        }
        // A `#[uniform_params]` graph always gets a uniform buffer: only push constants fall back.
        if self.graph.params_storage == ParamsStorage::Uniform {
            return;
        }
        let layout = self.params_layout();
        let composed = wgsl::compose(
            declarations,
            params_struct,
            &layout.f16_params(),
            Some(ParamsStorage::Uniform),
            args,
            source,
        );
        if let Err(e) = wgsl::validate(&composed.source) {
            self.diags.push(
                Diagnostic::new(
                    Loc::Node(n),
                    format!(
                        "kernel `{}` does not validate with its parameters in a uniform buffer, where they go on \
                         devices without push constants: {}",
                        self.graph.nodes[n].name, e.message
                    ),
                )
                .with_help("read parameters as `params.NAME`, without pointers to `params`"),
            );
        }
    }

    /// naga rejects a store to a `read` storage buffer with a message about pointers. When the kernel validates
    /// with its `read` buffers made writable and then writes one of them, say that instead, at the store.
    #[allow(
        clippy::too_many_arguments,
        reason = "one call site, all of it context for one message"
    )]
    fn report_write_to_read(
        &mut self,
        n: usize,
        kernel: &crate::ir::Kernel,
        names: &[&str],
        bindings: &[BufferAccess],
        resources: &[wgsl::Resource],
        composed: &Composed,
        error: &WgslError,
        params_struct: &str,
        source: &str,
    ) -> bool {
        if !bindings.iter().any(|b| b.mode == AccessMode::Read) {
            return false;
        }
        // Every binding made writable: a texture then binds as a read-write storage texture, so that a
        // `textureStore` into one declared `read` validates (unless it is also sampled) and is found below.
        let widened = wgsl::resource_declarations(
            names
                .iter()
                .zip(resources)
                .map(|(name, r)| (*name, *r, AccessMode::ReadWrite)),
            &[],
        );
        let layout = self.params_layout();
        let retry = wgsl::compose(
            &widened,
            params_struct,
            &layout.f16_params(),
            Some(self.graph.params_storage),
            &[],
            source,
        );
        let Ok(reflection) = wgsl::validate(&retry.source) else {
            return false;
        };
        let chosen = match &kernel.entry {
            Some(e) => reflection.entry_points.iter().position(|x| x == e),
            None => (reflection.entry_points.len() == 1).then_some(0),
        };
        let Some(detail) = chosen.map(|i| &reflection.details[i]) else {
            return false;
        };
        let written_reads: Vec<usize> = (0..bindings.len())
            .filter(|&i| bindings[i].mode == AccessMode::Read)
            .filter(|&i| {
                detail
                    .binding_uses
                    .iter()
                    .any(|(b, u)| *b as usize == i && u.write)
            })
            .collect();
        let Some(&first) = written_reads.first() else {
            return false;
        };
        let store = error.labels.first().map(|(r, _)| composed.locate(r));
        let loc = match store {
            Some((Segment::User, rel)) => Loc::Wgsl {
                node: n,
                range: rel,
            },
            _ => Loc::AccessMode {
                node: n,
                index: first,
            },
        };
        let name = names[first];
        self.diags.push(
            Diagnostic::new(
                loc,
                format!("kernel `{}` writes `{name}`, which it declares `read`", self.graph.nodes[n].name),
            )
            .with_help(format!("declare `{name}: read_write` (or `{name}: write` if the kernel overwrites it without reading)")),
        );
        true
    }

    /// The WGSL text the user gave library argument `name` of kernel `n`.
    fn given_arg(&self, n: usize, name: &str) -> Option<&str> {
        let NodeKind::Kernel(kernel) = &self.graph.nodes[n].kind else {
            return None;
        };
        kernel
            .args
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.wgsl.as_str())
    }

    /// The location of library argument `i` (in library order) as the user wrote it.
    fn arg_loc(&self, n: usize, i: usize) -> Loc {
        let NodeKind::Kernel(kernel) = &self.graph.nodes[n].kind else {
            return Loc::Node(n);
        };
        let name = self.library_kernels[n]
            .and_then(|l| l.args.get(i))
            .map(|a| a.name);
        kernel
            .args
            .iter()
            .position(|a| Some(a.name.as_str()) == name)
            .map_or(Loc::KernelSource(n), |index| Loc::KernelArg {
                node: n,
                index,
            })
    }

    /// Exactly one compute entry point, or the one `entry(..)` names.
    fn choose_entry_point(
        &mut self,
        n: usize,
        names: &[String],
        chosen: Option<&str>,
    ) -> Option<usize> {
        let kernel = &self.graph.nodes[n].name;
        match (chosen, names.len()) {
            // Refused as a name already (`check_identifiers`): no function of the WGSL can have it.
            (Some(name), _) if !crate::names::is_identifier(name) => None,
            (Some(name), _) => {
                let found = names.iter().position(|e| e == name);
                if found.is_none() {
                    let mut d = unknown(
                        Loc::KernelEntry(n),
                        "entry point",
                        name,
                        names.iter().map(String::as_str),
                    );
                    d.message = crate::names::visible(&format!(
                        "kernel `{kernel}` has no compute entry point `{name}`"
                    ));
                    self.diags.push(d);
                }
                found
            }
            (None, 1) => Some(0),
            (None, 0) => {
                self.diags.push(
                    Diagnostic::new(Loc::KernelSource(n), format!("kernel `{kernel}` has no `@compute` entry point"))
                        .with_help("add one, such as `@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) { .. }`"),
                );
                None
            }
            (None, _) => {
                let list = names
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.diags.push(
                    Diagnostic::new(
                        Loc::KernelSource(n),
                        format!("kernel `{kernel}` has several compute entry points ({list}) and does not say which to run"),
                    )
                    .with_help(format!("choose one with `entry({})`", names[0])),
                );
                None
            }
        }
    }

    /// The declared access matches the entry point's real use: edges are inferred from the declaration, so a
    /// declaration wider than the use orders nodes for nothing, and a narrower one hides a dependency.
    fn check_binding_uses(
        &mut self,
        n: usize,
        bindings: &[BufferAccess],
        detail: &wgsl::EntryPointDetail,
    ) {
        let kernel = &self.graph.nodes[n].name;
        for (i, b) in bindings.iter().enumerate() {
            let used = detail
                .binding_uses
                .iter()
                .find(|(index, _)| *index as usize == i)
                .map(|(_, u)| *u)
                .unwrap_or_default();
            let name = &self.graph.buffers[b.buffer].name;
            let loc = Loc::AccessMode { node: n, index: i };
            let problem = if !used.read && !used.write && !used.query {
                Some((
                    format!(
                        "kernel `{kernel}` declares `{name}` but its entry point never uses it"
                    ),
                    format!("remove `{name}` from the list"),
                ))
            } else if b.mode == AccessMode::Write && used.read {
                Some((
                    format!(
                        "kernel `{kernel}` reads `{name}`, which it declares `write` (overwrite without reading)"
                    ),
                    "declare it `read_write`".to_string(),
                ))
            } else if b.mode.writes() && !used.write {
                Some((
                    format!(
                        "kernel `{kernel}` never writes `{name}`, which it declares `{}`",
                        b.mode.keyword()
                    ),
                    "declare it `read`".to_string(),
                ))
            } else {
                None
            };
            if let Some((message, help)) = problem {
                self.diags
                    .push(Diagnostic::new(loc, message).with_help(help));
            }
        }
    }
}

impl Checker<'_> {
    /// A filtering sampler blends texels, which every device does only for formats of filterable floats: a
    /// kernel that samples a 32-bit float texture with one is refused (devices with `FLOAT32_FILTERABLE`
    /// could, the others would fail at bake), at the texture's access.
    fn check_filtering(
        &mut self,
        n: usize,
        bindings: &[BufferAccess],
        detail: &wgsl::EntryPointDetail,
    ) {
        let kernel = &self.graph.nodes[n].name;
        for &(image, sampler) in &detail.sampled {
            let (Some(t), Some(s)) = (bindings.get(image as usize), bindings.get(sampler as usize))
            else {
                continue;
            };
            let (Some(texture), Some(filter)) = (self.textures[t.buffer], self.samplers[s.buffer])
            else {
                continue;
            };
            if !filter.filtering() || texture.format.sample_kind() == SampleKind::Float {
                continue;
            }
            let (t_name, s_name) = (
                &self.graph.buffers[t.buffer].name,
                &self.graph.buffers[s.buffer].name,
            );
            let filterable: Vec<&str> = TexelFormat::ALL
                .into_iter()
                .filter(|f| f.sample_kind() == SampleKind::Float)
                .map(TexelFormat::wgsl)
                .collect();
            self.diags.push(
                Diagnostic::new(
                    Loc::Access {
                        node: n,
                        index: image as usize,
                    },
                    format!(
                        "kernel `{kernel}` samples `{t_name}` ({}) with `{s_name}` (`{filter}`), which blends \
                         texels, and only devices with FLOAT32_FILTERABLE filter a 32-bit float format",
                        texture.format
                    ),
                )
                .with_help(format!(
                    "sample it with a `nearest` sampler, read it with `textureLoad`, or give it a format every \
                     device filters: {}",
                    filterable.join(", ")
                )),
            );
        }
    }
}

/// `path:line:column`, the line, and a caret under `range`: for WGSL that is not tokens in the user's file.
fn snippet(text: &str, range: &std::ops::Range<usize>, path: &str) -> String {
    let start = range.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line_no = text[..start].matches('\n').count() + 1;
    let column = text[line_start..start].chars().count() + 1;
    let width = text[start..range.end.clamp(start, line_end)]
        .chars()
        .count()
        .max(1);
    format!(
        "{path}:{line_no}:{column}\n  | {}\n  | {}{}",
        &text[line_start..line_end],
        " ".repeat(column - 1),
        "^".repeat(width)
    )
}

/// The type `value` really has in `composed`'s declarations, when it is valid WGSL of a type other than
/// `wanted`.
fn value_type_instead(composed: &Composed, value: &str, wanted: &str) -> Option<String> {
    wgsl::expression_type(composed.prelude(), value).filter(|actual| actual != wanted)
}

/// A library image kernel's shape ([`LibraryKernel::grid`]), with its reach when the arguments it depends on
/// are literals; `None` for other kernels.
fn grid_reach(lib: &LibraryKernel, args: &[(String, String, String)]) -> Option<GridDesc> {
    let shape = lib.grid?;
    let reach = |r: GridReach| match r {
        GridReach::Fixed(v) => Some(v),
        GridReach::Arg(name) => {
            let (_, _, value) = args.iter().find(|(arg, _, _)| arg == name)?;
            wgsl::value::literal_u32(value)
        }
    };
    Some(GridDesc {
        reach: reach(shape.x).zip(reach(shape.y)).map(|(x, y)| [x, y]),
        image: None,
    })
}

/// A user kernel the image-neighbourhood proof found ([`wgsl::grid`]), when it may tile: it computes a pixel
/// whatever the pixel's place, its reads clamped at the image's edges, and reads the image's sizes from two
/// different parameters (a tiled kernel gives it the tile's sizes there). Any other runs alone: in a tile it
/// would have to be told where each of its reads lies, a division per read, and a chain of two steps run so
/// took 13.1-16.5 us against 7.7-9.0 as two dispatches on the H100 (128 x 128 to 512 x 512 pixels).
fn user_grid(proof: &wgsl::grid::GridProof) -> Option<GridDesc> {
    let size = |s: &wgsl::grid::ImageSize| match s {
        wgsl::grid::ImageSize::Literal(_) => None,
        wgsl::grid::ImageSize::Param(name) => Some(format!("params.{name}").into()),
    };
    // One parameter for both sizes would be both of the tile's sizes at once.
    if !proof.position_free || proof.width == proof.height {
        return None;
    }
    Some(GridDesc {
        reach: Some(proof.reach),
        image: Some([size(&proof.width)?, size(&proof.height)?]),
    })
}

fn arg_refs(args: &[(String, String, String)]) -> Vec<(&str, &str, &str)> {
    args.iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect()
}

/// The byte range of the first `@workgroup_size(..)` attribute in a kernel's text, to point at.
fn workgroup_attribute(source: &str) -> Option<std::ops::Range<usize>> {
    let start = source.find("workgroup_size")?;
    let start = source[..start]
        .rfind('@')
        .filter(|&at| source[at + 1..start].trim().is_empty())
        .unwrap_or(start);
    let end = source[start..]
        .find(')')
        .map_or(source.len(), |close| start + close + 1);
    Some(start..end)
}

/// The number of elements of a range: `end - start`, as a program.
fn range_len(range: &CheckedRange) -> SizeProgram {
    let mut steps = range.end.steps.clone();
    steps.extend_from_slice(&range.start.steps);
    steps.push(SizeStep::Op(SizeOp::Sub));
    SizeProgram {
        text: format!("({}) - ({})", range.end.text, range.start.text),
        steps,
    }
}

impl Checker<'_> {
    /// The WGSL type of a library argument of node `n`: as the library declares it, or for a generic one
    /// the element type of the node's first generic binding.
    fn library_arg_type(&self, n: usize, lib: &LibraryKernel, ty: &str) -> String {
        if ty != GENERIC {
            return ty.to_string();
        }
        let NodeKind::Kernel(kernel) = &self.graph.nodes[n].kind else {
            return ty.to_string();
        };
        lib.bindings
            .iter()
            .filter(|b| b.elem == GENERIC)
            .find_map(|b| {
                let i = kernel.accesses.iter().position(|a| a.binding == b.name)?;
                let access = self.accesses[n].get(i).copied().flatten()?;
                self.buffer_types[access.buffer]
            })
            .map_or_else(|| ty.to_string(), |t| t.wgsl())
    }
}

/// The binding a kernel without a dispatch clause runs one invocation per element of: the one its library
/// metadata names, else the first it writes.
fn sized_by<'b>(
    library: Option<&LibraryKernel>,
    kernel: &Kernel,
    bindings: &'b [BufferAccess],
) -> Option<&'b BufferAccess> {
    match library.and_then(|l| l.sized_by) {
        Some(name) => kernel
            .accesses
            .iter()
            .position(|a| a.binding == name)
            .and_then(|i| bindings.get(i)),
        None => bindings.iter().find(|b| b.mode.writes()),
    }
}

/// A library kernel's default dispatch over buffer `buffer` (named `name`): one invocation per `per`
/// elements, at most `most` of them where `most` is not 0.
fn default_threads(name: &str, buffer: u32, per: u32, most: u32) -> SizeProgram {
    let mut text = format!("{name}.len().div_ceil({per})");
    let mut steps = vec![
        SizeStep::Len(buffer),
        SizeStep::Literal(per),
        SizeStep::Op(SizeOp::DivCeil),
    ];
    if most > 0 {
        text = format!("min({text}, {most})");
        steps.extend([SizeStep::Literal(most), SizeStep::Op(SizeOp::Min)]);
    }
    SizeProgram { text, steps }
}
