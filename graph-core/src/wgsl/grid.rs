//! The image-neighbourhood proof: a compute entry point over a `width` x `height` image (row-major, one
//! invocation per pixel, its index `i` the pixel's) is a *grid* kernel of reach `[rx, ry]` when, for every
//! invocation inside the image (`i < width * height`), every storage read is at a pixel at most `rx` columns
//! and `ry` rows from its own *clamped into the image*, every storage write is at `i` itself and happens
//! whatever the data, and no invocation writes anything before it knows it is inside the image. The image's
//! sizes are literals or `u32` parameters (`params.width`); the proof says which.
//!
//! It is what the 1-D proof ([`super::neighbourhood`]) is for a line, for the form image kernels are written
//! in. A chain of such kernels that are also *position-free* (nothing but their reads depends on where their
//! pixel is) and read the image's sizes from parameters tiles in 2-D with the library's image kernels
//! ([`crate::stencil`]): the tiled kernel runs them in the tile's coordinates, their size parameters read as
//! the tile's sizes ([`crate::stencil_kernel`]).
//!
//! The proof is abstract interpretation of naga's IR with a small domain:
//!
//! - the image's width is found first, as the divisor in `i % w` and `i / w` (one expression throughout, a
//!   literal or a parameter); the height as the other factor of the extent check `i < w * h` (or its literal
//!   product), or as the size a row is clamped to;
//! - `x = i % w` and `y = i / w` are *coordinates*; a value known as `x + [lo, hi]` (or `y + ..`) carries
//!   the least value it can have and the most, as `max(extent - 1 - gap, cap)`, so that
//!   `clamp(x + d, 0, w - 1)`, `min(x + 1u, w - 1u)` and `max(x, 1u) - 1u` are all bounded, and a `u32` that
//!   may go below zero is not a coordinate at all;
//! - `y' * w` is a row's start, and a row's start plus a column is a pixel;
//! - anything else (a loop counter, a variable, a branch on a coordinate, a read through a helper) is not
//!   bounded: the kernel is not a grid kernel, which costs a fusion and never a wrong result.

use std::cell::Cell;

use naga::{
    AddressSpace, BinaryOperator, Expression, Function, GlobalVariable, Handle, MathFunction,
    Module, ScalarKind, TypeInner,
};

use super::walk::{self, MAX_DEPTH};

use super::neighbourhood::MAX_REACH;

/// A size of the image, as the kernel reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSize {
    Literal(u32),
    /// A `u32` field of the parameters, by name (`params.width` is `Param("width")`).
    Param(String),
}

/// What the proof found of a grid kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridProof {
    /// The farthest it reads across (columns) and down (rows) from its own pixel.
    pub reach: [u32; 2],
    pub width: ImageSize,
    pub height: ImageSize,
    /// The invocation's index and the image's sizes reach nothing but its storage indices and its extent
    /// check: it computes a pixel from its neighbours' values alone, whatever the pixel's place, so it may
    /// run in a tile's coordinates with the tile's sizes for the image's (as the library's image kernels do).
    pub position_free: bool,
}

/// The proof for entry point `index` of `module` (validated, with `info` its analysis): `Some` when it is a
/// grid kernel (see the module's documentation).
pub fn grid_reach(
    module: &Module,
    info: &naga::valid::ModuleInfo,
    index: usize,
) -> Option<GridProof> {
    let function = walk::plain_entry(module, index)?;
    let mut proof = Proof {
        module,
        function,
        info: info.get_entry_point(index),
        width: Cell::new(None),
        height: Cell::new(None),
        reads: Vec::new(),
        writes: Vec::new(),
        refused: Cell::new(false),
        past: false,
    };
    proof.width.set(Some(proof.find_width()?));
    // Once for the invocations inside the image, once for those past it, where no store may be reachable.
    walk::walk(&mut proof, &function.body, Facts::Inside, true);
    proof.past = true;
    walk::walk(&mut proof, &function.body, Facts::Beyond, true);
    if proof.refused.get() {
        return None;
    }
    proof.conclude()
}

/// A size the kernel reads: a literal, or field `1` of the uniform or immediate global `0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sym {
    Literal(u32),
    Field(Handle<GlobalVariable>, u32),
}

/// A coordinate plus an offset: `value - coordinate` in `lo..=hi`; `value >= floor` when known; `value <=
/// max(extent - 1 - gap, cap)` when `gap` is known (`cap` `None`: no second term); and, while it keeps that
/// form, the clamp it is ([`Edge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Axis {
    lo: i64,
    hi: i64,
    floor: Option<i64>,
    gap: Option<i64>,
    cap: Option<i64>,
    edge: Option<Edge>,
}

/// A coordinate `c` read as `min(max(c + offset, low), extent - 1 - gap)` (`None`: that side not clamped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Edge {
    offset: i64,
    low: Option<i64>,
    gap: Option<i64>,
}

impl Edge {
    /// The pixel `offset` away, or the nearest edge pixel where that is outside the image: what reading an
    /// image extended by copies of its edges gives, and so what a tile (whose positions past the image hold
    /// such copies) gives in the tile's coordinates.
    fn replicates(self) -> bool {
        let low = match self.low {
            Some(low) => low == 0,
            None => self.offset >= 0,
        };
        let high = match self.gap {
            Some(gap) => gap == 0,
            None => self.offset <= 0,
        };
        low && high
    }
}

impl Axis {
    /// The coordinate itself, inside the image when `bounded` (its upper bound known).
    fn exact(bounded: bool) -> Axis {
        Axis {
            lo: 0,
            hi: 0,
            floor: Some(0),
            gap: bounded.then_some(0),
            cap: None,
            edge: Some(Edge {
                offset: 0,
                low: None,
                gap: None,
            }),
        }
    }

    fn shifted(self, c: i64) -> Axis {
        Axis {
            lo: self.lo + c,
            hi: self.hi + c,
            floor: self.floor.map(|f| f + c),
            gap: self.gap.map(|g| g - c),
            cap: self.cap.map(|k| k + c),
            edge: self.edge.map(|e| Edge {
                offset: e.offset + c,
                low: e.low.map(|l| l + c),
                gap: e.gap.map(|g| g - c),
            }),
        }
    }

    /// `max(self, k)`: at least `k`, and at most `k` past the coordinate (which is at least 0).
    fn at_least(self, k: i64) -> Axis {
        Axis {
            hi: self.hi.max(k),
            floor: Some(self.floor.map_or(k, |f| f.max(k))),
            cap: Some(self.cap.map_or(k, |c| c.max(k))),
            // A floor over a value already capped above is no clamp of the coordinate any more.
            edge: self.edge.filter(|e| e.gap.is_none()).map(|e| Edge {
                low: Some(e.low.map_or(k, |l| l.max(k))),
                ..e
            }),
            ..self
        }
    }

    /// `min(self, extent - g)`: at most `extent - 1 - (g - 1)`, and at least `1 - g` from the coordinate
    /// (which is at most `extent - 1`, and the extent at least 1).
    fn at_most_extent(self, g: i64) -> Axis {
        Axis {
            lo: self.lo.min(1 - g),
            floor: self.floor.map(|f| f.min(1 - g)),
            gap: Some(g - 1),
            cap: None,
            edge: self.edge.map(|e| Edge {
                gap: Some(e.gap.map_or(g - 1, |old| old.max(g - 1))),
                ..e
            }),
            ..self
        }
    }

    /// Never outside `0 ..= extent - 1`.
    fn clamped(self) -> bool {
        self.floor.is_some_and(|f| f >= 0)
            && self.gap.is_some_and(|g| g >= 0)
            && self.cap.is_none_or(|c| c <= 0)
    }
}

/// An integer as the proof knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum V {
    Const(i64),
    /// The invocation's own index `i`.
    Own,
    /// A size plus a constant.
    Size(Sym, i64),
    /// `width * height`.
    Area,
    Col(Axis),
    Row(Axis),
    /// `row * width`.
    RowStart(Axis),
    /// A row's start plus a column: column, row.
    Pixel(Axis, Axis),
    Unknown,
}

/// What is known of `i` where a statement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Facts {
    /// Either (where two branches met).
    Any,
    /// `i < width * height`.
    Inside,
    /// `i >= width * height`.
    Beyond,
    Unreachable,
}

impl walk::Facts for Facts {
    const UNREACHABLE: Facts = Facts::Unreachable;

    fn reachable(self) -> bool {
        self != Facts::Unreachable
    }

    fn or(self, other: Facts) -> Facts {
        match (self, other) {
            (Facts::Unreachable, f) | (f, Facts::Unreachable) => f,
            (a, b) if a == b => a,
            _ => Facts::Any,
        }
    }
}

impl Facts {
    /// The facts where `i < width * height` holds (`inside`) or does not.
    fn given(self, inside: bool) -> Facts {
        match (self, inside) {
            (Facts::Unreachable, _) => Facts::Unreachable,
            (Facts::Any, true) | (Facts::Inside, true) => Facts::Inside,
            (Facts::Any, false) | (Facts::Beyond, false) => Facts::Beyond,
            _ => Facts::Unreachable,
        }
    }
}

/// A storage read the walk met inside the image.
#[derive(Debug, Clone, Copy)]
struct Read {
    global: Handle<GlobalVariable>,
    col: Axis,
    row: Axis,
}

/// A storage write the walk met: always at `i`, inside the image.
#[derive(Debug, Clone, Copy)]
struct Write {
    global: Handle<GlobalVariable>,
    always: bool,
}

struct Proof<'a> {
    module: &'a Module,
    function: &'a Function,
    info: &'a naga::valid::FunctionInfo,
    width: Cell<Option<Sym>>,
    height: Cell<Option<Sym>>,
    reads: Vec<Read>,
    writes: Vec<Write>,
    refused: Cell<bool>,
    /// Walking for the invocations past the image: any store reached refuses the kernel.
    past: bool,
}

impl Proof<'_> {
    /// The width: the one divisor of `i % w` and `i / w` in the entry point.
    fn find_width(&self) -> Option<Sym> {
        let mut width = None;
        for (_, e) in self.function.expressions.iter() {
            let Expression::Binary {
                op: BinaryOperator::Modulo | BinaryOperator::Divide,
                left,
                right,
            } = *e
            else {
                continue;
            };
            if self.own(left) {
                let sym = self.sym(right)?;
                if width.is_some_and(|w| w != sym) {
                    return None;
                }
                width = Some(sym);
            }
        }
        width
    }

    /// Expression `h` is the invocation's index, perhaps converted between integer types.
    fn own(&self, h: Handle<Expression>) -> bool {
        match self.function.expressions[h] {
            Expression::AccessIndex { base, index: 0 } => {
                matches!(
                    self.function.expressions[base],
                    Expression::FunctionArgument(0)
                )
            }
            Expression::As {
                expr,
                kind: ScalarKind::Uint | ScalarKind::Sint,
                convert: Some(4),
            } => self.own(expr),
            _ => false,
        }
    }

    /// Expression `h` as a size: a `u32` literal or a load of a `u32` field of a uniform or immediate
    /// global.
    fn sym(&self, h: Handle<Expression>) -> Option<Sym> {
        if let Some(v) = self.int_literal(h) {
            return u32::try_from(v).ok().map(Sym::Literal);
        }
        let Expression::Load { pointer } = self.function.expressions[h] else {
            return None;
        };
        let Expression::AccessIndex { base, index } = self.function.expressions[pointer] else {
            return None;
        };
        let Expression::GlobalVariable(g) = self.function.expressions[base] else {
            return None;
        };
        let uniform = matches!(
            self.module.global_variables[g].space,
            AddressSpace::Uniform | AddressSpace::Immediate
        );
        (uniform && self.is_u32(h)).then_some(Sym::Field(g, index))
    }

    fn is_u32(&self, h: Handle<Expression>) -> bool {
        walk::is_u32(self.module, self.info, h)
    }

    fn int_literal(&self, h: Handle<Expression>) -> Option<i64> {
        walk::int_literal(self.module, self.function, h)
    }

    /// The image's literal width or height, when it is one.
    fn literal(sym: Option<Sym>) -> Option<i64> {
        match sym {
            Some(Sym::Literal(v)) => Some(i64::from(v)),
            _ => None,
        }
    }

    /// Records `sym` as the height; `false` when another height was recorded.
    fn set_height(&self, sym: Sym) -> bool {
        match self.height.get() {
            Some(h) => h == sym,
            None => {
                self.height.set(Some(sym));
                true
            }
        }
    }

    /// The storage global and index of `base[index]` with `base` a storage buffer.
    fn element(
        &self,
        h: Handle<Expression>,
    ) -> Option<(Handle<GlobalVariable>, Handle<Expression>)> {
        let Expression::Access { base, index } = self.function.expressions[h] else {
            return None;
        };
        match self.function.expressions[base] {
            Expression::GlobalVariable(g)
                if matches!(
                    self.module.global_variables[g].space,
                    AddressSpace::Storage { .. }
                ) =>
            {
                Some((g, index))
            }
            _ => None,
        }
    }

    /// Whether pointer `h` reaches into a storage buffer.
    fn reaches_storage(&self, mut h: Handle<Expression>) -> bool {
        loop {
            match self.function.expressions[h] {
                Expression::Access { base, .. } | Expression::AccessIndex { base, .. } => h = base,
                Expression::GlobalVariable(g) => {
                    return matches!(
                        self.module.global_variables[g].space,
                        AddressSpace::Storage { .. }
                    );
                }
                _ => return false,
            }
        }
    }

    /// What expression `h` is known to be under `facts`.
    fn value(&self, h: Handle<Expression>, facts: Facts, depth: u32) -> V {
        if depth > MAX_DEPTH {
            return V::Unknown;
        }
        if let Some(c) = self.int_literal(h) {
            return V::Const(c);
        }
        if self.own(h) {
            return V::Own;
        }
        if let Some(sym) = self.sym(h) {
            return V::Size(sym, 0);
        }
        let e = &self.function.expressions;
        match e[h] {
            Expression::AccessIndex { base, .. }
                if matches!(e[base], Expression::FunctionArgument(0)) =>
            {
                // The dispatch is one row, and the fused kernel passes its rows as 0 too.
                V::Const(0)
            }
            Expression::As {
                expr,
                kind: kind @ (ScalarKind::Uint | ScalarKind::Sint),
                convert: Some(4),
            } if !matches!(
                self.info[expr].ty.inner_with(&self.module.types),
                TypeInner::Scalar(s) if s.kind == ScalarKind::Float
            ) =>
            {
                let v = self.value(expr, facts, depth + 1);
                // A value that may be negative does not become a `u32`.
                let negative = match v {
                    V::Const(c) => c < 0,
                    V::Col(a) | V::Row(a) => a.floor.is_none_or(|f| f < 0),
                    V::Size(_, c) => c < 0,
                    _ => false,
                };
                if kind == ScalarKind::Uint && negative {
                    V::Unknown
                } else {
                    v
                }
            }
            Expression::Binary { op, left, right } => {
                let a = self.value(left, facts, depth + 1);
                let b = self.value(right, facts, depth + 1);
                self.binary(op, a, b, self.is_u32(h), facts)
            }
            Expression::Math {
                fun: fun @ (MathFunction::Min | MathFunction::Max | MathFunction::Clamp),
                arg,
                arg1: Some(arg1),
                arg2,
                ..
            } => {
                let a = self.value(arg, facts, depth + 1);
                let b = self.value(arg1, facts, depth + 1);
                match fun {
                    MathFunction::Min => self.min(a, b).or_else(|| self.min(b, a)),
                    MathFunction::Max => max(a, b).or_else(|| max(b, a)),
                    _ => arg2.and_then(|arg2| {
                        let c = self.value(arg2, facts, depth + 1);
                        self.min(max(a, b)?, c)
                    }),
                }
                .unwrap_or(V::Unknown)
            }
            _ => V::Unknown,
        }
    }

    /// `a op b`; `unsigned` when the result is a `u32`, which may not go below zero.
    fn binary(&self, op: BinaryOperator, a: V, b: V, unsigned: bool, facts: Facts) -> V {
        let width = self.width.get();
        let is_width = |v: V| match v {
            V::Size(s, 0) => Some(s) == width,
            V::Const(c) => Self::literal(width) == Some(c),
            _ => false,
        };
        let shifted = |v: V, c: i64| -> V {
            let axis = |a: Axis| {
                let moved = a.shifted(c);
                // A `u32` that may go below zero wraps to a huge one: not a coordinate.
                (!unsigned || moved.floor.is_some_and(|f| f >= 0)).then_some(moved)
            };
            match v {
                V::Const(k) => V::Const(k + c),
                V::Size(s, k) => V::Size(s, k + c),
                V::Col(a) => axis(a).map_or(V::Unknown, V::Col),
                V::Row(a) => axis(a).map_or(V::Unknown, V::Row),
                // `row * width + column + c` is the column plus `c` on that row, as long as the column (and
                // so the sum) stays at least zero.
                V::Pixel(col, row) => axis(col).map_or(V::Unknown, |col| V::Pixel(col, row)),
                _ => V::Unknown,
            }
        };
        match (op, a, b) {
            (BinaryOperator::Add, v, V::Const(c)) | (BinaryOperator::Add, V::Const(c), v) => {
                shifted(v, c)
            }
            (BinaryOperator::Subtract, v, V::Const(c)) => shifted(v, -c),
            (BinaryOperator::Add, V::RowStart(row), V::Col(col))
            | (BinaryOperator::Add, V::Col(col), V::RowStart(row)) => V::Pixel(col, row),
            (BinaryOperator::Multiply, V::Const(x), V::Const(y)) => V::Const(x * y),
            (BinaryOperator::Multiply, V::Row(row), w)
            | (BinaryOperator::Multiply, w, V::Row(row))
                if is_width(w) =>
            {
                V::RowStart(row)
            }
            (BinaryOperator::Multiply, V::Size(x, 0), V::Size(y, 0)) => {
                let height = if Some(x) == width { y } else { x };
                if (Some(x) == width || Some(y) == width) && self.set_height(height) {
                    V::Area
                } else {
                    V::Unknown
                }
            }
            (BinaryOperator::Modulo, V::Own, w) if is_width(w) => V::Col(Axis::exact(true)),
            (BinaryOperator::Divide, V::Own, w) if is_width(w) => {
                V::Row(Axis::exact(facts == Facts::Inside))
            }
            _ => V::Unknown,
        }
    }

    /// `min(a, b)` where `b` bounds a coordinate `a` by its extent; `None` for other forms.
    fn min(&self, a: V, b: V) -> Option<V> {
        match (a, b) {
            (V::Const(x), V::Const(y)) => Some(V::Const(x.min(y))),
            (V::Col(axis), bound) => {
                let g = self.below_extent(bound, self.width.get(), false)?;
                Some(V::Col(axis.at_most_extent(g)))
            }
            (V::Row(axis), bound) => {
                let g = self.below_extent(bound, self.height.get(), true)?;
                Some(V::Row(axis.at_most_extent(g)))
            }
            _ => None,
        }
    }

    /// `g` where `bound` is `extent - g`, the extent `sym` (a row's, `rows`, may set the height).
    fn below_extent(&self, bound: V, sym: Option<Sym>, rows: bool) -> Option<i64> {
        match bound {
            V::Size(s, c) if Some(s) == sym || (rows && sym.is_none() && self.set_height(s)) => {
                Some(-c)
            }
            V::Const(k) => Self::literal(sym).map(|e| e - k),
            _ => None,
        }
    }

    /// `c` is the image's area with a literal width: then the height is `c / width`.
    fn literal_area(&self, c: i64) -> bool {
        let Some(w) = Self::literal(self.width.get()).filter(|&w| w > 0) else {
            return false;
        };
        c > 0 && c % w == 0 && u32::try_from(c / w).is_ok_and(|h| self.set_height(Sym::Literal(h)))
    }

    /// The image's area when both its sizes are literals.
    fn literal_product(&self) -> Option<i64> {
        Some(Self::literal(self.width.get())? * Self::literal(self.height.get())?)
    }

    /// Whether `h` is (a value made of) the invocation's index, its coordinates or the image's sizes.
    fn placed(&self, h: Handle<Expression>) -> bool {
        let size = |s| Some(s) == self.width.get() || Some(s) == self.height.get();
        match self.value(h, Facts::Inside, 0) {
            V::Own | V::Area | V::Col(_) | V::Row(_) | V::RowStart(_) | V::Pixel(..) => true,
            V::Size(s, _) => size(s),
            V::Const(_) | V::Unknown => false,
        }
    }

    /// See [`GridProof::position_free`]: every expression with such an operand is one itself, an index into a
    /// storage buffer, or the extent check, and no statement stores, passes or returns one.
    fn position_free(&self) -> bool {
        let e = &self.function.expressions;
        for (h, expression) in e.iter() {
            if self.placed(h) {
                continue;
            }
            let allowed = match *expression {
                Expression::Access { base, .. } => self.element(h).is_some() && !self.placed(base),
                Expression::Binary {
                    op:
                        BinaryOperator::Less
                        | BinaryOperator::LessEqual
                        | BinaryOperator::Greater
                        | BinaryOperator::GreaterEqual,
                    left,
                    right,
                } => {
                    matches!(
                        (
                            self.value(left, Facts::Inside, 0),
                            self.value(right, Facts::Inside, 0)
                        ),
                        (V::Own, V::Area) | (V::Area, V::Own)
                    ) || matches!(
                        (self.value(left, Facts::Inside, 0), self.value(right, Facts::Inside, 0)),
                        (V::Own, V::Const(c)) | (V::Const(c), V::Own) if Some(c) == self.literal_product()
                    )
                }
                _ => false,
            };
            if allowed {
                continue;
            }
            match operands(expression) {
                Some(list) if list.iter().all(|&o| !self.placed(o)) => {}
                _ => return false,
            }
        }
        // In a tile's coordinates a read clamped elsewhere than at the image's edges would be clamped at the
        // tile's, or read an edge copy where the kernel reads another pixel.
        let replicate = |a: Axis| a.edge.is_some_and(Edge::replicates);
        self.reads
            .iter()
            .all(|r| replicate(r.col) && replicate(r.row))
            && statements_free(&self.function.body, &|h| self.placed(h))
    }

    /// The proof, from what the walk met.
    fn conclude(&self) -> Option<GridProof> {
        let mut reach = [0i64; 2];
        for r in &self.reads {
            reach[0] = reach[0].max(r.col.lo.abs()).max(r.col.hi.abs());
            reach[1] = reach[1].max(r.row.lo.abs()).max(r.row.hi.abs());
            // A buffer it writes it reads at its own pixel only.
            let own = r.col == Axis::exact(true) && r.row == Axis::exact(true);
            if self.writes.iter().any(|w| w.global == r.global) && !own {
                return None;
            }
        }
        // Every buffer it writes is written by every invocation inside the image, whatever the data.
        if self.writes.is_empty()
            || self
                .writes
                .iter()
                .any(|w| !self.writes.iter().any(|v| v.global == w.global && v.always))
        {
            return None;
        }
        let size = |sym: Sym| match sym {
            Sym::Literal(v) => Some(ImageSize::Literal(v)),
            Sym::Field(g, index) => {
                let ty = self.module.global_variables[g].ty;
                match &self.module.types[ty].inner {
                    TypeInner::Struct { members, .. } => members
                        .get(index as usize)?
                        .name
                        .clone()
                        .map(ImageSize::Param),
                    _ => None,
                }
            }
        };
        let reach = reach.map(|r| u32::try_from(r).ok().filter(|&r| r <= MAX_REACH));
        Some(GridProof {
            reach: [reach[0]?, reach[1]?],
            width: size(self.width.get()?)?,
            height: size(self.height.get()?)?,
            position_free: self.position_free(),
        })
    }
}

impl walk::Proof for Proof<'_> {
    type Facts = Facts;

    /// An emitted expression: an element of a storage buffer, read inside the image at a pixel near its own
    /// clamped into the image; a member of one not at all.
    fn emitted(&mut self, h: Handle<Expression>, facts: Facts, _always: bool) {
        if let Expression::AccessIndex { base, .. } = self.function.expressions[h]
            && matches!(
                self.function.expressions[base],
                Expression::GlobalVariable(_)
            )
            && self.reaches_storage(base)
        {
            self.refused.set(true);
            return;
        }
        let Some((global, index)) = self.element(h) else {
            return;
        };
        if self.past {
            // Past the image nothing read matters: nothing may be written there.
            return;
        }
        match facts {
            Facts::Beyond | Facts::Unreachable => {}
            Facts::Any => self.refused.set(true),
            Facts::Inside => match self.value(index, facts, 0) {
                V::Own => self.reads.push(Read {
                    global,
                    col: Axis::exact(true),
                    row: Axis::exact(true),
                }),
                V::Pixel(col, row) if col.clamped() && row.clamped() => {
                    self.reads.push(Read { global, col, row })
                }
                _ => self.refused.set(true),
            },
        }
    }

    /// A store: to a storage buffer only at the invocation's own index, inside the image.
    fn stored(&mut self, pointer: Handle<Expression>, facts: Facts, always: bool) {
        if !self.reaches_storage(pointer) {
            return;
        }
        let own = facts == Facts::Inside
            && self.element(pointer).is_some_and(|(_, index)| {
                matches!(self.value(index, facts, 0), V::Own)
                    || matches!(
                        self.value(index, facts, 0),
                        V::Pixel(c, r) if c == Axis::exact(true) && r == Axis::exact(true)
                    )
            });
        match (own && !self.past, self.element(pointer)) {
            (true, Some((global, _))) => self.writes.push(Write { global, always }),
            _ => self.refused.set(facts != Facts::Unreachable),
        }
    }

    /// The facts where `left op right` holds, and where it does not: only the extent check is read.
    fn compare(
        &self,
        op: BinaryOperator,
        left: Handle<Expression>,
        right: Handle<Expression>,
        facts: Facts,
        depth: u32,
    ) -> (Facts, Facts) {
        let (a, b) = (
            self.value(left, facts, depth + 1),
            self.value(right, facts, depth + 1),
        );
        let area = |v: V| match v {
            V::Area => true,
            V::Const(c) => self.literal_area(c),
            _ => false,
        };
        // `Some(true)`: the condition says `i < width * height`; `Some(false)`: `i >= ..`.
        let inside = match (op, a, b) {
            (BinaryOperator::Less, V::Own, x) | (BinaryOperator::Greater, x, V::Own) if area(x) => {
                Some(true)
            }
            (BinaryOperator::GreaterEqual, V::Own, x) | (BinaryOperator::LessEqual, x, V::Own)
                if area(x) =>
            {
                Some(false)
            }
            _ => None,
        };
        match inside {
            Some(inside) => (facts.given(inside), facts.given(!inside)),
            None => (facts, facts),
        }
    }

    fn function(&self) -> &Function {
        self.function
    }

    fn reaches_storage(&self, h: Handle<Expression>) -> bool {
        Proof::reaches_storage(self, h)
    }

    fn refuse(&mut self) {
        self.refused.set(true);
    }
}

/// The expressions `e` reads; `None` for kinds this does not list (which a position-free kernel then may not
/// have).
fn operands(e: &Expression) -> Option<Vec<Handle<Expression>>> {
    Some(match *e {
        Expression::Literal(_)
        | Expression::Constant(_)
        | Expression::Override(_)
        | Expression::ZeroValue(_)
        | Expression::FunctionArgument(_)
        | Expression::GlobalVariable(_)
        | Expression::LocalVariable(_)
        | Expression::CallResult(_) => Vec::new(),
        Expression::Compose { ref components, .. } => components.clone(),
        Expression::Access { base, index } => vec![base, index],
        Expression::AccessIndex { base, .. } => vec![base],
        Expression::Splat { value, .. } => vec![value],
        Expression::Swizzle { vector, .. } => vec![vector],
        Expression::Load { pointer } => vec![pointer],
        Expression::Unary { expr, .. } => vec![expr],
        Expression::Binary { left, right, .. } => vec![left, right],
        Expression::Select {
            condition,
            accept,
            reject,
        } => vec![condition, accept, reject],
        Expression::Relational { argument, .. } => vec![argument],
        Expression::Math {
            arg,
            arg1,
            arg2,
            arg3,
            ..
        } => [Some(arg), arg1, arg2, arg3]
            .into_iter()
            .flatten()
            .collect(),
        Expression::As { expr, .. } => vec![expr],
        Expression::ArrayLength(expr) => vec![expr],
        _ => return None,
    })
}

/// No statement of `block` (or of the blocks inside it) stores, passes to a function or returns a value
/// `placed` says is one.
fn statements_free(block: &naga::Block, placed: &dyn Fn(Handle<Expression>) -> bool) -> bool {
    block.iter().all(|statement| match statement {
        naga::Statement::Store { value, .. } => !placed(*value),
        naga::Statement::Call { arguments, .. } => arguments.iter().all(|&a| !placed(a)),
        naga::Statement::Return { value } => value.is_none_or(|v| !placed(v)),
        naga::Statement::Block(b) => statements_free(b, placed),
        naga::Statement::If { accept, reject, .. } => {
            statements_free(accept, placed) && statements_free(reject, placed)
        }
        naga::Statement::Loop {
            body, continuing, ..
        } => statements_free(body, placed) && statements_free(continuing, placed),
        naga::Statement::Switch { cases, .. } => {
            cases.iter().all(|c| statements_free(&c.body, placed))
        }
        _ => true,
    })
}

/// `max(a, b)` where `b` is a constant floor for a coordinate `a`; `None` for other forms.
fn max(a: V, b: V) -> Option<V> {
    match (a, b) {
        (V::Const(x), V::Const(y)) => Some(V::Const(x.max(y))),
        (V::Col(axis), V::Const(k)) => Some(V::Col(axis.at_least(k))),
        (V::Row(axis), V::Const(k)) => Some(V::Row(axis.at_least(k))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The proof of `body` as the entry point's body, over `src` (read), `dst` (read_write) and `params`
    /// (`width`, `height`, `k`), with `i` the invocation's index.
    fn proved(body: &str) -> Option<GridProof> {
        let source = format!(
            "struct Params {{ width: u32, height: u32, k: f32 }}\n\
             @group(0) @binding(0) var<storage, read> src: array<f32>;\n\
             @group(0) @binding(1) var<storage, read_write> dst: array<f32>;\n\
             @group(1) @binding(0) var<uniform> params: Params;\n\
             @compute @workgroup_size(64)\n\
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
                 let i = gid.x;\n\
                 {body}\n\
             }}\n"
        );
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("{}\n{source}", e.emit_to_string(&source)));
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{e:?}\n{source}"));
        grid_reach(&module, &info, 0)
    }

    fn params(reach: [u32; 2]) -> Option<GridProof> {
        Some(GridProof {
            reach,
            width: ImageSize::Param("width".into()),
            height: ImageSize::Param("height".into()),
            position_free: true,
        })
    }

    /// The guard and coordinates most kernels start with.
    const START: &str = "let w = params.width;\n\
                         let h = params.height;\n\
                         if (i >= w * h) { return; }\n\
                         let x = i % w;\n\
                         let y = i / w;\n";

    #[test]
    fn a_gradient_with_signed_clamps_reaches_one_pixel_each_way() {
        let body = format!(
            "{START}\
             var sum = 0.0;\n\
             let l = u32(clamp(i32(x) - 1, 0, i32(w) - 1));\n\
             let r = u32(clamp(i32(x) + 1, 0, i32(w) - 1));\n\
             let u = u32(clamp(i32(y) - 1, 0, i32(h) - 1));\n\
             let d = u32(clamp(i32(y) + 1, 0, i32(h) - 1));\n\
             let gx = src[y * w + r] - src[y * w + l];\n\
             let gy = src[d * w + x] - src[u * w + x];\n\
             dst[i] = sqrt(gx * gx + gy * gy) * params.k;"
        );
        assert_eq!(proved(&body), params([1, 1]));
    }

    #[test]
    fn unsigned_edges_by_min_and_max_are_clamps_too() {
        let body = format!(
            "{START}\
             let left = src[y * w + max(x, 1u) - 1u];\n\
             let right = src[y * w + min(x + 1u, w - 1u)];\n\
             let below = src[min(y + 2u, h - 1u) * w + x];\n\
             dst[i] = left + right + below + src[i];"
        );
        assert_eq!(proved(&body), params([1, 2]));
    }

    #[test]
    fn literal_sizes_are_found_from_the_divisor_and_the_area() {
        let body = "if (i >= 2048u) { return; }\n\
                    let x = i % 64u;\n\
                    let y = i / 64u;\n\
                    dst[i] = src[min(y + 3u, 31u) * 64u + x] + src[y * 64u + max(x, 2u) - 2u];";
        assert_eq!(
            proved(body),
            Some(GridProof {
                reach: [2, 3],
                width: ImageSize::Literal(64),
                height: ImageSize::Literal(32),
                position_free: true,
            })
        );
    }

    #[test]
    fn a_write_at_its_own_pixel_may_be_written_by_coordinates() {
        let body = format!("{START}dst[y * w + x] = src[y * w + x] * 2.0;");
        assert_eq!(proved(&body), params([0, 0]));
    }

    /// A kernel whose result depends on where its pixel is, or on the image's sizes as values, is proved (its
    /// reads are where it says) but not position-free: in a tile's coordinates it would compute otherwise.
    #[test]
    fn where_a_pixel_is_used_as_a_value_it_is_not_position_free() {
        let placed = [
            "dst[i] = src[i] + f32(x);",
            "dst[i] = src[i] * f32(w);",
            "dst[i] = select(src[i], 0.0, y == 0u);",
            "var at = i; dst[i] = src[i] + f32(at);",
            "dst[i] = src[y * w + min(x + 1u, w - 1u)] + f32(x + y);",
        ];
        for body in placed {
            let body = format!("{START}{body}");
            let proof = proved(&body);
            assert_eq!(proof.map(|p| p.position_free), Some(false), "\n{body}");
        }
        let free = format!("{START}dst[i] = src[y * w + min(x + 1u, w - 1u)] * params.k;");
        assert_eq!(proved(&free).map(|p| p.position_free), Some(true));
        // Clamped into the image but not at its edges: near the first rows and columns it reads another pixel
        // than the nearest edge one, which a tile's copies of the edge would not give.
        for read in [
            "src[y * w + min(max(x, 2u), w - 1u)]",
            "src[min(max(y, 1u), h - 1u) * w + x]",
        ] {
            let body = format!("{START}dst[i] = {read};");
            let proof = proved(&body);
            assert_eq!(proof.map(|p| p.position_free), Some(false), "\n{body}");
        }
        for read in [
            "src[y * w + max(x, 2u) - 2u]",
            "src[u32(clamp(i32(y) + 3, 0, i32(h) - 1)) * w + x]",
            "src[min(y + 2u, h - 1u) * w + min(x + 1u, w - 1u)]",
        ] {
            let body = format!("{START}dst[i] = {read};");
            assert_eq!(
                proved(&body).map(|p| p.position_free),
                Some(true),
                "\n{body}"
            );
        }
    }

    /// Each of these is not proved: a read that may leave the image or the reach, a write elsewhere or not
    /// always, no extent check, forms the domain does not follow.
    #[test]
    fn reads_that_may_leave_the_image_and_other_forms_are_refused() {
        let refused = [
            // The right neighbour unclamped: at the last column, the next row's first pixel.
            "dst[i] = src[y * w + x + 1u];",
            "dst[i] = src[y * w + (x + 1u)];",
            // Below zero as a `u32`.
            "dst[i] = src[y * w + x - 1u];",
            "dst[i] = src[(y - 1u) * w + x];",
            // A row past the last, unclamped.
            "dst[i] = src[(y + 1u) * w + x];",
            // Past the reach the fusion pass takes.
            "dst[i] = src[y * w + min(x + 17u, w - 1u)];",
            // A write at another pixel, a write only for some data, a read of the written buffer elsewhere.
            "dst[y * w + min(x + 1u, w - 1u)] = src[i];",
            "if (src[i] > 0.0) { dst[i] = 1.0; }",
            "dst[i] = dst[y * w + min(x + 1u, w - 1u)];",
            // A branch on a coordinate, a loop, a variable index.
            "var v = src[i]; if (x > 0u) { v = src[y * w + x - 1u]; } dst[i] = v;",
            "var s = 0.0; for (var d = 0u; d < 3u; d++) { s += src[y * w + min(x + d, w - 1u)]; } dst[i] = s;",
            "var j = i; dst[i] = src[j];",
            // No row's clamp knows the height, and the width is another expression.
            "dst[i] = src[(i / params.height) * w + x];",
        ];
        for body in refused {
            let body = format!("{START}{body}");
            assert_eq!(proved(&body), None, "{body}");
        }
        // No extent check: invocations past the image write.
        let unchecked =
            "let w = params.width;\nlet x = i % w;\nlet y = i / w;\ndst[i] = src[y * w + x];";
        assert_eq!(proved(unchecked), None);
        // A line kernel, with no coordinates at all.
        let line = "if (i >= arrayLength(&dst)) { return; }\ndst[i] = src[i];";
        assert_eq!(proved(line), None);
    }

    /// A coordinate as an index part, from the forms people write: `c` is the coordinate (`x` or `y`), `e`
    /// its extent (`w` or `h`).
    #[derive(Debug, Clone)]
    enum Form {
        Plain,
        /// `c + a` (u32).
        Plus(u32),
        /// `c - a` (u32).
        Minus(u32),
        /// `min(c + a, e - b)` (u32).
        MinPlus(u32, u32),
        /// `max(c, a) - a` (u32).
        MaxMinus(u32),
        /// `max(c, a)` (u32): past the image where it is narrower than `a`.
        Max(u32),
        /// `max(c - a, 0u)` (u32): wraps before the `max` sees it.
        MinusMax(u32),
        /// `min(max(c + a, k), e - 1u)` (u32).
        MaxMin(u32, u32),
        /// `u32(clamp(i32(c) + d, 0, i32(e) - 1))`.
        Clamp(i32),
        /// `u32(max(i32(c) + d, 0))`: no upper clamp.
        FloorOnly(i32),
    }

    impl Form {
        fn wgsl(&self, c: &str, e: &str) -> String {
            match *self {
                Form::Plain => c.to_string(),
                Form::Plus(a) => format!("({c} + {a}u)"),
                Form::Minus(a) => format!("({c} - {a}u)"),
                Form::MinPlus(a, b) => format!("min({c} + {a}u, {e} - {b}u)"),
                Form::MaxMinus(a) => format!("(max({c}, {a}u) - {a}u)"),
                Form::Max(a) => format!("max({c}, {a}u)"),
                Form::MinusMax(a) => format!("max({c} - {a}u, 0u)"),
                Form::MaxMin(a, k) => format!("min(max({c} + {a}u, {k}u), {e} - 1u)"),
                Form::Clamp(d) => format!("u32(clamp(i32({c}) + ({d}), 0, i32({e}) - 1))"),
                Form::FloorOnly(d) => format!("u32(max(i32({c}) + ({d}), 0))"),
            }
        }

        /// Its value for coordinate `c` of extent `e`, as a mathematical integer (`None`: a `u32` that
        /// wrapped below zero, or a `u32` conversion of a negative value).
        fn eval(&self, c: i64, e: i64) -> Option<i64> {
            let v = match *self {
                Form::Plain => c,
                Form::Plus(a) => c + i64::from(a),
                Form::Minus(a) => c - i64::from(a),
                Form::MinPlus(a, b) => {
                    let bound = e - i64::from(b);
                    if bound < 0 {
                        return None;
                    }
                    (c + i64::from(a)).min(bound)
                }
                Form::MaxMinus(a) => c.max(i64::from(a)) - i64::from(a),
                Form::Max(a) => c.max(i64::from(a)),
                Form::MinusMax(a) => {
                    if c < i64::from(a) {
                        return None;
                    }
                    c - i64::from(a)
                }
                Form::MaxMin(a, k) => (c + i64::from(a)).max(i64::from(k)).min(e - 1),
                Form::Clamp(d) => (c + i64::from(d)).clamp(0, e - 1),
                Form::FloorOnly(d) => (c + i64::from(d)).max(0),
            };
            (v >= 0).then_some(v)
        }
    }

    fn form() -> impl proptest::strategy::Strategy<Value = Form> {
        use proptest::prelude::*;
        prop_oneof![
            Just(Form::Plain),
            (0u32..4).prop_map(Form::Plus),
            (0u32..4).prop_map(Form::Minus),
            (0u32..4, 0u32..4).prop_map(|(a, b)| Form::MinPlus(a, b)),
            (0u32..4).prop_map(Form::MaxMinus),
            (0u32..4).prop_map(Form::Max),
            (0u32..4).prop_map(Form::MinusMax),
            (0u32..3, 0u32..5).prop_map(|(a, k)| Form::MaxMin(a, k)),
            (-3i32..4).prop_map(Form::Clamp),
            (-3i32..4).prop_map(Form::FloorOnly),
        ]
    }

    /// The reads of `src[row * w + col]` for each pair, under the usual guard.
    fn reads_body(reads: &[(Form, Form)]) -> String {
        let sum: Vec<String> = reads
            .iter()
            .map(|(col, row)| format!("src[{} * w + {}]", row.wgsl("y", "h"), col.wgsl("x", "w")))
            .collect();
        format!("{START}dst[i] = {};", sum.join(" + "))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Whatever the proof accepts reads, for every pixel of every small image, only pixels inside the
        /// image within the proved reach of its own.
        #[test]
        fn every_read_the_proof_allows_is_inside_the_image_and_the_reach(
            reads in proptest::collection::vec((form(), form()), 1..3),
        ) {
            let body = reads_body(&reads);
            let Some(proof) = proved(&body) else {
                return Ok(());
            };
            for (w, h) in [(1i64, 1i64), (1, 3), (2, 2), (3, 1), (4, 5), (7, 3)] {
                for y in 0..h {
                    for x in 0..w {
                        for (col, row) in &reads {
                            let (c, r) = (col.eval(x, w), row.eval(y, h));
                            let inside = c.zip(r).filter(|&(c, r)| c < w && r < h);
                            proptest::prop_assert!(
                                inside.is_some_and(|(c, r)| (c - x).abs() <= i64::from(proof.reach[0])
                                    && (r - y).abs() <= i64::from(proof.reach[1])),
                                "{body}\n{w} x {h}, pixel ({x}, {y}): reads ({c:?}, {r:?}), reach {:?}",
                                proof.reach
                            );
                        }
                    }
                }
            }
        }
    }

    /// The property above is not met only by refusals: the clamped forms it draws are proved.
    #[test]
    fn every_clamped_form_is_proved() {
        for col in [
            Form::Plain,
            Form::MinPlus(2, 1),
            Form::MaxMinus(3),
            Form::Clamp(-2),
            Form::Clamp(3),
        ] {
            for row in [
                Form::Plain,
                Form::MinPlus(1, 1),
                Form::MaxMinus(1),
                Form::Clamp(2),
            ] {
                let body = reads_body(&[(col.clone(), row.clone())]);
                assert!(proved(&body).is_some(), "{body}");
            }
        }
    }
}
