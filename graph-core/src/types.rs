//! The WGSL value types a graph can name: parameter types and buffer element types.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A scalar a graph's buffers and parameters can hold: WGSL's 32-bit scalars, `f16` where the device has
/// `SHADER_F16`, and the 8-bit and 16-bit unsigned integers WGSL has no type for, which a buffer holds packed
/// (its WGSL view is `array<u32>`, four `u8` or two `u16` to a word, the first element in the low bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    F32,
    I32,
    U32,
    F16,
    U8,
    U16,
}

impl Scalar {
    /// The WGSL spelling.
    pub const fn wgsl(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::F16 => "f16",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
        }
    }

    /// The Rust type with the same bits (`f16` is `graph_runtime::f16`, the `half` crate's).
    pub const fn rust(self) -> &'static str {
        self.wgsl()
    }

    /// Size in bytes.
    pub const fn bytes(self) -> u32 {
        match self {
            Scalar::F32 | Scalar::I32 | Scalar::U32 => 4,
            Scalar::F16 | Scalar::U16 => 2,
            Scalar::U8 => 1,
        }
    }

    /// How many elements of this scalar a buffer packs into one `u32` word of its WGSL view: `Some(4)` for
    /// `u8`, `Some(2)` for `u16`; `None` for a scalar WGSL stores as itself.
    pub const fn packed(self) -> Option<u32> {
        match self {
            Scalar::U8 => Some(4),
            Scalar::U16 => Some(2),
            _ => None,
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "f32" => Some(Scalar::F32),
            "i32" => Some(Scalar::I32),
            "u32" => Some(Scalar::U32),
            "f16" => Some(Scalar::F16),
            "u8" => Some(Scalar::U8),
            "u16" => Some(Scalar::U16),
            _ => None,
        }
    }
}

/// A scalar or a vector of 2 to 4 components (vectors of 32-bit scalars or of `f16`; `u8` and `u16` are
/// scalars only).
/// Serialized as its WGSL spelling (`"vec2<f32>"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct ValueType {
    pub scalar: Scalar,
    /// 1 for a scalar, else 2, 3 or 4.
    pub components: u8,
}

impl ValueType {
    pub const F32: ValueType = ValueType::scalar(Scalar::F32);
    pub const I32: ValueType = ValueType::scalar(Scalar::I32);
    pub const U32: ValueType = ValueType::scalar(Scalar::U32);

    pub const fn scalar(scalar: Scalar) -> Self {
        ValueType {
            scalar,
            components: 1,
        }
    }

    pub const fn vector(scalar: Scalar, components: u8) -> Self {
        ValueType { scalar, components }
    }

    /// Parses the WGSL spelling (`f32`, `vec2<u32>`, `vec4f`, `vec2h`, and `u8`, `u16`); whitespace is
    /// ignored.
    pub fn parse(text: &str) -> Result<Self, TypeError> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if let Some(scalar) = Scalar::parse(&compact) {
            return Ok(ValueType::scalar(scalar));
        }
        for n in 2..=4u8 {
            if let Some(inner) = compact
                .strip_prefix(&format!("vec{n}<"))
                .and_then(|rest| rest.strip_suffix('>'))
            {
                return Scalar::parse(inner)
                    .filter(|s| s.packed().is_none())
                    .map(|s| ValueType::vector(s, n))
                    .ok_or_else(|| TypeError::Unsupported(compact.clone()));
            }
            for (suffix, scalar) in [
                ("f", Scalar::F32),
                ("i", Scalar::I32),
                ("u", Scalar::U32),
                ("h", Scalar::F16),
            ] {
                if compact == format!("vec{n}{suffix}") {
                    return Ok(ValueType::vector(scalar, n));
                }
            }
        }
        Err(TypeError::Unsupported(compact))
    }

    /// Size in bytes (WGSL: a `vec3<f32>` is 12 bytes, aligned to 16); a `u8` is 1 byte, an `f16` 2.
    pub const fn size(self) -> u32 {
        self.scalar.bytes() * self.components as u32
    }

    /// Alignment in bytes by the WGSL rules for host-shareable types (a vector of 3 aligned as one of 4).
    pub const fn align(self) -> u32 {
        let n = match self.components {
            3 => 4,
            n => n as u32,
        };
        self.scalar.bytes() * n
    }

    /// How a parameter of this type lies in the parameter block: an `f16` (or a vector of them) as the `f32`s
    /// that hold its value exactly, since wgpu gives push constants no 16-bit storage on Vulkan
    /// (`storagePushConstant16` is not enabled); every other type as itself. Kernels still read an `f16`:
    /// [`crate::wgsl::compose`] converts each read.
    pub const fn in_params(self) -> ValueType {
        match self.scalar {
            Scalar::F16 => ValueType::vector(Scalar::F32, self.components),
            _ => self,
        }
    }

    /// Whether WGSL needs `enable f16;` for this type.
    pub const fn is_f16(self) -> bool {
        matches!(self.scalar, Scalar::F16)
    }

    /// The bytes a buffer of `len` elements takes: their size rounded up to a whole `u32` word, since wgpu
    /// copies, maps and binds buffers in multiples of 4 bytes (a `u8` buffer of 10 elements takes 12).
    pub const fn buffer_bytes(self, len: u64) -> u64 {
        (len * self.size() as u64).next_multiple_of(4)
    }

    /// The graph's spelling: WGSL's for every type WGSL has, `u8` and `u16` for the packed ones.
    pub fn wgsl(self) -> String {
        match self.components {
            1 => self.scalar.wgsl().to_string(),
            n => format!("vec{n}<{}>", self.scalar.wgsl()),
        }
    }

    /// The element type of a storage array of this type in WGSL: `u32` words for packed scalars
    /// ([`Scalar::packed`]), else [`ValueType::wgsl`].
    pub fn storage_wgsl(self) -> String {
        match self.scalar.packed() {
            Some(_) => "u32".to_string(),
            None => self.wgsl(),
        }
    }

    /// The WGSL type one element is read as: `u32` for `u8` and `u16` (the helpers unpack them to it),
    /// [`ValueType::wgsl`] for the rest. A fill's value is of this type.
    pub fn value_wgsl(self) -> String {
        self.storage_wgsl()
    }

    /// The Rust type with the same bits and size: `f32`, or `[f32; 2]` for a `vec2<f32>`.
    pub fn rust(self) -> String {
        match self.components {
            1 => self.scalar.rust().to_string(),
            n => format!("[{}; {n}]", self.scalar.rust()),
        }
    }
}

impl From<ValueType> for String {
    fn from(t: ValueType) -> String {
        t.wgsl()
    }
}

impl TryFrom<String> for ValueType {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        ValueType::parse(&text).map_err(|_| {
            format!(
                "`{text}` is not a graph value type (`f32`, `vec2<u32>`, `f16`, `u8`, `u16`, ..)"
            )
        })
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.wgsl())
    }
}

/// Why a type name was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeError {
    Unsupported(String),
}

/// Why `text` cannot be a parameter type, in words for the user; `None` when it can.
pub fn param_type_problem(text: &str) -> Option<String> {
    match ValueType::parse(text) {
        Ok(t) if t.scalar.packed().is_some() => Some(format!(
            "`{t}` cannot be a parameter: parameters are 32-bit; use `u32`"
        )),
        Ok(_) => None,
        Err(TypeError::Unsupported(t)) => Some(match t.as_str() {
            "bool" => {
                "`bool` is not host-shareable, so push constants (immediates) cannot hold it; \
                       use `u32` (0 or 1)"
                    .to_string()
            }
            "f64" | "i64" | "u64" | "usize" | "isize" => format!(
                "`{t}` has no portable WGSL form; parameters are 32-bit: use `f32`, `i32` or `u32`"
            ),
            _ => format!(
                "`{}` cannot be a push-constant (immediate) parameter; parameters are 32-bit scalars or \
                 vectors: `f32`, `i32`, `u32`, `vec2<f32>`, `vec3<u32>`, `vec4<i32>`...",
                crate::names::escaped(&t)
            ),
        }),
    }
}

/// Why `text` cannot be a buffer element type, in words for the user; `None` when it can.
pub fn element_type_problem(text: &str) -> Option<String> {
    match ValueType::parse(text) {
        Ok(t) if t.components == 3 => Some(format!(
            "`{t}` has a {}-byte stride in a storage array, so its Rust twin would need hidden padding; \
             use `vec4<{}>`",
            t.align(),
            t.scalar.wgsl()
        )),
        Ok(_) => None,
        Err(TypeError::Unsupported(t)) => Some(format!(
            "`{}` cannot be a buffer element; elements are 32-bit scalars or vectors (`f32`, `i32`, \
             `u32`, `vec2<f32>`, `vec4<u32>`...), `f16` and its vectors, or `u8` and `u16` (packed in \
             `u32` words)",
            crate::names::escaped(&t)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scalars_vectors_and_shorthands() {
        assert_eq!(ValueType::parse("f32"), Ok(ValueType::F32));
        assert_eq!(
            ValueType::parse("vec2 < u32 >"),
            Ok(ValueType::vector(Scalar::U32, 2))
        );
        assert_eq!(
            ValueType::parse("vec4f"),
            Ok(ValueType::vector(Scalar::F32, 4))
        );
        assert!(ValueType::parse("bool").is_err());
        assert!(ValueType::parse("vec5<f32>").is_err());
    }

    #[test]
    fn sizes_and_alignments_follow_wgsl() {
        let v3 = ValueType::vector(Scalar::F32, 3);
        assert_eq!((v3.size(), v3.align()), (12, 16));
        assert_eq!(ValueType::vector(Scalar::I32, 2).align(), 8);
        assert_eq!(v3.rust(), "[f32; 3]");
    }

    #[test]
    fn small_types_have_their_sizes_and_views() {
        let u8_ = ValueType::parse("u8").expect("u8");
        assert_eq!((u8_.size(), u8_.storage_wgsl()), (1, "u32".to_string()));
        assert_eq!(u8_.buffer_bytes(10), 12);
        assert_eq!(ValueType::scalar(Scalar::U16).buffer_bytes(3), 8);
        let h4 = ValueType::parse("vec4h").expect("vec4h");
        assert_eq!(
            (h4.size(), h4.align(), h4.wgsl()),
            (8, 8, "vec4<f16>".into())
        );
        assert_eq!(ValueType::parse("vec3<f16>").map(|t| t.align()), Ok(8));
        assert!(ValueType::parse("vec2<u8>").is_err());
        assert_eq!(ValueType::F32.buffer_bytes(5), 20);
        assert!(element_type_problem("u8").is_none());
        assert!(element_type_problem("vec2<f16>").is_none());
        assert!(param_type_problem("vec3<f16>").is_none());
        assert_eq!(h4.in_params(), ValueType::vector(Scalar::F32, 4));
        assert!(param_type_problem("u16").is_some_and(|m| m.contains("u32")));
    }

    #[test]
    fn explains_refused_types() {
        assert!(
            param_type_problem("bool")
                .unwrap_or_default()
                .contains("u32")
        );
        assert!(param_type_problem("vec3<f32>").is_none());
        assert!(
            element_type_problem("vec3<f32>")
                .unwrap_or_default()
                .contains("vec4<f32>")
        );
        assert!(element_type_problem("u32").is_none());
    }
}
