//! What the two index proofs ([`super::neighbourhood`] for a line, [`super::grid`] for an image) share: the
//! walk over an entry point's statements, which carries what is known of the invocation's index into each
//! branch and says whether every invocation in the extent runs a statement whatever the data, and the
//! integers of naga's IR they read.

use naga::{
    AddressSpace, BinaryOperator, Block, BuiltIn, Expression, Function, Handle, Literal, Module,
    ScalarKind, Statement, TypeInner, UnaryOperator,
};

/// How deep an expression may nest before a proof gives up on it.
pub(super) const MAX_DEPTH: u32 = 64;

/// What a proof knows of the invocation's index where a statement runs.
pub(super) trait Facts: Copy {
    /// No invocation gets here.
    const UNREACHABLE: Self;
    fn reachable(self) -> bool;
    /// What holds in either case.
    fn or(self, other: Self) -> Self;
}

/// A proof's view of the statements the walk meets.
pub(super) trait Proof {
    type Facts: Facts;
    /// Expression `h` was emitted under `facts`; `always` when every invocation inside the extent evaluates
    /// it whatever the data.
    fn emitted(&mut self, h: Handle<Expression>, facts: Self::Facts, always: bool);
    /// A store through `pointer`, likewise.
    fn stored(&mut self, pointer: Handle<Expression>, facts: Self::Facts, always: bool);
    /// The facts where `left op right` holds, and where it does not (`op` a comparison: the connectives are
    /// [`Proof::condition`]'s); `depth` how deep in an expression this is.
    fn compare(
        &self,
        op: BinaryOperator,
        left: Handle<Expression>,
        right: Handle<Expression>,
        facts: Self::Facts,
        depth: u32,
    ) -> (Self::Facts, Self::Facts);
    /// The function the proof walks.
    fn function(&self) -> &Function;

    /// The facts where boolean expression `h` is true, and where it is false: the literals, `!`, `&&` and
    /// `||` followed, comparisons by [`Proof::compare`]; nothing learnt past [`MAX_DEPTH`].
    fn condition(
        &self,
        h: Handle<Expression>,
        facts: Self::Facts,
        depth: u32,
    ) -> (Self::Facts, Self::Facts) {
        if depth > MAX_DEPTH || !facts.reachable() {
            return (facts, facts);
        }
        let inner = |h, facts| self.condition(h, facts, depth + 1);
        match self.function().expressions[h] {
            Expression::Literal(Literal::Bool(true)) => (facts, Self::Facts::UNREACHABLE),
            Expression::Literal(Literal::Bool(false)) => (Self::Facts::UNREACHABLE, facts),
            Expression::Unary {
                op: UnaryOperator::LogicalNot,
                expr,
            } => {
                let (yes, no) = inner(expr, facts);
                (no, yes)
            }
            Expression::Binary {
                op: BinaryOperator::LogicalAnd,
                left,
                right,
            } => {
                let (a_yes, a_no) = inner(left, facts);
                let (yes, b_no) = inner(right, a_yes);
                (yes, a_no.or(b_no))
            }
            Expression::Binary {
                op: BinaryOperator::LogicalOr,
                left,
                right,
            } => {
                let (a_yes, a_no) = inner(left, facts);
                let (b_yes, no) = inner(right, a_no);
                (a_yes.or(b_yes), no)
            }
            Expression::Binary { op, left, right } => self.compare(op, left, right, facts, depth),
            _ => (facts, facts),
        }
    }
    /// Whether pointer `h` reaches into a storage buffer (a call passing one is refused).
    fn reaches_storage(&self, h: Handle<Expression>) -> bool;
    /// The kernel is not what the proof proves.
    fn refuse(&mut self);
}

/// Walks `block` under `facts`; `always` when every invocation inside the extent runs it whatever the data.
/// Returns the facts after it and whether it may return.
pub(super) fn walk<P: Proof>(
    proof: &mut P,
    block: &Block,
    mut facts: P::Facts,
    mut always: bool,
) -> (P::Facts, bool) {
    let mut may_return = false;
    for statement in block.iter() {
        if !facts.reachable() {
            break;
        }
        match statement {
            Statement::Emit(range) => {
                for h in range.clone() {
                    proof.emitted(h, facts, always);
                }
            }
            Statement::Store { pointer, .. } => proof.stored(*pointer, facts, always),
            Statement::Block(b) => {
                let (after, returns) = walk(proof, b, facts, always);
                facts = after;
                may_return |= returns;
                always &= !returns;
            }
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                let (yes, no) = proof.condition(*condition, facts, 0);
                // A branch runs for every invocation only when the other cannot be taken.
                let (after_yes, returns_yes) = walk(proof, accept, yes, always && !no.reachable());
                let (after_no, returns_no) = walk(proof, reject, no, always && !yes.reachable());
                facts = after_yes.or(after_no);
                may_return |= returns_yes || returns_no;
                always &= !(returns_yes || returns_no);
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                let (_, body_returns) = walk(proof, body, facts, false);
                let (_, continuing_returns) = walk(proof, continuing, facts, false);
                may_return |= body_returns || continuing_returns;
                always &= !(body_returns || continuing_returns);
            }
            Statement::Switch { cases, .. } => {
                for case in cases {
                    let (_, returns) = walk(proof, &case.body, facts, false);
                    may_return |= returns;
                    always &= !returns;
                }
            }
            Statement::Return { .. } => return (P::Facts::UNREACHABLE, true),
            Statement::Break | Statement::Continue => {}
            Statement::Call { arguments, .. } => {
                if arguments.iter().any(|&a| proof.reaches_storage(a)) {
                    proof.refuse();
                }
            }
            _ => proof.refuse(),
        }
    }
    (facts, may_return)
}

/// Expression `h` of `function` as an integer literal or a constant of one.
pub(super) fn int_literal(
    module: &Module,
    function: &Function,
    h: Handle<Expression>,
) -> Option<i64> {
    let literal = match function.expressions[h] {
        Expression::Literal(l) => l,
        Expression::Constant(c) => match module.global_expressions[module.constants[c].init] {
            Expression::Literal(l) => l,
            _ => return None,
        },
        _ => return None,
    };
    match literal {
        Literal::U32(v) => Some(i64::from(v)),
        Literal::I32(v) => Some(i64::from(v)),
        Literal::AbstractInt(v) => Some(v),
        _ => None,
    }
}

/// Expression `h` is a `u32`, by `info`'s analysis of its function.
pub(super) fn is_u32(
    module: &Module,
    info: &naga::valid::FunctionInfo,
    h: Handle<Expression>,
) -> bool {
    matches!(
        info[h].ty.inner_with(&module.types),
        TypeInner::Scalar(s) if s.kind == ScalarKind::Uint
    )
}

/// The function of entry point `index` when it has the form both proofs read: one row of invocations per
/// workgroup, `global_invocation_id` its only argument, no workgroup memory, and helper functions that compute
/// on values only (touching no buffer).
pub(super) fn plain_entry(module: &Module, index: usize) -> Option<&Function> {
    let ep = module.entry_points.get(index)?;
    let [_, 1, 1] = ep.workgroup_size else {
        return None;
    };
    let function = &ep.function;
    let [argument] = &function.arguments[..] else {
        return None;
    };
    if argument.binding != Some(naga::Binding::BuiltIn(BuiltIn::GlobalInvocationId)) {
        return None;
    }
    let shared = |space: AddressSpace| {
        matches!(
            space,
            AddressSpace::Storage { .. } | AddressSpace::WorkGroup
        )
    };
    let helper_touches = module.functions.iter().any(|(_, f)| {
        f.expressions.iter().any(|(_, e)| {
            matches!(*e, Expression::GlobalVariable(g) if shared(module.global_variables[g].space))
        })
    });
    let workgroup_memory = module
        .global_variables
        .iter()
        .any(|(_, g)| g.space == AddressSpace::WorkGroup);
    (!helper_touches && !workgroup_memory).then_some(function)
}
