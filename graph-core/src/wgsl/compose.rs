//! A kernel's WGSL module: generated declarations (bindings, parameter struct, argument functions), the
//! parameter variable for the chosen storage, then the user's code, with a map of which part is which.

use std::ops::Range;

use crate::ir::{AccessMode, ParamsStorage};
use crate::layout::WGSL_PARAMS_STRUCT;
use crate::texture::{SamplerType, TextureType};
use crate::types::ValueType;

/// What a byte range of the composed module came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Generated,
    /// A library kernel argument's accessor function.
    Arg(usize),
    /// The user's own code, starting at this offset of the module.
    User,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composed {
    pub source: String,
    pub segments: Vec<(Range<usize>, Segment)>,
    /// Where the user's code starts in `source`.
    pub user_start: usize,
    /// What was inserted into the user's code (the conversion of each `f16` parameter's read,
    /// [`f16_param_reads`]): at which offset of the code as composed, how many bytes.
    pub user_insertions: Vec<(usize, usize)>,
    /// The user's code as written: what [`Composed::locate`]'s user ranges are ranges of.
    pub user: String,
}

impl Composed {
    /// The generated declarations (bindings, parameter struct and variable), without argument functions or
    /// the user's code.
    pub fn prelude(&self) -> &str {
        let end = self
            .segments
            .iter()
            .find(|(_, seg)| *seg != Segment::Generated)
            .map_or(self.source.len(), |(range, _)| range.start);
        &self.source[..end]
    }

    /// Which part `range` (of the module) falls in; user ranges are made relative to the user's text.
    pub fn locate(&self, range: &Range<usize>) -> (Segment, Range<usize>) {
        for (seg_range, seg) in &self.segments {
            if seg_range.contains(&range.start)
                || (range.start == seg_range.end && *seg == Segment::User)
            {
                let rel =
                    range.start - seg_range.start..range.end.min(seg_range.end) - seg_range.start;
                if *seg == Segment::User {
                    let original = |at: usize| before_insertions(at, &self.user_insertions);
                    return (seg.clone(), original(rel.start)..original(rel.end));
                }
                return (seg.clone(), rel);
            }
        }
        (Segment::Generated, range.clone())
    }
}

/// What a binding of group 0 holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// A storage buffer of elements of this type.
    Buffer(ValueType),
    /// A texture of this declared type ([`crate::texture`]).
    Texture(TextureType),
    /// A sampler: WGSL's `sampler` whatever its filter and address mode, which the bind group gives.
    Sampler(SamplerType),
}

/// `@group(0) @binding(i) var<storage, ..> name: array<T>;` for each binding, in order.
pub fn binding_declarations<'a>(
    bindings: impl IntoIterator<Item = (&'a str, ValueType, AccessMode)>,
    atomic: &[&str],
) -> String {
    resource_declarations(
        bindings
            .into_iter()
            .map(|(name, elem, mode)| (name, Resource::Buffer(elem), mode)),
        atomic,
    )
}

/// [`binding_declarations`] where bindings may be textures: `@group(0) @binding(i) var name: texture_2d<f32>;`
/// for a texture read from a sampled declaration, `texture_storage_2d<FORMAT, ACCESS>` otherwise, written
/// from the parsed type ([`TextureType::binding_wgsl`]), and `var name: sampler;` for a sampler.
///
/// A buffer of `f16` elements makes the declarations start with `enable f16;` (a directive must come before
/// every declaration, and the declarations start the module); a buffer of `u8` or `u16` is declared as its
/// `u32` words and brings the helpers that unpack and pack them ([`PACKED_HELPERS`]).
pub fn resource_declarations<'a>(
    bindings: impl IntoIterator<Item = (&'a str, Resource, AccessMode)>,
    atomic: &[&str],
) -> String {
    let bindings: Vec<_> = bindings.into_iter().collect();
    let buffer_types = || {
        bindings
            .iter()
            .filter_map(|(_, resource, _)| match resource {
                Resource::Buffer(elem) => Some(*elem),
                _ => None,
            })
    };
    let f16 = buffer_types().any(ValueType::is_f16);
    let packed = buffer_types().any(|t| t.scalar.packed().is_some());
    let mut out = String::new();
    if f16 {
        out.push_str(ENABLE_F16);
    }
    out.push_str(&declare_each(bindings, atomic));
    if packed {
        out.push_str(PACKED_HELPERS);
    }
    out
}

/// The directive a module using `f16` starts with.
pub const ENABLE_F16: &str = "enable f16;\n";

/// The functions every module that binds a `u8` or `u16` buffer gets, to read and write its elements in the
/// `u32` words WGSL sees (element `i` of a `u8` buffer is byte `i % 4` of word `i / 4`, the low byte first,
/// as the host lays bytes out on every platform wgpu runs on). WGSL's own `unpack4xU8` and `pack4xU8` do a
/// whole word of `u8`; these do a word of `u16` and one element of either.
pub const PACKED_HELPERS: &str = "\
fn unpack2xU16(word: u32) -> vec2<u32> { return vec2<u32>(word & 0xffffu, word >> 16u); }
fn pack2xU16(v: vec2<u32>) -> u32 { return (v.x & 0xffffu) | (v.y << 16u); }
fn u8_at(word: u32, lane: u32) -> u32 { return extractBits(word, (lane & 3u) * 8u, 8u); }
fn with_u8_at(word: u32, lane: u32, value: u32) -> u32 { return insertBits(word, value, (lane & 3u) * 8u, 8u); }
fn u16_at(word: u32, lane: u32) -> u32 { return extractBits(word, (lane & 1u) * 16u, 16u); }
fn with_u16_at(word: u32, lane: u32, value: u32) -> u32 { return insertBits(word, value, (lane & 1u) * 16u, 16u); }
";

/// The names [`PACKED_HELPERS`] defines.
pub const PACKED_HELPER_NAMES: [&str; 6] = [
    "unpack2xU16",
    "pack2xU16",
    "u8_at",
    "with_u8_at",
    "u16_at",
    "with_u16_at",
];

fn declare_each(bindings: Vec<(&str, Resource, AccessMode)>, atomic: &[&str]) -> String {
    bindings
        .into_iter()
        .enumerate()
        .map(|(i, (name, resource, mode))| {
            let elem = match resource {
                Resource::Buffer(elem) => elem,
                Resource::Texture(texture) => {
                    return format!(
                        "@group(0) @binding({i}) var {name}: {};\n",
                        texture.binding_wgsl(mode)
                    );
                }
                Resource::Sampler(_) => {
                    return format!("@group(0) @binding({i}) var {name}: sampler;\n");
                }
            };
            // WGSL storage has no write-only access: `write` means "overwrites", which the graph uses for
            // ordering, and the shader gets read_write.
            let access = if mode == AccessMode::Read {
                "read"
            } else {
                "read_write"
            };
            // Library kernels that count with `atomicAdd` see atomics; the buffer holds plain elements.
            let elem = match atomic.contains(&name) {
                true => format!("atomic<{}>", elem.storage_wgsl()),
                false => elem.storage_wgsl(),
            };
            format!("@group(0) @binding({i}) var<storage, {access}> {name}: array<{elem}>;\n")
        })
        .collect()
}

/// Where `at` (an offset of text with `insertions` made) was before them: an offset inside an insertion maps
/// to where it was made.
fn before_insertions(at: usize, insertions: &[(usize, usize)]) -> usize {
    let mut shift = 0;
    for &(start, len) in insertions {
        if at >= start + len {
            shift += len;
        } else if at > start {
            return start - shift;
        }
    }
    at - shift
}

/// `text` with each read of an `f16` parameter (`params.h` of `f16_params`) converted to its type
/// (`f16(params.h)`, `vec2<f16>(params.v)`): the parameter block holds it as `f32`s
/// ([`ValueType::in_params`]). Returns the text and its insertions (offset in the new text, bytes), so a
/// diagnostic in it can be placed in the user's text.
pub fn f16_param_reads(
    text: &str,
    f16_params: &[(&str, ValueType)],
) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(text.len());
    let mut insertions = Vec::new();
    let mut copied = 0;
    for read in super::param_uses(text) {
        let Some((_, ty)) = f16_params.iter().find(|(name, _)| *name == read.name) else {
            continue;
        };
        out.push_str(&text[copied..read.access.start]);
        let open = format!("{}(", ty.wgsl());
        insertions.push((out.len(), open.len()));
        out.push_str(&open);
        out.push_str(&text[read.access.clone()]);
        insertions.push((out.len(), 1));
        out.push(')');
        copied = read.access.end;
    }
    out.push_str(&text[copied..]);
    (out, insertions)
}

/// The `params` variable for the parameter storage; empty when there is no parameter.
pub fn params_declaration(storage: ParamsStorage, has_params: bool) -> &'static str {
    match (has_params, storage) {
        (false, _) => "",
        (true, ParamsStorage::Immediates) => "var<immediate> params: GraphParams;\n",
        (true, ParamsStorage::Uniform) => {
            "@group(1) @binding(0) var<uniform> params: GraphParams;\n"
        }
    }
}

/// Puts the module together: `declarations` (bindings and parameter struct), the parameter variable for
/// `storage` (none for `None`: WGSL declarations may come in any order, so a caller can append the one line
/// [`params_declaration`] gives for the storage it needs), one function per library argument
/// (`fn alpha() -> f32 { return params.a; }`), then `user`. An argument is returned as it is, not converted:
/// a value of another type is an error, not a silent conversion. With `f16` parameters (`f16_params`), the
/// module enables `f16` and every read of one in an argument or the user's code is converted
/// ([`f16_param_reads`]).
pub fn compose(
    declarations: &str,
    params_struct: &str,
    f16_params: &[(&str, ValueType)],
    storage: Option<ParamsStorage>,
    args: &[(&str, &str, &str)],
    user_text: &str,
) -> Composed {
    debug_assert!(params_struct.is_empty() || params_struct.contains(WGSL_PARAMS_STRUCT));
    let mut source =
        String::with_capacity(declarations.len() + params_struct.len() + user_text.len() + 128);
    let mut segments = Vec::new();
    if !f16_params.is_empty() && !declarations.starts_with(ENABLE_F16) {
        source.push_str(ENABLE_F16);
    }
    source.push_str(declarations);
    source.push_str(params_struct);
    if let Some(storage) = storage {
        source.push_str(params_declaration(storage, !params_struct.is_empty()));
    }
    segments.push((0..source.len(), Segment::Generated));
    for (i, (name, ty, value)) in args.iter().enumerate() {
        let start = source.len();
        let (value, _) = f16_param_reads(value, f16_params);
        source.push_str(&format!("fn {name}() -> {ty} {{ return {value}; }}\n"));
        segments.push((start..source.len(), Segment::Arg(i)));
    }
    let user_start = source.len();
    let (user, user_insertions) = f16_param_reads(user_text, f16_params);
    source.push_str(&user);
    segments.push((user_start..source.len(), Segment::User));
    Composed {
        source,
        segments,
        user_start,
        user_insertions,
        user: user_text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_ranges_back_to_their_part() {
        let decls = binding_declarations([("x", ValueType::F32, AccessMode::Read)], &[]);
        let c = compose(
            &decls,
            "",
            &[],
            Some(ParamsStorage::Immediates),
            &[("alpha", "f32", "2.0")],
            "fn main() {}",
        );
        assert!(
            c.source
                .starts_with("@group(0) @binding(0) var<storage, read> x: array<f32>;")
        );
        let user = c.user_start;
        assert_eq!(c.locate(&(user + 3..user + 7)), (Segment::User, 3..7));
        let arg_at = c.source.find("fn alpha").expect("argument function");
        assert_eq!(c.locate(&(arg_at..arg_at + 2)).0, Segment::Arg(0));
        assert_eq!(c.locate(&(0..3)).0, Segment::Generated);
    }

    #[test]
    fn f16_parameter_reads_are_converted_and_placed_back_in_the_users_text() {
        let h = ValueType::parse("f16").expect("f16");
        let v = ValueType::parse("vec2<f16>").expect("vec2<f16>");
        let user = "let a = params.h * 2.0h; let b = params.v.x + params.k; bad";
        let (text, insertions) = f16_param_reads(user, &[("h", h), ("v", v)]);
        assert_eq!(
            text,
            "let a = f16(params.h) * 2.0h; let b = vec2<f16>(params.v).x + params.k; bad"
        );
        let c = compose("", "", &[("h", h), ("v", v)], None, &[], user);
        assert!(c.source.starts_with(ENABLE_F16));
        assert_eq!(c.user_insertions, insertions);
        // `bad`, at the end of the composed code, is placed at the end of the user's.
        let bad = c.source.rfind("bad").expect("bad");
        assert_eq!(
            c.locate(&(bad..bad + 3)),
            (Segment::User, user.len() - 3..user.len())
        );
        // Inside an insertion: where it was made.
        let open = c.source.find("f16(").expect("conversion");
        assert_eq!(
            c.locate(&(open + 1..open + 2)).1.start,
            user.find("params.h").expect("read")
        );
    }
}
