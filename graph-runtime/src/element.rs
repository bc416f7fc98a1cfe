//! The types a buffer can hold.

#![forbid(unsafe_code)]

use graph_core::types::{Scalar, ValueType};

/// A type a buffer can hold: plain data with a WGSL twin. `u8` and `u16` are held packed, four or two to a
/// `u32` word of the kernels' view (`graph_core::types::Scalar::packed`); `f16` needs a device with
/// `SHADER_F16`.
pub trait Element: bytemuck::Pod + Send + Sync {
    const TYPE: ValueType;
}

macro_rules! elements {
    ($($t:ty => $scalar:ident, $n:literal;)*) => {
        $(impl Element for $t {
            const TYPE: ValueType = ValueType::vector(Scalar::$scalar, $n);
        })*
    };
}

elements! {
    f32 => F32, 1; i32 => I32, 1; u32 => U32, 1;
    [f32; 2] => F32, 2; [i32; 2] => I32, 2; [u32; 2] => U32, 2;
    [f32; 4] => F32, 4; [i32; 4] => I32, 4; [u32; 4] => U32, 4;
    half::f16 => F16, 1; [half::f16; 2] => F16, 2; [half::f16; 4] => F16, 4;
    u8 => U8, 1; u16 => U16, 1;
}

/// A type a parameter can hold: an [`Element`], or a three-component vector (parameters may be `vec3`,
/// buffers may not).
pub trait ParamValue: bytemuck::Pod {
    const TYPE: ValueType;
}

impl<T: Element> ParamValue for T {
    const TYPE: ValueType = <T as Element>::TYPE;
}

macro_rules! vec3_params {
    ($($t:ty => $scalar:ident;)*) => {
        $(impl ParamValue for [$t; 3] {
            const TYPE: ValueType = ValueType::vector(Scalar::$scalar, 3);
        })*
    };
}

vec3_params! { f32 => F32; i32 => I32; u32 => U32; half::f16 => F16; }

/// An `f16` parameter as a graph's typed `Params` struct holds it: the `f32` with the same value, as the
/// parameter block holds it (push constants have no 16-bit storage through wgpu on Vulkan); kernels read it as
/// an `f16`. Made from an `f16` (`HalfParam::new`, `.into()`), read back with [`HalfParam::get`].
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct HalfParam(f32);

impl HalfParam {
    pub fn new(value: half::f16) -> Self {
        HalfParam(value.to_f32())
    }

    pub fn get(self) -> half::f16 {
        // Exact: the value came from an `f16`.
        half::f16::from_f32(self.0)
    }
}

impl From<half::f16> for HalfParam {
    fn from(value: half::f16) -> Self {
        HalfParam::new(value)
    }
}

/// `value`'s bytes as the parameter block holds them: each `f16` component widened to an `f32`
/// ([`HalfParam`]); any other type as it is.
pub(crate) fn param_bytes<T: ParamValue>(value: &T) -> Vec<u8> {
    let bytes = bytemuck::bytes_of(value);
    if !T::TYPE.is_f16() {
        return bytes.to_vec();
    }
    bytes
        .chunks_exact(2)
        .flat_map(|h| {
            half::f16::from_le_bytes([h[0], h[1]])
                .to_f32()
                .to_le_bytes()
        })
        .collect()
}

/// A `T` from the parameter block's `bytes` (as many as it holds there, [`param_bytes`]).
pub(crate) fn param_from_bytes<T: ParamValue>(bytes: &[u8]) -> T {
    if !T::TYPE.is_f16() {
        return bytemuck::pod_read_unaligned(&bytes[..size_of::<T>()]);
    }
    let halves: Vec<u8> = bytes[..2 * size_of::<T>()]
        .chunks_exact(4)
        .flat_map(|f| {
            half::f16::from_f32(f32::from_le_bytes([f[0], f[1], f[2], f[3]])).to_le_bytes()
        })
        .collect();
    bytemuck::pod_read_unaligned(&halves)
}
