//! The tiled kernel of a stencil group ([`crate::stencil`]): one workgroup per tile, each step of the group run
//! over the tile and its radius past it in workgroup arrays, barriers between steps, the buffers the graph
//! still reads written back at the end.
//!
//! - **A line** ([`Shape::Line`]): each member is called with its element's index in the buffers; its reads of
//!   a tile go through `slot`, the index less the array's first element's, and positions past either end of
//!   the buffers are zero in a tile (a kernel's read there is out of bounds, whose value WGSL leaves to the
//!   implementation).
//! - **An image** ([`Shape::Image`]): the library's image kernels run *in tile coordinates*: each
//!   is called with its pixel's index in the array, and told that the image is the array (`width()` and
//!   `height()` return the array's sizes), so its own row and column arithmetic finds its neighbours in the
//!   array with no translation at all. That is sound for kernels that read only pixels near their own,
//!   clamped into the image, and whose result does not depend on where the pixel is ([`GridShape`]) as long
//!   as the array holds, past the image's edges, copies of the edge pixels: every buffer read from memory is
//!   staged into its array with clamped coordinates, and after each step that reaches past an edge the
//!   positions outside the image are filled from the nearest edge pixel (only workgroups at an edge run
//!   that). A user's image kernel, proved position-free ([`crate::wgsl::grid`]), runs the same way: the
//!   parameters it reads the image's sizes from (`params.width`) read as the arrays' sizes in its code.
//!
//! [`GridShape`]: crate::library::GridShape

use std::borrow::Cow;
use std::collections::HashSet;

use crate::desc::{
    AccessDesc, DispatchDesc, GraphDesc, KernelArgDesc, KernelDesc, OpDesc, SizeDesc,
};
use crate::fusion_parts::{member_of, validate_once};
use crate::ir::AccessMode;
use crate::size::{SizeOp, SizeStep};
use crate::stencil::{Group, Shape, Tiling, WORKGROUP, image_size};
use crate::types::ValueType;
use crate::wgsl;

/// `size.div_ceil(divisor)`.
fn div_ceil(size: SizeDesc, divisor: u32) -> SizeDesc {
    let mut steps = size.steps.into_owned();
    steps.extend([SizeStep::Literal(divisor), SizeStep::Op(SizeOp::DivCeil)]);
    SizeDesc {
        text: format!("{}.div_ceil({divisor})", size.text).into(),
        steps: steps.into(),
    }
}

/// The tiled kernel that runs `group` (found by [`crate::stencil::groups`]); `Err` in words when a member's
/// code has a form the renaming does not handle, or the kernel does not validate.
pub fn kernel(
    desc: &GraphDesc,
    group: &Group,
    validated: &mut HashSet<String>,
) -> Result<KernelDesc, String> {
    let parts = Parts::new(desc, group)?;
    let (source, dispatch) = match &group.layout.shape {
        Shape::Line => parts.line()?,
        Shape::Image { width, height } => parts.image(width, height)?,
    };
    let entry = format!("{}main", wgsl::FUSED_PREFIX);
    let kernel = KernelDesc {
        declarations: parts.declarations.into(),
        args: Cow::Owned(Vec::new()),
        source: source.into(),
        entry: entry.into(),
        workgroup_size: [WORKGROUP, 1, 1],
        bindings: group.layout.bound.clone().into(),
        dispatch: DispatchDesc::Workgroups(dispatch),
        foldable: false,
        range: None,
        alternative: None,
        pointwise: false,
        reach: None,
        grid: None,
        no_fusion: false,
        overrides: Default::default(),
    };
    validate_once(&kernel, desc, validated)
        .map_err(|message| format!("the tiled kernel does not validate: {message}"))?;
    Ok(kernel)
}

/// Where a member's reads and writes of a tile go ([`Parts::member`]).
struct Redirect<'a> {
    /// The function from an element's index to its slot in the array.
    slot: &'a str,
    /// What `arrayLength` of a tiled buffer is.
    length: &'a str,
    /// Parameters (`params.NAME`) it reads as other values: a user's image kernel's sizes.
    fields: &'a [(String, String)],
}

/// What both forms of tiled kernel are made of.
struct Parts<'a> {
    desc: &'a GraphDesc,
    group: &'a Group,
    kernels: Vec<&'a KernelDesc>,
    declarations: String,
    /// Columns and rows of each workgroup array: the tile and the halo on each side.
    span: [u32; 2],
}

impl<'a> Parts<'a> {
    fn new(desc: &'a GraphDesc, group: &'a Group) -> Result<Self, String> {
        let kernels: Vec<&KernelDesc> = group
            .members
            .iter()
            .map(|&m| match &desc.nodes[m as usize].op {
                OpDesc::Kernel(k) => Ok(k),
                _ => Err(format!("`{}` is not a kernel", desc.nodes[m as usize].name)),
            })
            .collect::<Result<_, _>>()?;
        let layout = &group.layout;
        let names: Vec<(String, ValueType, AccessMode)> = layout
            .bound
            .iter()
            .map(|a| {
                let buffer = &desc.buffers[a.buffer as usize];
                (Self::bound_name(group, a.buffer), buffer.elem, a.mode)
            })
            .collect();
        let declarations = wgsl::binding_declarations(
            names
                .iter()
                .map(|(name, elem, mode)| (name.as_str(), *elem, *mode)),
            &[],
        );
        let Tiling { tile, halo, .. } = layout.tiling;
        Ok(Parts {
            desc,
            group,
            kernels,
            declarations,
            span: [0, 1].map(|axis| tile[axis] + 2 * halo[axis]),
        })
    }

    fn bound_name(group: &Group, b: u32) -> String {
        let slot = group
            .layout
            .bound
            .iter()
            .position(|a| a.buffer == b)
            .unwrap_or(0);
        format!("{}b{slot}", wgsl::FUSED_PREFIX)
    }

    fn array_name(&self, b: u32) -> String {
        let slot = self
            .group
            .layout
            .arrays
            .iter()
            .position(|&t| t == b)
            .unwrap_or(0);
        format!("{}t{slot}", wgsl::FUSED_PREFIX)
    }

    fn elem(&self, b: u32) -> String {
        self.desc.buffers[b as usize].elem.wgsl()
    }

    fn name(&self, j: usize) -> &str {
        &self.desc.nodes[self.group.members[j] as usize].name
    }

    /// The workgroup arrays' declarations.
    fn arrays(&self) -> String {
        self.group
            .layout
            .arrays
            .iter()
            .map(|&b| {
                format!(
                    "var<workgroup> {}: array<{}, {}>;\n",
                    self.array_name(b),
                    self.elem(b),
                    self.span[0] * self.span[1]
                )
            })
            .collect()
    }

    /// Member `j`, renamed into `source` with `arguments` for its library arguments, its reads and writes
    /// of the buffers `in_array` redirected to their arrays as `redirect` says, the others to the bound
    /// buffers. Returns the call of it for position `position` (a `u32` expression).
    fn member(
        &self,
        source: &mut String,
        j: usize,
        arguments: &[KernelArgDesc],
        in_array: &dyn Fn(&AccessDesc) -> bool,
        redirect: &Redirect<'_>,
        position: &str,
    ) -> Result<String, String> {
        let p = wgsl::FUSED_PREFIX;
        let name = self.name(j);
        let mut k = self.kernels[j].clone();
        k.args = Cow::Owned(arguments.to_vec());
        let member = member_of(source, name, &k, &format!("{p}k{j}_"), &|a| {
            if in_array(a) {
                self.array_name(a.buffer)
            } else {
                Self::bound_name(self.group, a.buffer)
            }
        })?;
        let mut code = member.code;
        for a in k.bindings.iter().filter(|a| in_array(a)) {
            code = wgsl::in_tile(
                &code,
                &self.array_name(a.buffer),
                redirect.slot,
                redirect.length,
            )
            .ok_or_else(|| {
                format!(
                    "`{name}` uses buffer `{}` other than by indexing it",
                    self.desc.buffers[a.buffer as usize].name
                )
            })?;
        }
        for (field, value) in redirect.fields {
            code = wgsl::replace_field(&code, "params", field, value);
        }
        source.push_str(&code);
        source.push('\n');
        // The member is called once per position, as the invocation of that index in one row of workgroups.
        let call_arguments = member
            .builtins
            .iter()
            .map(|b| match b.as_str() {
                "global_invocation_id" => Ok(format!("vec3<u32>({position}, 0u, 0u)")),
                "num_workgroups" => Ok("vec3<u32>(1u, 1u, 1u)".to_string()),
                other => Err(format!("`{name}` takes the builtin `{other}`")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(format!(
            "{}({})",
            member.function,
            call_arguments.join(", ")
        ))
    }

    /// The entry point around `body`.
    fn entry(body: &str) -> String {
        let p = wgsl::FUSED_PREFIX;
        format!(
            "@compute @workgroup_size({WORKGROUP})\n\
             fn {p}main(@builtin(workgroup_id) {p}workgroup: vec3<u32>, \
             @builtin(local_invocation_index) {p}lid: u32) {{\n{body}}}\n"
        )
    }

    /// A step at one position: `call` of member `k` where the position is `inside`, else the element type's
    /// zero stored into the arrays of the buffers it writes, at slot `s`.
    fn call_or_zeros(&self, call: &str, k: &KernelDesc) -> String {
        let p = wgsl::FUSED_PREFIX;
        let zeros: String = k
            .bindings
            .iter()
            .filter(|a| a.mode != AccessMode::Read)
            .map(|a| {
                format!(
                    " {}[{p}s] = {}();",
                    self.array_name(a.buffer),
                    self.elem(a.buffer)
                )
            })
            .collect();
        format!("        if ({p}inside) {{ {call}; }} else {{{zeros} }}\n")
    }

    /// The kernel of a group over a line, and its dispatch: one workgroup per tile of the buffers.
    fn line(&self) -> Result<(String, [SizeDesc; 3]), String> {
        let p = wgsl::FUSED_PREFIX;
        let layout = &self.group.layout;
        let [tile, _] = layout.tiling.tile;
        let [halo, _] = layout.tiling.halo;
        let mut source = self.arrays();
        source.push_str(&format!(
            "var<private> {p}base: i32;\nvar<private> {p}len: u32;\n\
             fn {p}slot(position: i32) -> i32 {{ return position - {p}base; }}\n"
        ));
        let mut body = format!(
            "    {p}len = arrayLength(&{first});\n\
             \x20   let {p}start = i32({p}workgroup.x * {tile}u);\n\
             \x20   {p}base = {p}start - {halo};\n",
            first = Self::bound_name(self.group, layout.bound[0].buffer),
        );
        let positions = |radius: u32, what: &str| {
            format!(
                "    for (var {p}p = {p}start - {radius} + i32({p}lid); {p}p < {p}start + {end}; {p}p += {WORKGROUP}) {{\n\
                 \x20       let {p}s = {p}p - {p}base;\n\
                 \x20       // A position before the start is negative, and past every length as a `u32`.\n\
                 \x20       let {p}inside = u32({p}p) < {p}len;\n\
                 {what}\
                 \x20   }}\n",
                end = tile + radius
            )
        };
        // A buffer a member writes, or one an earlier member wrote, is in its array; others are bound.
        let mut written: Vec<u32> = Vec::new();
        for (j, k) in self.kernels.iter().enumerate() {
            let in_array =
                |a: &AccessDesc| a.mode != AccessMode::Read || written.contains(&a.buffer);
            let call = self.member(
                &mut source,
                j,
                &k.args,
                &in_array,
                &Redirect {
                    slot: &format!("{p}slot"),
                    length: &format!("{p}len"),
                    fields: &[],
                },
                &format!("u32({p}p)"),
            )?;
            let [radius, _] = layout.radius[j];
            if !layout.preloaded[j].is_empty() {
                let load: String = layout.preloaded[j]
                    .iter()
                    .map(|&b| {
                        format!(
                            "        if ({p}inside) {{ {t}[{p}s] = {g}[{p}p]; }} else {{ {t}[{p}s] = {e}(); }}\n",
                            t = self.array_name(b),
                            g = Self::bound_name(self.group, b),
                            e = self.elem(b)
                        )
                    })
                    .collect();
                body.push_str(&positions(radius, &load));
                body.push_str("    workgroupBarrier();\n");
            }
            body.push_str(&positions(radius, &self.call_or_zeros(&call, k)));
            body.push_str("    workgroupBarrier();\n");
            for a in k.bindings.iter().filter(|a| a.mode != AccessMode::Read) {
                if !written.contains(&a.buffer) {
                    written.push(a.buffer);
                }
            }
        }
        for &b in &layout.written_back {
            body.push_str(&positions(
                0,
                &format!(
                    "        if ({p}inside) {{ {g}[{p}p] = {t}[{p}s]; }}\n",
                    g = Self::bound_name(self.group, b),
                    t = self.array_name(b)
                ),
            ));
        }
        source.push_str(&Self::entry(&body));
        let first = self.kernels[0];
        let sized_by = match &first.dispatch {
            DispatchDesc::BufferLen(b) => *b,
            DispatchDesc::Threads([x, ..]) => match *x.steps {
                [SizeStep::Len(b)] => b,
                _ => return Err("the first member's dispatch is not a buffer's length".into()),
            },
            _ => return Err("the first member's dispatch is not a buffer's length".into()),
        };
        let name = &self.desc.buffers[sized_by as usize].name;
        let workgroups = SizeDesc::len_div_ceil(sized_by, name, tile);
        Ok((source, [workgroups, SizeDesc::ONE, SizeDesc::ONE]))
    }

    /// The kernel of a group over an image of `width` x `height` pixels (its members' arguments, WGSL), and
    /// its dispatch: one workgroup per tile of the image. See the module's documentation.
    fn image(&self, width: &str, height: &str) -> Result<(String, [SizeDesc; 3]), String> {
        let p = wgsl::FUSED_PREFIX;
        let layout = &self.group.layout;
        let Tiling {
            tile: [tx, ty],
            halo: [hx, hy],
            ..
        } = layout.tiling;
        let [span_x, span_y] = self.span;
        let mut source = self.arrays();
        // Members index the arrays directly; an array is as long as its image.
        source.push_str(&format!(
            "fn {p}slot(position: i32) -> i32 {{ return position; }}\n\
             fn {p}image_width() -> u32 {{ return {width}; }}\n\
             fn {p}image_height() -> u32 {{ return {height}; }}\n"
        ));
        let mut body = format!(
            "    let {p}width = i32({p}image_width());\n\
             \x20   let {p}height = i32({p}image_height());\n\
             \x20   let {p}len = arrayLength(&{first});\n\
             \x20   let {p}left = i32({p}workgroup.x * {tx}u) - {hx};\n\
             \x20   let {p}top = i32({p}workgroup.y * {ty}u) - {hy};\n\
             \x20   // Whether the arrays reach past an edge of the image: then each step's positions outside it are\n\
             \x20   // copies of the nearest edge pixel's.\n\
             \x20   let {p}edge = {p}left < 0 || {p}top < 0 || {p}left + {span_x} > {p}width || {p}top + {span_y} > {p}height;\n",
            first = Self::bound_name(self.group, layout.bound[0].buffer),
        );
        // Positions `margin` past the tile: `cx`, `cy` in the arrays, `x`, `y` in the image, `s` the slot,
        // `inside` whether the pixel is in the image (and in the buffers).
        let positions = |margin: [u32; 2], what: &str| {
            let (columns, rows) = (tx + 2 * margin[0], ty + 2 * margin[1]);
            format!(
                "    for (var {p}q = {p}lid; {p}q < {count}u; {p}q += {WORKGROUP}u) {{\n\
                 \x20       let {p}cx = i32({p}q % {columns}u) + {skip_x};\n\
                 \x20       let {p}cy = i32({p}q / {columns}u) + {skip_y};\n\
                 \x20       let {p}x = {p}left + {p}cx;\n\
                 \x20       let {p}y = {p}top + {p}cy;\n\
                 \x20       let {p}s = {p}cy * {span_x} + {p}cx;\n\
                 \x20       let {p}in_image = {p}x >= 0 && {p}y >= 0 && {p}x < {p}width && {p}y < {p}height;\n\
                 \x20       let {p}inside = {p}in_image && u32({p}y) * u32({p}width) + u32({p}x) < {p}len;\n\
                 {what}\
                 \x20   }}\n",
                count = columns * rows,
                skip_x = hx - margin[0],
                skip_y = hy - margin[1],
            )
        };
        // The nearest pixel of the image to (x, y), in the arrays and in the buffers.
        let nearest = format!(
            "        let {p}nx = clamp({p}x, 0, {p}width - 1);\n\
             \x20       let {p}ny = clamp({p}y, 0, {p}height - 1);\n"
        );
        for &(b, margin) in &layout.staged {
            body.push_str(&positions(
                margin,
                &format!(
                    "{nearest}\
                     \x20       let {p}at = u32({p}ny) * u32({p}width) + u32({p}nx);\n\
                     \x20       if ({p}at < {p}len) {{ {t}[{p}s] = {g}[{p}at]; }} else {{ {t}[{p}s] = {e}(); }}\n",
                    t = self.array_name(b),
                    g = Self::bound_name(self.group, b),
                    e = self.elem(b)
                ),
            ));
        }
        if !layout.staged.is_empty() {
            body.push_str("    workgroupBarrier();\n");
        }
        // The members see the arrays as their image.
        let arguments = |k: &KernelDesc| -> Vec<KernelArgDesc> {
            k.args
                .iter()
                .map(|a| {
                    let value = match &*a.name {
                        "width" => format!("{span_x}u"),
                        "height" => format!("{span_y}u"),
                        _ => a.value.to_string(),
                    };
                    KernelArgDesc {
                        name: a.name.clone(),
                        ty: a.ty.clone(),
                        value: value.into(),
                    }
                })
                .collect()
        };
        let length = format!("{}u", span_x * span_y);
        for (j, k) in self.kernels.iter().enumerate() {
            // A user's kernel reads the image's sizes as parameters: it is given the arrays' sizes there.
            let fields: Vec<(String, String)> = match k.grid.as_ref().and_then(|g| g.image.as_ref())
            {
                Some(sizes) => sizes
                    .iter()
                    .zip([span_x, span_y])
                    .map(|(size, span)| {
                        let field = size.strip_prefix("params.").ok_or_else(|| {
                            format!(
                                "`{}` reads its image's size `{size}`, not a parameter",
                                self.name(j)
                            )
                        })?;
                        Ok((field.to_string(), format!("{span}u")))
                    })
                    .collect::<Result<_, String>>()?,
                None => Vec::new(),
            };
            let call = self.member(
                &mut source,
                j,
                &arguments(k),
                &|_| true,
                &Redirect {
                    slot: &format!("{p}slot"),
                    length: &length,
                    fields: &fields,
                },
                &format!("u32({p}s)"),
            )?;
            let step = self.call_or_zeros(&call, k);
            let radius = layout.radius[j];
            body.push_str(&positions(radius, &step));
            body.push_str("    workgroupBarrier();\n");
            // Past the edges, the nearest edge pixel's value, for the steps after this one to read.
            let written: Vec<u32> = k
                .bindings
                .iter()
                .filter(|a| a.mode != AccessMode::Read)
                .map(|a| a.buffer)
                .collect();
            let later_readers = j + 1 < self.kernels.len();
            if later_readers && radius != [0, 0] {
                let copies: String = written
                    .iter()
                    .map(|&b| {
                        let t = self.array_name(b);
                        format!(
                            "            {t}[{p}s] = {t}[({p}ny - {p}top) * {span_x} + {p}nx - {p}left];\n"
                        )
                    })
                    .collect();
                body.push_str(&format!("    if ({p}edge) {{\n"));
                body.push_str(&positions(
                    radius,
                    &format!("        if (!{p}in_image) {{\n{nearest}{copies}        }}\n"),
                ));
                body.push_str("    workgroupBarrier();\n    }\n");
            }
        }
        for &b in &layout.written_back {
            body.push_str(&positions(
                [0, 0],
                &format!(
                    "        if ({p}inside) {{ {g}[u32({p}y) * u32({p}width) + u32({p}x)] = {t}[{p}s]; }}\n",
                    g = Self::bound_name(self.group, b),
                    t = self.array_name(b)
                ),
            ));
        }
        source.push_str(&Self::entry(&body));
        let size = |value: &str| {
            image_size(self.desc, value)
                .ok_or_else(|| format!("the image size `{value}` is not a parameter or a literal"))
        };
        Ok((
            source,
            [
                div_ceil(size(width)?, tx),
                div_ceil(size(height)?, ty),
                SizeDesc::ONE,
            ],
        ))
    }
}
