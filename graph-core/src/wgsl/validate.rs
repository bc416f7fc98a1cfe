//! naga validation and reflection of a composed kernel module.

use std::ops::Range;

use naga::valid::{Capabilities, GlobalUse, ValidationFlags, Validator};

/// A WGSL problem: naga's message and, where naga gave one, the byte range (in the composed module) and its
/// label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WgslError {
    pub message: String,
    pub labels: Vec<(Range<usize>, String)>,
    /// naga's own rendering, with the source line, for sources that are not tokens in the user's file.
    pub rendered: String,
}

/// What the module does, as far as the graph cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reflection {
    /// The names of the compute entry points.
    pub entry_points: Vec<String>,
    /// For each entry point: its workgroup size, and for each binding of group 0 (by binding index) whether
    /// it reads and whether it writes it.
    pub details: Vec<EntryPointDetail>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPointDetail {
    pub workgroup_size: [u32; 3],
    pub binding_uses: Vec<(u32, BindingUse)>,
}

/// How an entry point uses one binding, from naga's analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BindingUse {
    pub read: bool,
    pub write: bool,
    /// Only `arrayLength` or similar: neither reads nor writes the contents.
    pub query: bool,
}

/// Parses and validates `source` with the capabilities the runtime asks for (immediates), then reflects.
pub fn validate(source: &str) -> Result<Reflection, WgslError> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| WgslError {
        message: e.message().to_string(),
        labels: e
            .labels()
            .filter_map(|(span, label)| Some((span.to_range()?, label.to_string())))
            .collect(),
        rendered: e.emit_to_string(source),
    })?;
    let mut validator = Validator::new(ValidationFlags::all(), Capabilities::IMMEDIATES);
    let info = validator.validate(&module).map_err(|e| {
        let mut message = e.as_inner().to_string();
        let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(e.as_inner());
        while let Some(c) = cause {
            message.push_str(": ");
            message.push_str(&c.to_string());
            cause = c.source();
        }
        WgslError {
            message,
            labels: e
                .spans()
                .filter_map(|(span, label)| Some((span.to_range()?, label.clone())))
                .collect(),
            rendered: e.emit_to_string(source),
        }
    })?;

    let mut entry_points = Vec::new();
    let mut details = Vec::new();
    for (index, ep) in module.entry_points.iter().enumerate() {
        if ep.stage != naga::ShaderStage::Compute {
            continue;
        }
        let function_info = info.get_entry_point(index);
        let binding_uses = module
            .global_variables
            .iter()
            .filter_map(|(handle, var)| {
                let binding = var.binding.as_ref().filter(|b| b.group == 0)?;
                let used = function_info[handle];
                Some((
                    binding.binding,
                    BindingUse {
                        read: used.contains(GlobalUse::READ),
                        write: used.contains(GlobalUse::WRITE),
                        query: used.contains(GlobalUse::QUERY),
                    },
                ))
            })
            .collect();
        entry_points.push(ep.name.clone());
        details.push(EntryPointDetail {
            workgroup_size: ep.workgroup_size,
            binding_uses,
        });
    }
    Ok(Reflection {
        entry_points,
        details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = "
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> y: array<f32>;
        @group(0) @binding(2) var<storage, read_write> unused: array<f32>;
        struct GraphParams { a: f32 }
        var<immediate> params: GraphParams;
        @compute @workgroup_size(64, 2)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            y[gid.x] = params.a * x[gid.x];
        }";

    #[test]
    fn reflects_entry_points_workgroup_size_and_binding_use() {
        let r = validate(KERNEL).expect("valid kernel");
        assert_eq!(r.entry_points, vec!["main".to_string()]);
        assert_eq!(r.details[0].workgroup_size, [64, 2, 1]);
        let uses = &r.details[0].binding_uses;
        assert_eq!(
            uses[0],
            (
                0,
                BindingUse {
                    read: true,
                    write: false,
                    query: false
                }
            )
        );
        assert_eq!(
            uses[1],
            (
                1,
                BindingUse {
                    read: false,
                    write: true,
                    query: false
                }
            )
        );
        assert_eq!(uses[2], (2, BindingUse::default()));
    }

    #[test]
    fn reports_syntax_errors_with_a_range() {
        let err = validate("fn main() { let x = ; }").expect_err("syntax error");
        assert!(!err.labels.is_empty(), "{err:?}");
    }

    #[test]
    fn reports_type_errors() {
        let err = validate("@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }")
            .expect_err("type error");
        assert!(!err.message.is_empty());
    }
}
