//! A kernel's WGSL made into a member of a fused module: its module-scope names and bindings renamed apart
//! from the other members', its entry point made an ordinary function of its builtins.
//!
//! The renaming is an alpha-renaming on tokens: every identifier that names one of the kernel's module-scope
//! declarations (functions, constants, structs, aliases, private variables, bindings) is renamed wherever it
//! occurs, locals that shadow it included (they are renamed alike, so the meaning is kept), except member
//! names (`.x`, and `x:` inside a struct) and attribute names (`@builtin`). The result is validated by naga
//! before it is used (see [`crate::fusion`]), so a form this does not understand costs a fusion, not a wrong
//! kernel.

use std::collections::HashMap;
use std::ops::Range;

/// What every generated name in a fused module starts with; a kernel using it is not fused.
pub const FUSED_PREFIX: &str = "fuse_";

/// A kernel ready to be placed in a fused module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The kernel's code with its names renamed and its entry point an ordinary function.
    pub code: String,
    /// The entry point's new name.
    pub function: String,
    /// The builtins the entry point takes, in order (`global_invocation_id`, ..).
    pub builtins: Vec<String>,
}

/// The WGSL type of a compute builtin, for the ones a fused entry point passes on.
pub fn builtin_type(builtin: &str) -> Option<&'static str> {
    match builtin {
        "global_invocation_id" | "local_invocation_id" | "workgroup_id" | "num_workgroups" => {
            Some("vec3<u32>")
        }
        "local_invocation_index" => Some("u32"),
        _ => None,
    }
}

/// The names `declarations` gives its bindings, in binding order (`var<storage, ..> name: ..`).
pub fn binding_names(declarations: &str) -> Vec<String> {
    module_scope_names(&tokens(declarations), declarations)
        .into_iter()
        .filter(|(keyword, _)| *keyword == "var")
        .map(|(_, name)| name)
        .collect()
}

/// `source` (a kernel's own code, entry point `entry`) renamed: each module-scope name `n` becomes
/// `{prefix}n`, each name in `renames` its new name. `None` for code this does not fuse: directives,
/// `override`s, names that start with [`FUSED_PREFIX`], an entry point argument that is not a builtin.
pub fn member(
    source: &str,
    entry: &str,
    prefix: &str,
    renames: &HashMap<String, String>,
) -> Option<Member> {
    let toks = tokens(source);
    let text = |t: &Tok| &source[t.range.clone()];
    if toks.iter().any(|t| {
        t.kind == Kind::Ident
            && (text(t).starts_with(FUSED_PREFIX)
                || matches!(text(t), "enable" | "requires" | "override" | "diagnostic"))
    }) {
        return None;
    }
    let mut renames = renames.clone();
    for (_, name) in module_scope_names(&toks, source) {
        let new = format!("{prefix}{name}");
        renames.insert(name, new);
    }
    let function = renames.get(entry)?.clone();

    let mut code = String::with_capacity(source.len() + 256);
    let mut builtins = Vec::new();
    let mut copied = 0;
    let mut depth = 0usize;
    let mut struct_pending = false;
    let mut struct_depth: Option<usize> = None;
    // Whether the tokens are in the entry point's header or body: only its builtins become the member's
    // parameters. Another entry point of the same code loses its attributes too, and stays an ordinary
    // function nobody calls.
    let mut in_entry = false;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if depth == 0 && text(t) == "fn" {
            in_entry = toks.get(i + 1).is_some_and(|name| text(name) == entry);
        }
        match (t.kind, text(t)) {
            (Kind::Punct, "@") => {
                let attribute = toks.get(i + 1).map(text);
                let drop_to = match attribute {
                    Some("compute") => Some(i + 2),
                    Some("workgroup_size") => balanced_end(&toks, source, i + 2),
                    Some("builtin") => {
                        let end = balanced_end(&toks, source, i + 2)?;
                        if in_entry {
                            builtins.push(toks.get(i + 3).map(text)?.to_string());
                        }
                        Some(end)
                    }
                    _ => None,
                };
                if let Some(end) = drop_to {
                    code.push_str(&source[copied..t.range.start]);
                    copied = toks.get(end - 1).map_or(source.len(), |t| t.range.end);
                    i = end;
                    continue;
                }
                // Another attribute: keep it, and its name.
                i += 2;
                continue;
            }
            (Kind::Punct, "{") => {
                depth += 1;
                if struct_pending {
                    struct_depth = Some(depth);
                    struct_pending = false;
                }
            }
            (Kind::Punct, "}") => {
                if struct_depth == Some(depth) {
                    struct_depth = None;
                }
                depth = depth.saturating_sub(1);
            }
            (Kind::Ident, "struct") if depth == 0 => struct_pending = true,
            (Kind::Ident, name) => {
                let after_dot = i > 0 && text(&toks[i - 1]) == ".";
                let member_decl =
                    struct_depth == Some(depth) && toks.get(i + 1).is_some_and(|n| text(n) == ":");
                if let Some(new) = renames.get(name).filter(|_| !after_dot && !member_decl) {
                    code.push_str(&source[copied..t.range.start]);
                    code.push_str(new);
                    copied = t.range.end;
                }
            }
            _ => {}
        }
        i += 1;
    }
    code.push_str(&source[copied..]);
    if builtins.iter().any(|b| builtin_type(b).is_none()) {
        return None;
    }
    Some(Member {
        code,
        function,
        builtins,
    })
}

/// `code` with the binding `binding` kept in the private variable `register`: every `binding[..]` becomes
/// `register`, and every `arrayLength(&binding)` the literal `{len}u` when `len` is given (a buffer that is
/// no longer bound), else stays (a buffer still bound, whose element is loaded into the register and stored
/// back around the members). `None` when `binding` appears in any other way (a pointer to it, say), so the
/// buffer stays a buffer.
pub fn in_register(code: &str, binding: &str, register: &str, len: Option<u64>) -> Option<String> {
    let len = len.map(|len| format!("{len}u"));
    rewrite_elements(code, binding, &|_| register.to_string(), len.as_deref())
}

/// `code` with every `base.field` (the identifier `base`, not itself a member, then `.field`) replaced by
/// `with`: a parameter read as the value a fused kernel gives it instead.
pub fn replace_field(code: &str, base: &str, field: &str, with: &str) -> String {
    let toks = tokens(code);
    let text = |k: usize| toks.get(k).map(|t| &code[t.range.clone()]);
    let mut out = String::new();
    let mut copied = 0;
    let mut k = 0;
    while k < toks.len() {
        let is_access = toks[k].kind == Kind::Ident
            && text(k) == Some(base)
            && (k == 0 || text(k - 1) != Some("."))
            && text(k + 1) == Some(".")
            && text(k + 2) == Some(field);
        if is_access {
            out.push_str(&code[copied..toks[k].range.start]);
            out.push_str(with);
            copied = toks[k + 2].range.end;
            k += 3;
        } else {
            k += 1;
        }
    }
    out.push_str(&code[copied..]);
    out
}

/// `code` with the binding `binding` held in the workgroup array of the same name, which starts at element
/// `{slot}(0)` of the buffer: every `binding[index]` becomes `binding[{slot}(i32(index))]`, and every
/// `arrayLength(&binding)` becomes `length` (the buffer's length, an expression). `None` when `binding`
/// appears in any other way.
pub fn in_tile(code: &str, binding: &str, slot: &str, length: &str) -> Option<String> {
    rewrite_elements(
        code,
        binding,
        &|index| format!("{binding}[{slot}(i32({index}))]"),
        Some(length),
    )
}

/// `code` with each `binding[index]` replaced by `element(index)` and each `arrayLength(&binding)` by
/// `length` where given; `None` when `binding` appears in any other way.
fn rewrite_elements(
    code: &str,
    binding: &str,
    element: &dyn Fn(&str) -> String,
    length: Option<&str>,
) -> Option<String> {
    let toks = tokens(code);
    let text = |k: usize| toks.get(k).map(|t| &code[t.range.clone()]);
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        if t.kind != Kind::Ident || text(k) != Some(binding) || (k > 0 && text(k - 1) == Some("."))
        {
            k += 1;
            continue;
        }
        let length_query = k >= 3
            && text(k - 3) == Some("arrayLength")
            && text(k - 2) == Some("(")
            && text(k - 1) == Some("&")
            && text(k + 1) == Some(")");
        if length_query {
            if let Some(length) = length {
                edits.push((
                    toks[k - 3].range.start..toks[k + 1].range.end,
                    length.to_string(),
                ));
            }
            k += 1;
        } else if text(k + 1) == Some("[") {
            let mut depth = 0;
            let close = (k + 1..toks.len()).find(|&j| {
                match text(j) {
                    Some("[") => depth += 1,
                    Some("]") => depth -= 1,
                    _ => {}
                }
                depth == 0
            })?;
            // The index as written, rewritten first where it indexes the same binding itself.
            let inner = &code[toks[k + 1].range.end..toks[close].range.start];
            let inner = rewrite_elements(inner, binding, element, length)?;
            edits.push((t.range.start..toks[close].range.end, element(&inner)));
            k = close + 1;
        } else {
            return None;
        }
    }
    let mut out = String::with_capacity(code.len());
    let mut copied = 0;
    for (range, replacement) in edits {
        out.push_str(&code[copied..range.start]);
        out.push_str(&replacement);
        copied = range.end;
    }
    out.push_str(&code[copied..]);
    Some(out)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    Punct,
}

#[derive(Debug, Clone)]
struct Tok {
    kind: Kind,
    range: Range<usize>,
}

/// Identifiers, numbers and single punctuation characters, outside comments.
fn tokens(text: &str) -> Vec<Tok> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
        } else if text[i..].starts_with("/*") {
            // WGSL block comments nest.
            let mut level = 0;
            while i < bytes.len() {
                if text[i..].starts_with("/*") {
                    level += 1;
                    i += 2;
                } else if text[i..].starts_with("*/") {
                    level -= 1;
                    i += 2;
                    if level == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(Tok {
                kind: Kind::Ident,
                range: start..i,
            });
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            out.push(Tok {
                kind: Kind::Number,
                range: start..i,
            });
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            if !c.is_ascii_whitespace() {
                out.push(Tok {
                    kind: Kind::Punct,
                    range: start..i,
                });
            }
        }
    }
    out
}

/// The index after the `)` that closes the `(` at `open`; `None` when `open` is not a `(`.
fn balanced_end(toks: &[Tok], source: &str, open: usize) -> Option<usize> {
    if toks.get(open).map(|t| &source[t.range.clone()]) != Some("(") {
        return None;
    }
    let mut level = 0;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match &source[t.range.clone()] {
            "(" => level += 1,
            ")" => {
                level -= 1;
                if level == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// `(keyword, name)` of each module-scope declaration, in order.
fn module_scope_names(toks: &[Tok], source: &str) -> Vec<(&'static str, String)> {
    let text = |k: usize| toks.get(k).map(|t| &source[t.range.clone()]);
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut k = 0;
    while k < toks.len() {
        match text(k) {
            Some("{") => depth += 1,
            Some("}") => depth = depth.saturating_sub(1),
            Some(word @ ("fn" | "const" | "struct" | "alias" | "var")) if depth == 0 => {
                let keyword = match word {
                    "fn" => "fn",
                    "const" => "const",
                    "struct" => "struct",
                    "alias" => "alias",
                    _ => "var",
                };
                let mut name_at = k + 1;
                // `var<storage, read>`: the address space comes before the name.
                if text(name_at) == Some("<") {
                    while text(name_at).is_some_and(|t| t != ">") {
                        name_at += 1;
                    }
                    name_at += 1;
                }
                if let Some(t) = toks.get(name_at).filter(|t| t.kind == Kind::Ident) {
                    out.push((keyword, source[t.range.clone()].to_string()));
                }
                k = name_at;
            }
            _ => {}
        }
        k += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_declarations_and_keeps_members_and_attributes() {
        let source = "struct Pair { x: f32, y: f32 }\n\
             const K: f32 = 2.0; // K in a comment stays\n\
             fn twice(v: f32) -> f32 { return K * v; }\n\
             @compute @workgroup_size(64)\n\
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n\
                 let p = Pair(x[gid.x], 1.0);\n\
                 y[gid.x] = twice(p.x) + p.y;\n\
             }\n";
        let renames = HashMap::from([
            ("x".to_string(), "fuse_b0".to_string()),
            ("y".to_string(), "fuse_b1".to_string()),
        ]);
        let m = member(source, "main", "fuse_k1_", &renames).expect("fusable");
        assert_eq!(m.function, "fuse_k1_main");
        assert_eq!(m.builtins, vec!["global_invocation_id"]);
        assert!(
            m.code.contains("struct fuse_k1_Pair { x: f32, y: f32 }"),
            "{}",
            m.code
        );
        assert!(m.code.contains("// K in a comment stays"));
        assert!(m.code.contains("return fuse_k1_K * v;"));
        assert!(
            m.code.contains("fn fuse_k1_main( gid: vec3<u32>)"),
            "{}",
            m.code
        );
        assert!(
            m.code
                .contains("let p = fuse_k1_Pair(fuse_b0[gid.x], 1.0);")
        );
        assert!(
            m.code
                .contains("fuse_b1[gid.x] = fuse_k1_twice(p.x) + p.y;")
        );
        assert!(!m.code.contains('@'));
    }

    #[test]
    fn takes_only_the_chosen_entry_points_builtins() {
        // Two entry points; `go` is chosen. `main`'s builtin must not become a parameter of the member.
        let source = "@compute @workgroup_size(64)\n\
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) { y[gid.x] = 1.0; }\n\
             @compute @workgroup_size(64)\n\
             fn go(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {\n\
                 y[w.x * 64u + l] = 2.0;\n\
             }\n";
        let m = member(source, "go", "fuse_k0_", &HashMap::new()).expect("fusable");
        assert_eq!(m.function, "fuse_k0_go");
        assert_eq!(m.builtins, vec!["local_invocation_index", "workgroup_id"]);
        assert!(
            m.code.contains("fn fuse_k0_main( gid: vec3<u32>)"),
            "{}",
            m.code
        );
        assert!(!m.code.contains('@'), "{}", m.code);
    }

    #[test]
    fn refuses_what_it_cannot_rename() {
        let none = HashMap::new();
        for source in [
            "enable f16;\n@compute @workgroup_size(1) fn main() {}",
            "override n: u32;\n@compute @workgroup_size(1) fn main() {}",
            "@compute @workgroup_size(1) fn main() { let fuse_b0 = 1; }",
            "@compute @workgroup_size(1) fn main(@builtin(subgroup_size) s: u32) {}",
        ] {
            assert_eq!(member(source, "main", "fuse_k0_", &none), None, "{source}");
        }
    }

    #[test]
    fn a_binding_goes_into_a_register_only_when_indexed_or_measured() {
        let code = "if (i < arrayLength(&fuse_b1)) { fuse_b1[i] = fuse_b0[i] + fuse_b1[(i)]; }";
        assert_eq!(
            in_register(code, "fuse_b1", "fuse_r1", Some(64)).as_deref(),
            Some("if (i < 64u) { fuse_r1 = fuse_b0[i] + fuse_r1; }")
        );
        // Still bound: the length stays the buffer's.
        assert_eq!(
            in_register(code, "fuse_b1", "fuse_c1", None).as_deref(),
            Some("if (i < arrayLength(&fuse_b1)) { fuse_c1 = fuse_b0[i] + fuse_c1; }")
        );
        for len in [Some(64), None] {
            assert_eq!(
                in_register("let p = &fuse_b1;", "fuse_b1", "fuse_r1", len),
                None
            );
        }
    }

    #[test]
    fn reads_binding_names_in_order() {
        let decls = "@group(0) @binding(0) var<storage, read> src: array<f32>;\n\
                     @group(0) @binding(1) var<storage, read_write> dst: array<atomic<u32>>;\n";
        assert_eq!(binding_names(decls), vec!["src", "dst"]);
    }
}
