//! Textures and samplers: what may use one, and how. Kernels of the graph's own WGSL bind textures (library
//! kernels bind arrays); fills, copies, uploads and readbacks take them whole; interop tasks get them;
//! subgraphs bind them to their own textures; host tasks read and write their texels. A kernel
//! may bind a texture as its declaration allows, and as storage only where every device can (WebGPU's
//! portable formats), else the error names the feature it would need; a kernel writing a texture of a size
//! known in texels over literal `threads(..)` covers it. A sampler is only read, by kernels of the graph's own
//! WGSL; which textures each samples, and whether their formats can be filtered, is checked with the kernel's
//! WGSL (`kernels.rs`).

use super::Checker;
use crate::desc::{AxisSizeDesc, TextureSizeDesc};
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{AccessMode, KernelSource, NodeKind, Role};
use crate::texture::{AxisSize, StorageAccess, StorageSupport, TexelFormat, TextureSize};

impl Checker<'_> {
    /// Each texture's declared size, resolved: another texture's name to that texture, of the same
    /// dimension, without a chain of sizes going round. A graph-owned texture must have a size, since the
    /// graph makes it at bake.
    pub(super) fn check_texture_sizes(&mut self) {
        let graph = self.graph;
        let texture_names: Vec<&str> = graph
            .buffers
            .iter()
            .zip(&self.textures)
            .filter(|(_, t)| t.is_some())
            .map(|(b, _)| b.name.as_str())
            .collect();
        for (i, b) in graph.buffers.iter().enumerate() {
            let Some(texture) = self.textures[i] else {
                continue;
            };
            let size = match self.declared_texture_sizes[i].clone() {
                None => {
                    if b.role == Role::Owned {
                        let declared = texture.declared();
                        let sized = |size: &str| {
                            let open = declared.len() - 1;
                            format!("{}: {}; {size}>", b.name, &declared[..open])
                        };
                        let example = match texture.dim.extent_count() {
                            1 => "256",
                            2 => "256, 256",
                            _ => "256, 256, 4",
                        };
                        self.diags.push(
                            Diagnostic::new(
                                Loc::Buffer(i),
                                format!("graph-owned texture `{}` needs a size", b.name),
                            )
                            .with_help(format!(
                                "write `{}` (texels), or `{}` for another texture's size, or bind it from \
                                 outside with `= input`, `= output` or `= inout`",
                                sized(example),
                                sized("frame")
                            )),
                        );
                    }
                    continue;
                }
                Some(TextureSize::Axes(axes)) => match self.axis_sizes(i, &axes) {
                    Some(size) => size,
                    None => continue,
                },
                Some(TextureSize::Like(name)) => {
                    let found = self
                        .buffers
                        .get(&name)
                        .filter(|&j| self.textures[j].is_some());
                    let Some(j) = found else {
                        self.diags.push(crate::names::unknown(
                            Loc::BufferType(i),
                            "texture",
                            &name,
                            texture_names.iter().copied().filter(|&n| n != b.name),
                        ));
                        continue;
                    };
                    let other = self.textures[j].map(|t| (t.dim, t));
                    match other {
                        _ if j == i => {
                            self.diags.push(Diagnostic::new(
                                Loc::BufferType(i),
                                format!("texture `{}` is sized like itself", b.name),
                            ));
                            continue;
                        }
                        Some((dim, other)) if dim != texture.dim => {
                            self.diags.push(Diagnostic::new(
                                Loc::BufferType(i),
                                format!(
                                    "texture `{}` (`{texture}`) cannot have the size of `{name}` (`{other}`): \
                                     their dimensions differ",
                                    b.name
                                ),
                            ));
                            continue;
                        }
                        _ => TextureSizeDesc::Like(j as u32),
                    }
                }
            };
            self.texture_sizes[i] = Some(size);
        }
        self.check_texture_size_cycles();
    }

    /// Texture `i`'s size along each axis, its parameters resolved to `u32` offsets: texels where no axis
    /// reads a parameter. `None` after reporting each problem: a parameter of another type, or one sizing a
    /// texture bound from outside (its size is the bound texture's, which a parameter would only repeat).
    fn axis_sizes(&mut self, i: usize, axes: &[AxisSize]) -> Option<TextureSizeDesc> {
        let layout = self.params_layout();
        let b = &self.graph.buffers[i];
        let mut sizes = [AxisSizeDesc::Texels(1); 3];
        let mut ok = true;
        for (slot, axis) in sizes.iter_mut().zip(axes) {
            *slot = match axis {
                AxisSize::Texels(n) => AxisSizeDesc::Texels(*n),
                AxisSize::Param { name, component } => {
                    let loc = Loc::BufferType(i);
                    match self.size_param(loc, name, *component, &layout, "texture sizes") {
                        Ok(offset) => AxisSizeDesc::Param(offset),
                        Err(()) => {
                            ok = false;
                            continue;
                        }
                    }
                }
            };
        }
        let reads_params = sizes.iter().any(|s| matches!(s, AxisSizeDesc::Param(_)));
        if reads_params && b.role != Role::Owned {
            self.diags.push(
                Diagnostic::new(
                    Loc::BufferType(i),
                    format!(
                        "texture `{}` is bound from outside, so its size is the bound texture's, not \
                         parameters",
                        b.name
                    ),
                )
                .with_help(format!(
                    "drop the size, and read `{0}.width()` (`height`, ..) where a size is needed; or make \
                     `{0}` graph-owned, without `= {1}`",
                    b.name,
                    b.role.keyword()
                )),
            );
            return None;
        }
        if !ok {
            return None;
        }
        Some(match reads_params {
            true => TextureSizeDesc::Params(sizes),
            false => TextureSizeDesc::Texels(sizes.map(|s| match s {
                AxisSizeDesc::Texels(n) => n,
                AxisSizeDesc::Param(_) => 1,
            })),
        })
    }

    /// A chain of textures each sized like the next that comes back round has no size: reported once, at
    /// its first texture.
    fn check_texture_size_cycles(&mut self) {
        let graph = self.graph;
        for i in 0..graph.buffers.len() {
            let mut chain = vec![i];
            let mut at = i;
            while let Some(TextureSizeDesc::Like(next)) = self.texture_sizes[at] {
                at = next as usize;
                if chain.contains(&at) {
                    break;
                }
                chain.push(at);
            }
            let round = matches!(self.texture_sizes[at], Some(TextureSizeDesc::Like(_))) && at == i;
            if round && chain.iter().all(|&c| c >= i) {
                let names: Vec<&str> = chain
                    .iter()
                    .chain([&i])
                    .map(|&c| graph.buffers[c].name.as_str())
                    .collect();
                self.diags.push(Diagnostic::new(
                    Loc::BufferType(i),
                    format!(
                        "texture `{}` is sized by itself: {}",
                        graph.buffers[i].name,
                        names.join(" is sized like ")
                    ),
                ));
            }
        }
    }

    /// Each access to a texture is one a kernel of the graph's own WGSL may make; any other is reported and
    /// dropped, so that the checks after this one see buffers only where they expect buffers.
    pub(super) fn check_texture_uses(&mut self) {
        let graph = self.graph;
        for (n, node) in graph.nodes.iter().enumerate() {
            for (i, access) in node.accesses().iter().enumerate() {
                let Some(resolved) = self.accesses[n].get(i).copied().flatten() else {
                    continue;
                };
                if self.samplers[resolved.buffer].is_some() {
                    self.check_sampler_use(n, i, resolved.mode);
                    continue;
                }
                let Some(texture) = self.textures[resolved.buffer] else {
                    continue;
                };
                let name = &access.buffer;
                let in_block = graph
                    .blocks
                    .iter()
                    .any(|b| b.members().iter().any(|(_, m)| *m == node.name));
                let whole = match &node.kind {
                    NodeKind::Fill { range, .. } => range.is_none(),
                    NodeKind::Copy {
                        src_range,
                        dst_range,
                        ..
                    } => src_range.is_none() && dst_range.is_none(),
                    NodeKind::Upload { range, .. } | NodeKind::Readback { range, .. } => {
                        range.is_none()
                    }
                    _ => true,
                };
                let refusal = match &node.kind {
                    NodeKind::Kernel(k) => match &k.source {
                        KernelSource::Wgsl { .. } => {
                            self.check_texture_binding(n, i, name, texture, resolved.mode);
                            None
                        }
                        KernelSource::Library(path) => Some((
                            format!(
                                "library kernel `{path}` binds arrays, so `{}` cannot bind texture `{name}`",
                                node.name
                            ),
                            "write the kernel in WGSL over the texture".to_string(),
                        )),
                    },
                    NodeKind::Copy { .. }
                    | NodeKind::Upload { .. }
                    | NodeKind::Readback { .. }
                    | NodeKind::Fill { .. }
                        if !whole =>
                    {
                        Some((
                            format!(
                                "{} `{}` of texture `{name}` takes a range, and a texture is filled, copied, \
                                 uploaded and read back whole",
                                node.kind.keyword(),
                                node.name
                            ),
                            "leave the range out, or move the part in a kernel".to_string(),
                        ))
                    }
                    NodeKind::Copy { .. } | NodeKind::Upload { .. } | NodeKind::Readback { .. }
                        if in_block =>
                    {
                        Some((
                            format!(
                                "{} `{}` of texture `{name}` is under GPU control, where a texture's copies, \
                                 uploads and readbacks cannot be skipped yet",
                                node.kind.keyword(),
                                node.name
                            ),
                            "move it out of the block, or copy the texels in a kernel".to_string(),
                        ))
                    }
                    NodeKind::Copy { src, dst, .. } => {
                        // Once per copy: at its destination, the second access.
                        if i == 1 {
                            self.check_texture_copy(n, src, dst);
                        }
                        None
                    }
                    // A fill is a kernel storing into the texture, which may bind it as storage.
                    NodeKind::Fill { .. } => {
                        self.check_texture_binding(n, i, name, texture, AccessMode::Write);
                        None
                    }
                    // An interop task gets the wgpu texture, which it records its own work on; a host task
                    // reads and writes its texels (`HostContext::read_texels`).
                    NodeKind::Upload { .. }
                    | NodeKind::Readback { .. }
                    | NodeKind::Interop { .. }
                    | NodeKind::Host { .. } => None,
                    // A subgraph binds it to a texture of the child of the same declared type
                    // (`check/subgraphs.rs`); the child's own checks cover what its nodes do with it.
                    NodeKind::Subgraph { .. } => None,
                    other => Some((
                        format!(
                            "{} `{}` cannot use texture `{name}`: kernels, fills, copies, uploads, readbacks, \
                             host and interop tasks and subgraphs use textures",
                            other.keyword(),
                            node.name
                        ),
                        "read or write it in a kernel or a task, or move it with a copy, an upload or a \
                         readback"
                            .to_string(),
                    )),
                };
                if let Some((message, help)) = refusal {
                    self.diags.push(
                        Diagnostic::new(Loc::Access { node: n, index: i }, message).with_help(help),
                    );
                    self.accesses[n][i] = None;
                }
            }
        }
    }

    /// A kernel that writes a texture whose size is known in texels, dispatched over threads all given as
    /// literals, covers the texture: fewer threads along an axis than the texture has texels leave the rest
    /// unwritten, which is a mistake where the sizes say so at compile time. (A kernel that writes several
    /// texels per invocation dispatches `workgroups(..)`, which is not compared.)
    pub(super) fn check_texture_dispatches(&mut self, kernels: &[Option<super::CheckedKernel>]) {
        for (n, kernel) in kernels.iter().enumerate() {
            let (NodeKind::Kernel(_), Some(kernel)) = (&self.graph.nodes[n].kind, kernel) else {
                continue;
            };
            let super::CheckedDispatch::Threads(sizes) = &kernel.dispatch else {
                continue;
            };
            let threads: Option<Vec<u32>> = sizes
                .iter()
                .map(|s| match s.steps.as_slice() {
                    [crate::size::SizeStep::Literal(v)] => Some(*v),
                    _ => None,
                })
                .collect();
            let Some(mut threads) = threads else {
                continue;
            };
            threads.resize(3, 1);
            for b in kernel.bindings.iter().filter(|b| b.mode.writes()) {
                let (Some(texture), Some(texels)) =
                    (self.textures[b.buffer], self.known_texels(b.buffer))
                else {
                    continue;
                };
                let axes = texture.dim.extent_count();
                let Some(short) = (0..axes).find(|&a| threads[a] < texels[a]) else {
                    continue;
                };
                let name = &self.graph.buffers[b.buffer].name;
                let size: Vec<String> = texels[..axes].iter().map(u32::to_string).collect();
                let given: Vec<String> = sizes.iter().map(|s| s.text.clone()).collect();
                let axis = ["width", "height", "layers or depth"][short];
                let by_texture: Vec<String> = ["width", "height", "depth"][..axes]
                    .iter()
                    .enumerate()
                    .map(|(a, w)| match (a, texture.dim) {
                        (2, crate::texture::TextureDim::D2Array) => format!("{name}.layers()"),
                        _ => format!("{name}.{w}()"),
                    })
                    .collect();
                self.diags.push(
                    Diagnostic::new(
                        Loc::Dispatch(n),
                        format!(
                            "kernel `{}` writes texture `{name}` ({} texels) over threads({}): the texels past \
                             {} along its {axis} are never written",
                            self.graph.nodes[n].name,
                            size.join(" x "),
                            given.join(", "),
                            threads[short]
                        ),
                    )
                    .with_help(format!(
                        "dispatch `threads({})`; a kernel that writes several texels per invocation dispatches \
                         `workgroups(..)`, which is not compared",
                        by_texture.join(", ")
                    )),
                );
            }
        }
    }

    /// Texture `i`'s size in texels where the declarations give it: its own, or through the textures it is
    /// sized like, none of them bound from outside without one.
    fn known_texels(&self, i: usize) -> Option<[u32; 3]> {
        let mut at = i;
        for _ in 0..=self.graph.buffers.len() {
            match self.texture_sizes.get(at).copied().flatten()? {
                TextureSizeDesc::Texels(texels) => return Some(texels),
                TextureSizeDesc::Like(next) => at = next as usize,
                // Known at each replay only.
                TextureSizeDesc::Params(_) => return None,
            }
        }
        None
    }

    /// A sampler is read by kernels of the graph's own WGSL, which sample textures with it; any other use
    /// is reported and dropped, as a texture's is.
    fn check_sampler_use(&mut self, n: usize, i: usize, mode: AccessMode) {
        let node = &self.graph.nodes[n];
        let name = &node.accesses()[i].buffer;
        let (loc, message, help) = match &node.kind {
            NodeKind::Kernel(k) if matches!(k.source, KernelSource::Wgsl { .. }) => {
                if mode == AccessMode::Read {
                    return;
                }
                (
                    Loc::AccessMode { node: n, index: i },
                    format!(
                        "kernel `{}` binds sampler `{name}` `{}`, and a sampler is only read",
                        node.name,
                        mode.keyword()
                    ),
                    format!("bind it `{name}: read`"),
                )
            }
            other => (
                Loc::Access { node: n, index: i },
                format!(
                    "{} `{}` cannot use sampler `{name}`: kernels written in WGSL sample textures with samplers",
                    other.keyword(),
                    node.name
                ),
                "bind it to a kernel that reads a texture with `textureSampleLevel`".to_string(),
            ),
        };
        self.diags
            .push(Diagnostic::new(loc, message).with_help(help));
        self.accesses[n][i] = None;
    }

    /// A copy between two textures moves texels of one format and dimension; a copy between a texture and
    /// a buffer moves bytes, whose count and row alignment bake checks against the bound sizes.
    fn check_texture_copy(&mut self, n: usize, src: &str, dst: &str) {
        let (Some(Some(s)), Some(Some(d))) = (self.accesses[n].first(), self.accesses[n].get(1))
        else {
            return;
        };
        let (Some(st), Some(dt)) = (self.textures[s.buffer], self.textures[d.buffer]) else {
            return;
        };
        if (st.format, st.dim) != (dt.format, dt.dim) {
            self.diags.push(
                Diagnostic::new(
                    Loc::Access { node: n, index: 1 },
                    format!(
                        "copy `{}` moves texels of `{src}` (`{st}`) into `{dst}` (`{dt}`), of another {}",
                        self.graph.nodes[n].name,
                        if st.dim == dt.dim { "format" } else { "dimension" }
                    ),
                )
                .with_help("a copy between textures keeps every texel's bytes; convert the format in a kernel"),
            );
        }
    }

    /// A kernel's binding of `texture` with `mode`: as its declaration allows (a `texture_storage_*` with its
    /// own access only), and as storage only with a format every device binds that way.
    fn check_texture_binding(
        &mut self,
        n: usize,
        i: usize,
        name: &str,
        texture: crate::texture::TextureType,
        mode: AccessMode,
    ) {
        let loc = Loc::AccessMode { node: n, index: i };
        let kernel = &self.graph.nodes[n].name;
        let asked = StorageAccess::of(mode);
        if let Some(declared) = texture.storage
            && declared != asked
        {
            self.diags.push(
                Diagnostic::new(
                    loc,
                    format!(
                        "kernel `{kernel}` binds `{name}` `{}`, but it is declared `{texture}`",
                        mode.keyword()
                    ),
                )
                .with_help(format!(
                    "bind it `{}`, or declare it `texture_{}<{}>` to read it sampled and write it as storage",
                    declared.wgsl(),
                    texture.dim.suffix(),
                    texture.format
                )),
            );
            return;
        }
        // A read of a sampled declaration binds a sampled texture, which every format allows.
        if texture.storage.is_none() && mode == AccessMode::Read {
            return;
        }
        if let StorageSupport::Feature(feature) = texture.format.storage(asked) {
            let portable: Vec<&str> = TexelFormat::ALL
                .into_iter()
                .filter(|f| f.storage(asked) == StorageSupport::Portable)
                .map(TexelFormat::wgsl)
                .collect();
            self.diags.push(
                Diagnostic::new(
                    loc,
                    format!(
                        "kernel `{kernel}` binds `{name}` ({}) as `{}` storage, which only devices with {feature} \
                         allow",
                        texture.format,
                        asked.wgsl()
                    ),
                )
                .with_help(format!(
                    "every device binds these formats as `{}` storage: {}",
                    asked.wgsl(),
                    portable.join(", ")
                )),
            );
        }
    }
}
