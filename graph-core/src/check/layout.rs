//! Names, types and layout: what WGSL may call a buffer or a parameter, the types parameters and elements
//! may have, and the parameter block's size against the push-constant budget.

use super::Checker;
use crate::desc::MAX_PARAMS_BYTES;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{ParamsStorage, Role};
use crate::layout::{PORTABLE_IMMEDIATE_BYTES, ParamsLayout};
use crate::names::{is_identifier, not_an_identifier};
use crate::texture::{SamplerType, TextureType};
use crate::types::{ValueType, element_type_problem, param_type_problem};

impl Checker<'_> {
    /// Buffers and parameters become WGSL names: identifiers (the macro's parser ensures it; the builder and
    /// files do not), not a WGSL keyword or reserved word, and no buffer called `params` (the parameter
    /// block's name).
    pub(super) fn check_wgsl_names(&mut self) {
        for (i, b) in self.graph.buffers.iter().enumerate() {
            if !is_identifier(&b.name) {
                self.badly_named_buffers.push(i);
                self.diags.push(not_an_identifier(
                    Loc::Buffer(i),
                    "a buffer",
                    &b.name,
                    SEEN_BY_NAME,
                ));
            } else if wgsl_reserves(&b.name) || b.name == "params" {
                self.badly_named_buffers.push(i);
                let what = match () {
                    _ if TextureType::is_texture_text(&b.elem) => "texture",
                    _ if SamplerType::is_sampler_text(&b.elem) => "sampler",
                    _ => "buffer",
                };
                self.diags.push(
                    Diagnostic::new(
                        Loc::Buffer(i),
                        format!("`{}` cannot name a {what}: kernels see {what}s by name, and WGSL reserves it", b.name),
                    )
                    .with_help("choose another name"),
                );
            }
        }
        for (i, p) in self.graph.params.iter().enumerate() {
            if !is_identifier(&p.name) {
                self.badly_named_params = true;
                self.diags.push(not_an_identifier(
                    Loc::Param(i),
                    "a parameter",
                    &p.name,
                    SEEN_BY_NAME,
                ));
            } else if wgsl_reserves(&p.name) {
                self.badly_named_params = true;
                self.diags.push(
                    Diagnostic::new(
                        Loc::Param(i),
                        format!("`{}` cannot name a parameter: WGSL reserves it", p.name),
                    )
                    .with_help("choose another name"),
                );
            }
        }
    }

    /// Parameters are 32-bit scalars or vectors, the host-shareable types push constants can hold.
    pub(super) fn check_param_types(&mut self) {
        for (i, p) in self.graph.params.iter().enumerate() {
            match param_type_problem(&p.ty) {
                None => self.param_types.push(ValueType::parse(&p.ty).ok()),
                Some(problem) => {
                    self.diags.push(Diagnostic::new(
                        Loc::ParamType(i),
                        format!(
                            "parameter `{}` cannot have type `{}`: {problem}",
                            p.name,
                            crate::names::escaped(&p.ty.replace(' ', ""))
                        ),
                    ));
                    self.param_types.push(None);
                }
            }
        }
    }

    /// The layout the kernels are checked against, whatever else is wrong with the parameters.
    pub(super) fn params_layout(&self) -> ParamsLayout {
        ParamsLayout::of_valid_params(&self.graph.params)
    }

    /// The parameter block fits the 128 bytes of push constants every backend offers, unless the graph moved
    /// its parameters to a uniform buffer.
    pub(super) fn check_params_budget(&mut self) {
        let layout = self.params_layout();
        if self.graph.params_storage == ParamsStorage::Immediates
            && layout.size > PORTABLE_IMMEDIATE_BYTES
        {
            // 128 is a multiple of every alignment, so some field itself ends past the budget.
            let end = |f: &crate::layout::ParamField| f.offset + f.ty.in_params().size();
            let over = layout
                .fields
                .iter()
                .find(|f| end(f) > PORTABLE_IMMEDIATE_BYTES);
            let (name, ends_at) = over.map_or(("", layout.size), |f| (f.name.as_str(), end(f)));
            self.diags.push(
                Diagnostic::new(
                    Loc::ParamsBlock,
                    format!(
                        "the parameter block is {} bytes, over the {PORTABLE_IMMEDIATE_BYTES}-byte push-constant \
                         budget every backend offers (`{name}` ends at byte {ends_at})",
                        layout.size,
                    ),
                )
                .with_help(
                    "move some values into a buffer, or mark the graph `#[uniform_params]` to pass parameters in a \
                     uniform buffer instead of push constants",
                ),
            );
        } else if layout.size > MAX_PARAMS_BYTES {
            self.diags.push(
                Diagnostic::new(
                    Loc::ParamsBlock,
                    format!(
                        "the parameter block is {} bytes, over the {MAX_PARAMS_BYTES} bytes of a uniform buffer \
                         binding every backend offers",
                        layout.size
                    ),
                )
                .with_help("move some values into a buffer"),
            );
        }
    }

    /// Buffer elements are 32-bit scalars or 2- and 4-vectors, whose Rust twins have no hidden padding.
    /// Textures and samplers are parsed as their types.
    pub(super) fn check_buffer_types(&mut self) {
        for (i, b) in self.graph.buffers.iter().enumerate() {
            if SamplerType::is_sampler_text(&b.elem) {
                self.check_sampler_declaration(i);
                continue;
            }
            if TextureType::is_texture_text(&b.elem) {
                match TextureType::parse_declaration(&b.elem) {
                    Ok((texture, size)) => {
                        self.buffer_types.push(Some(texture.texel_type()));
                        self.textures[i] = Some(texture);
                        self.declared_texture_sizes[i] = size;
                    }
                    Err(problem) => {
                        self.diags.push(Diagnostic::new(
                            Loc::BufferType(i),
                            format!(
                                "texture `{}` cannot be `{}`: {problem}",
                                b.name,
                                crate::names::escaped(&b.elem.replace(' ', ""))
                            ),
                        ));
                        self.buffer_types.push(None);
                    }
                }
                continue;
            }
            match element_type_problem(&b.elem) {
                None => self.buffer_types.push(ValueType::parse(&b.elem).ok()),
                Some(problem) => {
                    self.diags.push(Diagnostic::new(
                        Loc::BufferType(i),
                        format!(
                            "buffer `{}` cannot hold `{}`: {problem}",
                            b.name,
                            crate::names::escaped(&b.elem.replace(' ', ""))
                        ),
                    ));
                    self.buffer_types.push(None);
                }
            }
        }
    }

    /// A sampler's type parses; the graph makes it at bake, so it takes no role and no length. A sampler
    /// stands for a `u32` where the graph treats it like a buffer (it has no elements).
    fn check_sampler_declaration(&mut self, i: usize) {
        let b = &self.graph.buffers[i];
        match SamplerType::parse(&b.elem) {
            Ok(sampler) => {
                self.buffer_types.push(Some(ValueType::U32));
                self.samplers[i] = Some(sampler);
            }
            Err(problem) => {
                self.diags.push(Diagnostic::new(
                    Loc::BufferType(i),
                    format!(
                        "sampler `{}` cannot be `{}`: {problem}",
                        b.name,
                        crate::names::escaped(&b.elem.replace(' ', ""))
                    ),
                ));
                self.buffer_types.push(None);
            }
        }
        if b.role != Role::Owned {
            self.diags.push(
                Diagnostic::new(
                    Loc::Buffer(i),
                    format!(
                        "sampler `{}` is declared `= {}`, but the graph makes its samplers from their declaration",
                        b.name,
                        b.role.keyword()
                    ),
                )
                .with_help(format!(
                    "leave the role out: `{}: {}`",
                    b.name,
                    self.samplers[i].map_or_else(|| b.elem.clone(), |s| s.declared())
                )),
            );
        }
        if b.len.is_some() {
            self.diags.push(Diagnostic::new(
                Loc::Buffer(i),
                format!(
                    "sampler `{}` has a length, and a sampler holds no elements",
                    b.name
                ),
            ));
        }
    }

    /// The graph allocates its own buffers at bake time, so it must know their length.
    pub(super) fn check_owned_buffers_have_a_length(&mut self) {
        for (i, b) in self.graph.buffers.iter().enumerate() {
            if SamplerType::is_sampler_text(&b.elem) {
                continue;
            }
            if TextureType::is_texture_text(&b.elem) {
                if b.len.is_some() {
                    self.diags.push(Diagnostic::new(
                        Loc::Buffer(i),
                        format!(
                            "texture `{}` has a length; a texture's size follows its format: \
                             `texture_2d<rgba8unorm; 512, 512>`",
                            b.name
                        ),
                    ));
                }
                continue;
            }
            if b.role == Role::Owned && b.len.is_none() {
                self.diags.push(
                    Diagnostic::new(Loc::Buffer(i), format!("graph-owned buffer `{}` needs a length", b.name))
                        .with_help(format!(
                            "write `{}: [{}; N]`, or bind it from outside with `= input`, `= output` or `= inout`",
                            b.name, b.elem
                        )),
                );
            }
            if b.len == Some(0) {
                self.diags.push(Diagnostic::new(
                    Loc::Buffer(i),
                    format!("buffer `{}` has length 0", b.name),
                ));
            }
            // Lengths travel as u32 element counts, the most a storage binding can index.
            if b.len.is_some_and(|n| n > u64::from(u32::MAX)) {
                self.diags.push(Diagnostic::new(
                    Loc::Buffer(i),
                    format!(
                        "buffer `{}` is longer than {} elements, the most a kernel can index",
                        b.name,
                        u32::MAX
                    ),
                ));
            }
        }
    }
}

/// Why a buffer, a parameter or a binding must be an identifier.
pub(super) const SEEN_BY_NAME: &str = "kernels see it by name, so it must be an identifier";

/// A name WGSL keeps for itself: its keywords and reserved words, the parameter block's type, and names
/// starting with `__` (which the generated Rust keeps for its padding fields).
pub(super) fn wgsl_reserves(name: &str) -> bool {
    naga::keywords::wgsl::RESERVED.contains(&name)
        || name == crate::layout::WGSL_PARAMS_STRUCT
        || name.starts_with("__")
}
