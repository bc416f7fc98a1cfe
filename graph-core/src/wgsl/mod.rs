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
    Composed, Resource, Segment, binding_declarations, compose, params_declaration,
    resource_declarations,
};
pub use members::{
    FUSED_PREFIX, Member, binding_names, builtin_type, in_register, in_tile, member, replace_field,
};
pub use neighbourhood::MAX_REACH;
pub use pointwise::Pointwise;
pub use scan::{ParamUse, param_uses};
pub use validate::{
    BindingUse, EntryPointDetail, MAX_WGSL_BYTES, OverrideInfo, Reflection, WgslError,
    expression_type, validate, workgroup_bytes,
};
pub use value::{MAX_VALUE_BYTES, ValueProblem, value_expression};
