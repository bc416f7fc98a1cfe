//! The pointwise proof: a compute entry point is pointwise when each invocation touches only the elements at
//! its own position, so running it after (or beside) another pointwise kernel of the same launch in one
//! invocation gives what the two dispatches give. That is what lets the fusion pass merge kernels.
//!
//! The proof is read from naga's IR and is deliberately narrow (a `None` only costs a fusion):
//!
//! - every index into a storage buffer is the invocation's own index: `gid.x`, or the folded form
//!   `gid.x + gid.y * groups.x * W` (`groups` the `num_workgroups` builtin, `W` the workgroup's width),
//!   written directly, not through a variable;
//! - every texel loaded or stored (`textureLoad`, `textureStore`) is at the invocation's own coordinate in
//!   the texture's dimension: `gid.x` of a 1-D texture, `gid.xy` of a 2-D one (and layer `gid.z` of a 2-D
//!   array), `gid` of a 3-D one, as they are or converted to `i32` (`vec2<i32>(gid.xy)`, or built from the
//!   components), at mip level 0; no texture is sampled (a sampler reads neighbours);
//! - buffers and textures are touched only by the entry point itself, never passed as pointers or touched by
//!   a helper function;
//! - no atomics, barriers, workgroup memory, subgroup operations or early exits other than `return`;
//! - every argument of the entry point is a builtin.
//!
//! Own positions are distinct only where the axes of `global_invocation_id` an access leaves out stay 0: the
//! proof gives the fewest axes any access spans ([`Pointwise::axes`]), and the caller, which knows the
//! dispatch, checks that the launch has only one invocation along each axis past them.

use naga::{
    AddressSpace, BinaryOperator, Block, BuiltIn, Expression, Function, Handle, ImageDimension,
    Literal, Module, ScalarKind, Statement, SwizzleComponent, TypeInner,
};

/// What the proof found of a pointwise entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pointwise {
    /// The fewest axes of `global_invocation_id` any of its accesses spans: 1 for a buffer's `gid.x` or a
    /// 1-D texture's, 2 for the folded form or a 2-D texture's `gid.xy`, 3 for a 2-D array's or a 3-D
    /// texture's (and for an entry point that touches nothing). Two invocations touch one element only if
    /// they differ along an axis past these, so the launch must have one invocation along each of those.
    pub axes: u32,
}

impl Pointwise {
    /// Whether a launch of this workgroup and these dispatch sizes (`None` where not known before replay)
    /// has one invocation along every axis past [`Pointwise::axes`], so that no two invocations touch one
    /// element.
    pub fn distinct_in(&self, workgroup_size: [u32; 3], one_along: [bool; 3]) -> bool {
        (self.axes as usize..3).all(|axis| workgroup_size[axis] == 1 && one_along[axis])
    }
}

/// Whether entry point `index` of `module` is pointwise (see the module's documentation), and the axes its
/// accesses span.
pub fn pointwise(module: &Module, index: usize) -> Option<Pointwise> {
    let ep = module.entry_points.get(index)?;
    let function = &ep.function;
    if function
        .arguments
        .iter()
        .any(|a| !matches!(a.binding, Some(naga::Binding::BuiltIn(_))))
    {
        return None;
    }
    let resource = |h: Handle<naga::GlobalVariable>| {
        let global = &module.global_variables[h];
        matches!(
            global.space,
            AddressSpace::Storage { .. } | AddressSpace::WorkGroup | AddressSpace::Handle
        )
    };
    // Helpers compute on values only.
    let helper_touches_resources = module.functions.iter().any(|(_, f)| {
        f.expressions
            .iter()
            .any(|(_, e)| matches!(e, Expression::GlobalVariable(g) if resource(*g)))
    });
    if helper_touches_resources {
        return None;
    }
    let proof = Proof {
        module,
        function,
        width: ep.workgroup_size[0],
    };
    let axes = proof.accesses_are_own()?;
    if !proof.block_is_plain(&function.body) {
        return None;
    }
    let stores = proof.stores_are_own(&function.body)?;
    Some(Pointwise {
        axes: axes.min(stores),
    })
}

struct Proof<'a> {
    module: &'a Module,
    function: &'a Function,
    width: u32,
}

impl Proof<'_> {
    /// The global expression `h` is, if it is one.
    fn global(&self, h: Handle<Expression>) -> Option<&naga::GlobalVariable> {
        match self.function.expressions[h] {
            Expression::GlobalVariable(g) => Some(&self.module.global_variables[g]),
            _ => None,
        }
    }

    /// Whether `h` is a storage or workgroup global (a buffer, or memory shared by the workgroup).
    fn shared_global(&self, h: Handle<Expression>) -> bool {
        self.global(h).is_some_and(|g| {
            matches!(
                g.space,
                AddressSpace::Storage { .. } | AddressSpace::WorkGroup
            )
        })
    }

    /// The dimension and arrayness of the texture `h` is, if it is a texture global.
    fn texture(&self, h: Handle<Expression>) -> Option<(ImageDimension, bool)> {
        let global = self.global(h)?;
        match self.module.types[global.ty].inner {
            TypeInner::Image { dim, arrayed, .. } => Some((dim, arrayed)),
            _ => None,
        }
    }

    /// The fewest axes spanned by the entry point's element accesses into shared globals and its texel loads,
    /// each at the invocation's own position; `None` if one is not, none is by a constant, and no texture is
    /// sampled or queried other than for its size. 3 when there are none.
    fn accesses_are_own(&self) -> Option<u32> {
        let mut axes = 3;
        for (_, e) in self.function.expressions.iter() {
            let spanned = match *e {
                Expression::Access { base, index } if self.shared_global(base) => {
                    self.own_index(index)?
                }
                Expression::AccessIndex { base, .. } if self.shared_global(base) => return None,
                Expression::ImageLoad {
                    image,
                    coordinate,
                    array_index,
                    sample,
                    level,
                } => {
                    let base_level = level.is_none_or(|l| self.is_zero(l));
                    if sample.is_some() || !base_level {
                        return None;
                    }
                    self.own_texel(image, coordinate, array_index)?
                }
                Expression::ImageSample { .. } => return None,
                _ => continue,
            };
            axes = axes.min(spanned);
        }
        Some(axes)
    }

    /// The fewest axes spanned by the texels `block` stores (3 when it stores none); `None` if one is not at
    /// the invocation's own coordinate.
    fn stores_are_own(&self, block: &Block) -> Option<u32> {
        let mut axes = 3;
        for s in block.iter() {
            let spanned = match s {
                Statement::Block(b) => self.stores_are_own(b)?,
                Statement::If { accept, reject, .. } => self
                    .stores_are_own(accept)?
                    .min(self.stores_are_own(reject)?),
                Statement::Switch { cases, .. } => cases
                    .iter()
                    .map(|c| self.stores_are_own(&c.body))
                    .try_fold(3, |a, b| Some(a.min(b?)))?,
                Statement::Loop {
                    body, continuing, ..
                } => self
                    .stores_are_own(body)?
                    .min(self.stores_are_own(continuing)?),
                Statement::ImageStore {
                    image,
                    coordinate,
                    array_index,
                    ..
                } => self.own_texel(*image, *coordinate, *array_index)?,
                _ => continue,
            };
            axes = axes.min(spanned);
        }
        Some(axes)
    }

    /// The axes a texel access of texture `image` at `coordinate` (and layer `array_index`) spans, if it is
    /// the invocation's own coordinate in the texture's dimension.
    fn own_texel(
        &self,
        image: Handle<Expression>,
        coordinate: Handle<Expression>,
        array_index: Option<Handle<Expression>>,
    ) -> Option<u32> {
        let (dim, arrayed) = self.texture(image)?;
        let size = match dim {
            ImageDimension::D1 => 1,
            ImageDimension::D2 => 2,
            ImageDimension::D3 => 3,
            ImageDimension::Cube => return None,
        };
        if !self.own_coordinate(coordinate, size) {
            return None;
        }
        match (arrayed, array_index) {
            (false, None) => Some(size),
            (true, Some(layer)) if size == 2 && self.gid_component(self.unconverted(layer), 2) => {
                Some(3)
            }
            _ => None,
        }
    }

    /// Whether `h` is the first `size` components of `global_invocation_id`, in order: `gid.x`, `gid.xy`,
    /// `gid` (for 3), or a vector built of the components, each perhaps converted to another integer type.
    fn own_coordinate(&self, h: Handle<Expression>, size: u32) -> bool {
        let h = self.unconverted(h);
        if size == 1 {
            return self.gid_component(h, 0);
        }
        match self.function.expressions[h] {
            Expression::FunctionArgument(_) => {
                size == 3 && self.is_builtin(h, BuiltIn::GlobalInvocationId)
            }
            Expression::Swizzle {
                size: swizzled,
                vector,
                pattern,
            } => {
                let order = [
                    SwizzleComponent::X,
                    SwizzleComponent::Y,
                    SwizzleComponent::Z,
                ];
                swizzled as u32 == size
                    && pattern[..size as usize] == order[..size as usize]
                    && self.is_builtin(vector, BuiltIn::GlobalInvocationId)
            }
            Expression::Compose { ref components, .. } => {
                components.len() == size as usize
                    && components
                        .iter()
                        .enumerate()
                        .all(|(i, &c)| self.gid_component(self.unconverted(c), i as u32))
            }
            _ => false,
        }
    }

    /// `h` with integer conversions (`i32(..)`, `vec2<i32>(..)`, `u32(..)`) taken off.
    fn unconverted(&self, mut h: Handle<Expression>) -> Handle<Expression> {
        while let Expression::As {
            expr,
            kind: ScalarKind::Sint | ScalarKind::Uint,
            convert: Some(4),
        } = self.function.expressions[h]
        {
            h = expr;
        }
        h
    }

    /// Whether `h` is the integer literal 0.
    fn is_zero(&self, h: Handle<Expression>) -> bool {
        matches!(
            self.function.expressions[h],
            Expression::Literal(Literal::I32(0) | Literal::U32(0))
        )
    }

    /// The axes an element index into a buffer spans: 1 for `gid.x`, 2 for `gid.x + gid.y * groups.x * W`.
    fn own_index(&self, h: Handle<Expression>) -> Option<u32> {
        if self.gid_component(h, 0) {
            return Some(1);
        }
        let Expression::Binary {
            op: BinaryOperator::Add,
            left,
            right,
        } = self.function.expressions[h]
        else {
            return None;
        };
        (self.gid_component(left, 0) && self.folded_row(right)).then_some(2)
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
        self.gid_component(row, 1)
            && self.builtin_component(groups, BuiltIn::NumWorkGroups, 0)
            && matches!(self.function.expressions[right], Expression::Literal(Literal::U32(w)) if w == self.width)
    }

    /// Component `component` of `global_invocation_id`.
    fn gid_component(&self, h: Handle<Expression>, component: u32) -> bool {
        self.builtin_component(h, BuiltIn::GlobalInvocationId, component)
    }

    /// Component `component` of the entry point's argument with builtin `builtin`.
    fn builtin_component(&self, h: Handle<Expression>, builtin: BuiltIn, component: u32) -> bool {
        let Expression::AccessIndex { base, index } = self.function.expressions[h] else {
            return false;
        };
        index == component && self.is_builtin(base, builtin)
    }

    /// Whether `h` is the entry point's argument with builtin `builtin`.
    fn is_builtin(&self, h: Handle<Expression>, builtin: BuiltIn) -> bool {
        let Expression::FunctionArgument(arg) = self.function.expressions[h] else {
            return false;
        };
        self.function
            .arguments
            .get(arg as usize)
            .is_some_and(|a| matches!(a.binding, Some(naga::Binding::BuiltIn(b)) if b == builtin))
    }

    /// No statement that reaches other invocations' data or waits for them (texel stores are let through,
    /// for [`Proof::stores_are_own`]).
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
            | Statement::Store { .. }
            | Statement::ImageStore { .. } => true,
            // Arguments are values, not pointers into buffers or textures.
            Statement::Call { arguments, .. } => {
                arguments.iter().all(|&a| !self.points_into_resource(a))
            }
            _ => false,
        })
    }

    /// Whether `h` is a pointer into a shared global (the global, or an element or member of it), or a
    /// texture.
    fn points_into_resource(&self, h: Handle<Expression>) -> bool {
        match self.function.expressions[h] {
            Expression::GlobalVariable(_) => {
                self.shared_global(h)
                    || self
                        .global(h)
                        .is_some_and(|g| g.space == AddressSpace::Handle)
            }
            Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => {
                self.points_into_resource(base)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLARATIONS: &str = "@group(0) @binding(0) var<storage, read> x: array<f32>;\n\
         @group(0) @binding(1) var<storage, read_write> y: array<f32>;\n\
         @group(0) @binding(2) var t: texture_2d<f32>;\n\
         @group(0) @binding(3) var s: texture_storage_2d<r32float, write>;\n\
         @group(0) @binding(4) var layers: texture_2d_array<f32>;\n\
         @group(0) @binding(5) var volume: texture_3d<f32>;\n\
         @group(0) @binding(6) var line: texture_1d<f32>;\n\
         @group(0) @binding(7) var linear: sampler;\n\
         var<workgroup> tile: array<f32, 64>;\n\
         fn twice(v: f32) -> f32 { return 2.0 * v; }\n";

    /// The proof's axes for `source` after the declarations.
    fn axes(source: &str) -> Option<u32> {
        let source = format!("{DECLARATIONS}{source}");
        let module = naga::front::wgsl::parse_str(&source).expect("test WGSL parses");
        pointwise(&module, 0).map(|p| p.axes)
    }

    /// The axes of an entry point of workgroup `size` whose body is `body`.
    fn body_axes(size: &str, body: &str) -> Option<u32> {
        axes(&format!(
            "@compute @workgroup_size({size})\nfn main(@builtin(global_invocation_id) gid: vec3<u32>, \
             @builtin(num_workgroups) groups: vec3<u32>) {{ {body} }}"
        ))
    }

    /// Pointwise in a one-row launch: what buffer kernels have.
    fn proved(body: &str) -> bool {
        body_axes("64", body).is_some()
    }

    #[test]
    fn own_index_forms_are_proved() {
        assert_eq!(
            body_axes(
                "64",
                "let i = gid.x; if (i >= arrayLength(&y)) { return; } y[i] = twice(x[i]) + y[i];"
            ),
            Some(1)
        );
        assert_eq!(
            body_axes(
                "64",
                "let i = gid.x + gid.y * groups.x * 64u; if (i < arrayLength(&y)) { y[i] = x[i]; }"
            ),
            Some(2)
        );
        // Loops and branches over values are fine.
        assert!(proved(
            "var s = 0.0; for (var k = 0; k < 4; k++) { s += x[gid.x]; } y[gid.x] = s;"
        ));
        // An entry point that touches nothing spans every axis.
        assert_eq!(body_axes("8, 8", "let v = twice(1.0);"), Some(3));
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
            assert!(!proved(body), "proved: {body}");
        }
    }

    #[test]
    fn helpers_touching_buffers_or_textures_are_refused() {
        let helper = "fn peek(i: u32) -> f32 { return x[i]; }\n\
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) { y[gid.x] = peek(gid.x); }";
        assert_eq!(axes(helper), None);
        let texel = "fn at(p: vec2<u32>) -> f32 { return textureLoad(t, p, 0).r; }\n\
             @compute @workgroup_size(8, 8) fn main(@builtin(global_invocation_id) gid: vec3<u32>) { \
             textureStore(s, gid.xy, vec4<f32>(at(gid.xy))); }";
        assert_eq!(axes(texel), None);
    }

    #[test]
    fn texels_at_the_own_coordinate_are_proved_with_their_axes() {
        let cases = [
            ("textureStore(s, gid.xy, textureLoad(t, gid.xy, 0));", 2),
            (
                "textureStore(s, vec2<i32>(gid.xy), textureLoad(t, vec2<i32>(gid.xy), 0i));",
                2,
            ),
            (
                "let p = vec2<i32>(i32(gid.x), i32(gid.y)); textureStore(s, p, vec4<f32>(textureLoad(t, p, 0).r));",
                2,
            ),
            (
                "if (all(gid.xy < textureDimensions(s))) { textureStore(s, gid.xy, vec4<f32>(1.0)); }",
                2,
            ),
            ("y[gid.x] = textureLoad(line, gid.x, 0).r;", 1),
            ("y[gid.x] = textureLoad(t, gid.xy, 0).r;", 1),
            (
                "textureStore(s, gid.xy, textureLoad(layers, gid.xy, gid.z, 0));",
                2,
            ),
            (
                "let v = textureLoad(layers, vec2<i32>(gid.xy), i32(gid.z), 0);",
                3,
            ),
            ("let v = textureLoad(volume, gid, 0);", 3),
            (
                "let v = textureLoad(volume, vec3<u32>(gid.x, gid.y, gid.z), 0);",
                3,
            ),
        ];
        for (body, want) in cases {
            assert_eq!(body_axes("8, 8", body), Some(want), "{body}");
        }
    }

    #[test]
    fn texels_anywhere_else_and_sampling_are_refused() {
        let refused = [
            // Axes swapped, a neighbour, a constant row.
            "textureStore(s, gid.yx, vec4<f32>(1.0));",
            "textureStore(s, gid.xy, textureLoad(t, gid.xy + vec2<u32>(1u, 0u), 0));",
            "textureStore(s, vec2<u32>(gid.x, 0u), vec4<f32>(1.0));",
            "let v = textureLoad(t, vec2<u32>(gid.y, gid.x), 0);",
            // Another mip level.
            "let v = textureLoad(t, gid.xy, 1);",
            // A layer other than the invocation's.
            "let v = textureLoad(layers, gid.xy, 0, 0);",
            // Three components of a 2-D texture's own position are not its coordinate.
            "let v = textureLoad(volume, vec3<u32>(gid.xy, 0u), 0);",
            // Sampling reads the neighbours the filter reaches.
            "textureStore(s, gid.xy, textureSampleLevel(t, linear, vec2<f32>(0.5), 0.0));",
        ];
        for body in refused {
            assert_eq!(body_axes("8, 8", body), None, "proved: {body}");
        }
    }

    #[test]
    fn distinct_positions_need_one_invocation_past_the_axes() {
        let buffer = Pointwise { axes: 1 };
        assert!(buffer.distinct_in([64, 1, 1], [true, true, true]));
        // A square workgroup runs 8 invocations of each `gid.x`.
        assert!(!buffer.distinct_in([8, 8, 1], [true, true, true]));
        // So does a dispatch of two rows.
        assert!(!buffer.distinct_in([64, 1, 1], [true, false, true]));
        let image = Pointwise { axes: 2 };
        assert!(image.distinct_in([8, 8, 1], [false, false, true]));
        assert!(!image.distinct_in([8, 8, 2], [false, false, true]));
        assert!(!image.distinct_in([8, 8, 1], [false, false, false]));
        assert!(Pointwise { axes: 3 }.distinct_in([4, 4, 4], [false; 3]));
    }
    #[test]
    fn the_texture_fill_is_pointwise_over_its_launch() {
        use crate::texture::{TextureDim, TextureType};
        for (ty, dim, axes) in [
            ("texture_1d<r32float>", TextureDim::D1, 1),
            ("texture_2d<rgba8unorm>", TextureDim::D2, 2),
            ("texture_2d_array<r32uint>", TextureDim::D2Array, 3),
            ("texture_3d<rgba16float>", TextureDim::D3, 3),
        ] {
            let texture = TextureType::parse(ty).expect("a texture type");
            let declarations = crate::wgsl::resource_declarations(
                [(
                    crate::fill::BINDING,
                    crate::wgsl::Resource::Texture(texture),
                    crate::ir::AccessMode::Write,
                )],
                &[],
            );
            let (source, workgroup) = crate::fill::texture_wgsl(dim);
            let texel = texture.texel_type();
            let module =
                format!("{declarations}fn value() -> {texel} {{ return {texel}(); }}\n{source}");
            let module = naga::front::wgsl::parse_str(&module).expect("the fill parses");
            let proved = pointwise(&module, 0).expect("the fill is pointwise");
            assert_eq!(proved.axes, axes, "{ty}");
            // Dispatched over the texture's size along each of its axes.
            let mut one_along = [true; 3];
            for axis in one_along.iter_mut().take(axes as usize) {
                *axis = false;
            }
            assert!(proved.distinct_in(workgroup, one_along), "{ty}");
        }
    }
}
