//! WGSL: composing a kernel's module from its declarations and the user's code, validating it with naga, and
//! reflecting on the result.

mod compose;
pub mod grid;
mod members;
mod neighbourhood;
mod pointwise;
mod scan;
mod validate;
pub mod value;
mod walk;

pub use compose::{
    Composed, ENABLE_F16, PACKED_HELPER_NAMES, PACKED_HELPERS, Resource, Segment,
    binding_declarations, compose, f16_param_reads, params_declaration, resource_declarations,
};

/// What naga validates every module with: parameters in immediates, and `f16` (which a module uses only
/// with `enable f16;`, written for it when it binds an `f16` buffer; bake asks the device for `SHADER_F16`
/// when the graph's modules do, [`crate::desc::GraphDesc::needs_f16`]).
pub const CAPABILITIES: naga::valid::Capabilities =
    naga::valid::Capabilities::IMMEDIATES.union(naga::valid::Capabilities::SHADER_FLOAT16);
pub use members::{
    FUSED_PREFIX, Member, binding_names, builtin_type, in_register, in_tile, member, replace_field,
};
pub use neighbourhood::MAX_REACH;
pub use pointwise::Pointwise;
pub use scan::{ParamUse, param_uses};
pub use validate::{
    BindingUse, EntryPointDetail, MAX_WGSL_BYTES, OverrideInfo, Reflection, WgslError,
    expression_type, validate, workgroup_bytes, workgroup_size,
};
pub use value::{MAX_VALUE_BYTES, ValueProblem, value_expression};
