//! Values given as text, a fill's value and a library kernel's arguments: each one WGSL expression of the
//! type wanted, naming only declared parameters, checked alone before it goes into a kernel's module (see
//! [`crate::wgsl::value`]).

use super::Checker;
use super::resolve::Space;
use crate::diagnostic::{Diagnostic, Loc};
use crate::names::escaped;
use crate::types::ValueType;
use crate::wgsl::{self, ValueProblem};

/// Whose value it is, for the messages.
#[derive(Debug, Clone, Copy)]
pub(super) enum ValueOf<'a> {
    /// Fill `node` of `buffer`, whose elements are `elem`.
    Fill {
        node: &'a str,
        buffer: &'a str,
        elem: ValueType,
    },
    /// Argument `name` of library kernel `kernels::path`.
    Argument { name: &'a str, path: &'a str },
}

impl ValueOf<'_> {
    /// "the value `v` of fill `f`", "argument `a` of `kernels::p`": the subject of a message.
    fn subject(&self, text: &str) -> String {
        match self {
            ValueOf::Fill { node, .. } if text.trim().is_empty() => {
                format!("the value of fill `{node}`")
            }
            ValueOf::Fill { node, .. } => format!("the value {} of fill `{node}`", quoted(text)),
            ValueOf::Argument { name, path } => format!("argument `{name}` of `kernels::{path}`"),
        }
    }

    /// What to give instead.
    fn help(&self, ty: &str) -> String {
        match self {
            ValueOf::Fill { elem, .. } if elem.scalar.packed().is_some() => format!(
                "a fill of `{elem}` elements takes a `u32`, whose low {} bits it writes into each: a literal \
                 such as `7u`, or a parameter declared `u32`",
                elem.size() * 8
            ),
            ValueOf::Fill { elem, .. } => format!(
                "give a `{elem}`: a literal such as `{}`, or a parameter declared `{elem}`",
                crate::fill::example_literal(*elem)
            ),
            ValueOf::Argument { name, path } => format!(
                "argument `{name}` of `kernels::{path}` takes a `{ty}`: a literal, or a parameter declared `{ty}`"
            ),
        }
    }

    /// The value is valid WGSL of type `actual` instead of `ty`.
    fn of_another_type(&self, text: &str, ty: &str, actual: &str) -> String {
        match self {
            ValueOf::Fill { node, buffer, elem } => format!(
                "fill `{node}` writes `{elem}` elements into `{buffer}`, but its value {} is a `{actual}`",
                quoted(text)
            ),
            ValueOf::Argument { name, path } => format!(
                "argument `{name}` of `kernels::{path}` takes a `{ty}`, but {} is a `{actual}`",
                quoted(text)
            ),
        }
    }

    /// naga refused the value for another reason.
    fn invalid(&self, text: &str, message: &str) -> String {
        match self {
            ValueOf::Fill { .. } => format!("{} is not valid WGSL: {message}", self.subject(text)),
            ValueOf::Argument { name, path } => {
                format!("WGSL error in argument `{name}` of `kernels::{path}`: {message}")
            }
        }
    }
}

/// A value as a message quotes it: trimmed, escaped, cut short when long.
fn quoted(text: &str) -> String {
    format!("`{}`", escaped(text.trim()))
}

impl Checker<'_> {
    /// `text`, the value of `of` written at `loc`, is one WGSL expression (no statement, comment or brace
    /// can follow it into the kernel's module), names only declared parameters, and validates alone, with
    /// nothing but the parameters declared, as a `ty`: no conversion hides a value of another type, and no
    /// buffer or function of a kernel is in reach. Returns the expression as it goes into the module, or
    /// `None` once the problem is reported.
    pub(super) fn check_value(
        &mut self,
        loc: Loc,
        text: &str,
        ty: &str,
        of: ValueOf<'_>,
    ) -> Option<String> {
        let expression = match wgsl::value_expression(text) {
            Ok(expression) => expression,
            Err(problem) => {
                self.diags
                    .push(not_one_expression(loc, text, ty, of, &problem));
                return None;
            }
        };
        if self.check_value_params(loc.clone(), &expression) || !self.params_usable() {
            return None;
        }
        let layout = self.params_layout();
        let params_struct = layout.wgsl_struct();
        // Validated as the kernel's module will read it: an `f16` parameter's reads converted.
        let (converted, _) = wgsl::f16_param_reads(&expression, &layout.f16_params());
        let module = wgsl::value::isolated(&params_struct, ty, &converted);
        if let Err(e) = wgsl::validate(&module) {
            let prelude = wgsl::value::isolated_prelude(&params_struct);
            let message = match wgsl::expression_type(&prelude, &converted) {
                Some(actual) if actual != ty => of.of_another_type(text, ty, &actual),
                _ => of.invalid(text, &e.message),
            };
            // A parameter written without `params.` is the likely slip.
            let help = e
                .message
                .strip_prefix("no definition in scope for identifier: `")
                .and_then(|rest| rest.strip_suffix('`'))
                .filter(|name| self.params.get(name).is_some())
                .map_or_else(
                    || of.help(ty),
                    |name| format!("parameters are fields of `params`: write `params.{name}`"),
                );
            self.diags
                .push(Diagnostic::new(loc, message).with_help(help));
            return None;
        }
        Some(expression)
    }

    /// `params.x` in a value names a declared parameter. Returns whether an unknown one was found.
    pub(super) fn check_value_params(&mut self, loc: Loc, value: &str) -> bool {
        let mut found = false;
        for u in wgsl::param_uses(value) {
            if self.params.get(&u.name).is_none() {
                found = true;
                let d = self.unknown_name(Space::Param, &u.name, loc.clone());
                self.diags.push(d);
            }
        }
        found
    }
}

fn not_one_expression(
    loc: Loc,
    text: &str,
    ty: &str,
    of: ValueOf<'_>,
    problem: &ValueProblem,
) -> Diagnostic {
    // A long value is not quoted: the length is the problem.
    let subject = match (problem, of) {
        (ValueProblem::TooLong(_), ValueOf::Fill { node, .. }) => {
            format!("the value of fill `{node}`")
        }
        _ => of.subject(text),
    };
    Diagnostic::new(
        loc,
        format!("{subject} is not one WGSL expression: {problem}"),
    )
    .with_help(of.help(ty))
}
