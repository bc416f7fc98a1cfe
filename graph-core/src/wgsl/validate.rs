//! naga validation and reflection of a composed kernel module.

use std::ops::Range;

use naga::valid::{GlobalUse, ValidationFlags, Validator};

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
    /// Every resource variable (`@group @binding`) in the module: name and byte range of its declaration.
    pub resources: Vec<(String, Option<Range<usize>>)>,
    /// The module's `override` constants.
    pub overrides: Vec<OverrideInfo>,
}

/// An `override` constant of a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverrideInfo {
    pub name: String,
    /// What a pipeline's constants name it by: its `@id`, or its name.
    pub key: String,
    /// Its type in WGSL (`u32`, `f32`, `bool`).
    pub ty: String,
    /// Whether it is a `u32`, which a size can give.
    pub unsigned: bool,
    /// Whether the WGSL gives it a default value.
    pub has_default: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPointDetail {
    /// The literal sizes; 0 along an axis sized by an `override`.
    pub workgroup_size: [u32; 3],
    /// How `override` constants size the workgroup: `None` when nothing does; the override named on each
    /// axis it sizes (`@workgroup_size(w, 1)`), known at bake ([`workgroup_size`]); or, as an error, an axis
    /// sized by an expression of overrides, which the graph does not evaluate.
    pub workgroup_size_overrides: Option<Result<Vec<String>, String>>,
    pub binding_uses: Vec<(u32, BindingUse)>,
    /// Each invocation touches only its own elements and texels, along these axes of its id (see
    /// [`super::pointwise`]); `None` when not proved.
    pub pointwise: Option<super::pointwise::Pointwise>,
    /// Each invocation inside the extent reads within this many elements of its own index and writes only its
    /// own, whatever the data (see [`super::neighbourhood`]); `None` when not proved.
    pub reach: Option<u32>,
    /// The same over a row-major image (see [`super::grid`]); `None` when not proved.
    pub grid: Option<super::grid::GridProof>,
    /// Each texture the entry point samples, with the sampler it samples it with: binding indices of group
    /// 0, from naga's analysis (through helper functions too), sorted.
    pub sampled: Vec<(u32, u32)>,
}

/// How an entry point uses one binding, from naga's analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BindingUse {
    pub read: bool,
    pub write: bool,
    /// Only `arrayLength` or similar: neither reads nor writes the contents.
    pub query: bool,
}

/// The most WGSL one kernel module may have. naga's front end recurses once per term of an expression
/// (`a + b + ..`, `!!..x`, `((..))`) with no limit of its own, and a stack overflow aborts the process with
/// nothing to catch; so a module is validated on a thread with [`NAGA_STACK`] bytes of stack, which this much
/// text cannot exhaust (tested with the deepest forms at this size), and a longer one is refused unread.
pub const MAX_WGSL_BYTES: usize = 256 * 1024;

/// The stack of the validating thread: address space reserved, and memory used only as deep as naga goes.
#[cfg(not(target_arch = "wasm32"))]
const NAGA_STACK: usize = 1 << 30;

/// Parses and validates `source` with the capabilities the runtime asks for (immediates), then reflects, on
/// a thread of its own (see [`MAX_WGSL_BYTES`]); a panic inside naga is an error, not a crash.
pub fn validate(source: &str) -> Result<Reflection, WgslError> {
    if source.len() > MAX_WGSL_BYTES {
        return Err(WgslError {
            message: format!(
                "the kernel's WGSL module is {} bytes, over the {MAX_WGSL_BYTES} bytes one kernel may have",
                source.len()
            ),
            labels: Vec::new(),
            rendered: String::new(),
        });
    }
    on_naga_stack(|| validate_here(source)).unwrap_or_else(|| {
        Err(WgslError {
            message: "naga could not validate the kernel: it panicked, or no thread could be started for it"
                .to_string(),
            labels: Vec::new(),
            rendered: String::new(),
        })
    })
}

/// Runs `work` (naga) on a thread with [`NAGA_STACK`] bytes of stack; `None` if it panicked or no thread
/// could be started.
#[cfg(not(target_arch = "wasm32"))]
fn on_naga_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("naga".into())
            .stack_size(NAGA_STACK)
            .spawn_scoped(scope, work);
        thread.ok()?.join().ok()
    })
}

/// The web has no threads to give naga a stack of its own: it runs on the page's (wasm32's panics do not
/// unwind, so a panic inside naga aborts there rather than becoming an error).
#[cfg(target_arch = "wasm32")]
fn on_naga_stack<T>(work: impl FnOnce() -> T) -> Option<T> {
    Some(work())
}

fn validate_here(source: &str) -> Result<Reflection, WgslError> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| WgslError {
        message: e.message().to_string(),
        labels: e
            .labels()
            .filter_map(|(span, label)| Some((span.to_range()?, label.to_string())))
            .collect(),
        rendered: e.emit_to_string(source),
    })?;
    let mut validator = Validator::new(ValidationFlags::all(), super::CAPABILITIES);
    let info = validator.validate(&module).map_err(|e| {
        let mut chain = vec![e.as_inner().to_string()];
        let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(e.as_inner());
        while let Some(c) = cause {
            chain.push(c.to_string());
            cause = c.source();
        }
        let labels: Vec<(Range<usize>, String)> = e
            .spans()
            .filter_map(|(span, label)| Some((span.to_range()?, label.clone())))
            .collect();
        WgslError {
            message: tidy_validation_message(&chain, source, &labels),
            // A label that only names an arena handle (`naga::ir::Expression [9]`) says nothing to the user.
            labels: labels
                .into_iter()
                .map(|(range, label)| {
                    let label = if label.starts_with("naga::") {
                        String::new()
                    } else {
                        label
                    };
                    (range, label)
                })
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
        let group_0 = |h: naga::Handle<naga::GlobalVariable>| {
            module.global_variables[h]
                .binding
                .as_ref()
                .filter(|b| b.group == 0)
                .map(|b| b.binding)
        };
        let mut sampled: Vec<(u32, u32)> = function_info
            .sampling_set
            .iter()
            .filter_map(|key| Some((group_0(key.image)?, group_0(key.sampler)?)))
            .collect();
        sampled.sort_unstable();
        entry_points.push(ep.name.clone());
        details.push(EntryPointDetail {
            workgroup_size: sized_axes(&module, ep).map_or(ep.workgroup_size, |axes| {
                std::array::from_fn(|i| match axes[i] {
                    Some(_) => 0,
                    None => ep.workgroup_size[i],
                })
            }),
            workgroup_size_overrides: sized_axes(&module, ep).map(|axes| {
                axes.into_iter()
                    .flatten()
                    .map(|axis| axis.map(|o| module.overrides[o].name.clone().unwrap_or_default()))
                    .collect()
            }),
            binding_uses,
            pointwise: super::pointwise::pointwise(&module, index),
            reach: super::neighbourhood::reach(&module, &info, index),
            grid: super::grid::grid_reach(&module, &info, index),
            sampled,
        });
    }
    let resources = module
        .global_variables
        .iter()
        .filter(|(_, var)| var.binding.is_some())
        .map(|(handle, var)| {
            let range = module.global_variables.get_span(handle).to_range();
            (var.name.clone().unwrap_or_default(), range)
        })
        .collect();
    let overrides = module
        .overrides
        .iter()
        .map(|(_, o)| {
            let scalar = module.types[o.ty].inner.scalar();
            let unsigned = scalar.is_some_and(|s| s.width == 4 && s.kind == naga::ScalarKind::Uint);
            let name = o.name.clone().unwrap_or_default();
            OverrideInfo {
                key: o.id.map_or_else(|| name.clone(), |id| id.to_string()),
                name,
                ty: match scalar {
                    Some(s) => match s.kind {
                        naga::ScalarKind::Uint => format!("u{}", s.width * 8),
                        naga::ScalarKind::Sint => format!("i{}", s.width * 8),
                        naga::ScalarKind::Float => format!("f{}", s.width * 8),
                        naga::ScalarKind::Bool => "bool".to_string(),
                        _ => "a literal type".to_string(),
                    },
                    None => "no scalar".to_string(),
                },
                unsigned,
                has_default: o.init.is_some(),
            }
        })
        .collect();
    Ok(Reflection {
        entry_points,
        details,
        resources,
        overrides,
    })
}

/// Per axis of `ep`'s workgroup size, the override that sizes it (`Some(Ok(..))`), or an expression that is
/// not one override's name (`Some(Err(..))`, in words); `None` when no override sizes the workgroup.
type SizedAxes = [Option<Result<naga::Handle<naga::Override>, String>>; 3];

fn sized_axes(module: &naga::Module, ep: &naga::EntryPoint) -> Option<SizedAxes> {
    let exprs = ep.workgroup_size_overrides?;
    if exprs.iter().all(Option::is_none) {
        return None;
    }
    Some(exprs.map(|e| {
        e.map(|h| match module.global_expressions[h] {
            naga::Expression::Override(o) => Ok(o),
            _ => Err("an expression of `override`s".to_string()),
        })
    }))
}

/// `entry`'s workgroup size in `source`, each axis an `override` sizes taking its value from `values` (by
/// name or `@id`), else its default: what bake dispatches with. An error when the module does not parse, the
/// entry point is missing, or an axis has no positive value.
pub fn workgroup_size(
    source: &str,
    entry: &str,
    values: &[(String, u32)],
) -> Result<[u32; 3], String> {
    if source.len() > MAX_WGSL_BYTES {
        return Err("the module is too large".into());
    }
    on_naga_stack(|| workgroup_size_here(source, entry, values))
        .unwrap_or_else(|| Err("the module could not be read".into()))
}

fn workgroup_size_here(
    source: &str,
    entry: &str,
    values: &[(String, u32)],
) -> Result<[u32; 3], String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.message().to_string())?;
    let ep = module
        .entry_points
        .iter()
        .find(|ep| ep.name == entry)
        .ok_or_else(|| format!("the module has no entry point `{entry}`"))?;
    let axes = sized_axes(&module, ep).unwrap_or_default();
    let mut size = ep.workgroup_size;
    for (axis, sized) in axes.into_iter().enumerate() {
        let Some(sized) = sized else { continue };
        let o = sized.map_err(|what| format!("its workgroup size is {what}"))?;
        let over = &module.overrides[o];
        let name = over.name.clone().unwrap_or_default();
        let id = over.id.map(|id| id.to_string());
        let given = values
            .iter()
            .find(|(key, _)| *key == name || Some(key) == id.as_ref())
            .map(|&(_, v)| v);
        let default = over
            .init
            .and_then(|init| match module.global_expressions[init] {
                naga::Expression::Literal(naga::Literal::U32(v)) => Some(v),
                naga::Expression::Literal(naga::Literal::I32(v)) => u32::try_from(v).ok(),
                naga::Expression::Literal(naga::Literal::AbstractInt(v)) => u32::try_from(v).ok(),
                _ => None,
            });
        size[axis] = given.or(default).ok_or_else(|| {
            format!(
                "its workgroup size is override `{name}`, which has no value: give one in \
                 `overrides({name}: ..)` (a default is read only when it is a literal)"
            )
        })?;
        if size[axis] == 0 {
            return Err(format!("its workgroup size is override `{name}` = 0"));
        }
    }
    Ok(size)
}

/// The bytes of workgroup memory `source` declares (every `var<workgroup>` of the module), with each `override` named in `values` (by name) taking that value: an array sized by an
/// override counts that many elements. An error when the module does not parse or an array's length is an
/// override without a value.
pub fn workgroup_bytes(source: &str, values: &[(String, u32)]) -> Result<u64, String> {
    if source.len() > MAX_WGSL_BYTES {
        return Err("the module is too large".into());
    }
    on_naga_stack(|| workgroup_bytes_here(source, values))
        .unwrap_or_else(|| Err("the module could not be read".into()))
}

fn workgroup_bytes_here(source: &str, values: &[(String, u32)]) -> Result<u64, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.message().to_string())?;
    let gctx = module.to_ctx();
    let mut total = 0u64;
    for (_, var) in module.global_variables.iter() {
        if var.space != naga::AddressSpace::WorkGroup {
            continue;
        }
        let bytes = match &module.types[var.ty].inner {
            naga::TypeInner::Array {
                size: naga::ArraySize::Pending(o),
                stride,
                ..
            } => {
                // Named by its key, as a pipeline names it: its `@id`, or its name.
                let name = module.overrides[*o].name.clone().unwrap_or_default();
                let id = module.overrides[*o].id.map(|id| id.to_string());
                let value = values
                    .iter()
                    .find(|(key, _)| *key == name || Some(key) == id.as_ref())
                    .map(|&(_, v)| v)
                    .ok_or_else(|| {
                        format!(
                            "the length of `{}` is override `{name}`, which has no value",
                            var.name.clone().unwrap_or_default()
                        )
                    })?;
                u64::from(*stride) * u64::from(value)
            }
            // `size` panics past naga's largest type: a description that skipped validation may hold one.
            inner => inner
                .try_size(gctx)
                .map(u64::from)
                .ok_or_else(|| "a workgroup variable is larger than any type may be".to_string())?,
        };
        total = total.saturating_add(bytes);
    }
    Ok(total)
}

/// The WGSL type of `expr` in a module whose globals are declared by `prelude`: what a library argument or a
/// fill value really is, to say so when it is not what was wanted. `None` when the expression does not
/// validate on its own.
pub fn expression_type(prelude: &str, expr: &str) -> Option<String> {
    let source = format!("{prelude}fn probe_value() {{ let probe = {expr}; }}\n");
    if source.len() > MAX_WGSL_BYTES {
        return None;
    }
    on_naga_stack(|| expression_type_here(&source)).flatten()
}

fn expression_type_here(source: &str) -> Option<String> {
    let module = naga::front::wgsl::parse_str(source).ok()?;
    let info = Validator::new(ValidationFlags::all(), super::CAPABILITIES)
        .validate(&module)
        .ok()?;
    let (function, body) = module
        .functions
        .iter()
        .find(|(_, f)| f.name.as_deref() == Some("probe_value"))?;
    let (value, _) = body
        .named_expressions
        .iter()
        .find(|(_, name)| name.as_str() == "probe")?;
    Some(type_name(
        info[function][*value].ty.inner_with(&module.types),
    ))
}

/// A value type in WGSL words.
fn type_name(ty: &naga::TypeInner) -> String {
    let scalar = |s: &naga::Scalar| {
        let name = match (s.kind, s.width) {
            (naga::ScalarKind::Float, 4) => "f32",
            (naga::ScalarKind::Float, 2) => "f16",
            (naga::ScalarKind::Sint, 4) => "i32",
            (naga::ScalarKind::Uint, 4) => "u32",
            (naga::ScalarKind::Bool, _) => "bool",
            _ => "a 64-bit number",
        };
        name.to_string()
    };
    match ty {
        naga::TypeInner::Scalar(s) => scalar(s),
        naga::TypeInner::Vector { size, scalar: s } => format!("vec{}<{}>", *size as u8, scalar(s)),
        _ => "a value that is neither a scalar nor a vector".to_string(),
    }
}

/// naga's validation errors form a chain (`Entry point main at Compute is invalid: Expression [9] is invalid:
/// Operation Multiply can't work with [4] (of type Scalar(Scalar { kind: Uint, width: 4 })) and ..`) that names
/// types by their Rust `Debug` form and expressions by arena handle. This keeps the links that say what is wrong
/// (the span says where), writes types in WGSL, and writes a handle as the source text of its expression where
/// naga labelled it.
fn tidy_validation_message(
    chain: &[String],
    source: &str,
    labels: &[(Range<usize>, String)],
) -> String {
    let links: Vec<String> = chain
        .iter()
        .filter_map(|link| {
            let locating = (link.starts_with("Entry point ") || link.starts_with("Expression ["))
                && link.ends_with(" is invalid");
            if locating {
                return None;
            }
            // `Function [0] 'helper' is invalid` -> "in function `helper`".
            if let Some(rest) = link.strip_prefix("Function [")
                && let Some(name) = rest
                    .split_once("] '")
                    .and_then(|(_, r)| r.strip_suffix("' is invalid"))
            {
                return Some(format!("in function `{name}`"));
            }
            Some(link.clone())
        })
        .collect();
    let mut text = if links.is_empty() {
        chain.join(": ")
    } else {
        links.join(": ")
    };
    text = wgsl_type_names(&text);
    text = typed_handles(&text);
    for (range, label) in labels {
        let Some(handle) = label.strip_prefix("naga::ir::Expression ") else {
            continue;
        };
        let Some(snippet) = source.get(range.clone()).map(str::trim) else {
            continue;
        };
        if snippet.len() <= 40 && !snippet.contains('\n') {
            text = text.replace(handle, &format!("`{snippet}`"));
        }
    }
    text
}

/// `Scalar(Scalar { kind: Uint, width: 4 })` -> `u32`, `Vector { size: Tri, scalar: .. }` -> `vec3<..>`.
fn wgsl_type_names(text: &str) -> String {
    const SCALARS: [(&str, u8, &str); 10] = [
        ("Sint", 4, "i32"),
        ("Uint", 4, "u32"),
        ("Float", 4, "f32"),
        ("Float", 2, "f16"),
        ("Float", 8, "f64"),
        ("Sint", 8, "i64"),
        ("Uint", 8, "u64"),
        ("Bool", 1, "bool"),
        ("AbstractInt", 8, "abstract-int"),
        ("AbstractFloat", 8, "abstract-float"),
    ];
    let mut text = text.to_string();
    for (kind, width, name) in SCALARS {
        let scalar = format!("Scalar {{ kind: {kind}, width: {width} }}");
        for (size, n) in [("Bi", 2), ("Tri", 3), ("Quad", 4)] {
            text = text.replace(
                &format!("Vector {{ size: {size}, scalar: {scalar} }}"),
                &format!("vec{n}<{name}>"),
            );
        }
        text = text.replace(&format!("Scalar({scalar})"), name);
        text = text.replace(&scalar, name);
    }
    text
}

/// `[4] (of type u32)` -> `` `u32` ``: the handle means nothing to the user, the type does.
fn typed_handles(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let Some(ty_start) = (digits > 0)
            .then(|| after[digits..].strip_prefix("] (of type "))
            .flatten()
        else {
            out.push_str(&rest[..=open]);
            rest = after;
            continue;
        };
        // The type ends at the `)` that closes `(of type`.
        let mut depth = 0usize;
        let close = ty_start.char_indices().find_map(|(i, c)| match c {
            '(' | '{' | '<' => {
                depth += 1;
                None
            }
            ')' if depth == 0 => Some(i),
            ')' | '}' | '>' => {
                depth = depth.saturating_sub(1);
                None
            }
            _ => None,
        });
        let Some(close) = close else {
            out.push_str(&rest[..=open]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..open]);
        out.push('`');
        out.push_str(&ty_start[..close]);
        out.push('`');
        rest = &ty_start[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workgroup_sized_by_overrides_takes_their_values_or_defaults() {
        let module = "override w: u32;
            @id(7) override h: u32 = 4;
            @compute @workgroup_size(w, h, 2) fn main() {}";
        let given = |v: &[(&str, u32)]| {
            let v: Vec<(String, u32)> = v.iter().map(|&(k, n)| (k.to_string(), n)).collect();
            workgroup_size(module, "main", &v)
        };
        assert_eq!(given(&[("w", 32)]), Ok([32, 4, 2]));
        assert_eq!(given(&[("w", 8), ("7", 3)]), Ok([8, 3, 2]));
        assert!(given(&[]).is_err_and(|e| e.contains("`w`, which has no value")));
        assert!(given(&[("w", 0)]).is_err_and(|e| e.contains("= 0")));
        let reflected = validate(module).expect("valid");
        assert_eq!(reflected.details[0].workgroup_size, [0, 0, 2]);
        assert_eq!(
            reflected.details[0].workgroup_size_overrides,
            Some(Ok(vec!["w".to_string(), "h".to_string()]))
        );
        let product = "override w: u32 = 8; @compute @workgroup_size(w * 2) fn main() {}";
        assert!(
            validate(product)
                .is_ok_and(|r| matches!(r.details[0].workgroup_size_overrides, Some(Err(_))))
        );
        assert!(workgroup_size(product, "main", &[]).is_err());
    }

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

    #[test]
    fn writes_validation_errors_in_wgsl_words() {
        let source = "@group(0) @binding(0) var<storage, read_write> data: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { data[gid.x] = 2u * data[gid.x]; }";
        let err = validate(source).expect_err("type error");
        assert_eq!(
            err.message,
            "Operation Multiply can't work with `u32` and `f32`"
        );
        assert_eq!(err.labels.len(), 1);
        assert_eq!(&source[err.labels[0].0.clone()], "2u * data[gid.x]");
        assert_eq!(err.labels[0].1, "");
    }

    #[test]
    fn names_handles_by_their_source_text() {
        let source = "@group(0) @binding(0) var<storage, read_write> data: array<f32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { data[gid.x] = 1.0 + vec2<f32>(1.0); }";
        let err = validate(source).expect_err("type error");
        assert_eq!(
            err.message,
            "The type of `1.0 + vec2<f32>(1.0)` doesn't match the type stored in `data[gid.x]`"
        );
    }
}
