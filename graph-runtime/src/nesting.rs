//! What a `graph!` parent's constants know of a `graph!` child before they read its description: that its type
//! is a graph at all, whether its own declaration has errors, and whether it contains the parent again (or
//! holds some other graph that contains itself).
//!
//! A parent's description holds its child's, so a graph that contained itself would need its own description
//! to make its description: rustc reports that as a query cycle of some eighty lines that never name the
//! subgraph node. So the macro gives every graph a [`Subgraph`] impl, and a [`Contains`] walk over the *types*
//! of its children, which const evaluation answers without any description; a parent reads (and checks) a
//! child's description only when the walk found no cycle, and otherwise reports the cycle in its own words at
//! the subgraph node. The walk is bounded ([`MaxDepth`]) because a walk around a cycle would not end: each
//! step is a new instantiation with one level less.
//!
//! Only the graph with the smallest [`Subgraph::IDENTITY`] on a cycle reports it, so two graphs that contain
//! each other are one error; a graph that holds such a pair without being on the cycle reports nothing.

#![forbid(unsafe_code)]
// Const evaluation cannot allocate: the checks' messages are `graph_core::subgraph::Message`s, returned by value.
#![allow(clippy::result_large_err)]

use std::borrow::Cow;
use std::marker::PhantomData;

use graph_core::desc::{self, GraphDesc};
use graph_core::ir;
use graph_core::subgraph::{self, Message};

use crate::task_graph::TaskGraph;

/// A graph as the subgraph nodes of a `graph!` parent see it. The macro implements it for every graph it
/// declares (and for the stub beside a graph's errors), so a child type that is not a graph is this error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a graph: a subgraph's type must be declared with `graph!`",
    label = "not a graph"
)]
pub trait Subgraph {
    /// Where the graph is declared (module path, name, file, line and column): what the walk compares.
    const IDENTITY: &'static str;
    /// Whether the graph's own declaration has errors: its description is then a stub (reported where it
    /// is declared), and a parent checks nothing against it.
    const HAS_ERRORS: bool;
    /// What a walk from this graph's children finds of this graph ([`Inner`]): whether it lies on a cycle.
    const BELOW: Found;
    /// Whether one of this graph's own subgraph nodes reports nesting too deep: then the graphs above it,
    /// which nest deeper still, do not report it again.
    const NESTS_TOO_DEEP: bool;
}

/// A child type as its parent names it: `<Path as Child<{ <Path as Subgraph>::HAS_ERRORS }>>::Graph`, which
/// is `Path` for a graph. For a type that is not a graph, the constant argument is the one error ([`Subgraph`]'s
/// message, at the path), and the whole type is then an error that rustc reports nowhere else: not in the
/// parent's uses of its child, nor in a grandparent that walks through the parent.
pub trait Child<const HAS_ERRORS: bool> {
    type Graph;
}

impl<G: Subgraph, const HAS_ERRORS: bool> Child<HAS_ERRORS> for G {
    type Graph = G;
}

/// One level more of the walk's depth.
#[derive(Debug)]
pub struct Below<D>(PhantomData<D>);
/// The walk's last level: a graph here is not walked into.
#[derive(Debug)]
pub struct Bottom;
/// Four levels more.
type Four<D> = Below<Below<Below<Below<D>>>>;
/// How deep below a child the walk goes: as deep as `MAX_DEPTH`.
pub type MaxDepth = Four<Four<Four<Four<Bottom>>>>;
/// The levels of [`MaxDepth`].
pub const MAX_DEPTH: u32 = 16;

/// The walk for a parent's check: at its last level it asks whether the graph there lies on a cycle, so that
/// a cycle below the parent that does not pass through it is not mistaken for nesting too deep.
#[derive(Debug)]
pub struct Outer;
/// The walk that answers that question ([`Subgraph::BELOW`]): at its last level it stops.
#[derive(Debug)]
pub struct Inner;

/// What the walk finds below a graph, for a target graph.
#[derive(Clone, Copy, Debug)]
pub enum Found {
    /// Neither the target nor a level past the walk's depth: the descriptions below are finite.
    Nothing,
    /// A graph at the walk's last level that holds more levels, and lies on no cycle the walk saw.
    TooDeep,
    /// A graph that contains itself, on a cycle that does not pass through the target.
    Elsewhere,
    /// The target again; `smallest` is the smallest identity on the way there.
    Itself { smallest: &'static str },
}

/// Whether the walk found the target below `Self` within `Depth` levels ([`Found`]), in walk `Mode`.
pub trait Contains<Target, Depth, Mode> {
    const FOUND: Found;
}

/// What a walk in this mode finds at its last level, on graph `X` (not the target).
pub trait AtBottom<X> {
    const FOUND: Found;
}

impl<X: Subgraph> AtBottom<X> for Outer {
    const FOUND: Found = match X::BELOW {
        Found::Itself { .. } => Found::Elsewhere,
        other => other,
    };
}

impl<X> AtBottom<X> for Inner {
    const FOUND: Found = Found::TooDeep;
}

/// The walk at graph `X` on its last level, for target `T`.
pub const fn at_bottom<X: Subgraph, T: Subgraph, M: AtBottom<X>>() -> Found {
    match subgraph::same_text(X::IDENTITY, T::IDENTITY) {
        true => Found::Itself {
            smallest: X::IDENTITY,
        },
        false => M::FOUND,
    }
}

/// The walk at graph `X` above its last level, for target `T`, from what it found below each child.
pub const fn step<X: Subgraph, T: Subgraph>(children: &[Found]) -> Found {
    if subgraph::same_text(X::IDENTITY, T::IDENTITY) {
        return Found::Itself {
            smallest: X::IDENTITY,
        };
    }
    match below(children) {
        Found::Itself { smallest } if less(X::IDENTITY, smallest) => Found::Itself {
            smallest: X::IDENTITY,
        },
        found => found,
    }
}

/// What the walk found below the children of one graph: the target on the way with the smallest identity,
/// else a cycle elsewhere, else too deep, else nothing.
pub const fn below(children: &[Found]) -> Found {
    let mut found = Found::Nothing;
    let mut c = 0;
    while c < children.len() {
        found = match (found, children[c]) {
            (Found::Itself { smallest: a }, Found::Itself { smallest: b }) => Found::Itself {
                smallest: if less(b, a) { b } else { a },
            },
            (a, b) if rank(b) > rank(a) => b,
            (a, _) => a,
        };
        c += 1;
    }
    found
}

/// Whether a graph's checks report nesting too deep for one of its children, from what the walk for each
/// child found ([`Outer`], the graph the target).
pub const fn any_too_deep(children: &[Found]) -> bool {
    let mut c = 0;
    while c < children.len() {
        if matches!(children[c], Found::TooDeep) {
            return true;
        }
        c += 1;
    }
    false
}

const fn rank(found: Found) -> u8 {
    match found {
        Found::Nothing => 0,
        Found::TooDeep => 1,
        Found::Elsewhere => 2,
        Found::Itself { .. } => 3,
    }
}

/// Whether `a` sorts before `b`, byte by byte.
const fn less(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

/// The description of a parent's child `C`, as the parent's description holds it: the child's own where
/// the walk found no cycle, else the stub (the cycle is a compile error of the parent's checks). Reading
/// `C::DESCRIPTION` only in that branch is what keeps a cycle from being rustc's query cycle.
pub const fn child_description<
    P: Subgraph,
    C: TaskGraph + Subgraph + Contains<P, MaxDepth, Outer>,
>() -> &'static GraphDesc {
    match C::FOUND {
        Found::Nothing => description_of::<C>(),
        _ => &STUB_DESCRIPTION,
    }
}

const fn description_of<G: TaskGraph>() -> &'static GraphDesc {
    G::DESCRIPTION
}

/// Subgraph node `node` of `P`, of child `C`, checked as a whole: the cycle where `P` is the graph on it that
/// reports it, a nesting too deep, or else [`subgraph::check_described_node`]. A child with errors of its
/// own, or on a cycle another graph reports, is not checked.
pub const fn check_subgraph_node<
    P: TaskGraph + Subgraph,
    C: Subgraph + Contains<P, MaxDepth, Outer>,
>(
    node: u32,
) -> Result<(), Message> {
    if C::HAS_ERRORS {
        return Ok(());
    }
    match C::FOUND {
        Found::Nothing => subgraph::check_described_node(P::DESCRIPTION, node),
        Found::Itself { smallest } if subgraph::same_text(smallest, P::IDENTITY) => {
            let directly = subgraph::same_text(C::IDENTITY, P::IDENTITY);
            Err(subgraph::described_contains_itself(
                P::DESCRIPTION,
                node,
                directly,
            ))
        }
        Found::TooDeep if !C::NESTS_TOO_DEEP => Err(subgraph::described_nests_too_deep(
            P::DESCRIPTION,
            node,
            2 * MAX_DEPTH,
        )),
        Found::Itself { .. } | Found::Elsewhere | Found::TooDeep => Ok(()),
    }
}

/// Binding `binding` of subgraph node `node` of `P`, of child `C`: [`subgraph::check_described_binding`]
/// where [`check_subgraph_node`] checks the child at all.
pub const fn check_subgraph_binding<
    P: TaskGraph + Subgraph,
    C: Subgraph + Contains<P, MaxDepth, Outer>,
>(
    node: u32,
    binding: u32,
) -> Result<(), Message> {
    match (C::HAS_ERRORS, C::FOUND) {
        (false, Found::Nothing) => subgraph::check_described_binding(P::DESCRIPTION, node, binding),
        _ => Ok(()),
    }
}

/// The description of a graph whose checks failed, and of a child on a cycle in its parent's description: only
/// seen beside compile errors.
pub const STUB_DESCRIPTION: GraphDesc = GraphDesc {
    name: Cow::Borrowed(""),
    params: desc::ParamsDesc {
        size: 0,
        storage: ir::ParamsStorage::Immediates,
        fields: Cow::Borrowed(&[]),
        wgsl_struct: Cow::Borrowed(""),
    },
    buffers: Cow::Borrowed(&[]),
    nodes: Cow::Borrowed(&[]),
    edges: Cow::Borrowed(&[]),
    topological_order: Cow::Borrowed(&[]),
    levels: Cow::Borrowed(&[]),
    partitions: Cow::Borrowed(&[]),
    blocks: Cow::Borrowed(&[]),
};

#[cfg(test)]
mod tests {
    use super::*;

    trait Levels {
        const LEVELS: u32;
    }
    impl Levels for Bottom {
        const LEVELS: u32 = 0;
    }
    impl<D: Levels> Levels for Below<D> {
        const LEVELS: u32 = D::LEVELS + 1;
    }

    #[test]
    fn max_depth_has_its_levels() {
        assert_eq!(MaxDepth::LEVELS, MAX_DEPTH);
    }

    #[test]
    fn the_smallest_identity_on_the_way_to_the_target_wins() {
        let found = below(&[
            Found::TooDeep,
            Found::Itself { smallest: "b" },
            Found::Elsewhere,
            Found::Itself { smallest: "a" },
        ]);
        assert!(
            matches!(found, Found::Itself { smallest: "a" }),
            "{found:?}"
        );
        assert!(matches!(
            below(&[Found::Nothing, Found::TooDeep, Found::Elsewhere]),
            Found::Elsewhere
        ));
        assert!(matches!(below(&[]), Found::Nothing));
        assert!(less("ab", "b") && less("a", "ab") && !less("b", "ab"));
    }
}
