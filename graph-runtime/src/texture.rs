//! Textures a graph binds: a wgpu texture made on a [`Gpu`], what bake checks of it against the graph's
//! declaration, and whole-texture writes and reads for the application.

#![forbid(unsafe_code)]

use graph_core::desc::OpDesc;
use graph_core::desc::{AxisSizeDesc, GraphDesc, TextureSizeDesc};
use graph_core::ir::AccessMode;
use graph_core::texture::{TexelFormat, TextureDim, TextureType};

use crate::error::Error;
use crate::gpu::Gpu;
use crate::readback::ReadFuture;
use crate::scope::OpScope;

/// A texture a graph may bind: a wgpu texture of a [`Gpu`]'s device, or a part of one (one of its mip
/// levels, some of a 2-D texture's layers: [`Texture::mip_level`], [`Texture::layers`]), which is what the
/// graph's kernels, copies, transfers and host tasks then see.
#[derive(Debug, Clone)]
pub struct Texture {
    gpu: Gpu,
    texture: wgpu::Texture,
    part: Part,
}

/// The part of a wgpu texture a [`Texture`] is: a mip level, and for a 2-D texture a run of its layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Part {
    mip_level: u32,
    base_layer: u32,
    /// Layers from `base_layer`; a 3-D texture's depth is its level's.
    layers: u32,
}

impl Part {
    /// The whole of `texture`'s first level.
    fn whole(texture: &wgpu::Texture) -> Self {
        Part {
            mip_level: 0,
            base_layer: 0,
            layers: texture.depth_or_array_layers(),
        }
    }
}

/// The wgpu format of a graph's texel format (the same name in WebGPU).
pub fn wgpu_format(format: TexelFormat) -> wgpu::TextureFormat {
    use wgpu::TextureFormat as F;
    match format {
        TexelFormat::Rgba8Unorm => F::Rgba8Unorm,
        TexelFormat::Rgba8Snorm => F::Rgba8Snorm,
        TexelFormat::Rgba8Uint => F::Rgba8Uint,
        TexelFormat::Rgba8Sint => F::Rgba8Sint,
        TexelFormat::Rgba16Uint => F::Rgba16Uint,
        TexelFormat::Rgba16Sint => F::Rgba16Sint,
        TexelFormat::Rgba16Float => F::Rgba16Float,
        TexelFormat::R32Uint => F::R32Uint,
        TexelFormat::R32Sint => F::R32Sint,
        TexelFormat::R32Float => F::R32Float,
        TexelFormat::Rg32Uint => F::Rg32Uint,
        TexelFormat::Rg32Sint => F::Rg32Sint,
        TexelFormat::Rg32Float => F::Rg32Float,
        TexelFormat::Rgba32Uint => F::Rgba32Uint,
        TexelFormat::Rgba32Sint => F::Rgba32Sint,
        TexelFormat::Rgba32Float => F::Rgba32Float,
        TexelFormat::Bgra8Unorm => F::Bgra8Unorm,
        TexelFormat::R8Unorm => F::R8Unorm,
        TexelFormat::Rg8Unorm => F::Rg8Unorm,
        TexelFormat::R16Float => F::R16Float,
        TexelFormat::Rg16Float => F::Rg16Float,
    }
}

/// The wgpu dimension a texture of `dim` is made with (a 2-D array is a 2-D texture of several layers).
pub fn wgpu_dimension(dim: TextureDim) -> wgpu::TextureDimension {
    match dim {
        TextureDim::D1 => wgpu::TextureDimension::D1,
        TextureDim::D2 | TextureDim::D2Array => wgpu::TextureDimension::D2,
        TextureDim::D3 => wgpu::TextureDimension::D3,
    }
}

/// The view dimension a kernel binds a texture of `dim` through.
pub(crate) fn view_dimension(dim: TextureDim) -> wgpu::TextureViewDimension {
    match dim {
        TextureDim::D1 => wgpu::TextureViewDimension::D1,
        TextureDim::D2 => wgpu::TextureViewDimension::D2,
        TextureDim::D2Array => wgpu::TextureViewDimension::D2Array,
        TextureDim::D3 => wgpu::TextureViewDimension::D3,
    }
}

/// How the kernels of `desc` bind texture `index` of type `ty`: sampled (a read of a sampled declaration),
/// as storage (any other binding).
pub(crate) fn texture_uses(desc: &GraphDesc, index: usize, ty: TextureType) -> (bool, bool) {
    let (mut sampled, mut storage) = (false, false);
    for node in desc.nodes.iter() {
        if let OpDesc::Kernel(k) = &node.op {
            for b in k.bindings.iter().filter(|b| b.buffer as usize == index) {
                match (ty.storage, b.mode) {
                    (None, AccessMode::Read) => sampled = true,
                    _ => storage = true,
                }
            }
        }
    }
    (sampled, storage)
}

/// Every texture of `desc`, by buffer index: the bound ones as given (checked against a size their
/// declaration gives), and the graph-owned ones made on `gpu` at their declared size, with the usages the
/// graph's kernels need and those of copies. A rebuild (`previous`: the textures before it) keeps an owned
/// texture of the same size and usage rather than making another; one sized like an external texture
/// follows it when that one is rebound to another size, one sized by parameters follows `params`. Where
/// `params` size a texture 0 texels along an axis (they start zeroed, at bake), it is not sized: made 1 texel
/// along that axis, checked against nothing, and no replay may use it ([`check_sized`]).
pub(crate) fn complete(
    gpu: &Gpu,
    desc: &GraphDesc,
    bound: &[Option<Texture>],
    previous: Option<&[Option<Texture>]>,
    params: &[u8],
) -> Result<Vec<Option<Texture>>, Error> {
    let mut all: Vec<Option<Texture>> = (0..desc.buffers.len())
        .map(|i| match desc.buffers[i].role.is_external() {
            true => bound.get(i).cloned().flatten(),
            false => None,
        })
        .collect();
    for (i, b) in desc.buffers.iter().enumerate() {
        let (Some(ty), Some(_)) = (b.texture_type(), b.texture_size) else {
            continue;
        };
        let wrong = |reason: String| Error::TextureMismatch {
            graph: desc.name.to_string(),
            texture: b.name.to_string(),
            reason,
        };
        // An external texture without a size, not bound: bind_texture says so.
        let Some(size) = declared_extent(desc, i, &all, params) else {
            continue;
        };
        let not_sized = size.contains(&0);
        if b.role.is_external() && not_sized {
            continue;
        }
        let size = size.map(|s| s.max(1));
        if b.role.is_external() {
            if let Some(texture) = &all[i] {
                let actual = texture.extent();
                if actual != size {
                    return Err(wrong(format!(
                        "it is {} texels, and the graph declares {} ({})",
                        texels(actual),
                        texels(size),
                        declared_size(desc, i, params)
                    )));
                }
            }
            continue;
        }
        check_limits(gpu, ty.dim, size).map_err(wrong)?;
        let (sampled, storage) = texture_uses(desc, i, ty);
        let mut usage = wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST;
        if sampled {
            usage |= wgpu::TextureUsages::TEXTURE_BINDING;
        }
        if storage {
            usage |= wgpu::TextureUsages::STORAGE_BINDING;
        }
        // What an update rebuilds keeps the texture it had where it is still of this size and usage; a
        // rebind that changes the size it follows makes it again.
        let kept = previous
            .and_then(|p| p.get(i).cloned().flatten())
            .filter(|t| t.extent() == size && t.wgpu().usage() == usage);
        all[i] = match kept {
            Some(texture) => Some(texture),
            None => {
                let label = format!("{} texture {}", desc.name, b.name);
                Some(gpu.make_texture(&label, ty, size, usage)?)
            }
        };
    }
    Ok(all)
}

/// Sizes `program`'s uploads and readbacks of textures by the textures' padded rows, and checks each copy
/// with a texture end against the bound sizes: between textures, of one size; between a texture and a
/// buffer (`lens`: each buffer's length), as many bytes on both sides, in rows a multiple of 256 bytes
/// long (what wgpu's copies between buffers and textures ask) unless there is one row. A copy with a
/// texture end `not_sized` (see [`complete`]) is not checked: no replay runs it before the parameters size
/// that texture and the graph is built again.
pub(crate) fn plan_transfers(
    desc: &GraphDesc,
    program: &mut crate::program::Program,
    textures: &[Option<Texture>],
    lens: &[u32],
    not_sized: impl Fn(u32) -> bool,
) -> Result<(), Error> {
    let rows = |b: u32| -> Result<Option<TexelRows>, Error> {
        match textures.get(b as usize).and_then(Option::as_ref) {
            Some(t) => t.rows().map(Some),
            None => Ok(None),
        }
    };
    let mut padded = vec![None; desc.buffers.len()];
    for (b, slot) in padded.iter_mut().enumerate() {
        *slot = rows(b as u32)?.map(|r| r.padded_bytes());
    }
    program.size_transfers(|b| padded.get(b as usize).copied().flatten());
    for node in desc.nodes.iter() {
        let OpDesc::Copy { src, dst, .. } = node.op else {
            continue;
        };
        if not_sized(src) || not_sized(dst) {
            continue;
        }
        let wrong = |texture: u32, reason: String| Error::TextureMismatch {
            graph: desc.name.to_string(),
            texture: desc.buffers[texture as usize].name.to_string(),
            reason: format!("copy `{}`: {reason}", node.name),
        };
        match (rows(src)?, rows(dst)?) {
            (None, None) => {}
            (Some(s), Some(d)) => {
                if s.size != d.size {
                    return Err(wrong(
                        dst,
                        format!(
                            "it is {} texels, and `{}` is {}",
                            texels(extent3(d.size)),
                            desc.buffers[src as usize].name,
                            texels(extent3(s.size))
                        ),
                    ));
                }
            }
            (Some(t), None) | (None, Some(t)) => {
                let (texture, buffer) = if textures[src as usize].is_some() {
                    (src, dst)
                } else {
                    (dst, src)
                };
                let b = &desc.buffers[buffer as usize];
                let bytes = u64::from(lens.get(buffer as usize).copied().unwrap_or(0))
                    * u64::from(b.elem.size());
                if bytes != t.packed_bytes() {
                    return Err(wrong(
                        texture,
                        format!(
                            "its {} rows of {} bytes are {} bytes, and buffer `{}` holds {bytes}",
                            t.rows,
                            t.row,
                            t.packed_bytes(),
                            b.name
                        ),
                    ));
                }
                if t.rows > 1 && t.row % wgpu::COPY_BYTES_PER_ROW_ALIGNMENT != 0 {
                    return Err(wrong(
                        texture,
                        format!(
                            "its rows are {} bytes, and a copy between a buffer and a texture moves rows of a \
                             multiple of {} bytes; copy the texels in a kernel",
                            t.row,
                            wgpu::COPY_BYTES_PER_ROW_ALIGNMENT
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

fn extent3(size: wgpu::Extent3d) -> [u32; 3] {
    [size.width, size.height, size.depth_or_array_layers]
}

/// Texture `index`'s size as its declaration gives it: its texels, those the parameter block `params` gives
/// it, or those of the texture it is sized like, down to texels, parameters or a bound texture; `None` where
/// that one is not bound. A parameter may give 0.
fn declared_extent(
    desc: &GraphDesc,
    index: usize,
    all: &[Option<Texture>],
    params: &[u8],
) -> Option<[u32; 3]> {
    let mut at = index;
    // A checked description's chains end (`GraphDesc::validate`); the bound keeps a wrong one finite.
    for _ in 0..=desc.buffers.len() {
        match desc.buffers.get(at)?.texture_size {
            Some(TextureSizeDesc::Texels(texels)) => return Some(texels),
            Some(TextureSizeDesc::Params(axes)) => {
                return Some(axes.map(|a| a.texels(params).unwrap_or(0)));
            }
            Some(TextureSizeDesc::Like(next)) if next as usize != index => at = next as usize,
            Some(TextureSizeDesc::Like(_)) => return None,
            None => return all.get(at)?.as_ref().map(Texture::extent),
        }
    }
    None
}

/// Texture `index`'s size with the parameter block `params`, where parameters size it (its declaration
/// reads them, or that of a texture it is sized like); `None` for every other buffer and texture. Found
/// without allocating: a replay asks it of every such texture.
pub(crate) fn param_extent(desc: &GraphDesc, index: usize, params: &[u8]) -> Option<[u32; 3]> {
    let mut at = index;
    for _ in 0..=desc.buffers.len() {
        match desc.buffers.get(at)?.texture_size? {
            TextureSizeDesc::Params(axes) => {
                return Some(axes.map(|a| a.texels(params).unwrap_or(0)));
            }
            TextureSizeDesc::Like(next) => at = next as usize,
            TextureSizeDesc::Texels(_) => return None,
        }
    }
    None
}

/// Every texture's size by parameters ([`param_extent`]), by buffer index.
pub(crate) fn param_extents(desc: &GraphDesc, params: &[u8]) -> Vec<Option<[u32; 3]>> {
    (0..desc.buffers.len())
        .map(|i| param_extent(desc, i, params))
        .collect()
}

/// An error for the first texture the parameters give no texel along some axis (`extents`: the sizes
/// parameters give textures, from buffer index `first` on): no replay may use it, nor an upload fill it.
pub(crate) fn check_sized(
    desc: &GraphDesc,
    extents: &[Option<[u32; 3]>],
    first: usize,
    params: &[u8],
) -> Result<(), Error> {
    let Some(at) = extents
        .iter()
        .position(|e| e.is_some_and(|e| e.contains(&0)))
    else {
        return Ok(());
    };
    let size = extents[at].unwrap_or_default();
    let index = first + at;
    Err(Error::TextureMismatch {
        graph: desc.name.to_string(),
        texture: desc.buffers[index].name.to_string(),
        reason: format!(
            "it is sized by {}, which make it {} texels: set the parameters before the replay (or \
             upload) that uses it",
            declared_size(desc, index, params),
            texels(size)
        ),
    })
}

/// How texture `index`'s declaration sizes it, for messages: `` `512 x 512 x 1` ``, `` `params.w, params.h`
/// (640, 480) `` or ``the size of `frame` ``.
fn declared_size(desc: &GraphDesc, index: usize, params: &[u8]) -> String {
    match desc.buffers[index].texture_size {
        Some(TextureSizeDesc::Texels(texels)) => format!("`{}`", self::texels(texels)),
        Some(TextureSizeDesc::Params(axes)) => {
            let count = desc.buffers[index]
                .texture_type()
                .map_or(3, |t| t.dim.extent_count());
            let axes = &axes[..count];
            let written: Vec<String> = axes.iter().map(|&a| axis_text(desc, a)).collect();
            let values: Vec<String> = axes
                .iter()
                .map(|a| a.texels(params).unwrap_or(0).to_string())
                .collect();
            format!("`{}` ({})", written.join(", "), values.join(", "))
        }
        Some(TextureSizeDesc::Like(other)) => desc
            .buffers
            .get(other as usize)
            .map_or_else(String::new, |o| format!("the size of `{}`", o.name)),
        None => String::new(),
    }
}

/// `512` or `params.w` (`params.size.y`): one axis of a declared size, its parameter named from the block's
/// layout.
fn axis_text(desc: &GraphDesc, axis: AxisSizeDesc) -> String {
    let offset = match axis {
        AxisSizeDesc::Texels(n) => return n.to_string(),
        AxisSizeDesc::Param(offset) => offset,
    };
    let field = desc
        .params
        .fields
        .iter()
        .find(|f| offset >= f.offset && offset < f.offset + f.ty.size());
    match field {
        Some(f) if f.ty.components > 1 => {
            let component = ["x", "y", "z", "w"]
                .get(((offset - f.offset) / 4) as usize)
                .unwrap_or(&"?");
            format!("params.{}.{component}", f.name)
        }
        Some(f) => format!("params.{}", f.name),
        None => format!("parameter byte {offset}"),
    }
}

fn texels(size: [u32; 3]) -> String {
    format!("{} x {} x {}", size[0], size[1], size[2])
}

/// Whether `gpu` makes a texture of `dim` this large; why not, where it does not.
fn check_limits(gpu: &Gpu, dim: TextureDim, size: [u32; 3]) -> Result<(), String> {
    let limits = gpu.device().limits();
    let (largest, axes, what) = match dim {
        TextureDim::D1 => (limits.max_texture_dimension_1d, 1, "a 1-D texture's width"),
        TextureDim::D2 => (limits.max_texture_dimension_2d, 2, "a 2-D texture's side"),
        TextureDim::D2Array => (limits.max_texture_dimension_2d, 2, "a 2-D texture's side"),
        TextureDim::D3 => (limits.max_texture_dimension_3d, 3, "a 3-D texture's side"),
    };
    if let Some(&side) = size[..axes].iter().find(|&&s| s > largest) {
        return Err(format!(
            "it is declared {} texels, and {what} is at most {largest} on this device, not {side}",
            texels(size)
        ));
    }
    if dim == TextureDim::D2Array && size[2] > limits.max_texture_array_layers {
        return Err(format!(
            "it is declared {} layers, and this device holds at most {}",
            size[2], limits.max_texture_array_layers
        ));
    }
    Ok(())
}

impl Gpu {
    /// A texture of `ty` and `size` with exactly `usage`, labelled `label`.
    pub(crate) fn make_texture(
        &self,
        label: &str,
        ty: TextureType,
        size: [u32; 3],
        usage: wgpu::TextureUsages,
    ) -> Result<Texture, Error> {
        let scope = OpScope::enter(self);
        let texture = self.device().create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d {
                width: size[0],
                height: size[1],
                depth_or_array_layers: size[2],
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu_dimension(ty.dim),
            format: wgpu_format(ty.format),
            usage,
            view_formats: &[],
        });
        let part = Part::whole(&texture);
        scope.finish(Ok(Texture {
            gpu: self.clone(),
            texture,
            part,
        }))
    }

    /// A texture of `ty`'s dimension and format, `size` texels (width, height, and layers or depth; 1 where
    /// the dimension has fewer), zeroed, usable by kernels (sampled, and as storage where the format allows
    /// it on this device) and as a copy source and destination.
    pub fn texture(&self, ty: &str, size: [u32; 3]) -> Result<Texture, Error> {
        let ty = TextureType::parse(ty).map_err(|e| Error::Texture {
            texture: ty.to_string(),
            reason: e.to_string(),
        })?;
        let format = wgpu_format(ty.format);
        let allowed = format
            .guaranteed_format_features(self.device().features())
            .allowed_usages;
        let usage = (wgpu::TextureUsages::TEXTURE_BINDING
            | wgpu::TextureUsages::STORAGE_BINDING
            | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST)
            & allowed;
        self.make_texture(&ty.declared(), ty, size, usage)
    }
}

/// How a texture's texels lie in a buffer: rows of `row` bytes, `rows` of them (height times layers or
/// depth), the application's side packed, the GPU's side (staging and readback buffers) at `padded` bytes a
/// row, as a copy between a buffer and a texture asks (a multiple of 256).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TexelRows {
    pub row: u32,
    pub padded: u32,
    pub height: u32,
    pub rows: u32,
    pub size: wgpu::Extent3d,
    pub format: wgpu::TextureFormat,
}

impl TexelRows {
    /// Bytes of every texel, rows packed.
    pub fn packed_bytes(&self) -> u64 {
        u64::from(self.row) * u64::from(self.rows)
    }

    /// Bytes of the padded rows.
    pub fn padded_bytes(&self) -> u64 {
        u64::from(self.padded) * u64::from(self.rows)
    }

    /// The layout of the padded rows in a buffer.
    pub fn padded_layout(&self) -> wgpu::TexelCopyBufferLayout {
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(self.padded),
            rows_per_image: Some(self.height),
        }
    }

    /// `packed` written into `padded` with each row at its padded place (`padded` cleared first).
    pub fn pad(&self, packed: &[u8], padded: &mut Vec<u8>) {
        padded.clear();
        padded.resize(self.padded_bytes() as usize, 0);
        for (from, to) in packed
            .chunks(self.row as usize)
            .zip(padded.chunks_mut(self.padded as usize))
        {
            to[..from.len()].copy_from_slice(from);
        }
    }

    /// The rows of `padded`, packed.
    pub fn unpad(&self, padded: &[u8]) -> Vec<u8> {
        padded
            .chunks(self.padded as usize)
            .take(self.rows as usize)
            .flat_map(|r| r.get(..self.row as usize).unwrap_or(r))
            .copied()
            .collect()
    }
}

impl Texture {
    /// The `Gpu` whose device holds it.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Its rows, as a copy to or from a buffer lays them out.
    pub(crate) fn rows(&self) -> Result<TexelRows, Error> {
        let row = self.row_bytes()?;
        let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let size = self.size();
        Ok(TexelRows {
            row,
            padded: row.div_ceil(align) * align,
            height: size.height,
            rows: size.height * size.depth_or_array_layers,
            size,
            format: self.texture.format(),
        })
    }

    /// Wraps a texture the application made on `gpu`'s device: all of its first mip level. Bake checks it
    /// against the declaration: its format, dimension, usages, sample count and device.
    pub fn from_wgpu(gpu: &Gpu, texture: wgpu::Texture) -> Self {
        let part = Part::whole(&texture);
        Texture {
            gpu: gpu.clone(),
            texture,
            part,
        }
    }

    /// The wgpu texture, whole (whatever part of it this is).
    pub fn wgpu(&self) -> &wgpu::Texture {
        &self.texture
    }

    /// This texture's mip level `level` (of a texture made with several): what a graph bound to the result
    /// binds (as kernels bind a texture: at its one level), copies, uploads, reads back and hands to host
    /// tasks, of the level's size. The layers chosen stay chosen.
    pub fn mip_level(&self, level: u32) -> Result<Texture, Error> {
        if level >= self.texture.mip_level_count() {
            return Err(self.error(&format!(
                "it has {} mip levels, so there is no level {level}",
                self.texture.mip_level_count()
            )));
        }
        let mut part = self.part;
        part.mip_level = level;
        if self.texture.dimension() == wgpu::TextureDimension::D3 {
            part.layers = self
                .texture
                .size()
                .mip_level_size(level, wgpu::TextureDimension::D3)
                .depth_or_array_layers;
        }
        Ok(Texture {
            part,
            ..self.clone()
        })
    }

    /// Layers `layers` of this 2-D texture: one binds as a `texture_2d`, several as a `texture_2d_array`
    /// (the graph's kernels, copies, transfers and host tasks see those layers only).
    pub fn layers(&self, layers: std::ops::Range<u32>) -> Result<Texture, Error> {
        let all = self.texture.depth_or_array_layers();
        if self.texture.dimension() != wgpu::TextureDimension::D2 {
            return Err(self.error("only a 2-D texture has layers to choose (a 3-D one has depth)"));
        }
        if layers.is_empty() || layers.end > all {
            return Err(self.error(&format!(
                "it has {all} layers, so layers {layers:?} are not a run of them"
            )));
        }
        let mut part = self.part;
        part.base_layer = layers.start;
        part.layers = layers.len() as u32;
        Ok(Texture {
            part,
            ..self.clone()
        })
    }

    /// The size of the part a graph binds: its mip level's width and height, and its layers (a 3-D
    /// texture: the level's depth).
    pub fn size(&self) -> wgpu::Extent3d {
        let level = self
            .texture
            .size()
            .mip_level_size(self.part.mip_level, self.texture.dimension());
        wgpu::Extent3d {
            depth_or_array_layers: self.part.layers,
            ..level
        }
    }

    /// Where a copy to or from the part starts.
    pub(crate) fn copy(&self) -> wgpu::TexelCopyTextureInfo<'_> {
        wgpu::TexelCopyTextureInfo {
            texture: &self.texture,
            mip_level: self.part.mip_level,
            origin: wgpu::Origin3d {
                x: 0,
                y: 0,
                z: self.part.base_layer,
            },
            aspect: wgpu::TextureAspect::All,
        }
    }

    /// The part's size in texels: width, height, and layers or depth.
    pub(crate) fn extent(&self) -> [u32; 3] {
        extent3(self.size())
    }

    /// Whether this is some of a 2-D texture's layers rather than all of them.
    pub(crate) fn some_layers(&self) -> bool {
        self.texture.dimension() == wgpu::TextureDimension::D2
            && self.part.layers != self.texture.depth_or_array_layers()
    }

    /// The wgpu texture and the part of it this is: equal for two [`Texture`]s that are the same texels.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn key(&self) -> (&wgpu::Texture, Part) {
        (&self.texture, self.part)
    }

    /// Bytes of one row of texels, as [`Texture::write`] takes them and [`Texture::read_blocking`] gives them.
    pub fn row_bytes(&self) -> Result<u32, Error> {
        let block = self
            .texture
            .format()
            .block_copy_size(None)
            .ok_or_else(|| self.error("its format has no single texel size to copy by"))?;
        Ok(self.size().width * block)
    }

    /// Bytes of every texel, rows packed one after another (no padding), layer after layer.
    pub(crate) fn packed_bytes(&self) -> Result<usize, Error> {
        let size = self.size();
        let rows = size.height * size.depth_or_array_layers;
        Ok(self.row_bytes()? as usize * rows as usize)
    }

    /// Writes every texel: `texels` holds the rows one after another without padding, layer after layer
    /// (as [`Texture::row_bytes`] says).
    pub fn write(&self, texels: &[u8]) -> Result<(), Error> {
        let expected = self.packed_bytes()?;
        if texels.len() != expected {
            return Err(Error::LengthMismatch {
                what: "Texture::write (bytes)",
                expected,
                actual: texels.len(),
            });
        }
        self.gpu.check_lost()?;
        let scope = OpScope::enter(&self.gpu);
        let size = self.size();
        self.gpu.queue().write_texture(
            self.copy(),
            texels,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(self.row_bytes()?),
                rows_per_image: Some(size.height),
            },
            size,
        );
        scope.finish(Ok(()))
    }

    /// Every texel, once all work submitted before has finished: rows one after another without padding,
    /// layer after layer. Native targets block here; the web has [`Texture::read`].
    pub fn read_blocking(&self) -> Result<Vec<u8>, Error> {
        let (words, rows) = self.start_read()?;
        Ok(rows.unpad(bytemuck::cast_slice(&words.wait()?)))
    }

    /// [`Texture::read_blocking`] without blocking: a future of the texels, woken once when they are there
    /// (as [`Buffer::read`](crate::Buffer::read)'s).
    pub async fn read(&self) -> Result<Vec<u8>, Error> {
        let (words, rows) = self.start_read()?;
        Ok(rows.unpad(bytemuck::cast_slice(&words.await?)))
    }

    /// Copies every texel into a staging buffer (rows padded as copies need) and starts reading that back.
    fn start_read(&self) -> Result<(ReadFuture<u32>, TexelRows), Error> {
        self.gpu.check_lost()?;
        let rows = self.rows()?;
        let size = rows.padded_bytes();
        let scope = OpScope::enter(&self.gpu);
        let staging = self.gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("texture readback"),
            size: size.max(4),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .gpu
            .device()
            .create_command_encoder(&Default::default());
        encoder.copy_texture_to_buffer(
            self.copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &staging,
                layout: rows.padded_layout(),
            },
            rows.size,
        );
        self.gpu.queue().submit([encoder.finish()]);
        scope.finish(Ok(()))?;
        Ok((
            ReadFuture::<u32>::start(&self.gpu, &staging, (size / 4) as usize),
            rows,
        ))
    }

    fn error(&self, reason: &str) -> Error {
        Error::Texture {
            texture: format!("{:?}", self.texture.format()),
            reason: reason.to_string(),
        }
    }

    /// How this texture falls short of what graph `graph` declares of texture `name` and asks of it:
    /// `storage` when a kernel binds it as storage, `sampled` when one samples it.
    pub(crate) fn check(
        &self,
        gpu: &Gpu,
        graph: &str,
        name: &str,
        ty: TextureType,
        sampled: bool,
        storage: bool,
    ) -> Result<(), Error> {
        let wrong = |reason: String| Error::TextureMismatch {
            graph: graph.to_string(),
            texture: name.to_string(),
            reason,
        };
        if self.gpu.id() != gpu.id() {
            return Err(wrong(
                "it was made on another `Gpu` than the one baking the graph".into(),
            ));
        }
        let t = &self.texture;
        if t.format() != wgpu_format(ty.format) {
            return Err(wrong(format!(
                "it is {:?}, and the graph declares `{ty}`",
                t.format()
            )));
        }
        let layers = self.size().depth_or_array_layers;
        let layers_fit = match ty.dim {
            TextureDim::D2 => layers == 1,
            _ => true,
        };
        if t.dimension() != wgpu_dimension(ty.dim) || !layers_fit {
            return Err(wrong(format!(
                "it is a {:?} texture of {layers} layers, and the graph declares `{ty}`",
                t.dimension(),
            )));
        }
        // A texture of several levels binds the one chosen (`Texture::mip_level`), level 0 by default.
        if t.sample_count() != 1 {
            return Err(wrong(format!(
                "it has {} samples; kernels bind single-sampled textures",
                t.sample_count(),
            )));
        }
        let mut needed = wgpu::TextureUsages::empty();
        if sampled {
            needed |= wgpu::TextureUsages::TEXTURE_BINDING;
        }
        if storage {
            needed |= wgpu::TextureUsages::STORAGE_BINDING;
        }
        let missing = needed - t.usage();
        if !missing.is_empty() {
            return Err(wrong(format!(
                "it lacks the usage {missing:?}, which the graph's kernels need"
            )));
        }
        Ok(())
    }

    /// The view a kernel binds it through.
    pub(crate) fn view(&self, dim: TextureDim) -> wgpu::TextureView {
        let layered = self.texture.dimension() == wgpu::TextureDimension::D2;
        self.texture.create_view(&wgpu::TextureViewDescriptor {
            dimension: Some(view_dimension(dim)),
            base_mip_level: self.part.mip_level,
            mip_level_count: Some(1),
            base_array_layer: if layered { self.part.base_layer } else { 0 },
            array_layer_count: layered.then_some(self.part.layers),
            ..Default::default()
        })
    }
}
