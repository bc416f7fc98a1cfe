//! Textures: what may use one, and how. Only kernels of the graph's own WGSL bind textures (library kernels
//! bind arrays); copies, fills, uploads, readbacks, host and interop tasks and subgraph bindings of textures
//! are not built yet, and say so. A kernel may bind a texture as its declaration allows, and as storage only
//! where every device can (WebGPU's portable formats), else the error names the feature it would need.

use super::Checker;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{AccessMode, KernelSource, NodeKind};
use crate::texture::{StorageAccess, StorageSupport, TexelFormat};

impl Checker<'_> {
    /// Each access to a texture is one a kernel of the graph's own WGSL may make; any other is reported and
    /// dropped, so that the checks after this one see buffers only where they expect buffers.
    pub(super) fn check_texture_uses(&mut self) {
        let graph = self.graph;
        for (n, node) in graph.nodes.iter().enumerate() {
            for (i, access) in node.accesses().iter().enumerate() {
                let Some(resolved) = self.accesses[n].get(i).copied().flatten() else {
                    continue;
                };
                let Some(texture) = self.textures[resolved.buffer] else {
                    continue;
                };
                let name = &access.buffer;
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
                    other => Some((
                        format!(
                            "{} `{}` cannot use texture `{name}`: only kernels use textures yet",
                            other.keyword(),
                            node.name
                        ),
                        "copies, fills, uploads, readbacks, host and interop tasks and subgraphs of textures \
                         are not built yet; read or write it in a kernel"
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
