//! `fill`: the built-in kernel that sets every element of a buffer (or every texel of a texture) to one
//! value, for every element type the graph supports. The value is a WGSL expression of the buffer's element
//! type (a texture's texel `vec4`), read through `value()`.

use crate::texture::TextureDim;
use crate::types::{Scalar, ValueType};

/// The name the kernel's WGSL gives the buffer it fills.
pub const BINDING: &str = "dst";

/// The function the value is read through.
pub const VALUE: &str = "value";

pub const ENTRY: &str = "main";

pub const WORKGROUP: u32 = 64;

/// One invocation per element; the index folds a second dimension in, so the runtime may split a long
/// dispatch past the per-dimension limit into two dimensions.
pub const WGSL: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 64u;
    if (i < arrayLength(&dst)) {
        dst[i] = value();
    }
}
";

/// The fill of a whole buffer of `u8` or `u16` elements (`per_word` to a `u32` word): one invocation per
/// word, the value's low 8 or 16 bits in every lane of it. (A range of such a buffer is refused by the
/// checks: it could end inside a word.)
pub fn packed_wgsl(per_word: u32) -> String {
    let (mask, lanes) = match per_word {
        4 => ("0xffu", "0x01010101u"),
        _ => ("0xffffu", "0x00010001u"),
    };
    format!(
        "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{
    let i = gid.x + gid.y * groups.x * 64u;
    if (i < arrayLength(&dst)) {{
        dst[i] = (value() & {mask}) * {lanes};
    }}
}}
"
    )
}

/// The pipeline constants a fill of a range reads its bounds from, set at bake.
pub const RANGE_START: &str = "range_start";
pub const RANGE_END: &str = "range_end";

/// The fill of `dst[range_start..range_end]`: one invocation per element of the range.
pub const RANGE_WGSL: &str = "override range_start: u32;
override range_end: u32;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let k = gid.x + gid.y * groups.x * 64u;
    if (k < range_end - range_start) {
        dst[range_start + k] = value();
    }
}
";

/// The fill of a whole texture of `dim`: one invocation per texel (per texel of each layer), dispatched over
/// the texture's size, with this workgroup size; texels past the size (the last workgroups' spare
/// invocations) are left alone.
pub fn texture_wgsl(dim: TextureDim) -> (&'static str, [u32; 3]) {
    match dim {
        TextureDim::D1 => (
            "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < textureDimensions(dst)) {
        textureStore(dst, gid.x, value());
    }
}
",
            [64, 1, 1],
        ),
        TextureDim::D2 => (
            "@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (all(gid.xy < textureDimensions(dst))) {
        textureStore(dst, gid.xy, value());
    }
}
",
            [8, 8, 1],
        ),
        // One workgroup deep, dispatched over the layers: `gid.z` is a layer, never past the last (and
        // wgpu's GL backend refuses `textureNumLayers` of a storage texture).
        TextureDim::D2Array => (
            "@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (all(gid.xy < textureDimensions(dst))) {
        textureStore(dst, gid.xy, gid.z, value());
    }
}
",
            [8, 8, 1],
        ),
        TextureDim::D3 => (
            "@compute @workgroup_size(4, 4, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (all(gid < textureDimensions(dst))) {
        textureStore(dst, gid, value());
    }
}
",
            [4, 4, 4],
        ),
    }
}

/// A literal of `ty`, for messages: `0.0`, `0u`, `vec2<i32>(0i)`.
pub fn example_literal(ty: ValueType) -> String {
    let scalar = match ty.scalar {
        Scalar::F32 => "0.0",
        Scalar::I32 => "0i",
        Scalar::U32 | Scalar::U8 | Scalar::U16 => "0u",
        Scalar::F16 => "0.0h",
    };
    match ty.components {
        1 => scalar.to_string(),
        _ => format!("{}({scalar})", ty.wgsl()),
    }
}
