//! The parameter block's memory layout by the WGSL rules, shared by the generated Rust struct and the WGSL one.

use crate::types::ValueType;

/// The push-constant (immediate) size every wgpu backend with `IMMEDIATES` offers at least.
pub const PORTABLE_IMMEDIATE_BYTES: u32 = 128;

/// The name of the parameter struct in generated WGSL.
pub const WGSL_PARAMS_STRUCT: &str = "GraphParams";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamField {
    pub name: String,
    pub ty: ValueType,
    pub offset: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParamsLayout {
    pub fields: Vec<ParamField>,
    /// Total size, rounded up to the struct's alignment; 0 when there are no parameters.
    pub size: u32,
    pub align: u32,
}

impl ParamsLayout {
    /// Lays fields out in declaration order, each at the next offset its alignment allows.
    pub fn new(params: impl IntoIterator<Item = (String, ValueType)>) -> Self {
        let mut offset = 0u32;
        let mut align = 4u32;
        let mut fields = Vec::new();
        for (name, ty) in params {
            let stored = ty.in_params();
            offset = offset.next_multiple_of(stored.align());
            align = align.max(stored.align());
            fields.push(ParamField { name, ty, offset });
            offset += stored.size();
        }
        let size = if fields.is_empty() {
            0
        } else {
            offset.next_multiple_of(align)
        };
        ParamsLayout {
            fields,
            size,
            align,
        }
    }

    /// The layout of the parameters whose types are valid, each name at its first declaration: the struct the
    /// checks validate kernels against, and the one the macro's error stub emits, whatever else is wrong.
    pub fn of_valid_params(params: &[crate::ir::Param]) -> Self {
        ParamsLayout::new(
            params
                .iter()
                .enumerate()
                .filter(|(i, p)| params[..*i].iter().all(|q| q.name != p.name))
                .filter(|(_, p)| crate::types::param_type_problem(&p.ty).is_none())
                .filter_map(|(_, p)| Some((p.name.clone(), ValueType::parse(&p.ty).ok()?))),
        )
    }

    /// The `f16` parameters (and their types), whose reads [`crate::wgsl::compose`] converts.
    pub fn f16_params(&self) -> Vec<(&str, ValueType)> {
        self.fields
            .iter()
            .filter(|f| f.ty.is_f16())
            .map(|f| (f.name.as_str(), f.ty))
            .collect()
    }

    /// The WGSL struct declaration, or nothing when there are no parameters.
    pub fn wgsl_struct(&self) -> String {
        if self.fields.is_empty() {
            return String::new();
        }
        let members: Vec<String> = self
            .fields
            .iter()
            .map(|f| format!("    {}: {},\n", f.name, f.ty.in_params().wgsl()))
            .collect();
        format!("struct {WGSL_PARAMS_STRUCT} {{\n{}}}\n", members.concat())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Scalar;

    fn layout(types: &[ValueType]) -> ParamsLayout {
        ParamsLayout::new(types.iter().enumerate().map(|(i, t)| (format!("p{i}"), *t)))
    }

    #[test]
    fn pads_vectors_to_their_alignment() {
        let v3 = ValueType::vector(Scalar::F32, 3);
        let l = layout(&[ValueType::F32, v3, ValueType::U32]);
        let offsets: Vec<u32> = l.fields.iter().map(|f| f.offset).collect();
        // f32 at 0, vec3 aligned to 16, then u32 fills the vec3's last 4 bytes; size rounds to 16.
        assert_eq!(offsets, vec![0, 16, 28]);
        assert_eq!((l.size, l.align), (32, 16));
    }

    #[test]
    fn scalars_pack_tightly_and_empty_is_zero() {
        let l = layout(&[ValueType::F32, ValueType::U32, ValueType::I32]);
        assert_eq!(l.size, 12);
        assert_eq!(layout(&[]).size, 0);
        assert!(layout(&[ValueType::F32]).wgsl_struct().contains("p0: f32"));
    }
}
