//! The WGSL value types a graph can name: parameter types and buffer element types.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A 32-bit WGSL scalar: the only scalars that are host-shareable on every backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    F32,
    I32,
    U32,
}

impl Scalar {
    /// The WGSL spelling.
    pub const fn wgsl(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
        }
    }

    /// The Rust type with the same bits.
    pub const fn rust(self) -> &'static str {
        self.wgsl()
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "f32" => Some(Scalar::F32),
            "i32" => Some(Scalar::I32),
            "u32" => Some(Scalar::U32),
            _ => None,
        }
    }
}

/// A host-shareable WGSL scalar or vector of 32-bit components.
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

    /// Parses the WGSL spelling (`f32`, `vec2<u32>`, `vec4f`); whitespace is ignored.
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
                    .map(|s| ValueType::vector(s, n))
                    .ok_or_else(|| TypeError::Unsupported(compact.clone()));
            }
            for (suffix, scalar) in [("f", Scalar::F32), ("i", Scalar::I32), ("u", Scalar::U32)] {
                if compact == format!("vec{n}{suffix}") {
                    return Ok(ValueType::vector(scalar, n));
                }
            }
        }
        Err(TypeError::Unsupported(compact))
    }

    /// Size in bytes (WGSL: a `vec3` is 12 bytes, aligned to 16).
    pub const fn size(self) -> u32 {
        4 * self.components as u32
    }

    /// Alignment in bytes by the WGSL rules for host-shareable types.
    pub const fn align(self) -> u32 {
        match self.components {
            1 => 4,
            2 => 8,
            _ => 16,
        }
    }

    /// The WGSL spelling, as written in generated declarations.
    pub fn wgsl(self) -> String {
        match self.components {
            1 => self.scalar.wgsl().to_string(),
            n => format!("vec{n}<{}>", self.scalar.wgsl()),
        }
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
            format!("`{text}` is not a 32-bit WGSL scalar or vector (`f32`, `vec2<u32>`, ..)")
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
        Ok(_) => None,
        Err(TypeError::Unsupported(t)) => Some(match t.as_str() {
            "bool" => {
                "`bool` is not host-shareable, so push constants (immediates) cannot hold it; \
                       use `u32` (0 or 1)"
                    .to_string()
            }
            "f16" => "`f16` cannot live in push constants (immediates) on every backend; use `f32`"
                .to_string(),
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
            "`{t}` has a 16-byte stride in a storage array, so its Rust twin would need hidden padding; \
             use `vec4<{}>`",
            t.scalar.wgsl()
        )),
        Ok(_) => None,
        Err(TypeError::Unsupported(t)) => Some(format!(
            "`{}` cannot be a buffer element; elements are 32-bit scalars or vectors: `f32`, `i32`, \
             `u32`, `vec2<f32>`, `vec4<u32>`...",
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
