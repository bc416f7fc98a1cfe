//! Dispatch sizes as data: a small expression language over `u32` parameters, buffer lengths and integer
//! literals. Every front end builds a [`SizeExpr`]; the checks resolve it into a postfix [`SizeStep`] program
//! (with the same diagnostics for every front end), and the runtime evaluates that program at replay without
//! allocating, an overflow being an error rather than a wrapped, too-small dispatch.
//!
//! ```text
//! expr := expr ('+' | '-' | '*' | '/') expr | expr '.' ('div_ceil' | 'min' | 'max') '(' expr ')'
//!       | 'params' '.' NAME ('.' ('x' | 'y' | 'z' | 'w'))? | BUFFER '.len()'
//!       | TEXTURE '.' ('width' | 'height' | 'layers' | 'depth') '()' | INTEGER | '(' expr ')'
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

/// The deepest evaluation stack a program may need; deeper expressions are refused by the checks.
pub const MAX_STACK: usize = 16;

/// An operator of the language. `DivCeil`, `Min` and `Max` are written as methods: `a.div_ceil(b)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeOp {
    Add,
    Sub,
    Mul,
    Div,
    DivCeil,
    Min,
    Max,
}

impl SizeOp {
    /// Applies the operator with checked arithmetic.
    pub fn apply(self, lhs: u32, rhs: u32) -> Result<u32, SizeError> {
        let value = match self {
            SizeOp::Add => lhs.checked_add(rhs),
            SizeOp::Sub => lhs.checked_sub(rhs),
            SizeOp::Mul => lhs.checked_mul(rhs),
            SizeOp::Div => lhs.checked_div(rhs),
            SizeOp::DivCeil => (rhs != 0).then(|| lhs.div_ceil(rhs)),
            SizeOp::Min => Some(lhs.min(rhs)),
            SizeOp::Max => Some(lhs.max(rhs)),
        };
        value.ok_or(SizeError::Arithmetic { op: self, lhs, rhs })
    }

    fn method(self) -> Option<&'static str> {
        match self {
            SizeOp::DivCeil => Some("div_ceil"),
            SizeOp::Min => Some("min"),
            SizeOp::Max => Some("max"),
            _ => None,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            SizeOp::Add => "+",
            SizeOp::Sub => "-",
            SizeOp::Mul => "*",
            SizeOp::Div => "/",
            SizeOp::DivCeil => "div_ceil",
            SizeOp::Min => "min",
            SizeOp::Max => "max",
        }
    }

    /// Binding strength when printed: methods bind tightest, then `*` `/`, then `+` `-`.
    fn precedence(self) -> u8 {
        match self {
            SizeOp::Add | SizeOp::Sub => 1,
            SizeOp::Mul | SizeOp::Div => 2,
            SizeOp::DivCeil | SizeOp::Min | SizeOp::Max => 3,
        }
    }
}

/// A dispatch size as a front end wrote it, names unresolved. Its terms are numbered in preorder (the whole
/// expression is term 0, then its left operand's terms, then its right operand's), which is how
/// [`crate::Loc::SizeTerm`] points into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeExpr {
    /// An integer literal, as written (the checks refuse one over `u32::MAX`).
    Literal(u64),
    /// `params.NAME`, or `params.NAME.x` for a component of a vector parameter (0 = x .. 3 = w).
    Param { name: String, component: Option<u8> },
    /// `BUFFER.len()`: the bound buffer's length in elements.
    Len(String),
    /// `TEXTURE.width()` (`height`, `layers`, `depth`): the bound texture's size along one axis.
    Extent { texture: String, axis: Axis },
    Binary {
        op: SizeOp,
        lhs: Box<SizeExpr>,
        rhs: Box<SizeExpr>,
    },
}

impl SizeExpr {
    pub fn binary(op: SizeOp, lhs: SizeExpr, rhs: SizeExpr) -> Self {
        SizeExpr::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        }
    }

    pub fn param(name: impl Into<String>) -> Self {
        SizeExpr::Param {
            name: name.into(),
            component: None,
        }
    }

    /// Every term in preorder, with its number.
    pub fn terms(&self) -> Vec<&SizeExpr> {
        let mut out = Vec::new();
        self.collect_terms(&mut out);
        out
    }

    fn collect_terms<'a>(&'a self, out: &mut Vec<&'a SizeExpr>) {
        out.push(self);
        if let SizeExpr::Binary { lhs, rhs, .. } = self {
            lhs.collect_terms(out);
            rhs.collect_terms(out);
        }
    }

    fn write(&self, f: &mut fmt::Formatter<'_>, parent: u8) -> fmt::Result {
        match self {
            SizeExpr::Literal(v) => write!(f, "{v}"),
            SizeExpr::Param {
                name,
                component: None,
            } => write!(f, "params.{name}"),
            SizeExpr::Param {
                name,
                component: Some(c),
            } => {
                let letter = ['x', 'y', 'z', 'w'].get(usize::from(*c)).unwrap_or(&'?');
                write!(f, "params.{name}.{letter}")
            }
            SizeExpr::Len(buffer) => write!(f, "{buffer}.len()"),
            SizeExpr::Extent { texture, axis } => write!(f, "{texture}.{}()", axis.method()),
            SizeExpr::Binary { op, lhs, rhs } => {
                let own = op.precedence();
                if let Some(method) = op.method() {
                    lhs.write(f, own)?;
                    write!(f, ".{method}(")?;
                    rhs.write(f, 0)?;
                    return f.write_str(")");
                }
                let parens = own < parent;
                if parens {
                    f.write_str("(")?;
                }
                lhs.write(f, own)?;
                write!(f, " {} ", op.symbol())?;
                // The right operand of `-` and `/` groups: `a - (b - c)` keeps its parentheses.
                rhs.write(f, own + 1)?;
                if parens {
                    f.write_str(")")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for SizeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, 0)
    }
}

/// One step of a resolved size program, in postfix order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeStep {
    Literal(u32),
    /// The `u32` at this byte offset of the parameter block.
    Param(u32),
    /// The length in elements of the buffer at this index of the graph's buffers.
    Len(u32),
    /// The size along `axis` of the texture at this index of the graph's buffers. Bake writes the bound
    /// texture's in its place ([`crate::desc::GraphDesc::with_texture_extents`]): [`evaluate`] never reads
    /// one.
    Extent {
        texture: u32,
        axis: Axis,
    },
    Op(SizeOp),
}

/// An axis of a texture's size: `t.width()`, `t.height()`, `t.layers()` (a 2-D array's) or `t.depth()` (a
/// 3-D texture's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    Width,
    Height,
    Layers,
    Depth,
}

impl Axis {
    pub const ALL: [Axis; 4] = [Axis::Width, Axis::Height, Axis::Layers, Axis::Depth];

    /// The method that reads it.
    pub const fn method(self) -> &'static str {
        match self {
            Axis::Width => "width",
            Axis::Height => "height",
            Axis::Layers => "layers",
            Axis::Depth => "depth",
        }
    }

    /// Its place in a size of width, height, and layers or depth.
    pub const fn index(self) -> usize {
        match self {
            Axis::Width => 0,
            Axis::Height => 1,
            Axis::Layers | Axis::Depth => 2,
        }
    }

    pub fn parse(method: &str) -> Option<Axis> {
        Axis::ALL.into_iter().find(|a| a.method() == method)
    }
}

/// Why a size could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// The operator's result does not fit in `u32` (or divides by zero).
    Arithmetic { op: SizeOp, lhs: u32, rhs: u32 },
    /// A step reads a parameter byte or a buffer the replay does not have, or the stack is unbalanced: only a
    /// description that bypassed the checks can cause it.
    Malformed,
}

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SizeError::Arithmetic { op, lhs, rhs } => {
                let expr = match op.method() {
                    Some(method) => format!("{lhs}.{method}({rhs})"),
                    None => format!("{lhs} {} {rhs}", op.symbol()),
                };
                let problem = match op {
                    SizeOp::Div | SizeOp::DivCeil => "divides by zero",
                    SizeOp::Sub => "is negative",
                    _ => "overflows u32",
                };
                write!(f, "`{expr}` {problem}")
            }
            SizeError::Malformed => f.write_str("the size program is malformed"),
        }
    }
}

/// Evaluates a postfix program against the parameter bytes and the bound buffers' lengths. No allocation:
/// the stack is a fixed array of [`MAX_STACK`] slots.
pub fn evaluate(steps: &[SizeStep], params: &[u8], lens: &[u32]) -> Result<u32, SizeError> {
    let mut stack = [0u32; MAX_STACK];
    let mut depth = 0usize;
    for step in steps {
        let value = match *step {
            SizeStep::Literal(v) => v,
            SizeStep::Param(offset) => read_u32(params, offset).ok_or(SizeError::Malformed)?,
            SizeStep::Len(buffer) => *lens.get(buffer as usize).ok_or(SizeError::Malformed)?,
            // Replaced by the bound texture's size at bake: one left is a description that skipped it.
            SizeStep::Extent { .. } => return Err(SizeError::Malformed),
            SizeStep::Op(op) => {
                if depth < 2 {
                    return Err(SizeError::Malformed);
                }
                depth -= 2;
                op.apply(stack[depth], stack[depth + 1])?
            }
        };
        *stack.get_mut(depth).ok_or(SizeError::Malformed)? = value;
        depth += 1;
    }
    if depth == 1 {
        Ok(stack[0])
    } else {
        Err(SizeError::Malformed)
    }
}

/// The stack depth a program needs, or `None` when it is not a well-formed single expression.
pub fn stack_depth(steps: &[SizeStep]) -> Option<usize> {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for step in steps {
        match step {
            SizeStep::Op(_) => depth = depth.checked_sub(2)? + 1,
            _ => depth += 1,
        }
        deepest = deepest.max(depth);
    }
    (depth == 1).then_some(deepest)
}

fn read_u32(bytes: &[u8], offset: u32) -> Option<u32> {
    let start = offset as usize;
    let word = bytes.get(start..start.checked_add(4)?)?;
    Some(u32::from_ne_bytes(word.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(v: u64) -> SizeExpr {
        SizeExpr::Literal(v)
    }

    #[test]
    fn prints_with_the_fewest_parentheses() {
        let e = SizeExpr::binary(
            SizeOp::Mul,
            SizeExpr::binary(SizeOp::Add, SizeExpr::param("w"), lit(1)),
            SizeExpr::param("h"),
        );
        assert_eq!(e.to_string(), "(params.w + 1) * params.h");
        let d = SizeExpr::binary(
            SizeOp::DivCeil,
            SizeExpr::binary(SizeOp::Mul, SizeExpr::Len("x".into()), lit(2)),
            lit(64),
        );
        assert_eq!(d.to_string(), "(x.len() * 2).div_ceil(64)");
        let s = SizeExpr::binary(
            SizeOp::Sub,
            lit(10),
            SizeExpr::binary(SizeOp::Sub, lit(4), lit(3)),
        );
        assert_eq!(s.to_string(), "10 - (4 - 3)");
    }

    #[test]
    fn numbers_terms_in_preorder() {
        let e = SizeExpr::binary(
            SizeOp::Add,
            SizeExpr::binary(SizeOp::Mul, lit(1), lit(2)),
            lit(3),
        );
        let texts: Vec<String> = e.terms().iter().map(|t| t.to_string()).collect();
        assert_eq!(texts, ["1 * 2 + 3", "1 * 2", "1", "2", "3"]);
    }

    #[test]
    fn evaluates_with_checked_arithmetic() {
        use SizeStep::*;
        let params: Vec<u8> = [70_000u32, 3]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let w_times_h = [Param(0), Param(4), Op(SizeOp::Mul)];
        assert_eq!(evaluate(&w_times_h, &params, &[]), Ok(210_000));
        let squared = [Param(0), Param(0), Op(SizeOp::Mul)];
        assert_eq!(
            evaluate(&squared, &params, &[]),
            Err(SizeError::Arithmetic {
                op: SizeOp::Mul,
                lhs: 70_000,
                rhs: 70_000
            })
        );
        let by_zero = [Len(0), Literal(0), Op(SizeOp::DivCeil)];
        let err = evaluate(&by_zero, &params, &[5]).expect_err("division by zero");
        assert_eq!(err.to_string(), "`5.div_ceil(0)` divides by zero");
        let negative = [Literal(3), Literal(5), Op(SizeOp::Sub)];
        assert_eq!(
            evaluate(&negative, &params, &[])
                .expect_err("negative")
                .to_string(),
            "`3 - 5` is negative"
        );
    }

    #[test]
    fn malformed_programs_are_errors_not_panics() {
        use SizeStep::*;
        assert_eq!(
            evaluate(&[Op(SizeOp::Add)], &[], &[]),
            Err(SizeError::Malformed)
        );
        assert_eq!(
            evaluate(&[Param(2)], &[0; 4], &[]),
            Err(SizeError::Malformed)
        );
        assert_eq!(evaluate(&[Len(3)], &[], &[1]), Err(SizeError::Malformed));
        assert_eq!(
            evaluate(&[Literal(1), Literal(2)], &[], &[]),
            Err(SizeError::Malformed)
        );
        let deep: Vec<SizeStep> = std::iter::repeat_n(Literal(1), MAX_STACK + 1).collect();
        assert_eq!(evaluate(&deep, &[], &[]), Err(SizeError::Malformed));
        assert_eq!(
            stack_depth(&[Literal(1), Literal(2), Op(SizeOp::Max)]),
            Some(2)
        );
        assert_eq!(stack_depth(&[Op(SizeOp::Max)]), None);
    }
}
