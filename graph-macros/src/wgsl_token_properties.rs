//! The token-to-WGSL step as a property: WGSL that naga accepts, pushed through Rust's tokenizer as a
//! `graph!` body is, reaches naga unchanged in meaning. Meaning is compared as naga's own WGSL rendering of
//! the two parsed modules.
//!
//! The generator writes typed random kernels (scalars of the four types, vectors, templates, every operator,
//! every literal form Rust's tokenizer splits: `.5`, `1.`, `1.e-3`, `2.5e+2f`, `0x1Fu`, `>>`, `>>=`, `->`),
//! with random whitespace between tokens, including none wherever two tokens may touch, and comments.

use std::str::FromStr;

use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Just};

use crate::wgsl_tokens::WgslText;

/// A WGSL scalar type.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ty {
    F32,
    I32,
    U32,
    Bool,
}

/// One expression of type `ty`, as tokens, at most `depth` levels deep.
fn expr(ty: Ty, depth: u32) -> BoxedStrategy<Vec<String>> {
    let leaf = leaf(ty);
    if depth == 0 {
        return leaf;
    }
    let sub = move |t| expr(t, depth - 1);
    let compound: BoxedStrategy<Vec<String>> = match ty {
        Ty::F32 => prop_oneof![
            (
                sub(Ty::F32),
                prop::sample::select(&["+", "-", "*", "/"][..]),
                sub(Ty::F32)
            )
                .prop_map(|(a, op, b)| binary(a, op, b)),
            sub(Ty::F32).prop_map(|a| call("abs", vec![a])),
            (sub(Ty::F32), sub(Ty::F32)).prop_map(|(a, b)| call("min", vec![a, b])),
            sub(Ty::I32).prop_map(|a| call("f32", vec![a])),
            (sub(Ty::F32), sub(Ty::F32), sub(Ty::Bool))
                .prop_map(|(a, b, c)| call("select", vec![a, b, c])),
            (
                sub(Ty::F32),
                sub(Ty::F32),
                prop::sample::select(&["x", "y"][..])
            )
                .prop_map(|(a, b, field)| {
                    let mut t = templated("vec2", "f32");
                    t.extend(args(vec![a, b]));
                    t.extend([".".into(), field.into()]);
                    t
                }),
            sub(Ty::F32).prop_map(|a| unary("-", a)),
        ]
        .boxed(),
        Ty::I32 => prop_oneof![
            (
                sub(Ty::I32),
                prop::sample::select(&["+", "-", "*", "&", "|", "^"][..]),
                sub(Ty::I32)
            )
                .prop_map(|(a, op, b)| binary(a, op, b)),
            sub(Ty::I32).prop_map(|a| unary("~", a)),
            sub(Ty::I32).prop_map(|a| unary("-", a)),
            sub(Ty::U32).prop_map(|a| call("i32", vec![a])),
        ]
        .boxed(),
        Ty::U32 => prop_oneof![
            (
                sub(Ty::U32),
                prop::sample::select(&["+", "*", "&", "|", "^"][..]),
                sub(Ty::U32)
            )
                .prop_map(|(a, op, b)| binary(a, op, b)),
            // Shifts by a small constant: a constant shift past 31 bits is an error naga reports.
            (
                sub(Ty::U32),
                prop::sample::select(&["<<", ">>"][..]),
                prop::sample::select(&["1u", "3u", "0x4u"][..])
            )
                .prop_map(|(a, op, b)| binary(a, op, vec![b.to_string()])),
            (sub(Ty::U32), sub(Ty::U32)).prop_map(|(a, b)| call("max", vec![a, b])),
        ]
        .boxed(),
        Ty::Bool => prop_oneof![
            (
                sub(Ty::F32),
                prop::sample::select(&["<", "<=", ">", ">=", "==", "!="][..]),
                sub(Ty::F32)
            )
                .prop_map(|(a, op, b)| binary(a, op, b)),
            (
                sub(Ty::U32),
                prop::sample::select(&["<", ">="][..]),
                sub(Ty::U32)
            )
                .prop_map(|(a, op, b)| binary(a, op, b)),
            (
                sub(Ty::Bool),
                prop::sample::select(&["&&", "||"][..]),
                sub(Ty::Bool)
            )
                .prop_map(|(a, op, b)| binary(a, op, b)),
            sub(Ty::Bool).prop_map(|a| unary("!", a)),
        ]
        .boxed(),
    };
    prop_oneof![1 => leaf, 2 => compound].boxed()
}

/// A literal in one of the forms WGSL has, or a variable of the type.
fn leaf(ty: Ty) -> BoxedStrategy<Vec<String>> {
    let literals: &'static [&'static str] = match ty {
        Ty::F32 => &[
            "1.0", ".5", "1.", "1.e-3", "2.5e+2f", ".25f", "1e3", "3f", "0.0f", "6.25e-1",
        ],
        Ty::I32 => &["1", "7i", "0x1F", "0x1fi", "42"],
        Ty::U32 => &["1u", "3u", "0x1Fu", "0u", "9u"],
        Ty::Bool => &["true", "false"],
    };
    let variable = match ty {
        Ty::F32 => "f",
        Ty::I32 => "n",
        Ty::U32 => "u",
        Ty::Bool => "b",
    };
    prop_oneof![
        prop::sample::select(literals).prop_map(|l| vec![l.to_string()]),
        Just(vec![variable.to_string()]),
    ]
    .boxed()
}

fn binary(a: Vec<String>, op: &str, b: Vec<String>) -> Vec<String> {
    let mut t = vec!["(".to_string()];
    t.extend(a);
    t.push(op.to_string());
    t.extend(b);
    t.push(")".to_string());
    t
}

fn unary(op: &str, a: Vec<String>) -> Vec<String> {
    let mut t = vec!["(".to_string(), op.to_string()];
    t.extend(a);
    t.push(")".to_string());
    t
}

fn args(list: Vec<Vec<String>>) -> Vec<String> {
    let mut t = vec!["(".to_string()];
    for (i, a) in list.into_iter().enumerate() {
        if i > 0 {
            t.push(",".to_string());
        }
        t.extend(a);
    }
    t.push(")".to_string());
    t
}

fn call(name: &str, list: Vec<Vec<String>>) -> Vec<String> {
    let mut t = vec![name.to_string()];
    t.extend(args(list));
    t
}

fn templated(name: &str, inner: &str) -> Vec<String> {
    [name, "<", inner, ">"].map(String::from).to_vec()
}

fn words(text: &str) -> Vec<String> {
    text.split(' ').map(String::from).collect()
}

/// One statement of the kernel's body, reading and updating the variables `f`, `n`, `u`, `b`.
fn statement() -> BoxedStrategy<Vec<String>> {
    let assign = |var: &'static str, ty: Ty, ops: &'static [&'static str]| {
        (prop::sample::select(ops), expr(ty, 2)).prop_map(move |(op, e)| {
            let mut t = vec![var.to_string(), op.to_string()];
            t.extend(e);
            t.push(";".to_string());
            t
        })
    };
    prop_oneof![
        assign("f", Ty::F32, &["=", "+=", "*=", "-="]),
        assign("n", Ty::I32, &["=", "+=", "&=", "^="]),
        assign("u", Ty::U32, &["=", ">>=", "<<=", "|="]),
        assign("b", Ty::Bool, &["="]),
        (expr(Ty::Bool, 2), expr(Ty::F32, 2)).prop_map(|(c, e)| {
            let mut t = words("if");
            t.push("(".into());
            t.extend(c);
            t.extend(words(") { f = "));
            t.extend(e);
            t.extend(words("; } else { u ++ ; }"));
            t
        }),
        expr(Ty::U32, 2).prop_map(|e| {
            let mut t = words("for ( var i = 0u ; i < 4u ; i ++ ) { u = u +");
            t.extend(e);
            t.extend(words("; }"));
            t
        }),
        (expr(Ty::F32, 1), prop::sample::select(&["x", "y"][..])).prop_map(|(e, field)| {
            // In a block of its own: each `let v` is a new name.
            let mut t = words("{ let v = array");
            t.extend(words("< vec2 < f32 > , 2 >"));
            t.extend(words("( vec2 < f32 > ("));
            t.extend(e);
            t.extend(words(", 1.0 ) , vec2 < f32 > ( ) ) ;"));
            t.extend(words("f = v [ 0 ] ."));
            t.push(field.to_string());
            t.extend(words("; }"));
            t
        }),
    ]
    .boxed()
}

/// A whole kernel: a helper function with a `->` return type, then an entry point whose body runs the
/// statements and stores the variables.
fn kernel() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(statement(), 1..8).prop_map(|statements| {
        let mut t = words("fn twice ( x : f32 ) -> f32 { return x * 2.0 ; }");
        t.extend(words(
            "@ compute @ workgroup_size ( 64 ) fn main ( @ builtin ( global_invocation_id ) gid : vec3 < u32 > ) {",
        ));
        t.extend(words(
            "var f : f32 = twice ( 1.0 ) ; var n : i32 = 2 ; var u : u32 = gid . x ; var b : bool = false ;",
        ));
        for s in statements {
            t.extend(s);
        }
        t.extend(words(
            "out [ 0 ] = f + f32 ( n ) + f32 ( u ) + select ( 0.0 , 1.0 , b ) ; }",
        ));
        t
    })
}

/// Joins tokens with the given separators, gluing two tokens only where they cannot merge into another
/// token; comments sometimes take a separator's place.
fn join(tokens: &[String], separators: &[u8]) -> String {
    let mut text = String::new();
    for (i, token) in tokens.iter().enumerate() {
        if i > 0 {
            let choice = separators.get(i).copied().unwrap_or(0) % 6;
            let glue = can_touch(&tokens[i - 1], token);
            text.push_str(match choice {
                0 | 1 if glue => "",
                0..=2 => " ",
                3 => "\n    ",
                4 => " /* a comment */ ",
                _ => " // a line comment\n",
            });
        }
        text.push_str(token);
    }
    text
}

/// Whether two tokens written with nothing between them still read as the same two tokens.
fn can_touch(left: &str, right: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let operator = |c: char| "+-*/%&|^<>=!~".contains(c);
    let (Some(l), Some(r)) = (left.chars().last(), right.chars().next()) else {
        return true;
    };
    let merges = (word(l) && word(r)) || (operator(l) && operator(r));
    // Nor may a `/` touch anything: `/` and `*` or `/` would open a comment.
    !merges && l != '/' && r != '/'
}

/// naga's rendering of `source`, or its error.
fn meaning(source: &str) -> Result<String, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(source))?;
    naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
        .map_err(|e| e.to_string())
}

const PRELUDE: &str = "@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn wgsl_through_rust_tokens_keeps_its_meaning(
        tokens in kernel(),
        separators in prop::collection::vec(any::<u8>(), 2000),
    ) {
        let original = join(&tokens, &separators);
        let expected = meaning(&format!("{PRELUDE}{original}"));
        // The property is about WGSL naga accepts; random constant parts may overflow, which naga refuses.
        prop_assume!(expected.is_ok(), "naga refuses the original: {:?}", expected);
        let rust_tokens = proc_macro2::TokenStream::from_str(&original)
            .map_err(|e| TestCaseError::fail(format!("Rust's tokenizer refused it: {e}\n{original}")))?;
        let through = WgslText::from_tokens(rust_tokens).text;
        let actual = meaning(&format!("{PRELUDE}{through}"));
        prop_assert_eq!(actual, expected, "\noriginal:\n{}\nthrough tokens:\n{}", original, through);
    }
}

#[test]
fn the_forms_rusts_tokenizer_splits_come_back_whole() {
    let original =
        "let a = .5 + 1. + 1.e-3 + 2.5e+2f + .25f; let b = 0x1Fu >> 1u; x >>= 2u; fn f() -> f32 {}";
    let tokens = proc_macro2::TokenStream::from_str(original).expect("tokens");
    assert_eq!(WgslText::from_tokens(tokens).text, original);
}
