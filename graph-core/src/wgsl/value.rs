//! A value given as text (a fill's value, a library kernel's argument) becomes the body of a generated
//! function, `fn value() -> T { return VALUE; }`: it must be exactly one WGSL expression, or a file could
//! close the function and write anything anywhere. It is read here as tokens (literals, names and
//! operators, brackets nested and closed, no comment, `;`, `{`, `}` or `@`), written out again from them,
//! and validated by naga alone in a module that declares nothing but the parameters ([`isolated`]), so it
//! can name `params` and WGSL's built-in functions and types, but no buffer and no function of a kernel.

use crate::names::escaped;

/// The longest value, in bytes: a value is a literal, a parameter or a short expression of them.
pub const MAX_VALUE_BYTES: usize = 1024;

/// The deepest nesting of brackets a value may have.
pub const MAX_VALUE_DEPTH: usize = 32;

/// Why a text is not one expression, in words that follow "is not one WGSL expression: ".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueProblem {
    Empty,
    TooLong(usize),
    /// A character no expression holds (`;`, `{`, a NUL): the first one.
    Character(char),
    /// `//` or `/*`.
    Comment,
    /// A bracket closed that was not open, or one left open.
    Unbalanced,
    TooDeep,
}

impl std::fmt::Display for ValueProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueProblem::Empty => f.write_str("it is empty"),
            ValueProblem::TooLong(len) => {
                write!(
                    f,
                    "it is {len} bytes, over the {MAX_VALUE_BYTES} a value may have"
                )
            }
            ValueProblem::Character(c) => {
                write!(
                    f,
                    "`{}` is no part of an expression",
                    escaped(&c.to_string())
                )
            }
            ValueProblem::Comment => f.write_str("it holds a comment"),
            ValueProblem::Unbalanced => f.write_str("its brackets do not match"),
            ValueProblem::TooDeep => {
                write!(f, "it nests brackets deeper than {MAX_VALUE_DEPTH}")
            }
        }
    }
}

/// `text` read as one expression's tokens and written out again: each run of whitespace (spaces, tabs, line
/// breaks) one space, the ends trimmed, everything else as written. What is returned is made only of
/// tokens an expression may hold, so it cannot end the function it is put in; naga decides whether they
/// form one expression ([`isolated`]).
pub fn value_expression(text: &str) -> Result<String, ValueProblem> {
    if text.len() > MAX_VALUE_BYTES {
        return Err(ValueProblem::TooLong(text.len()));
    }
    let mut out = String::with_capacity(text.len());
    let mut open: Vec<char> = Vec::new();
    let mut space = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if matches!(c, ' ' | '\t' | '\n' | '\r') {
            space = !out.is_empty();
            continue;
        }
        if std::mem::take(&mut space) {
            out.push(' ');
        }
        match c {
            '/' if matches!(chars.peek(), Some('/' | '*')) => return Err(ValueProblem::Comment),
            '(' | '[' => {
                open.push(c);
                if open.len() > MAX_VALUE_DEPTH {
                    return Err(ValueProblem::TooDeep);
                }
            }
            ')' | ']' => {
                let opening = if c == ')' { '(' } else { '[' };
                if open.pop() != Some(opening) {
                    return Err(ValueProblem::Unbalanced);
                }
            }
            // Operators, member access, the commas of a call and the angle brackets of a type.
            '.' | ',' | '+' | '-' | '*' | '/' | '%' | '&' | '|' | '^' | '~' | '!' | '<' | '>'
            | '=' => {}
            // Literals (`1.5e-3f`, `0x1p4`, `2u`) and names; naga reads them.
            c if c.is_ascii_alphanumeric() || crate::names::is_identifier_continue(c) => {}
            c => return Err(ValueProblem::Character(c)),
        }
        out.push(c);
    }
    if !open.is_empty() {
        return Err(ValueProblem::Unbalanced);
    }
    if out.is_empty() {
        return Err(ValueProblem::Empty);
    }
    Ok(out)
}

/// The module a value is validated in: the parameters and the value's function, nothing else:
/// `fn value() -> ty { return expression; }`.
pub fn isolated(params_struct: &str, ty: &str, expression: &str) -> String {
    let prelude = isolated_prelude(params_struct);
    format!("{prelude}fn value() -> {ty} {{ return {expression}; }}\n")
}

/// The declarations a value's type is read against ([`super::expression_type`]): the parameters only
/// (`params_struct`, then the `params` variable). In a uniform buffer, whatever the graph's storage: a value
/// reads them the same way from either, and a block over the push-constant budget (reported as such) is
/// not one naga can lay out as push constants.
pub fn isolated_prelude(params_struct: &str) -> String {
    let params =
        super::params_declaration(crate::ir::ParamsStorage::Uniform, !params_struct.is_empty());
    // `enable f16;` first, so that a value of an `f16` buffer's fill can be written (`1.5h`).
    format!("{}{params_struct}{params}", super::ENABLE_F16)
}

/// The value of a decimal `u32` literal as WGSL writes one (`2u`, `2`); `None` for anything else.
pub fn literal_u32(text: &str) -> Option<u32> {
    let text = text.trim();
    let digits = text.strip_suffix('u').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_are_written_out_as_they_were_with_whitespace_made_one_space() {
        for (text, out) in [
            ("0.0", "0.0"),
            (" params.a ", "params.a"),
            ("vec2<f32>(1.0,\n\t 2.0)", "vec2<f32>(1.0, 2.0)"),
            ("-1.5e-3f * params.k.x", "-1.5e-3f * params.k.x"),
            ("max(params.n, 2u) >> 1u", "max(params.n, 2u) >> 1u"),
            ("ŷ", "ŷ"),
        ] {
            assert_eq!(value_expression(text).as_deref(), Ok(out), "{text:?}");
        }
    }

    #[test]
    fn what_no_expression_holds_is_refused() {
        let payload = "1.0 + w(); } fn w() -> f32 { dst[99] = 42.0; return 0.0; } fn unused() -> f32 { return 0.0";
        for (text, problem) in [
            (payload, ValueProblem::Character(';')),
            ("loop {}", ValueProblem::Character('{')),
            ("1.0 // }", ValueProblem::Comment),
            ("1.0 /* x */", ValueProblem::Comment),
            ("1.0\0", ValueProblem::Character('\0')),
            ("1.0\u{2028}", ValueProblem::Character('\u{2028}')),
            ("@id(0) 1.0", ValueProblem::Character('@')),
            ("f32(1.0))", ValueProblem::Unbalanced),
            ("(1.0", ValueProblem::Unbalanced),
            ("(1.0]", ValueProblem::Unbalanced),
            ("", ValueProblem::Empty),
            (" \n ", ValueProblem::Empty),
        ] {
            assert_eq!(value_expression(text), Err(problem), "{text:?}");
        }
        let deep = format!("{}1.0{}", "(".repeat(40), ")".repeat(40));
        assert_eq!(value_expression(&deep), Err(ValueProblem::TooDeep));
        let long = "1.0 + ".repeat(200) + "1.0";
        assert_eq!(
            value_expression(&long),
            Err(ValueProblem::TooLong(long.len()))
        );
    }

    #[test]
    fn a_value_is_validated_alone_with_the_parameters() {
        let module = isolated("", "f32", "1.0");
        assert_eq!(module, "enable f16;\nfn value() -> f32 { return 1.0; }\n");
        assert!(crate::wgsl::validate(&module).is_ok());
        // A buffer of the kernel is not in scope.
        assert!(crate::wgsl::validate(&isolated("", "u32", "arrayLength(&dst)")).is_err());
    }
}
