//! Textures a graph can hold: their declared type (`texture_2d<rgba8unorm>`, `texture_storage_2d<r32float,
//! write>`), parsed into a dimension, a texel format and an optional storage access, and the WGSL binding a
//! kernel gets for each access it declares.
//!
//! A declaration names the texel format even for a sampled texture (WGSL's `texture_2d<f32>` does not), so
//! that the graph can check what a kernel may do with it and bake can check the bound texture. The WGSL a
//! kernel sees is written from the parsed values, never copied from the declaration: a graph file's text
//! reaches WGSL only as one of the formats and dimensions listed here.

use std::fmt;

use crate::ir::AccessMode;
use crate::types::{Scalar, ValueType};

/// How many coordinates a texture has, and whether it has layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextureDim {
    D1,
    D2,
    D2Array,
    D3,
}

impl TextureDim {
    const ALL: [TextureDim; 4] = [
        TextureDim::D1,
        TextureDim::D2,
        TextureDim::D2Array,
        TextureDim::D3,
    ];

    /// The suffix WGSL's texture types share: `2d` in `texture_2d` and `texture_storage_2d`.
    pub const fn suffix(self) -> &'static str {
        match self {
            TextureDim::D1 => "1d",
            TextureDim::D2 => "2d",
            TextureDim::D2Array => "2d_array",
            TextureDim::D3 => "3d",
        }
    }

    /// How many numbers size a texture of this dimension: its width; width and height; width, height and
    /// layers (an array) or depth.
    pub const fn extent_count(self) -> usize {
        match self {
            TextureDim::D1 => 1,
            TextureDim::D2 => 2,
            TextureDim::D2Array | TextureDim::D3 => 3,
        }
    }
}

/// Whether a texture of `dim` has a size along `axis`: every one a width, 2-D ones and up a height, a 2-D
/// array layers and a 3-D texture depth.
pub const fn has_axis(dim: TextureDim, axis: crate::size::Axis) -> bool {
    use crate::size::Axis;
    match axis {
        Axis::Width => true,
        Axis::Height => !matches!(dim, TextureDim::D1),
        Axis::Layers => matches!(dim, TextureDim::D2Array),
        Axis::Depth => matches!(dim, TextureDim::D3),
    }
}

/// A texture's size as declared after its format: per axis its texels or a `u32` parameter
/// (`texture_2d<rgba16float; 512, 512>`, `texture_2d<rgba16float; params.w, params.h>`), or another texture's
/// size (`texture_2d<r32float; frame>`). A graph-owned texture needs one; an external texture may have one
/// without parameters, which bake checks the bound texture against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextureSize {
    /// Width, then height, then layers or depth: as many as the dimension has ([`TextureDim::extent_count`]).
    Axes(Vec<AxisSize>),
    /// The named texture's size.
    Like(String),
}

/// A texture's size along one axis, as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisSize {
    /// A number of texels, at least 1.
    Texels(u32),
    /// `params.NAME`, or `params.NAME.x` for a component of a vector parameter (0 = x .. 3 = w): read at
    /// each replay, and the texture made again when it changes.
    Param { name: String, component: Option<u8> },
}

impl TextureSize {
    /// The texels along each axis, when no axis reads a parameter.
    pub fn texels(&self) -> Option<Vec<u32>> {
        match self {
            TextureSize::Axes(axes) => axes
                .iter()
                .map(|a| match a {
                    AxisSize::Texels(n) => Some(*n),
                    AxisSize::Param { .. } => None,
                })
                .collect(),
            TextureSize::Like(_) => None,
        }
    }
}

impl fmt::Display for TextureSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextureSize::Axes(axes) => {
                let axes: Vec<String> = axes.iter().map(AxisSize::to_string).collect();
                f.write_str(&axes.join(", "))
            }
            TextureSize::Like(name) => f.write_str(name),
        }
    }
}

impl fmt::Display for AxisSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxisSize::Texels(n) => write!(f, "{n}"),
            AxisSize::Param { name, component } => {
                write!(f, "params.{name}")?;
                match component {
                    Some(c) => write!(f, ".{}", COMPONENTS.get(usize::from(*c)).unwrap_or(&'?')),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The components of a vector parameter an axis may read, by index.
const COMPONENTS: [char; 4] = ['x', 'y', 'z', 'w'];

impl AxisSize {
    /// `512`, `params.w` or `params.size.x`; `None` for anything else (an expression, a texture's name).
    fn parse(text: &str) -> Option<Result<Self, TextureTypeError>> {
        if let Some(path) = text.strip_prefix("params.") {
            let (name, component) = match path.split_once('.') {
                Some((name, letter)) => {
                    let mut letters = letter.chars();
                    let c = letters.next().filter(|_| letters.as_str().is_empty());
                    let index = c.and_then(|c| COMPONENTS.iter().position(|&k| k == c))?;
                    (name, Some(index as u8))
                }
                None => (path, None),
            };
            return crate::names::is_identifier(name).then(|| {
                Ok(AxisSize::Param {
                    name: name.to_string(),
                    component,
                })
            });
        }
        let texels: u32 = text.parse().ok()?;
        Some(match texels {
            0 => Err(TextureTypeError::ZeroSize),
            n => Ok(AxisSize::Texels(n)),
        })
    }
}

/// What a shader gets from a texel of a format: floats (normalized or not), or integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SampleKind {
    /// Floats that a filtering sampler may blend.
    Float,
    /// Floats no filtering sampler may blend on every device (32-bit floats).
    UnfilterableFloat,
    Uint,
    Sint,
}

/// A texel format a graph's texture may have: WGSL's storage texel formats, and a few more that kernels may
/// only read (sampled) wherever the device lacks their storage use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TexelFormat {
    Rgba8Unorm,
    Rgba8Snorm,
    Rgba8Uint,
    Rgba8Sint,
    Rgba16Uint,
    Rgba16Sint,
    Rgba16Float,
    R32Uint,
    R32Sint,
    R32Float,
    Rg32Uint,
    Rg32Sint,
    Rg32Float,
    Rgba32Uint,
    Rgba32Sint,
    Rgba32Float,
    Bgra8Unorm,
    R8Unorm,
    Rg8Unorm,
    R16Float,
    Rg16Float,
}

/// Whether a kernel may bind a texture of a format as storage with an access, on every device WebGPU
/// describes, or only where the device has a feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageSupport {
    Portable,
    /// Only with this wgpu feature on the device.
    Feature(&'static str),
}

impl TexelFormat {
    pub const ALL: [TexelFormat; 21] = [
        TexelFormat::Rgba8Unorm,
        TexelFormat::Rgba8Snorm,
        TexelFormat::Rgba8Uint,
        TexelFormat::Rgba8Sint,
        TexelFormat::Rgba16Uint,
        TexelFormat::Rgba16Sint,
        TexelFormat::Rgba16Float,
        TexelFormat::R32Uint,
        TexelFormat::R32Sint,
        TexelFormat::R32Float,
        TexelFormat::Rg32Uint,
        TexelFormat::Rg32Sint,
        TexelFormat::Rg32Float,
        TexelFormat::Rgba32Uint,
        TexelFormat::Rgba32Sint,
        TexelFormat::Rgba32Float,
        TexelFormat::Bgra8Unorm,
        TexelFormat::R8Unorm,
        TexelFormat::Rg8Unorm,
        TexelFormat::R16Float,
        TexelFormat::Rg16Float,
    ];

    /// The WGSL (and WebGPU) spelling.
    pub const fn wgsl(self) -> &'static str {
        match self {
            TexelFormat::Rgba8Unorm => "rgba8unorm",
            TexelFormat::Rgba8Snorm => "rgba8snorm",
            TexelFormat::Rgba8Uint => "rgba8uint",
            TexelFormat::Rgba8Sint => "rgba8sint",
            TexelFormat::Rgba16Uint => "rgba16uint",
            TexelFormat::Rgba16Sint => "rgba16sint",
            TexelFormat::Rgba16Float => "rgba16float",
            TexelFormat::R32Uint => "r32uint",
            TexelFormat::R32Sint => "r32sint",
            TexelFormat::R32Float => "r32float",
            TexelFormat::Rg32Uint => "rg32uint",
            TexelFormat::Rg32Sint => "rg32sint",
            TexelFormat::Rg32Float => "rg32float",
            TexelFormat::Rgba32Uint => "rgba32uint",
            TexelFormat::Rgba32Sint => "rgba32sint",
            TexelFormat::Rgba32Float => "rgba32float",
            TexelFormat::Bgra8Unorm => "bgra8unorm",
            TexelFormat::R8Unorm => "r8unorm",
            TexelFormat::Rg8Unorm => "rg8unorm",
            TexelFormat::R16Float => "r16float",
            TexelFormat::Rg16Float => "rg16float",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.wgsl() == text)
    }

    /// What a shader reads from it.
    pub const fn sample_kind(self) -> SampleKind {
        match self {
            TexelFormat::Rgba8Uint
            | TexelFormat::Rgba16Uint
            | TexelFormat::R32Uint
            | TexelFormat::Rg32Uint
            | TexelFormat::Rgba32Uint => SampleKind::Uint,
            TexelFormat::Rgba8Sint
            | TexelFormat::Rgba16Sint
            | TexelFormat::R32Sint
            | TexelFormat::Rg32Sint
            | TexelFormat::Rgba32Sint => SampleKind::Sint,
            TexelFormat::R32Float | TexelFormat::Rg32Float | TexelFormat::Rgba32Float => {
                SampleKind::UnfilterableFloat
            }
            TexelFormat::Rgba8Unorm
            | TexelFormat::Rgba8Snorm
            | TexelFormat::Rgba16Float
            | TexelFormat::Bgra8Unorm
            | TexelFormat::R8Unorm
            | TexelFormat::Rg8Unorm
            | TexelFormat::R16Float
            | TexelFormat::Rg16Float => SampleKind::Float,
        }
    }

    /// The scalar of the `vec4` a shader reads and writes.
    pub const fn scalar(self) -> Scalar {
        match self.sample_kind() {
            SampleKind::Float | SampleKind::UnfilterableFloat => Scalar::F32,
            SampleKind::Uint => Scalar::U32,
            SampleKind::Sint => Scalar::I32,
        }
    }

    /// Bytes per texel.
    pub const fn texel_bytes(self) -> u32 {
        match self {
            TexelFormat::R8Unorm => 1,
            TexelFormat::Rg8Unorm | TexelFormat::R16Float => 2,
            TexelFormat::Rgba8Unorm
            | TexelFormat::Rgba8Snorm
            | TexelFormat::Rgba8Uint
            | TexelFormat::Rgba8Sint
            | TexelFormat::Bgra8Unorm
            | TexelFormat::R32Uint
            | TexelFormat::R32Sint
            | TexelFormat::R32Float
            | TexelFormat::Rg16Float => 4,
            TexelFormat::Rgba16Uint
            | TexelFormat::Rgba16Sint
            | TexelFormat::Rgba16Float
            | TexelFormat::Rg32Uint
            | TexelFormat::Rg32Sint
            | TexelFormat::Rg32Float => 8,
            TexelFormat::Rgba32Uint | TexelFormat::Rgba32Sint | TexelFormat::Rgba32Float => 16,
        }
    }

    /// Whether a kernel may bind it as storage with `access` everywhere (WebGPU's portable list: the first
    /// sixteen WGSL storage formats written or read; read and write at once only the single-channel 32-bit
    /// ones), or only with a device feature.
    pub const fn storage(self, access: StorageAccess) -> StorageSupport {
        match (self, access) {
            (TexelFormat::R32Uint | TexelFormat::R32Sint | TexelFormat::R32Float, _) => {
                StorageSupport::Portable
            }
            (_, StorageAccess::ReadWrite) => {
                StorageSupport::Feature("TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES")
            }
            (TexelFormat::Bgra8Unorm, _) => StorageSupport::Feature("BGRA8UNORM_STORAGE"),
            (
                TexelFormat::R8Unorm
                | TexelFormat::Rg8Unorm
                | TexelFormat::R16Float
                | TexelFormat::Rg16Float,
                _,
            ) => StorageSupport::Feature(
                "TEXTURE_FORMAT_16BIT_NORM or TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES",
            ),
            _ => StorageSupport::Portable,
        }
    }
}

impl fmt::Display for TexelFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wgsl())
    }
}

/// How a kernel binds a storage texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StorageAccess {
    Read,
    Write,
    ReadWrite,
}

impl StorageAccess {
    pub const fn wgsl(self) -> &'static str {
        match self {
            StorageAccess::Read => "read",
            StorageAccess::Write => "write",
            StorageAccess::ReadWrite => "read_write",
        }
    }

    /// The access a kernel's declared mode asks for.
    pub const fn of(mode: AccessMode) -> Self {
        match mode {
            AccessMode::Read => StorageAccess::Read,
            AccessMode::Write => StorageAccess::Write,
            AccessMode::ReadWrite => StorageAccess::ReadWrite,
        }
    }

    fn parse(text: &str) -> Option<Self> {
        [
            StorageAccess::Read,
            StorageAccess::Write,
            StorageAccess::ReadWrite,
        ]
        .into_iter()
        .find(|a| a.wgsl() == text)
    }
}

/// A texture's declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TextureType {
    pub dim: TextureDim,
    pub format: TexelFormat,
    /// `Some` for `texture_storage_*<format, access>`: kernels bind it as storage with this access only.
    /// `None` for `texture_*<format>`: kernels that read it bind it as a sampled texture, kernels that write
    /// it as a storage texture.
    pub storage: Option<StorageAccess>,
}

/// Why a texture type was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextureTypeError {
    /// Not `texture_<dim><format>` or `texture_storage_<dim><format, access>`.
    Form,
    UnknownDim(String),
    UnknownFormat(String),
    UnknownAccess(String),
    /// Neither texel counts and parameters nor a texture's name after the `;`.
    Size(String),
    /// As many texel counts as the dimension has not.
    SizeCount {
        dim: TextureDim,
        given: usize,
    },
    /// A texel count of 0.
    ZeroSize,
}

impl fmt::Display for TextureTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextureTypeError::Form => f.write_str(
                "a texture type is `texture_2d<FORMAT>` or `texture_storage_2d<FORMAT, ACCESS>` (1d, 2d, 2d_array or 3d)",
            ),
            TextureTypeError::UnknownDim(d) => write!(
                f,
                "`{d}` is no texture dimension; the dimensions are {}",
                TextureDim::ALL.map(|d| format!("`{}`", d.suffix())).join(", ")
            ),
            TextureTypeError::UnknownFormat(name) => {
                let known = TexelFormat::ALL.map(|f| f.wgsl());
                match crate::names::did_you_mean(name, known) {
                    Some(best) => write!(f, "unknown texel format `{name}`; did you mean `{best}`?"),
                    None => write!(
                        f,
                        "unknown texel format `{name}`; the formats are {}",
                        known.map(|k| format!("`{k}`")).join(", ")
                    ),
                }
            }
            TextureTypeError::UnknownAccess(a) => write!(
                f,
                "`{a}` is no storage access; the accesses are `read`, `write` and `read_write`"
            ),
            TextureTypeError::Size(text) => write!(
                f,
                "`{text}` is no texture size: write its texels (`; 512, 512`), `u32` parameters \
                 (`; params.w, params.h`) or another texture's name (`; frame`) after the format"
            ),
            TextureTypeError::SizeCount { dim, given } => write!(
                f,
                "a `texture_{}` is sized by {} texel count{} ({}), not {given}",
                dim.suffix(),
                dim.extent_count(),
                if dim.extent_count() == 1 { "" } else { "s" },
                match dim {
                    TextureDim::D1 => "its width",
                    TextureDim::D2 => "width and height",
                    TextureDim::D2Array => "width, height and layers",
                    TextureDim::D3 => "width, height and depth",
                }
            ),
            TextureTypeError::ZeroSize => f.write_str("a texture has at least one texel along each dimension"),
        }
    }
}

impl TextureType {
    /// Whether `text` is a texture type rather than a buffer element type: it starts `texture_`.
    pub fn is_texture_text(text: &str) -> bool {
        text.trim_start().starts_with("texture_")
    }

    /// Parses a declaration: a type, and after a `;` in its angle brackets, an optional size
    /// (`texture_2d<rgba16float; 512, 512>`, `texture_storage_2d<r32float, write; frame>`).
    pub fn parse_declaration(text: &str) -> Result<(Self, Option<TextureSize>), TextureTypeError> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let Some((ty, size)) = compact.split_once(';') else {
            return Ok((Self::parse(&compact)?, None));
        };
        let size = size.strip_suffix('>').ok_or(TextureTypeError::Form)?;
        let ty = Self::parse(&format!("{ty}>"))?;
        let parts: Vec<&str> = size.split(',').collect();
        let axes: Option<Result<Vec<AxisSize>, TextureTypeError>> =
            parts.iter().map(|p| AxisSize::parse(p)).collect();
        let size = match axes {
            Some(Ok(axes)) if axes.len() != ty.dim.extent_count() => {
                return Err(TextureTypeError::SizeCount {
                    dim: ty.dim,
                    given: axes.len(),
                });
            }
            Some(axes) => TextureSize::Axes(axes?),
            None if crate::names::is_identifier(size) => TextureSize::Like(size.to_string()),
            None => return Err(TextureTypeError::Size(size.to_string())),
        };
        Ok((ty, Some(size)))
    }

    /// Parses `texture_2d<rgba8unorm>` or `texture_storage_2d<r32float, write>`; whitespace is ignored.
    pub fn parse(text: &str) -> Result<Self, TextureTypeError> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let (head, args) = compact
            .strip_suffix('>')
            .and_then(|rest| rest.split_once('<'))
            .filter(|(_, args)| !args.contains(['<', '>']))
            .ok_or(TextureTypeError::Form)?;
        let (storage, dim) = match head.strip_prefix("texture_storage_") {
            Some(dim) => (true, dim),
            None => (
                false,
                head.strip_prefix("texture_")
                    .ok_or(TextureTypeError::Form)?,
            ),
        };
        let dim = TextureDim::ALL
            .into_iter()
            .find(|d| d.suffix() == dim)
            .ok_or_else(|| TextureTypeError::UnknownDim(dim.to_string()))?;
        let mut parts = args.split(',');
        let format_text = parts.next().unwrap_or_default();
        let format = TexelFormat::parse(format_text)
            .ok_or_else(|| TextureTypeError::UnknownFormat(format_text.to_string()))?;
        let access = match (storage, parts.next(), parts.next()) {
            (false, None, _) => None,
            (true, Some(access), None) => Some(
                StorageAccess::parse(access)
                    .ok_or_else(|| TextureTypeError::UnknownAccess(access.to_string()))?,
            ),
            _ => return Err(TextureTypeError::Form),
        };
        Ok(TextureType {
            dim,
            format,
            storage: access,
        })
    }

    /// The WGSL type a kernel declaring `mode` binds it as: sampled for a read of a texture declared
    /// sampled, else storage with the access the mode asks.
    pub fn binding_wgsl(&self, mode: AccessMode) -> String {
        let dim = self.dim.suffix();
        match (self.storage, mode) {
            (None, AccessMode::Read) => format!("texture_{dim}<{}>", self.format.scalar().wgsl()),
            _ => format!(
                "texture_storage_{dim}<{}, {}>",
                self.format.wgsl(),
                StorageAccess::of(mode).wgsl()
            ),
        }
    }

    /// The element type standing in for its texels where the graph treats it like a buffer: its format's
    /// four-component vector (`vec4<f32>` for `rgba8unorm`), what a shader reads and writes.
    pub const fn texel_type(&self) -> ValueType {
        ValueType::vector(self.format.scalar(), 4)
    }

    /// The declaration's spelling, written from the parsed values.
    pub fn declared(&self) -> String {
        let dim = self.dim.suffix();
        match self.storage {
            None => format!("texture_{dim}<{}>", self.format.wgsl()),
            Some(access) => format!(
                "texture_storage_{dim}<{}, {}>",
                self.format.wgsl(),
                access.wgsl()
            ),
        }
    }
}

impl fmt::Display for TextureType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.declared())
    }
}

/// How a sampler blends texels: the nearest one, or the ones around the coordinate weighted (bilinear).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SamplerFilter {
    Nearest,
    Linear,
}

/// What a sampler does with a coordinate outside the texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SamplerAddress {
    /// The nearest edge texel.
    Clamp,
    /// The texture again (the coordinate's fraction).
    Repeat,
    /// The texture again, mirrored.
    Mirror,
}

/// A sampler's declared type, `sampler<linear, clamp>`: its filter (for magnifying and minifying alike) and
/// its address mode (along every axis). The graph makes it at bake; kernels that declare it `read` bind it,
/// and sample textures with it through `textureSampleLevel` (compute shaders have no implicit level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SamplerType {
    pub filter: SamplerFilter,
    pub address: SamplerAddress,
}

const FILTERS: [(SamplerFilter, &str); 2] = [
    (SamplerFilter::Nearest, "nearest"),
    (SamplerFilter::Linear, "linear"),
];

const ADDRESSES: [(SamplerAddress, &str); 3] = [
    (SamplerAddress::Clamp, "clamp"),
    (SamplerAddress::Repeat, "repeat"),
    (SamplerAddress::Mirror, "mirror"),
];

/// Why a sampler type was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SamplerTypeError {
    /// Not `sampler<FILTER, ADDRESS>`.
    Form,
    UnknownFilter(String),
    UnknownAddress(String),
}

impl fmt::Display for SamplerTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words = |list: &[&str]| {
            list.iter()
                .map(|w| format!("`{w}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        };
        match self {
            SamplerTypeError::Form => f.write_str(
                "a sampler type is `sampler<FILTER, ADDRESS>`: `sampler<linear, clamp>`, `sampler<nearest, repeat>`",
            ),
            SamplerTypeError::UnknownFilter(w) => write!(
                f,
                "`{w}` is no sampler filter; the filters are {}",
                words(&FILTERS.map(|(_, w)| w))
            ),
            SamplerTypeError::UnknownAddress(w) => write!(
                f,
                "`{w}` is no address mode; the modes are {}",
                words(&ADDRESSES.map(|(_, w)| w))
            ),
        }
    }
}

impl SamplerType {
    /// Whether `text` is a sampler type rather than a buffer element or texture type: it starts `sampler`.
    pub fn is_sampler_text(text: &str) -> bool {
        text.trim_start().starts_with("sampler")
    }

    /// Parses `sampler<linear, clamp>`; whitespace is ignored.
    pub fn parse(text: &str) -> Result<Self, SamplerTypeError> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let args = compact
            .strip_prefix("sampler<")
            .and_then(|rest| rest.strip_suffix('>'))
            .ok_or(SamplerTypeError::Form)?;
        let (filter, address) = args.split_once(',').ok_or(SamplerTypeError::Form)?;
        let filter = FILTERS
            .into_iter()
            .find(|(_, w)| *w == filter)
            .map(|(f, _)| f)
            .ok_or_else(|| SamplerTypeError::UnknownFilter(filter.to_string()))?;
        let address = ADDRESSES
            .into_iter()
            .find(|(_, w)| *w == address)
            .map(|(a, _)| a)
            .ok_or_else(|| SamplerTypeError::UnknownAddress(address.to_string()))?;
        Ok(SamplerType { filter, address })
    }

    /// Whether it blends texels, so that every texture it samples must be of a filterable format.
    pub const fn filtering(self) -> bool {
        matches!(self.filter, SamplerFilter::Linear)
    }

    /// The declaration's spelling, written from the parsed values.
    pub fn declared(&self) -> String {
        let filter = FILTERS
            .iter()
            .find(|(f, _)| *f == self.filter)
            .map_or("", |(_, w)| w);
        let address = ADDRESSES
            .iter()
            .find(|(a, _)| *a == self.address)
            .map_or("", |(_, w)| w);
        format!("sampler<{filter}, {address}>")
    }
}

impl fmt::Display for SamplerType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.declared())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_and_storage_types_parse_and_print_as_written() {
        for text in [
            "texture_2d<rgba8unorm>",
            "texture_1d<r32float>",
            "texture_2d_array<rgba16float>",
            "texture_3d<r32uint>",
            "texture_storage_2d<r32float, write>",
            "texture_storage_3d<rgba32sint, read_write>",
            "texture_storage_1d<bgra8unorm, read>",
        ] {
            let parsed = TextureType::parse(text).expect(text);
            assert_eq!(parsed.declared(), text);
            assert!(TextureType::is_texture_text(text));
        }
        let spaced = TextureType::parse(" texture_storage_2d < r32float ,write > ")
            .expect(" texture_storage_2d < r32float ,write > ");
        assert_eq!(spaced.declared(), "texture_storage_2d<r32float, write>");
    }

    #[test]
    fn malformed_types_are_refused_with_the_reason() {
        use TextureTypeError as E;
        let cases = [
            ("texture_2d", E::Form),
            ("texture_2d<>", E::UnknownFormat(String::new())),
            ("texture_4d<rgba8unorm>", E::UnknownDim("4d".into())),
            (
                "texture_2d<rgba8unorn>",
                E::UnknownFormat("rgba8unorn".into()),
            ),
            ("texture_2d<rgba8unorm, write>", E::Form),
            ("texture_storage_2d<r32float>", E::Form),
            ("texture_storage_2d<r32float, write, read>", E::Form),
            (
                "texture_storage_2d<r32float, writ>",
                E::UnknownAccess("writ".into()),
            ),
            ("texture_2d<rgba8unorm>;@group(0)", E::Form),
            ("sampler", E::Form),
        ];
        for (text, want) in cases {
            assert_eq!(TextureType::parse(text), Err(want), "{text}");
        }
        let typo = TextureTypeError::UnknownFormat("rgba8unorn".into()).to_string();
        assert!(typo.contains("did you mean `rgba8unorm`?"), "{typo}");
    }

    #[test]
    fn a_kernel_binds_a_sampled_texture_for_reads_and_storage_for_writes() {
        let frame = TextureType::parse("texture_2d<rgba8unorm>").expect("texture_2d<rgba8unorm>");
        assert_eq!(frame.binding_wgsl(AccessMode::Read), "texture_2d<f32>");
        assert_eq!(
            frame.binding_wgsl(AccessMode::Write),
            "texture_storage_2d<rgba8unorm, write>"
        );
        let counts =
            TextureType::parse("texture_2d_array<r32uint>").expect("texture_2d_array<r32uint>");
        assert_eq!(
            counts.binding_wgsl(AccessMode::Read),
            "texture_2d_array<u32>"
        );
        assert_eq!(
            counts.binding_wgsl(AccessMode::ReadWrite),
            "texture_storage_2d_array<r32uint, read_write>"
        );
        let edges = TextureType::parse("texture_storage_2d<r32float, read>")
            .expect("texture_storage_2d<r32float, read>");
        assert_eq!(
            edges.binding_wgsl(AccessMode::Read),
            "texture_storage_2d<r32float, read>"
        );
    }

    #[test]
    fn the_portable_storage_list_is_webgpus() {
        use StorageAccess::*;
        for f in TexelFormat::ALL {
            let read_write_everywhere = matches!(
                f,
                TexelFormat::R32Float | TexelFormat::R32Uint | TexelFormat::R32Sint
            );
            assert_eq!(
                f.storage(ReadWrite) == StorageSupport::Portable,
                read_write_everywhere,
                "{f}"
            );
            let written_everywhere = TexelFormat::ALL[..16].contains(&f);
            assert_eq!(
                f.storage(Write) == StorageSupport::Portable,
                written_everywhere,
                "{f}"
            );
        }
    }

    #[test]
    fn sampler_types_parse_print_and_refuse_with_the_reason() {
        for text in [
            "sampler<linear, clamp>",
            "sampler<nearest, repeat>",
            "sampler<linear, mirror>",
        ] {
            let parsed = SamplerType::parse(text).expect(text);
            assert_eq!(parsed.declared(), text);
            assert!(SamplerType::is_sampler_text(text));
            assert!(!TextureType::is_texture_text(text));
        }
        assert!(SamplerType::parse("sampler<linear,clamp>").is_ok_and(|s| s.filtering()));
        assert!(SamplerType::parse(" sampler < nearest , clamp > ").is_ok_and(|s| !s.filtering()));
        use SamplerTypeError as E;
        for (text, want) in [
            ("sampler", E::Form),
            ("sampler<linear>", E::Form),
            ("sampler<linear, clamp", E::Form),
            (
                "sampler<bilinear, clamp>",
                E::UnknownFilter("bilinear".into()),
            ),
            ("sampler<linear, wrap>", E::UnknownAddress("wrap".into())),
            (
                "sampler<linear, clamp, clamp>",
                E::UnknownAddress("clamp,clamp".into()),
            ),
            ("sampler_comparison<linear, clamp>", E::Form),
        ] {
            assert_eq!(SamplerType::parse(text), Err(want), "{text}");
        }
        let message = E::UnknownAddress("wrap".into()).to_string();
        assert!(
            message.contains("`clamp` or `repeat` or `mirror`"),
            "{message}"
        );
    }
}
