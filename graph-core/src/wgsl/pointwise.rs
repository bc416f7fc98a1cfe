//! The pointwise proof: a compute entry point is pointwise when each invocation touches only the elements at
//! its own linear index, so running it after (or beside) another pointwise kernel of the same extent in one
//! invocation gives what the two dispatches give. That is what lets the fusion pass merge kernels.
//!
//! The proof is read from naga's IR and is deliberately narrow (a `false` only costs a fusion):
//!
//! - every index into a storage buffer is the invocation's own index: `gid.x`, or the folded form
//!   `gid.x + gid.y * groups.x * W` (`groups` the `num_workgroups` builtin, `W` the workgroup's width),
//!   written directly, not through a variable;
//! - storage buffers are touched only by the entry point itself, never passed as pointers or touched by a
//!   helper function;
//! - no atomics, barriers, workgroup memory, subgroup operations or early exits other than `return`;
//! - the workgroup is one row (`@workgroup_size(W)`), and every argument of the entry point is a builtin.

use naga::{
    AddressSpace, BinaryOperator, Block, BuiltIn, Expression, Function, Handle, Literal, Module,
    Statement,
};

/// Whether entry point `index` of `module` is pointwise (see the module's documentation).
pub fn is_pointwise(module: &Module, index: usize) -> bool {
    let Some(ep) = module.entry_points.get(index) else {
        return false;
    };
    let [width, 1, 1] = ep.workgroup_size else {
        return false;
    };
    let function = &ep.function;
    if function
        .arguments
        .iter()
        .any(|a| !matches!(a.binding, Some(naga::Binding::BuiltIn(_))))
    {
        return false;
    }
    let shared = |h: Handle<naga::GlobalVariable>| {
        matches!(
            module.global_variables[h].space,
            AddressSpace::Storage { .. } | AddressSpace::WorkGroup
        )
    };
    // Helpers compute on values only.
    let helper_touches_buffers = module.functions.iter().any(|(_, f)| {
        f.expressions
            .iter()
            .any(|(_, e)| matches!(e, Expression::GlobalVariable(g) if shared(*g)))
    });
    if helper_touches_buffers {
        return false;
    }
    let proof = Proof {
        function,
        width,
        shared: &shared,
    };
    proof.accesses_are_own() && proof.block_is_plain(&function.body)
}

struct Proof<'a, F: Fn(Handle<naga::GlobalVariable>) -> bool> {
    function: &'a Function,
    width: u32,
    shared: &'a F,
}

impl<F: Fn(Handle<naga::GlobalVariable>) -> bool> Proof<'_, F> {
    /// The global a pointer expression is, if it is a storage or workgroup one.
    fn shared_global(&self, h: Handle<Expression>) -> bool {
        matches!(self.function.expressions[h], Expression::GlobalVariable(g) if (self.shared)(g))
    }

    /// Every element access into a shared global is at the invocation's own index; none is by a constant.
    fn accesses_are_own(&self) -> bool {
        self.function.expressions.iter().all(|(_, e)| match *e {
            Expression::Access { base, index } if self.shared_global(base) => self.own_index(index),
            Expression::AccessIndex { base, .. } => !self.shared_global(base),
            _ => true,
        })
    }

    /// `gid.x`, or `gid.x + gid.y * groups.x * W`.
    fn own_index(&self, h: Handle<Expression>) -> bool {
        if self.builtin_component(h, BuiltIn::GlobalInvocationId, 0) {
            return true;
        }
        let Expression::Binary {
            op: BinaryOperator::Add,
            left,
            right,
        } = self.function.expressions[h]
        else {
            return false;
        };
        self.builtin_component(left, BuiltIn::GlobalInvocationId, 0) && self.folded_row(right)
    }

    /// `gid.y * groups.x * W`, the offset of the invocation's row in a folded dispatch.
    fn folded_row(&self, h: Handle<Expression>) -> bool {
        let Expression::Binary {
            op: BinaryOperator::Multiply,
            left,
            right,
        } = self.function.expressions[h]
        else {
            return false;
        };
        let Expression::Binary {
            op: BinaryOperator::Multiply,
            left: row,
            right: groups,
        } = self.function.expressions[left]
        else {
            return false;
        };
        self.builtin_component(row, BuiltIn::GlobalInvocationId, 1)
            && self.builtin_component(groups, BuiltIn::NumWorkGroups, 0)
            && matches!(self.function.expressions[right], Expression::Literal(Literal::U32(w)) if w == self.width)
    }

    /// Component `component` of the entry point's argument with builtin `builtin`.
    fn builtin_component(&self, h: Handle<Expression>, builtin: BuiltIn, component: u32) -> bool {
        let Expression::AccessIndex { base, index } = self.function.expressions[h] else {
            return false;
        };
        let Expression::FunctionArgument(arg) = self.function.expressions[base] else {
            return false;
        };
        index == component
            && self.function.arguments.get(arg as usize).is_some_and(
                |a| matches!(a.binding, Some(naga::Binding::BuiltIn(b)) if b == builtin),
            )
    }

    /// No statement that reaches other invocations' data or waits for them.
    fn block_is_plain(&self, block: &Block) -> bool {
        block.iter().all(|s| match s {
            Statement::Block(b) => self.block_is_plain(b),
            Statement::If { accept, reject, .. } => {
                self.block_is_plain(accept) && self.block_is_plain(reject)
            }
            Statement::Switch { cases, .. } => cases.iter().all(|c| self.block_is_plain(&c.body)),
            Statement::Loop {
                body, continuing, ..
            } => self.block_is_plain(body) && self.block_is_plain(continuing),
            Statement::Emit(_)
            | Statement::Break
            | Statement::Continue
            | Statement::Return { .. }
            | Statement::Store { .. } => true,
            // Arguments are values, not pointers into buffers.
            Statement::Call { arguments, .. } => {
                arguments.iter().all(|&a| !self.points_into_buffer(a))
            }
            _ => false,
        })
    }

    /// Whether `h` is a pointer into a shared global (the global, or an element or member of it).
    fn points_into_buffer(&self, h: Handle<Expression>) -> bool {
        match self.function.expressions[h] {
            Expression::GlobalVariable(_) => self.shared_global(h),
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                self.points_into_buffer(base)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proved(body: &str) -> bool {
        let source = format!(
            "@group(0) @binding(0) var<storage, read> x: array<f32>;\n\
             @group(0) @binding(1) var<storage, read_write> y: array<f32>;\n\
             var<workgroup> tile: array<f32, 64>;\n\
             fn twice(v: f32) -> f32 {{ return 2.0 * v; }}\n{body}"
        );
        let module = naga::front::wgsl::parse_str(&source).expect("test WGSL parses");
        is_pointwise(&module, 0)
    }

    const HEAD: &str = "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>, \
                        @builtin(num_workgroups) groups: vec3<u32>) {";

    #[test]
    fn own_index_forms_are_proved() {
        assert!(proved(&format!(
            "{HEAD} let i = gid.x; if (i >= arrayLength(&y)) {{ return; }} y[i] = twice(x[i]) + y[i]; }}"
        )));
        assert!(proved(&format!(
            "{HEAD} let i = gid.x + gid.y * groups.x * 64u; if (i < arrayLength(&y)) {{ y[i] = x[i]; }} }}"
        )));
        // Loops and branches over values are fine.
        assert!(proved(&format!(
            "{HEAD} var s = 0.0; for (var k = 0; k < 4; k++) {{ s += x[gid.x]; }} y[gid.x] = s; }}"
        )));
    }

    #[test]
    fn every_other_access_is_refused() {
        let refused = [
            // A neighbour.
            "y[gid.x] = x[gid.x + 1u];",
            // A constant element.
            "y[gid.x] = x[0];",
            // An index through a variable.
            "var i = gid.x; y[i] = x[i];",
            // The wrong row width in the folded form.
            "let i = gid.x + gid.y * groups.x * 32u; y[i] = x[i];",
            // Another invocation's data through workgroup memory.
            "tile[0] = x[gid.x]; workgroupBarrier(); y[gid.x] = tile[1];",
            // The second dimension alone.
            "y[gid.y] = x[gid.y];",
        ];
        for body in refused {
            assert!(!proved(&format!("{HEAD} {body} }}")), "proved: {body}");
        }
    }

    #[test]
    fn helpers_touching_buffers_and_wide_workgroups_are_refused() {
        let helper = "fn peek(i: u32) -> f32 { return x[i]; }\n\
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) { y[gid.x] = peek(gid.x); }";
        assert!(!proved(helper));
        let square = "@compute @workgroup_size(8, 8) fn main(@builtin(global_invocation_id) gid: vec3<u32>) { y[gid.x] = x[gid.x]; }";
        assert!(!proved(square));
    }
}
