//! Diagnostics as text for a person, for front ends that have no spans to point at (a run-time builder, a
//! file loader): the location in words and, for WGSL, the line with a caret underline, laid out like rustc's.
//!
//! A diagnostic may come from a buggy or hostile input, so any index in a [`Loc`] may be out of range and a
//! WGSL byte range may run past the text or split a character. Nothing here panics: an index that names
//! nothing is given as the number it is (`node 7`), and a range is clamped to the text's character boundaries.

use std::ops::Range;

use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{self, KernelSource, NodeKind};

/// A diagnostic as text for a person: the message, where it is in words, a snippet for WGSL, help and note.
/// The text has no trailing newline.
pub fn render(graph: &ir::Graph, diagnostic: &Diagnostic) -> String {
    let loc = &diagnostic.loc;
    let snippet = match loc {
        Loc::Wgsl { node, range } => own_wgsl(graph, *node).map(|text| Snippet::new(text, range)),
        _ => None,
    };
    // The gutter holds the line number with a space before it; `-->`, `|` and `=` are laid out against it.
    let gutter = snippet.as_ref().map_or(1, |s| s.line_no.to_string().len()) + 1;
    let margin = " ".repeat(gutter);
    let mut lines = vec![
        format!("error: {}", diagnostic.message),
        format!("{margin}--> {}", describe_loc(graph, loc)),
    ];
    if let Some(s) = &snippet {
        lines.push(format!("{margin} |"));
        lines.push(format!("{:>gutter$} | {}", s.line_no, s.line));
        lines.push(format!("{margin} | {}", s.underline()));
    }
    let footers: Vec<(&str, &str)> = [("help", &diagnostic.help), ("note", &diagnostic.note)]
        .into_iter()
        .filter_map(|(label, text)| text.as_deref().map(|text| (label, text)))
        .collect();
    if !footers.is_empty() {
        lines.push(format!("{margin} |"));
    }
    for (label, text) in footers {
        lines.push(footer(&margin, label, text));
    }
    lines.join("\n")
}

/// Where a Loc is, in words: "graph `G`", "access `x` of node `axpy`", "line 3, column 9 of the WGSL of node
/// `axpy`", ... An index that names nothing is given as its number: "node 7", "access 3 of node `axpy`".
pub fn describe_loc(graph: &ir::Graph, loc: &Loc) -> String {
    match loc {
        Loc::Graph => graph_words(graph),
        Loc::ParamsBlock => format!("the parameters of {}", graph_words(graph)),
        Loc::Param(i) => param_words(graph, *i),
        Loc::ParamType(i) => format!("the type of {}", param_words(graph, *i)),
        Loc::Buffer(i) => buffer_words(graph, *i),
        Loc::BufferType(i) => format!("the element type of {}", buffer_words(graph, *i)),
        Loc::Node(n) => node_words(graph, *n),
        Loc::Access { node, index } => {
            let buffer = access_buffer(graph, *node, *index);
            let access = named("access", buffer.as_deref(), *index);
            format!("{access} of {}", node_words(graph, *node))
        }
        Loc::AccessMode { node, index } => {
            let access = match access_buffer(graph, *node, *index) {
                Some(buffer) => format!("`{}`", crate::names::escaped(&buffer)),
                None => format!("access {index}"),
            };
            let node = node_words(graph, *node);
            format!("the access mode of {access} in {node}")
        }
        Loc::KernelArg { node, index } => {
            let node_kind = graph.nodes.get(*node).map(|n| &n.kind);
            let arg = match node_kind {
                // A fill's value is checked as its one argument.
                Some(NodeKind::Fill { .. }) => "the value".to_string(),
                Some(NodeKind::Kernel(kernel)) => {
                    let name = kernel.args.get(*index).map(|a| a.name.as_str());
                    named("argument", name, *index)
                }
                _ => named("argument", None, *index),
            };
            format!("{arg} of {}", node_words(graph, *node))
        }
        Loc::KernelSource(n) => source_words(graph, *n),
        Loc::KernelEntry(n) => format!("the entry point of {}", node_words(graph, *n)),
        Loc::Dispatch(n) => format!("the dispatch size of {}", node_words(graph, *n)),
        Loc::SizeTerm { node, dim, term } => {
            let slot = graph.nodes.get(*node);
            let text = slot
                .and_then(|n| n.size_slots().get(*dim).copied().flatten())
                .and_then(|expr| expr.terms().get(*term).map(|t| t.to_string()));
            let term = match text {
                Some(text) => format!("term `{}`", crate::names::escaped(&text)),
                None => format!("term {term}"),
            };
            let what = slot.map_or_else(|| format!("size {dim}"), |n| n.size_slot_words(*dim));
            format!("{term} of {what} of {}", node_words(graph, *node))
        }
        Loc::Wgsl { node, range } => {
            let source = source_words(graph, *node);
            match own_wgsl(graph, *node) {
                Some(text) => {
                    let s = Snippet::new(text, range);
                    format!("line {}, column {} of {source}", s.line_no, s.column)
                }
                // Library WGSL is not in the graph, so there is no line to count.
                None => source,
            }
        }
        Loc::Block(i) => match graph.blocks.get(*i) {
            Some(b) => format!("`{} {}`", b.kind.keyword(), crate::names::escaped(&b.name)),
            None => format!("block {i}"),
        },
        Loc::Alternatives(i) => match graph.alternatives.get(*i) {
            Some(a) => format!("alternatives `{}`", crate::names::escaped(&a.name)),
            None => format!("alternatives {i}"),
        },
        Loc::Edge(i) => format!("explicit {}", edge_words(graph, *i)),
        Loc::EdgeFrom(i) => format!("the source of {}", edge_words(graph, *i)),
        Loc::EdgeTo(i) => format!("the target of {}", edge_words(graph, *i)),
    }
}

/// "kind `name`", or "kind index" when the index names nothing.
fn named(kind: &str, name: Option<&str>, index: usize) -> String {
    match name {
        // Escaped: a name refused for holding a line break or a NUL is still shown by it.
        Some(name) => format!("{kind} `{}`", crate::names::escaped(name)),
        None => format!("{kind} {index}"),
    }
}

fn graph_words(graph: &ir::Graph) -> String {
    // A graph built at run time may have no name.
    if graph.name.is_empty() {
        "the graph".to_string()
    } else {
        format!("graph `{}`", crate::names::escaped(&graph.name))
    }
}

fn param_words(graph: &ir::Graph, i: usize) -> String {
    named("parameter", graph.params.get(i).map(|p| p.name.as_str()), i)
}

fn buffer_words(graph: &ir::Graph, i: usize) -> String {
    named("buffer", graph.buffers.get(i).map(|b| b.name.as_str()), i)
}

fn node_words(graph: &ir::Graph, n: usize) -> String {
    named("node", graph.nodes.get(n).map(|node| node.name.as_str()), n)
}

fn edge_words(graph: &ir::Graph, i: usize) -> String {
    match graph.edges.get(i) {
        Some(edge) => format!(
            "edge `{} -> {}`",
            crate::names::escaped(&edge.from),
            crate::names::escaped(&edge.to)
        ),
        None => format!("edge {i}"),
    }
}

/// Where a kernel's code comes from, in words.
fn source_words(graph: &ir::Graph, n: usize) -> String {
    let node = node_words(graph, n);
    match kernel(graph, n).map(|k| &k.source) {
        Some(KernelSource::Wgsl {
            file: Some(path), ..
        }) => format!(
            "the `.wgsl` file `{}` of {node}",
            crate::names::escaped(path)
        ),
        Some(KernelSource::Library(path)) => {
            format!(
                "the library kernel `{}` of {node}",
                crate::names::escaped(path)
            )
        }
        // Inline WGSL, and the built-in WGSL of fills and copies.
        _ => format!("the WGSL of {node}"),
    }
}

/// The buffer named by access `index` of node `n`, copies' and fills' implied accesses included.
fn access_buffer(graph: &ir::Graph, n: usize, index: usize) -> Option<String> {
    let mut accesses = graph.nodes.get(n)?.accesses();
    (index < accesses.len()).then(|| accesses.swap_remove(index).buffer)
}

fn kernel(graph: &ir::Graph, n: usize) -> Option<&ir::Kernel> {
    match &graph.nodes.get(n)?.kind {
        NodeKind::Kernel(kernel) => Some(kernel),
        _ => None,
    }
}

/// The WGSL text that `Loc::Wgsl` ranges of node `n` index into, when the graph holds it.
fn own_wgsl(graph: &ir::Graph, n: usize) -> Option<&str> {
    match &kernel(graph, n)?.source {
        KernelSource::Wgsl { text, .. } => Some(text),
        KernelSource::Library(_) => None,
    }
}

/// One `= help:` or `= note:` line; the lines after the first are indented under the first's text.
fn footer(margin: &str, label: &str, text: &str) -> String {
    let head = format!("{margin}= {label}: ");
    let indent = " ".repeat(head.len());
    let mut lines = text.lines();
    let first = format!("{head}{}", lines.next().unwrap_or(""));
    let mut out = vec![first.trim_end().to_string()];
    out.extend(lines.map(|line| format!("{indent}{line}").trim_end().to_string()));
    out.join("\n")
}

/// The line a WGSL byte range starts on, and what of it to underline.
struct Snippet<'t> {
    /// 1-based.
    line_no: usize,
    /// 1-based, in characters.
    column: usize,
    /// The whole line, without its line break.
    line: &'t str,
    /// The line's text before the range.
    lead: &'t str,
    /// Characters to underline: the range's part on this line, at least one.
    width: usize,
}

impl<'t> Snippet<'t> {
    fn new(text: &'t str, range: &Range<usize>) -> Self {
        let start = floor_char_boundary(text, range.start);
        // A reversed range is taken as empty; an end inside a character underlines the whole character.
        let end = ceil_char_boundary(text, range.end.max(start));
        let before = text.get(..start).unwrap_or("");
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line_end = text
            .get(start..)
            .and_then(|rest| rest.find('\n'))
            .map_or(text.len(), |i| start + i);
        let line = text.get(line_start..line_end).unwrap_or("");
        let line = line.strip_suffix('\r').unwrap_or(line);
        let lead = text.get(line_start..start).unwrap_or("");
        // A range over several lines is underlined to the end of its first.
        let underlined = text
            .get(start..end.min(line_start + line.len()))
            .unwrap_or("");
        Snippet {
            line_no: before.matches('\n').count() + 1,
            column: lead.chars().count() + 1,
            line,
            lead,
            width: underlined.chars().count().max(1),
        }
    }

    fn underline(&self) -> String {
        // Tabs are kept, so the carets line up under the text whatever width the terminal gives a tab.
        let pad: String = self
            .lead
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        format!("{pad}{}", "^".repeat(self.width))
    }
}

/// The last char boundary at or before `index`, within `text` (`str::floor_char_boundary` is newer than the
/// crate's minimum Rust version).
fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    // 0 is a boundary, so this stops.
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The first char boundary at or after `index`, within `text`.
fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    // `text.len()` is a boundary, so this stops.
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{
        Access, AccessMode, Buffer, DispatchSpec, ExplicitEdge, Graph, Kernel, KernelArg, Node,
        Param, Role, SizeExpr, SizeOp,
    };

    /// Not valid WGSL, only lines to point into: a comment and an identifier with characters of two bytes.
    const AXPY: &str = "// ½ step: y ← a·x + y\n    let ŷ = params.a * x[i] + q;\n    y[i] = ŷ;";

    fn access(buffer: &str, mode: AccessMode) -> Access {
        Access {
            binding: buffer.into(),
            buffer: buffer.into(),
            mode,
        }
    }

    fn new_kernel(accesses: Vec<Access>, source: KernelSource) -> Kernel {
        Kernel {
            accesses,
            source,
            entry: None,
            dispatch: DispatchSpec::Auto,
            args: Vec::new(),
        }
    }

    fn node(name: &str, kind: NodeKind) -> Node {
        Node {
            name: name.into(),
            kind,
        }
    }

    fn graph() -> Graph {
        let mut axpy = new_kernel(
            vec![
                access("x", AccessMode::Read),
                access("y", AccessMode::ReadWrite),
            ],
            KernelSource::Wgsl {
                text: AXPY.into(),
                file: None,
            },
        );
        axpy.dispatch = DispatchSpec::Threads(vec![
            SizeExpr::Len("y".into()),
            SizeExpr::binary(SizeOp::DivCeil, SizeExpr::param("n"), SizeExpr::Literal(2)),
        ]);
        let from_file = new_kernel(
            vec![access("y", AccessMode::Write)],
            KernelSource::Wgsl {
                text: "fn main() {\n\tlet v = 1;\n}".into(),
                file: Some("kernels/k.wgsl".into()),
            },
        );
        let mut scale = new_kernel(
            vec![access("y", AccessMode::ReadWrite)],
            KernelSource::Library("scale".into()),
        );
        scale.args.push(KernelArg {
            name: "alpha".into(),
            wgsl: "params.a".into(),
        });
        Graph {
            name: "G".into(),
            params: vec![
                Param {
                    name: "a".into(),
                    ty: "f32".into(),
                },
                Param {
                    name: "n".into(),
                    ty: "u32".into(),
                },
            ],
            buffers: vec![
                Buffer {
                    name: "x".into(),
                    elem: "f32".into(),
                    len: None,
                    role: Role::Input,
                },
                Buffer {
                    name: "y".into(),
                    elem: "f32".into(),
                    len: None,
                    role: Role::InOut,
                },
            ],
            nodes: vec![
                node("axpy", NodeKind::Kernel(axpy)),
                node("k", NodeKind::Kernel(from_file)),
                node("s", NodeKind::Kernel(scale)),
                node(
                    "zero",
                    NodeKind::Fill {
                        dst: "y".into(),
                        value: "0.0".into(),
                        range: None,
                    },
                ),
                node(
                    "c",
                    NodeKind::Copy {
                        src: "x".into(),
                        dst: "y".into(),
                        src_range: None,
                        dst_range: None,
                    },
                ),
            ],
            edges: vec![ExplicitEdge {
                from: "axpy".into(),
                to: "s".into(),
            }],
            ..Graph::default()
        }
    }

    fn wgsl(node: usize, range: Range<usize>) -> Loc {
        Loc::Wgsl { node, range }
    }

    /// The byte range of `needle` in the kernel `axpy`.
    fn in_axpy(needle: &str) -> Range<usize> {
        let start = AXPY.find(needle).unwrap_or(usize::MAX);
        start..start.saturating_add(needle.len())
    }

    #[test]
    fn describes_each_kind_of_location() {
        let g = graph();
        let cases = [
            (Loc::Graph, "graph `G`"),
            (Loc::ParamsBlock, "the parameters of graph `G`"),
            (Loc::Param(0), "parameter `a`"),
            (Loc::ParamType(1), "the type of parameter `n`"),
            (Loc::Buffer(0), "buffer `x`"),
            (Loc::BufferType(1), "the element type of buffer `y`"),
            (Loc::Node(0), "node `axpy`"),
            (
                Loc::Access { node: 0, index: 0 },
                "access `x` of node `axpy`",
            ),
            (
                Loc::AccessMode { node: 0, index: 1 },
                "the access mode of `y` in node `axpy`",
            ),
            (Loc::Access { node: 4, index: 1 }, "access `y` of node `c`"),
            (
                Loc::KernelArg { node: 2, index: 0 },
                "argument `alpha` of node `s`",
            ),
            (
                Loc::KernelArg { node: 3, index: 0 },
                "the value of node `zero`",
            ),
            (Loc::KernelSource(0), "the WGSL of node `axpy`"),
            (
                Loc::KernelSource(1),
                "the `.wgsl` file `kernels/k.wgsl` of node `k`",
            ),
            (
                Loc::KernelSource(2),
                "the library kernel `scale` of node `s`",
            ),
            (Loc::KernelEntry(1), "the entry point of node `k`"),
            (Loc::Dispatch(0), "the dispatch size of node `axpy`"),
            (
                Loc::SizeTerm {
                    node: 0,
                    dim: 1,
                    term: 1,
                },
                "term `params.n` of dimension y of the size of node `axpy`",
            ),
            (
                Loc::SizeTerm {
                    node: 0,
                    dim: 1,
                    term: 0,
                },
                "term `params.n.div_ceil(2)` of dimension y of the size of node `axpy`",
            ),
            (
                wgsl(1, 13..16),
                "line 2, column 2 of the `.wgsl` file `kernels/k.wgsl` of node `k`",
            ),
            (wgsl(2, 3..5), "the library kernel `scale` of node `s`"),
            (Loc::Edge(0), "explicit edge `axpy -> s`"),
            (Loc::EdgeFrom(0), "the source of edge `axpy -> s`"),
            (Loc::EdgeTo(0), "the target of edge `axpy -> s`"),
        ];
        for (loc, words) in cases {
            assert_eq!(describe_loc(&g, &loc), words, "{loc:?}");
        }
    }

    #[test]
    fn indices_that_name_nothing_are_given_as_numbers() {
        let g = graph();
        let cases = [
            (Loc::Param(5), "parameter 5"),
            (Loc::Buffer(2), "buffer 2"),
            (Loc::Node(7), "node 7"),
            (Loc::Access { node: 0, index: 9 }, "access 9 of node `axpy`"),
            (Loc::Access { node: 7, index: 0 }, "access 0 of node 7"),
            (
                Loc::AccessMode { node: 0, index: 9 },
                "the access mode of access 9 in node `axpy`",
            ),
            (
                Loc::KernelArg { node: 2, index: 4 },
                "argument 4 of node `s`",
            ),
            (
                Loc::KernelArg { node: 4, index: 0 },
                "argument 0 of node `c`",
            ),
            (Loc::KernelSource(7), "the WGSL of node 7"),
            (
                Loc::SizeTerm {
                    node: 0,
                    dim: 1,
                    term: 9,
                },
                "term 9 of dimension y of the size of node `axpy`",
            ),
            (
                Loc::SizeTerm {
                    node: 0,
                    dim: 5,
                    term: 0,
                },
                "term 0 of dimension 5 of the size of node `axpy`",
            ),
            (wgsl(7, 0..4), "the WGSL of node 7"),
            (Loc::EdgeFrom(3), "the source of edge 3"),
        ];
        for (loc, words) in cases {
            assert_eq!(describe_loc(&g, &loc), words, "{loc:?}");
        }
        let d = Diagnostic::new(Loc::Node(7), "node 7 is broken");
        assert_eq!(render(&g, &d), "error: node 7 is broken\n  --> node 7");
        // No text to show a line of: no snippet.
        let d = Diagnostic::new(wgsl(7, 0..4), "bad WGSL");
        assert_eq!(render(&g, &d), "error: bad WGSL\n  --> the WGSL of node 7");
    }

    #[test]
    fn wgsl_columns_count_characters() {
        let d = Diagnostic::new(
            wgsl(0, in_axpy("q")),
            "no definition in scope for identifier: `q`",
        );
        let expected = "\
error: no definition in scope for identifier: `q`
  --> line 2, column 31 of the WGSL of node `axpy`
   |
 2 |     let ŷ = params.a * x[i] + q;
   |                               ^";
        assert_eq!(render(&graph(), &d), expected);
    }

    #[test]
    fn a_range_over_lines_is_underlined_to_the_end_of_its_first() {
        let start = in_axpy("params.a").start;
        let end = in_axpy("ŷ;").end;
        let d = Diagnostic::new(wgsl(0, start..end), "mismatched types");
        let expected = "\
error: mismatched types
  --> line 2, column 13 of the WGSL of node `axpy`
   |
 2 |     let ŷ = params.a * x[i] + q;
   |             ^^^^^^^^^^^^^^^^^^^^";
        assert_eq!(render(&graph(), &d), expected);
    }

    #[test]
    fn a_range_past_the_text_points_at_its_end() {
        let d = Diagnostic::new(wgsl(0, 500..600), "expected `}`");
        let expected = "\
error: expected `}`
  --> line 3, column 14 of the WGSL of node `axpy`
   |
 3 |     y[i] = ŷ;
   |              ^";
        assert_eq!(render(&graph(), &d), expected);
    }

    #[test]
    fn a_range_inside_a_character_takes_the_whole_character() {
        // `ŷ` is two bytes; the range covers only its second.
        let inside = in_axpy("ŷ =").start + 1;
        let loc = wgsl(0, inside..inside + 1);
        assert_eq!(
            describe_loc(&graph(), &loc),
            "line 2, column 9 of the WGSL of node `axpy`"
        );
        let rendered = render(&graph(), &Diagnostic::new(loc, "m"));
        assert!(rendered.ends_with("\n   |         ^"), "{rendered}");
    }

    #[test]
    fn carets_keep_tabs_to_line_up() {
        let g = graph();
        let d = Diagnostic::new(wgsl(1, 13..16), "unused variable");
        let expected = "\
error: unused variable
  --> line 2, column 2 of the `.wgsl` file `kernels/k.wgsl` of node `k`
   |
 2 | \tlet v = 1;
   | \t^^^";
        assert_eq!(render(&g, &d), expected);
    }

    #[test]
    fn help_and_note_follow_the_location() {
        let d = Diagnostic::new(Loc::Access { node: 0, index: 0 }, "unknown buffer `x`")
            .with_help("did you mean `y`?")
            .with_note("first line\n\nthird line");
        let expected = "\
error: unknown buffer `x`
  --> access `x` of node `axpy`
   |
  = help: did you mean `y`?
  = note: first line

          third line";
        assert_eq!(render(&graph(), &d), expected);
    }

    #[test]
    fn a_snippet_with_help_and_an_empty_range() {
        let start = in_axpy("q").start;
        let d =
            Diagnostic::new(wgsl(0, start..start), "expected an expression").with_help("write one");
        let expected = "\
error: expected an expression
  --> line 2, column 31 of the WGSL of node `axpy`
   |
 2 |     let ŷ = params.a * x[i] + q;
   |                               ^
   |
  = help: write one";
        assert_eq!(render(&graph(), &d), expected);
    }

    #[test]
    fn the_gutter_widens_with_the_line_number() {
        let mut g = graph();
        let text = "\n".repeat(9) + "x";
        if let NodeKind::Kernel(k) = &mut g.nodes[0].kind {
            k.source = KernelSource::Wgsl { text, file: None };
        }
        let d = Diagnostic::new(wgsl(0, 9..10), "m").with_note("n");
        let expected = "\
error: m
   --> line 10, column 1 of the WGSL of node `axpy`
    |
 10 | x
    | ^
    |
   = note: n";
        assert_eq!(render(&g, &d), expected);
    }

    #[test]
    fn no_location_or_range_panics() {
        let g = graph();
        let big = [0, 1, 2, 4, 7, usize::MAX];
        let mut locs = vec![Loc::Graph, Loc::ParamsBlock];
        for &i in &big {
            locs.extend([
                Loc::Param(i),
                Loc::ParamType(i),
                Loc::Buffer(i),
                Loc::BufferType(i),
                Loc::Node(i),
                Loc::KernelSource(i),
                Loc::KernelEntry(i),
                Loc::Dispatch(i),
                Loc::Edge(i),
                Loc::EdgeFrom(i),
                Loc::EdgeTo(i),
            ]);
            for &j in &big {
                locs.extend([
                    Loc::Access { node: i, index: j },
                    Loc::AccessMode { node: i, index: j },
                    Loc::KernelArg { node: i, index: j },
                    Loc::SizeTerm {
                        node: i,
                        dim: j,
                        term: j,
                    },
                    wgsl(i, j..0),
                    wgsl(i, j..usize::MAX),
                ]);
            }
        }
        let len = AXPY.len();
        for start in 0..len + 2 {
            for end in 0..len + 2 {
                locs.push(wgsl(0, start..end));
            }
        }
        for loc in locs {
            let d = Diagnostic::new(loc, "m").with_help("h").with_note("");
            assert!(render(&g, &d).starts_with("error: m\n"));
        }
    }
}
