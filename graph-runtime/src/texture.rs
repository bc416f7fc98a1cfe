//! Textures a graph binds: a wgpu texture made on a [`Gpu`], what bake checks of it against the graph's
//! declaration, and whole-texture writes and reads for the application.

#![forbid(unsafe_code)]

use graph_core::desc::OpDesc;
use graph_core::desc::{GraphDesc, TextureSizeDesc};
use graph_core::ir::AccessMode;
use graph_core::texture::{TexelFormat, TextureDim, TextureType};

use crate::error::Error;
use crate::gpu::Gpu;
use crate::readback::ReadFuture;
use crate::scope::OpScope;

/// A texture a graph may bind: a wgpu texture of a [`Gpu`]'s device.
#[derive(Debug, Clone)]
pub struct Texture {
    gpu: Gpu,
    texture: wgpu::Texture,
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
/// graph's kernels need and those of copies. Made again at each bake and rebuild, so a texture sized like
/// an external one follows it when that one is rebound.
pub(crate) fn complete(
    gpu: &Gpu,
    desc: &GraphDesc,
    bound: &[Option<Texture>],
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
        let Some(size) = declared_extent(desc, i, &all) else {
            continue;
        };
        if b.role.is_external() {
            if let Some(texture) = &all[i] {
                let actual = extent(texture.wgpu());
                if actual != size {
                    return Err(wrong(format!(
                        "it is {} texels, and the graph declares {} ({})",
                        texels(actual),
                        texels(size),
                        declared_size(desc, i)
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
        let label = format!("{} texture {}", desc.name, b.name);
        all[i] = Some(gpu.make_texture(&label, ty, size, usage)?);
    }
    Ok(all)
}

/// Texture `index`'s size as its declaration gives it: its texels, or those of the texture it is sized
/// like, down to texels or to a bound texture; `None` where that one is not bound.
fn declared_extent(desc: &GraphDesc, index: usize, all: &[Option<Texture>]) -> Option<[u32; 3]> {
    let mut at = index;
    // A checked description's chains end (`GraphDesc::validate`); the bound keeps a wrong one finite.
    for _ in 0..=desc.buffers.len() {
        match desc.buffers.get(at)?.texture_size {
            Some(TextureSizeDesc::Texels(texels)) => return Some(texels),
            Some(TextureSizeDesc::Like(next)) if next as usize != index => at = next as usize,
            Some(TextureSizeDesc::Like(_)) => return None,
            None => return all.get(at)?.as_ref().map(|t| extent(t.wgpu())),
        }
    }
    None
}

/// How texture `index`'s declaration sizes it, for messages: `512, 512` or `like frame`.
fn declared_size(desc: &GraphDesc, index: usize) -> String {
    match desc.buffers[index].texture_size {
        Some(TextureSizeDesc::Texels(texels)) => format!("`{}`", self::texels(texels)),
        Some(TextureSizeDesc::Like(other)) => desc
            .buffers
            .get(other as usize)
            .map_or_else(String::new, |o| format!("the size of `{}`", o.name)),
        None => String::new(),
    }
}

fn extent(texture: &wgpu::Texture) -> [u32; 3] {
    [
        texture.width(),
        texture.height(),
        texture.depth_or_array_layers(),
    ]
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
        scope.finish(Ok(Texture {
            gpu: self.clone(),
            texture,
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

impl Texture {
    /// Wraps a texture the application made on `gpu`'s device. Bake checks it against the declaration: its
    /// format, dimension, usages, sample count and device.
    pub fn from_wgpu(gpu: &Gpu, texture: wgpu::Texture) -> Self {
        Texture {
            gpu: gpu.clone(),
            texture,
        }
    }

    pub fn wgpu(&self) -> &wgpu::Texture {
        &self.texture
    }

    /// Bytes of one row of texels, as [`Texture::write`] takes them and [`Texture::read_blocking`] gives them.
    pub fn row_bytes(&self) -> Result<u32, Error> {
        let block = self
            .texture
            .format()
            .block_copy_size(None)
            .ok_or_else(|| self.error("its format has no single texel size to copy by"))?;
        Ok(self.texture.width() * block)
    }

    /// Bytes of every texel, rows packed one after another (no padding), layer after layer.
    fn packed_bytes(&self) -> Result<usize, Error> {
        let rows = self.texture.height() * self.texture.depth_or_array_layers();
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
        self.gpu.queue().write_texture(
            self.texture.as_image_copy(),
            texels,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(self.row_bytes()?),
                rows_per_image: Some(self.texture.height()),
            },
            self.texture.size(),
        );
        scope.finish(Ok(()))
    }

    /// Every texel, once all work submitted before has finished: rows one after another without padding,
    /// layer after layer.
    pub fn read_blocking(&self) -> Result<Vec<u8>, Error> {
        self.gpu.check_lost()?;
        let row = self.row_bytes()?;
        // A copy out of a texture writes each row at a multiple of 256 bytes.
        let padded =
            row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let rows = self.texture.height() * self.texture.depth_or_array_layers();
        let size = u64::from(padded) * u64::from(rows);
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
            self.texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &staging,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded),
                    rows_per_image: Some(self.texture.height()),
                },
            },
            self.texture.size(),
        );
        self.gpu.queue().submit([encoder.finish()]);
        scope.finish(Ok(()))?;
        let words = ReadFuture::<u32>::start(&self.gpu, &staging, (size / 4) as usize).wait()?;
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        Ok(bytes
            .chunks(padded as usize)
            .take(rows as usize)
            .flat_map(|r| &r[..row as usize])
            .copied()
            .collect())
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
        let layers_fit = match ty.dim {
            TextureDim::D2 => t.depth_or_array_layers() == 1,
            _ => true,
        };
        if t.dimension() != wgpu_dimension(ty.dim) || !layers_fit {
            return Err(wrong(format!(
                "it is a {:?} texture of {} layers, and the graph declares `{ty}`",
                t.dimension(),
                t.depth_or_array_layers()
            )));
        }
        if t.sample_count() != 1 || t.mip_level_count() != 1 {
            return Err(wrong(format!(
                "it has {} samples and {} mip levels; kernels bind single-sampled textures of one level",
                t.sample_count(),
                t.mip_level_count()
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
        self.texture.create_view(&wgpu::TextureViewDescriptor {
            dimension: Some(view_dimension(dim)),
            ..Default::default()
        })
    }
}
