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

vec3_params! { f32 => F32; i32 => I32; u32 => U32; }
