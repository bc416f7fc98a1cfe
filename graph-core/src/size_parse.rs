//! Reading a [`SizeExpr`] from text: the grammar of [`crate::size`], as `Display` prints it and as a person
//! would write it, for front ends that get sizes as strings (a run-time builder, a description file).
//!
//! `*` and `/` bind tighter than `+` and `-`, all four group to the left, and the methods `.div_ceil(e)`,
//! `.min(e)` and `.max(e)` bind tightest, after any operand: `(a + b).div_ceil(64)`. Whitespace may separate
//! any two tokens. A number is decimal digits with optional `_` separators and an optional `u` or `u32`
//! suffix, as in Rust.
//!
//! The parser never panics: errors carry the byte offset where reading stopped, and nesting is limited to
//! [`MAX_DEPTH`] so that hostile input can overflow neither the parser's stack nor the stack that dropping
//! or printing the resulting tree needs.

use std::fmt;
use std::str::FromStr;

use crate::ir::ElementRange;
use crate::size::{Axis, SizeExpr, SizeOp};

/// The deepest nesting accepted, counting both parentheses (which the parser recurses into) and the depth of
/// the resulting tree (which dropping, printing and comparing it recurse into). The checks refuse anything
/// needing more than [`crate::size::MAX_STACK`] evaluation slots anyway, so real sizes come nowhere near it.
pub const MAX_DEPTH: usize = 64;

const COMPONENTS: [&str; 4] = ["x", "y", "z", "w"];

/// Where and why a size expression's text could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeParseError {
    /// Byte offset in the text.
    pub offset: usize,
    pub message: String,
}

impl SizeParseError {
    fn new(offset: usize, message: impl Into<String>) -> Self {
        SizeParseError {
            offset,
            message: message.into(),
        }
    }
}

impl fmt::Display for SizeParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for SizeParseError {}

/// Reads a size expression, e.g. `(params.n + 63) / 64` or `x.len().div_ceil(params.tile.x)`.
pub fn parse_size(text: &str) -> Result<SizeExpr, SizeParseError> {
    let mut parser = Parser {
        tokens: lex(text),
        pos: 0,
        nesting: 0,
    };
    if parser.peek().kind == Kind::End {
        return Err(SizeParseError::new(0, "empty size expression"));
    }
    let sized = parser.expression()?;
    let next = parser.peek();
    match next.kind {
        Kind::End => Ok(sized.expr),
        Kind::Invalid(ref message) => Err(SizeParseError::new(next.start, message.clone())),
        _ => Err(SizeParseError::new(
            next.start,
            format!("unexpected {} after the expression", next.describe()),
        )),
    }
}

/// Reads a buffer or a slice of it, as Rust writes one: `x`, `x[4..]`, `x[..n.len()]`, `x[2..x.len() - 2]`.
/// The buffer's name and its range, `None` for the whole buffer.
pub fn parse_slice(text: &str) -> Result<(String, Option<ElementRange>), SizeParseError> {
    let Some(open) = text.find('[') else {
        return Ok((text.trim().to_string(), None));
    };
    let name = text[..open].trim().to_string();
    let inner_start = open + 1;
    let Some(inner) = text[inner_start..]
        .strip_suffix(']')
        .or_else(|| text[inner_start..].trim_end().strip_suffix(']'))
    else {
        return Err(SizeParseError::new(text.len(), "a slice ends with `]`"));
    };
    let Some(dots) = inner.find("..") else {
        return Err(SizeParseError::new(
            inner_start,
            "a slice is written `[start..end]`",
        ));
    };
    if inner[dots + 2..].starts_with('=') {
        return Err(SizeParseError::new(
            inner_start + dots,
            "write an end-exclusive range, `start..end`",
        ));
    }
    let bound = |from: usize, part: &str| -> Result<Option<SizeExpr>, SizeParseError> {
        if part.trim().is_empty() {
            return Ok(None);
        }
        parse_size(part)
            .map(Some)
            .map_err(|e| SizeParseError::new(from + e.offset, e.message))
    };
    let start = bound(inner_start, &inner[..dots])?;
    let end = bound(inner_start + dots + 2, &inner[dots + 2..])?;
    Ok((name, Some(ElementRange::new(start, end))))
}

impl FromStr for SizeExpr {
    type Err = SizeParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_size(text)
    }
}

/// In a graph file a size is its text, `"params.n.div_ceil(64)"`, read back by [`parse_size`].
impl serde::Serialize for SizeExpr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for SizeExpr {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_size(&text).map_err(|e| serde::de::Error::custom(format!("size `{text}`: {e}")))
    }
}

// ---------------------------------------------------------------------------------------------------------
// Tokens.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Number(u64),
    Ident,
    Plus,
    Minus,
    Star,
    Slash,
    Dot,
    Open,
    Close,
    End,
    /// Text that is no token. Lexing stops here; the parser reports it only if it gets this far, so an
    /// earlier grammatical error is reported first.
    Invalid(String),
}

#[derive(Debug, Clone)]
struct Token<'a> {
    kind: Kind,
    start: usize,
    text: &'a str,
}

impl Token<'_> {
    /// How an error message names the token.
    fn describe(&self) -> String {
        match self.kind {
            Kind::End => "the end of the expression".to_string(),
            _ => format!("`{}`", self.text),
        }
    }

    fn is_ident(&self, name: &str) -> bool {
        self.kind == Kind::Ident && self.text == name
    }
}

/// Splits the text into tokens, always ending with `End` or `Invalid`.
fn lex(text: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let punctuation = match c {
            '+' => Some(Kind::Plus),
            '-' => Some(Kind::Minus),
            '*' => Some(Kind::Star),
            '/' => Some(Kind::Slash),
            '.' => Some(Kind::Dot),
            '(' => Some(Kind::Open),
            ')' => Some(Kind::Close),
            _ => None,
        };
        let (kind, end) = if let Some(kind) = punctuation {
            (kind, start + c.len_utf8())
        } else if c.is_ascii_digit() || crate::names::is_identifier_start(c) {
            // A number and its suffix are one run of word characters, as in Rust: `64u32`, `1_000`; a name
            // is read by the rule every name of a graph follows.
            let mut end = start + c.len_utf8();
            while let Some(&(at, next)) = chars.peek() {
                if !crate::names::is_identifier_continue(next) {
                    break;
                }
                end = at + next.len_utf8();
                chars.next();
            }
            let word = text.get(start..end).unwrap_or_default();
            let kind = if c.is_ascii_digit() {
                number(word).map_or_else(Kind::Invalid, Kind::Number)
            } else {
                Kind::Ident
            };
            (kind, end)
        } else {
            let end = start + c.len_utf8();
            (Kind::Invalid(format!("unexpected character `{c}`")), end)
        };
        let stop = matches!(kind, Kind::Invalid(_));
        tokens.push(Token {
            kind,
            start,
            text: text.get(start..end).unwrap_or_default(),
        });
        if stop {
            return tokens;
        }
    }
    tokens.push(Token {
        kind: Kind::End,
        start: text.len(),
        text: "",
    });
    tokens
}

/// The value of a word that starts with a digit, or why it is no number.
fn number(word: &str) -> Result<u64, String> {
    let digits_end = word
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(word.len());
    let (digits, suffix) = word.split_at_checked(digits_end).unwrap_or((word, ""));
    if !["", "u", "u32"].contains(&suffix) {
        return Err(format!(
            "`{word}` is not a number: a number is decimal digits, optionally ending in `u` or `u32`"
        ));
    }
    let mut value = 0u64;
    for digit in digits.chars().filter_map(|c| c.to_digit(10)) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(digit)))
            .ok_or_else(|| format!("the number `{word}` is too large (at most {})", u64::MAX))?;
    }
    Ok(value)
}

// ---------------------------------------------------------------------------------------------------------
// Parsing, by precedence climbing: one function per level, loops for the left-associative operators.

/// A parsed expression and the depth of its tree, kept alongside so that the depth limit costs nothing.
struct Parsed {
    expr: SizeExpr,
    depth: usize,
}

impl Parsed {
    fn leaf(expr: SizeExpr) -> Self {
        Parsed { expr, depth: 1 }
    }

    /// `lhs op rhs`, refused when it would be deeper than [`MAX_DEPTH`]; `at` is the operator's offset.
    fn combine(op: SizeOp, lhs: Parsed, rhs: Parsed, at: usize) -> Result<Self, SizeParseError> {
        let depth = 1 + lhs.depth.max(rhs.depth);
        if depth > MAX_DEPTH {
            return Err(too_deep(at));
        }
        Ok(Parsed {
            expr: SizeExpr::binary(op, lhs.expr, rhs.expr),
            depth,
        })
    }
}

fn too_deep(at: usize) -> SizeParseError {
    SizeParseError::new(at, "size expression nested too deeply")
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
    /// How many parentheses (grouping or method arguments) enclose the current position.
    nesting: usize,
}

/// Stands in for the tokens past the end, which `lex` never lets the parser reach.
const END: Token<'static> = Token {
    kind: Kind::End,
    start: 0,
    text: "",
};

impl<'a> Parser<'a> {
    fn peek(&self) -> &Token<'a> {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> &Token<'a> {
        self.tokens.get(self.pos + ahead).unwrap_or(&END)
    }

    /// Consumes and returns the next token; `End` and `Invalid` are never consumed.
    fn advance(&mut self) -> Token<'a> {
        let token = self.peek().clone();
        if !matches!(token.kind, Kind::End | Kind::Invalid(_)) {
            self.pos += 1;
        }
        token
    }

    /// An error at the next token: its own message when it is invalid text, else `expected ..., found it`.
    fn expected(&self, what: &str) -> SizeParseError {
        let next = self.peek();
        match next.kind {
            Kind::Invalid(ref message) => SizeParseError::new(next.start, message.clone()),
            _ => SizeParseError::new(
                next.start,
                format!("expected {what}, found {}", next.describe()),
            ),
        }
    }

    /// `product (('+' | '-') product)*`
    fn expression(&mut self) -> Result<Parsed, SizeParseError> {
        let mut lhs = self.product()?;
        loop {
            let op = match self.peek().kind {
                Kind::Plus => SizeOp::Add,
                Kind::Minus => SizeOp::Sub,
                _ => return Ok(lhs),
            };
            let at = self.advance().start;
            let rhs = self.product()?;
            lhs = Parsed::combine(op, lhs, rhs, at)?;
        }
    }

    /// `postfix (('*' | '/') postfix)*`
    fn product(&mut self) -> Result<Parsed, SizeParseError> {
        let mut lhs = self.postfix()?;
        loop {
            let op = match self.peek().kind {
                Kind::Star => SizeOp::Mul,
                Kind::Slash => SizeOp::Div,
                _ => return Ok(lhs),
            };
            let at = self.advance().start;
            let rhs = self.postfix()?;
            lhs = Parsed::combine(op, lhs, rhs, at)?;
        }
    }

    /// `primary ('.' METHOD '(' expression ')')*`
    fn postfix(&mut self) -> Result<Parsed, SizeParseError> {
        let mut lhs = self.primary()?;
        while self.peek().kind == Kind::Dot {
            let dot = self.advance().start;
            let name = self.peek().clone();
            if name.kind != Kind::Ident {
                return Err(self.expected("a method name after `.`"));
            }
            let op = match name.text {
                "div_ceil" => SizeOp::DivCeil,
                "min" => SizeOp::Min,
                "max" => SizeOp::Max,
                // `primary` has taken every `.len()` and `.x` that belongs where it is written.
                "len" => {
                    return Err(SizeParseError::new(
                        name.start,
                        "`.len()` follows a buffer's name: write `BUFFER.len()`",
                    ));
                }
                component if COMPONENTS.contains(&component) => {
                    return Err(SizeParseError::new(
                        name.start,
                        format!(
                            "`.{component}` picks a component of a parameter: write `params.NAME.{component}`"
                        ),
                    ));
                }
                other => {
                    return Err(SizeParseError::new(
                        name.start,
                        format!("unknown method `{other}`: sizes have `div_ceil`, `min` and `max`"),
                    ));
                }
            };
            self.advance();
            if self.peek().kind != Kind::Open {
                return Err(self.expected(&format!("`(` after `.{}`", name.text)));
            }
            let rhs = self.parenthesised()?;
            lhs = Parsed::combine(op, lhs, rhs, dot)?;
        }
        Ok(lhs)
    }

    /// A number, `params.NAME`, `params.NAME.x`, `BUFFER.len()` or `(expression)`.
    fn primary(&mut self) -> Result<Parsed, SizeParseError> {
        let token = self.peek().clone();
        match token.kind {
            Kind::Number(value) => {
                self.advance();
                Ok(Parsed::leaf(SizeExpr::Literal(value)))
            }
            Kind::Open => self.parenthesised(),
            // `params.len()` is the length of a buffer called `params` (`params.width()` the width of such a
            // texture), as in the `graph!` macro (the checks then refuse that name); any other `params.NAME`
            // is a parameter.
            Kind::Ident if token.text == "params" && !self.len_call_follows() => self.param(),
            Kind::Ident => self.buffer_len(&token),
            _ => Err(self.expected("a number, `params.NAME`, `BUFFER.len()` or `(`")),
        }
    }

    /// Whether `.len(` (or `.width(`, `.height(`, `.layers(`, `.depth(`) follows the next token.
    fn len_call_follows(&self) -> bool {
        let method = self.peek_at(2);
        self.peek_at(1).kind == Kind::Dot
            && (method.is_ident("len") || Axis::ALL.iter().any(|a| method.is_ident(a.method())))
            && self.peek_at(3).kind == Kind::Open
    }

    /// `'params' '.' NAME ('.' ('x' | 'y' | 'z' | 'w'))?`, at `params`.
    fn param(&mut self) -> Result<Parsed, SizeParseError> {
        self.advance();
        if self.peek().kind != Kind::Dot {
            return Err(self.expected("`.NAME` after `params`"));
        }
        self.advance();
        if self.peek().kind != Kind::Ident {
            return Err(self.expected("a parameter name after `params.`"));
        }
        let name = self.advance().text.to_string();
        // A `.x` after the name is a component; any other `.` starts a method call, for `postfix`.
        let component = if self.peek().kind == Kind::Dot {
            COMPONENTS.iter().position(|c| self.peek_at(1).is_ident(c))
        } else {
            None
        };
        if component.is_some() {
            self.advance();
            self.advance();
        }
        Ok(Parsed::leaf(SizeExpr::Param {
            name,
            // Four components, so the index fits.
            component: component.and_then(|c| u8::try_from(c).ok()),
        }))
    }

    /// `BUFFER '.' 'len' '(' ')'` or `TEXTURE '.' ('width' | 'height' | 'layers' | 'depth') '(' ')'`, at the
    /// name.
    fn buffer_len(&mut self, buffer: &Token<'a>) -> Result<Parsed, SizeParseError> {
        let method = self.peek_at(2);
        let axis = Axis::ALL.into_iter().find(|a| method.is_ident(a.method()));
        if !(self.peek_at(1).kind == Kind::Dot && (method.is_ident("len") || axis.is_some())) {
            let is_method = matches!(buffer.text, "div_ceil" | "min" | "max");
            let message = if is_method && self.peek_at(1).kind == Kind::Open {
                format!("`{0}` is a method: write `a.{0}(b)`", buffer.text)
            } else {
                format!(
                    "`{0}` alone is not a size: write `params.{0}` for a parameter, `{0}.len()` for a \
                     buffer's length or `{0}.width()` for a texture's",
                    buffer.text
                )
            };
            return Err(SizeParseError::new(buffer.start, message));
        }
        // The name, `.`, the method.
        for _ in 0..3 {
            self.advance();
        }
        let call = axis.map_or("len", Axis::method);
        if self.peek().kind != Kind::Open {
            return Err(self.expected(&format!("`()` after `.{call}`")));
        }
        let open = self.advance().start;
        let next = self.peek();
        match next.kind {
            Kind::Close => {
                self.advance();
                let name = buffer.text.to_string();
                Ok(Parsed::leaf(match axis {
                    Some(axis) => SizeExpr::Extent {
                        texture: name,
                        axis,
                    },
                    None => SizeExpr::Len(name),
                }))
            }
            Kind::End => Err(SizeParseError::new(open, "unclosed `(`")),
            _ => Err(SizeParseError::new(
                next.start,
                format!("`{call}()` takes no arguments"),
            )),
        }
    }

    /// `'(' expression ')'`, at `(`: a group or a method's argument.
    fn parenthesised(&mut self) -> Result<Parsed, SizeParseError> {
        let open = self.advance().start;
        if self.nesting >= MAX_DEPTH {
            return Err(too_deep(open));
        }
        self.nesting += 1;
        let inner = self.expression()?;
        self.nesting -= 1;
        match self.peek().kind {
            Kind::Close => {
                self.advance();
                Ok(inner)
            }
            Kind::End => Err(SizeParseError::new(open, "unclosed `(`")),
            _ => Err(self.expected("`)` or an operator")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lit(v: u64) -> SizeExpr {
        SizeExpr::Literal(v)
    }

    fn param(name: &str, component: Option<u8>) -> SizeExpr {
        SizeExpr::Param {
            name: name.to_string(),
            component,
        }
    }

    fn len(buffer: &str) -> SizeExpr {
        SizeExpr::Len(buffer.to_string())
    }

    fn bin(op: SizeOp, lhs: SizeExpr, rhs: SizeExpr) -> SizeExpr {
        SizeExpr::binary(op, lhs, rhs)
    }

    fn parsed(text: &str) -> SizeExpr {
        parse_size(text).unwrap_or_else(|e| panic!("`{text}` should parse: {e}"))
    }

    /// The error for `text`, as `(offset, message)`.
    fn error(text: &str) -> (usize, String) {
        match parse_size(text) {
            Ok(e) => panic!("`{text}` should not parse, got {e:?}"),
            Err(e) => (e.offset, e.message),
        }
    }

    #[test]
    fn reads_numbers() {
        assert_eq!(parsed("0"), lit(0));
        assert_eq!(parsed("64"), lit(64));
        assert_eq!(parsed("1_000"), lit(1000));
        assert_eq!(parsed("1_000_u32"), lit(1000));
        assert_eq!(parsed("7u"), lit(7));
        assert_eq!(parsed("7u32"), lit(7));
        assert_eq!(parsed("007"), lit(7));
        assert_eq!(parsed("18446744073709551615"), lit(u64::MAX));
        assert_eq!(parsed(" \t 5 \n"), lit(5));
    }

    #[test]
    fn reads_params_and_components() {
        assert_eq!(parsed("params.n"), param("n", None));
        assert_eq!(parsed("params.tile.x"), param("tile", Some(0)));
        assert_eq!(parsed("params.tile.y"), param("tile", Some(1)));
        assert_eq!(parsed("params.tile.z"), param("tile", Some(2)));
        assert_eq!(parsed("params.tile.w"), param("tile", Some(3)));
        assert_eq!(parsed("params . tile . w"), param("tile", Some(3)));
        // Names that are also words of the language.
        assert_eq!(parsed("params.len"), param("len", None));
        assert_eq!(parsed("params.x"), param("x", None));
        assert_eq!(parsed("params.min.x"), param("min", Some(0)));
        assert_eq!(parsed("params.params"), param("params", None));
    }

    #[test]
    fn reads_buffer_lengths() {
        assert_eq!(parsed("x.len()"), len("x"));
        assert_eq!(parsed("_buf2 . len ( )"), len("_buf2"));
        // As in the `graph!` macro: the length of a buffer called `params`, which the checks refuse.
        assert_eq!(parsed("params.len()"), len("params"));
    }

    #[test]
    fn reads_operators_with_precedence_and_left_grouping() {
        use SizeOp::*;
        let (a, b, c) = (param("a", None), param("b", None), param("c", None));
        assert_eq!(
            parsed("params.a + params.b * params.c"),
            bin(Add, a.clone(), bin(Mul, b.clone(), c.clone()))
        );
        assert_eq!(
            parsed("params.a * params.b + params.c"),
            bin(Add, bin(Mul, a.clone(), b.clone()), c.clone())
        );
        assert_eq!(
            parsed("params.a - params.b - params.c"),
            bin(Sub, bin(Sub, a.clone(), b.clone()), c.clone())
        );
        assert_eq!(
            parsed("params.a / params.b / params.c"),
            bin(Div, bin(Div, a.clone(), b.clone()), c.clone())
        );
        assert_eq!(
            parsed("params.a - (params.b - params.c)"),
            bin(Sub, a.clone(), bin(Sub, b.clone(), c.clone()))
        );
        assert_eq!(
            parsed("(params.a + params.b) * params.c"),
            bin(Mul, bin(Add, a.clone(), b.clone()), c.clone())
        );
        assert_eq!(parsed("((((1))))"), lit(1));
        assert_eq!(parsed("1+2"), bin(Add, lit(1), lit(2)));
    }

    #[test]
    fn reads_methods_on_any_operand() {
        use SizeOp::*;
        assert_eq!(
            parsed("x.len().div_ceil(64)"),
            bin(DivCeil, len("x"), lit(64))
        );
        assert_eq!(parsed("5.min(3)"), bin(Min, lit(5), lit(3)));
        assert_eq!(
            parsed("params.n.max(1)"),
            bin(Max, param("n", None), lit(1))
        );
        assert_eq!(
            parsed("params.tile.y.div_ceil(2) + 1"),
            bin(Add, bin(DivCeil, param("tile", Some(1)), lit(2)), lit(1))
        );
        assert_eq!(
            parsed("(params.a + 63).div_ceil(64)"),
            bin(DivCeil, bin(Add, param("a", None), lit(63)), lit(64))
        );
        // Methods bind tighter than operators and chain to the left.
        assert_eq!(
            parsed("2 * x.len().min(8)"),
            bin(Mul, lit(2), bin(Min, len("x"), lit(8)))
        );
        assert_eq!(
            parsed("1.min(2).max(3)"),
            bin(Max, bin(Min, lit(1), lit(2)), lit(3))
        );
        assert_eq!(
            parsed("1 . min ( 2 + 3 )"),
            bin(Min, lit(1), bin(Add, lit(2), lit(3)))
        );
    }

    #[test]
    fn from_str_parses() {
        let e: SizeExpr = "params.n * 2".parse().expect("parses");
        assert_eq!(e, bin(SizeOp::Mul, param("n", None), lit(2)));
        let err = "".parse::<SizeExpr>().expect_err("empty");
        assert_eq!(err.to_string(), "at byte 0: empty size expression");
    }

    #[test]
    fn reports_what_was_expected_and_where() {
        let operand = "expected a number, `params.NAME`, `BUFFER.len()` or `(`";
        assert_eq!(error(""), (0, "empty size expression".into()));
        assert_eq!(error("   "), (0, "empty size expression".into()));
        assert_eq!(error("* 2"), (0, format!("{operand}, found `*`")));
        assert_eq!(
            error("1 +"),
            (3, format!("{operand}, found the end of the expression"))
        );
        assert_eq!(error("()"), (1, format!("{operand}, found `)`")));
        assert_eq!(error("1 + + 2"), (4, format!("{operand}, found `+`")));
        assert_eq!(error("-1"), (0, format!("{operand}, found `-`")));
        assert_eq!(error("(1 + 2"), (0, "unclosed `(`".into()));
        assert_eq!(error("1.min(2"), (5, "unclosed `(`".into()));
        assert_eq!(error("x.len("), (5, "unclosed `(`".into()));
        assert_eq!(
            error("(1 2)"),
            (3, "expected `)` or an operator, found `2`".into())
        );
        assert_eq!(
            error("1 + 2)"),
            (5, "unexpected `)` after the expression".into())
        );
        assert_eq!(
            error("1 2"),
            (2, "unexpected `2` after the expression".into())
        );
        assert_eq!(
            error("params.n.x(1)"),
            (10, "unexpected `(` after the expression".into())
        );
    }

    #[test]
    fn reads_a_texture_s_size_along_each_axis() {
        for axis in Axis::ALL {
            let text = format!("t.{}()", axis.method());
            assert_eq!(
                parsed(&text),
                SizeExpr::Extent {
                    texture: "t".into(),
                    axis
                }
            );
            assert_eq!(parsed(&text).to_string(), text);
        }
        assert_eq!(
            parsed("t.width() * 2 + t.height().div_ceil(8)").to_string(),
            "t.width() * 2 + t.height().div_ceil(8)"
        );
        assert_eq!(
            error("t.width(1)"),
            (8, "`width()` takes no arguments".into())
        );
        assert_eq!(
            error("t.depth"),
            (
                7,
                "expected `()` after `.depth`, found the end of the expression".into()
            )
        );
    }

    #[test]
    fn reports_bad_names_and_methods() {
        assert_eq!(
            error("1.foo(2)"),
            (
                2,
                "unknown method `foo`: sizes have `div_ceil`, `min` and `max`".into()
            )
        );
        assert_eq!(
            error("1.min"),
            (
                5,
                "expected `(` after `.min`, found the end of the expression".into()
            )
        );
        assert_eq!(
            error("1.(2)"),
            (2, "expected a method name after `.`, found `(`".into())
        );
        assert_eq!(
            error("(x).len()"),
            (
                1,
                "`x` alone is not a size: write `params.x` for a parameter, `x.len()` for a buffer's length or \
                 `x.width()` for a texture's"
                    .into()
            )
        );
        assert_eq!(
            error("params.n.len()"),
            (
                9,
                "`.len()` follows a buffer's name: write `BUFFER.len()`".into()
            )
        );
        assert_eq!(
            error("x.len().y"),
            (
                8,
                "`.y` picks a component of a parameter: write `params.NAME.y`".into()
            )
        );
        assert_eq!(error("x.len(1)"), (6, "`len()` takes no arguments".into()));
        assert_eq!(
            error("x.len"),
            (
                5,
                "expected `()` after `.len`, found the end of the expression".into()
            )
        );
        assert_eq!(
            error("max(1, 2)"),
            (0, "`max` is a method: write `a.max(b)`".into())
        );
        assert_eq!(
            error("params"),
            (
                6,
                "expected `.NAME` after `params`, found the end of the expression".into()
            )
        );
        assert_eq!(
            error("params.1"),
            (
                7,
                "expected a parameter name after `params.`, found `1`".into()
            )
        );
    }

    #[test]
    fn reports_bad_numbers_and_characters() {
        assert_eq!(
            error("18446744073709551616"),
            (
                0,
                "the number `18446744073709551616` is too large (at most 18446744073709551615)"
                    .into()
            )
        );
        assert_eq!(
            error("1 + 5u8"),
            (
                4,
                "`5u8` is not a number: a number is decimal digits, optionally ending in `u` or `u32`"
                    .into()
            )
        );
        assert_eq!(
            error("2x"),
            (
                0,
                "`2x` is not a number: a number is decimal digits, optionally ending in `u` or `u32`".into()
            )
        );
        assert_eq!(error("1 + $"), (4, "unexpected character `$`".into()));
        assert_eq!(error("1 % 2"), (2, "unexpected character `%`".into()));
        // Offsets are in bytes: `é` is two. Letters of any script make names; `€` is no letter.
        assert_eq!(
            error("é.len() + €"),
            (11, "unexpected character `€`".into())
        );
        assert_eq!(error("1 +  €"), (5, "unexpected character `€`".into()));
        // A grammatical error before bad text is the one reported.
        assert_eq!(
            error("1 ) $"),
            (2, "unexpected `)` after the expression".into())
        );
    }

    #[test]
    fn refuses_deep_nesting_without_overflowing_the_stack() {
        let too_deep = "size expression nested too deeply".to_string();
        let at_limit = format!("{}1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(parsed(&at_limit), lit(1));
        let parens = format!(
            "{}1{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(error(&parens), (MAX_DEPTH, too_deep.clone()));
        let unclosed = "(".repeat(100_000);
        assert_eq!(error(&unclosed).1, too_deep);
        let methods = "1.min(".repeat(100_000);
        assert_eq!(error(&methods).1, too_deep);
        // A long chain nests no parentheses, but its tree is as deep as it is long.
        let chain = format!("1{}", " + 1".repeat(100_000));
        assert_eq!(error(&chain).1, too_deep);
        let longest = format!("1{}", " + 1".repeat(MAX_DEPTH - 1));
        assert!(parse_size(&longest).is_ok());
        let method_chain = format!("1{}", ".max(1)".repeat(100_000));
        assert_eq!(error(&method_chain).1, too_deep);
    }

    #[test]
    fn round_trips_through_display() {
        use SizeOp::*;
        let cases = [
            lit(u64::MAX),
            param("tile", Some(3)),
            len("params"),
            bin(Mul, bin(Add, param("w", None), lit(1)), param("h", None)),
            bin(DivCeil, bin(Mul, len("x"), lit(2)), lit(64)),
            bin(Sub, lit(10), bin(Sub, lit(4), lit(3))),
            bin(Div, lit(10), bin(Mul, lit(4), lit(3))),
            bin(
                Min,
                bin(Max, lit(1), bin(Add, lit(2), lit(3))),
                bin(DivCeil, param("n", Some(0)), len("b")),
            ),
            bin(Mul, lit(2), bin(Min, len("x"), lit(8))),
        ];
        for e in cases {
            let text = e.to_string();
            assert_eq!(parse_size(&text), Ok(e), "{text}");
        }
    }

    // -----------------------------------------------------------------------------------------------------
    // Properties.

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            "[A-Za-z_][A-Za-z0-9_]{0,6}",
            // Names that are also words of the language.
            prop::sample::select(vec![
                "params", "len", "min", "max", "div_ceil", "x", "w", "u", "u32", "width", "depth"
            ])
            .prop_map(String::from),
        ]
    }

    fn op() -> impl Strategy<Value = SizeOp> {
        prop::sample::select(vec![
            SizeOp::Add,
            SizeOp::Sub,
            SizeOp::Mul,
            SizeOp::Div,
            SizeOp::DivCeil,
            SizeOp::Min,
            SizeOp::Max,
        ])
    }

    /// Every well-formed tree of depth at most 5 (Display's `?` for components past `w` is not valid text).
    fn size_expr() -> impl Strategy<Value = SizeExpr> {
        let leaf = prop_oneof![
            prop_oneof![any::<u64>(), 0..100u64].prop_map(SizeExpr::Literal),
            (name(), prop::option::of(0..4u8))
                .prop_map(|(name, component)| SizeExpr::Param { name, component }),
            name().prop_map(SizeExpr::Len),
            (name(), prop::sample::select(Axis::ALL.to_vec()))
                .prop_map(|(texture, axis)| SizeExpr::Extent { texture, axis }),
        ];
        leaf.prop_recursive(4, 32, 2, |inner| {
            (op(), inner.clone(), inner).prop_map(|(op, lhs, rhs)| SizeExpr::binary(op, lhs, rhs))
        })
    }

    /// Text made of the language's tokens in any order, some of them broken.
    fn token_soup() -> impl Strategy<Value = String> {
        let token = prop::sample::select(vec![
            "params",
            "n",
            "x",
            "y",
            "len",
            "div_ceil",
            "min",
            "max",
            "foo",
            ".",
            "(",
            ")",
            "+",
            "-",
            "*",
            "/",
            "0",
            "64",
            "1_0u32",
            "7u",
            "5u8",
            "18446744073709551616",
            " ",
            "",
            "é",
            "$",
        ]);
        prop::collection::vec(token, 0..24).prop_map(|tokens| tokens.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn display_round_trips(e in size_expr()) {
            let text = e.to_string();
            prop_assert_eq!(parse_size(&text), Ok(e), "{}", text);
        }

        /// Any text is read or refused, never a panic; what is read prints as text that reads back the same,
        /// and an error points inside the text.
        #[test]
        fn never_panics(text in prop_oneof![any::<String>(), token_soup()]) {
            match parse_size(&text) {
                Ok(e) => prop_assert_eq!(parse_size(&e.to_string()), Ok(e)),
                Err(err) => prop_assert!(err.offset <= text.len() && text.is_char_boundary(err.offset)),
            }
        }
    }
}
