//! Dispatch sizes: each dimension of `threads(..)` or `workgroups(..)` resolves into a postfix program over
//! `u32` parameters, buffer lengths and literals; the parts known now are computed now.

use super::{Checker, SizeProgram, Space};
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::DispatchSpec;
use crate::layout::ParamsLayout;
use crate::size::{MAX_STACK, SizeExpr, SizeOp, SizeStep, stack_depth};
use crate::size_parse::MAX_DEPTH;
use crate::types::Scalar;

/// What a size expression measures, which decides what it may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SizeUse {
    /// A dispatch dimension, evaluated at each replay: parameters, buffer lengths, literals.
    Dispatch,
    /// A bound of a copy or fill range, fixed at bake: buffer lengths and literals.
    Range,
    /// The value of a kernel's `override` constant, fixed at bake and at each update: buffer lengths and
    /// literals.
    Override,
}

const COMPONENTS: [char; 4] = ['x', 'y', 'z', 'w'];

impl Checker<'_> {
    /// Every dimension of a `threads(..)`/`workgroups(..)` clause, resolved; `None` after reporting each
    /// problem.
    pub(super) fn resolve_sizes(
        &mut self,
        n: usize,
        spec: &DispatchSpec,
        layout: &ParamsLayout,
    ) -> Option<Vec<SizeProgram>> {
        let dims = spec.dims();
        if dims.is_empty() || dims.len() > 3 {
            self.diags.push(Diagnostic::new(
                Loc::Dispatch(n),
                format!(
                    "`{}` takes 1 to 3 sizes (x, y, z), not {}",
                    spec.keyword(),
                    dims.len()
                ),
            ));
            return None;
        }
        let programs: Vec<Option<SizeProgram>> = dims
            .iter()
            .enumerate()
            .map(|(dim, expr)| self.resolve_size(n, dim, expr, layout, SizeUse::Dispatch))
            .collect();
        programs.into_iter().collect()
    }

    /// One size expression of node `n`, in size slot `dim` (see [`crate::ir::Node::size_slots`]), as a
    /// program; `None` after reporting each problem.
    pub(super) fn resolve_size(
        &mut self,
        n: usize,
        dim: usize,
        expr: &SizeExpr,
        layout: &ParamsLayout,
        usage: SizeUse,
    ) -> Option<SizeProgram> {
        // The deepest a size may be written: what a graph file can hold, since it stores sizes as text.
        if tree_depth(expr) > MAX_DEPTH {
            self.diags.push(Diagnostic::new(
                Loc::SizeTerm {
                    node: n,
                    dim,
                    term: 0,
                },
                format!("this size nests more than {MAX_DEPTH} levels deep; simplify it"),
            ));
            return None;
        }
        let mut steps = Vec::new();
        let mut term = 0;
        let ok = self
            .size_term(n, dim, expr, &mut term, (layout, usage), &mut steps)
            .is_ok();
        if !ok {
            return None;
        }
        if stack_depth(&steps).is_none_or(|d| d > MAX_STACK) {
            self.diags.push(Diagnostic::new(
                Loc::SizeTerm {
                    node: n,
                    dim,
                    term: 0,
                },
                format!("this size nests more than {MAX_STACK} levels deep; simplify it"),
            ));
            return None;
        }
        Some(SizeProgram {
            text: expr.to_string(),
            steps,
        })
    }

    /// Emits the postfix steps of one term (numbered `*term` in preorder). `Ok(Some(v))` when the term is a
    /// constant worth `v`; `Err` once a problem inside it was reported (its siblings are still checked).
    fn size_term(
        &mut self,
        n: usize,
        dim: usize,
        expr: &SizeExpr,
        term: &mut usize,
        (layout, usage): (&ParamsLayout, SizeUse),
        steps: &mut Vec<SizeStep>,
    ) -> Result<Option<u32>, ()> {
        let loc = Loc::SizeTerm {
            node: n,
            dim,
            term: *term,
        };
        *term += 1;
        match expr {
            SizeExpr::Literal(v) => match u32::try_from(*v) {
                Ok(v) => {
                    steps.push(SizeStep::Literal(v));
                    Ok(Some(v))
                }
                Err(_) => {
                    self.diags.push(Diagnostic::new(
                        loc,
                        format!("`{v}` does not fit in `u32`, the type of dispatch sizes"),
                    ));
                    Err(())
                }
            },
            SizeExpr::Param { .. } if usage == SizeUse::Override => {
                self.diags.push(
                    Diagnostic::new(
                        loc,
                        format!(
                            "an override's value is fixed when the graph is baked (and at each update), so it \
                             cannot use `{expr}`"
                        ),
                    )
                    .with_help(
                        "write it with integer literals and buffer lengths, such as `x.len() / 64`; a value \
                         that changes at every replay is a parameter the kernel reads",
                    ),
                );
                Err(())
            }
            SizeExpr::Param { .. } if usage == SizeUse::Range => {
                self.diags.push(
                    Diagnostic::new(
                        loc,
                        format!(
                            "a range is fixed when the graph is baked, so it cannot use `{expr}`"
                        ),
                    )
                    .with_help(
                        "write it with integer literals and buffer lengths, such as `x.len() - 1`",
                    ),
                );
                Err(())
            }
            SizeExpr::Param { name, component } => {
                let offset = self.size_param(loc, name, *component, layout, "dispatch sizes")?;
                steps.push(SizeStep::Param(offset));
                Ok(None)
            }
            SizeExpr::Len(buffer) => {
                let b = self
                    .resolve_name(Space::Buffer, buffer, loc.clone())
                    .ok_or(())?;
                if self.textures.get(b).copied().flatten().is_some() {
                    self.diags.push(
                        Diagnostic::new(
                            loc,
                            format!("`{buffer}` is a texture, which has no length"),
                        )
                        .with_help(format!(
                            "size it by the texture's size: `{buffer}.width()`, `{buffer}.height()`"
                        )),
                    );
                    return Err(());
                }
                steps.push(SizeStep::Len(b as u32));
                Ok(None)
            }
            SizeExpr::Extent { texture, axis } => {
                let t = self
                    .resolve_name(Space::Buffer, texture, loc.clone())
                    .ok_or(())?;
                let problem = match (self.textures.get(t).copied().flatten(), usage) {
                    (None, _) => Some((
                        format!("`{texture}` is a buffer, which has no {}", axis.method()),
                        format!("write `{texture}.len()` for its length in elements"),
                    )),
                    (Some(_), SizeUse::Range) => Some((
                        format!("a range is in elements of a buffer, so it cannot use `{expr}`"),
                        "write it with integer literals and buffer lengths".to_string(),
                    )),
                    (Some(_), SizeUse::Override) => Some((
                        format!(
                            "an override's value is written over buffer lengths, so it cannot use `{expr}`"
                        ),
                        "write it with integer literals and buffer lengths".to_string(),
                    )),
                    (Some(ty), _) if !crate::texture::has_axis(ty.dim, *axis) => Some((
                        format!("texture `{texture}` (`{ty}`) has no {}", axis.method()),
                        format!(
                            "a `texture_{}` has {}",
                            ty.dim.suffix(),
                            crate::size::Axis::ALL
                                .into_iter()
                                .filter(|a| crate::texture::has_axis(ty.dim, *a))
                                .map(|a| format!("`{texture}.{}()`", a.method()))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )),
                    _ => None,
                };
                if let Some((message, help)) = problem {
                    self.diags
                        .push(Diagnostic::new(loc, message).with_help(help));
                    return Err(());
                }
                steps.push(SizeStep::Extent {
                    texture: t as u32,
                    axis: *axis,
                });
                Ok(None)
            }
            SizeExpr::Binary { op, lhs, rhs } => {
                let l = self.size_term(n, dim, lhs, term, (layout, usage), steps);
                let r = self.size_term(n, dim, rhs, term, (layout, usage), steps);
                let (l, r) = (l?, r?);
                steps.push(SizeStep::Op(*op));
                if matches!(op, SizeOp::Div | SizeOp::DivCeil) && r == Some(0) {
                    self.diags.push(Diagnostic::new(
                        loc,
                        format!("this size always divides by zero: `{expr}`"),
                    ));
                    return Err(());
                }
                let (Some(l), Some(r)) = (l, r) else {
                    return Ok(None);
                };
                // Known now, so an error now rather than at every replay.
                match op.apply(l, r) {
                    Ok(v) => Ok(Some(v)),
                    Err(e) => {
                        self.diags.push(Diagnostic::new(
                            loc,
                            format!("this size is always an error: {e}"),
                        ));
                        Err(())
                    }
                }
            }
        }
    }

    /// The byte offset of a `u32` parameter (or of a component of a `u32` vector) named in a size.
    /// The byte offset of `params.NAME` (`.x` ..), which must be a `u32`; `what` names the sizes it is read
    /// as in the message where it is not (`dispatch sizes`).
    pub(super) fn size_param(
        &mut self,
        loc: Loc,
        name: &str,
        component: Option<u8>,
        layout: &ParamsLayout,
        what: &str,
    ) -> Result<u32, ()> {
        self.resolve_name(Space::Param, name, loc.clone())
            .ok_or(())?;
        // A parameter of a refused type is not in the layout; its own error says why.
        let field = layout.fields.iter().find(|f| f.name == name).ok_or(())?;
        let ty = field.ty;
        let written = match component {
            Some(c) => format!(
                "params.{name}.{}",
                COMPONENTS.get(usize::from(c)).unwrap_or(&'?')
            ),
            None => format!("params.{name}"),
        };
        let problem = if ty.scalar != Scalar::U32 {
            Some(
                Diagnostic::new(loc, format!("{what} are `u32`, but `{written}` is `{ty}`"))
                    .with_help(format!(
                        "declare `{name}` as `u32`{}",
                        if ty.components > 1 { " components" } else { "" }
                    )),
            )
        } else {
            let letter = |c: u8| *COMPONENTS.get(usize::from(c)).unwrap_or(&'?');
            match component {
                None if ty.components > 1 => Some(
                    Diagnostic::new(loc, format!("`params.{name}` is a `{ty}`, not one size"))
                        .with_help(format!("take one component, such as `params.{name}.x`")),
                ),
                None => None,
                Some(_) if ty.components == 1 => Some(Diagnostic::new(
                    loc,
                    format!("`params.{name}` is a `u32`, which has no components"),
                )),
                Some(c) if c >= ty.components => Some(Diagnostic::new(
                    loc,
                    format!("`{ty}` has no component `{}`", letter(c)),
                )),
                Some(_) => None,
            }
        };
        if let Some(d) = problem {
            self.diags.push(d);
            return Err(());
        }
        Ok(field.offset + 4 * u32::from(component.unwrap_or(0)))
    }
}

/// The levels of a size's tree, a leaf being one: how [`crate::size_parse`] counts them.
fn tree_depth(expr: &SizeExpr) -> usize {
    match expr {
        SizeExpr::Binary { lhs, rhs, .. } => 1 + tree_depth(lhs).max(tree_depth(rhs)),
        _ => 1,
    }
}
