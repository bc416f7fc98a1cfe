//! Diagnostics as text for a person, for front ends that have no spans to point at (a run-time builder, a
//! graph file), laid out by `codespan-reporting` (naga's own renderer) like rustc's errors.
//!
//! A graph file's diagnostics point at the file's line and column (and into its `.wgsl` files): see
//! [`render_in_file`]. A builder's have no file: a WGSL mistake is shown in the kernel's text, any other
//! location is said in words.
//!
//! A diagnostic may come from a buggy or hostile input, so any index in a [`Loc`] may be out of range and a
//! WGSL byte range may run past the text or split a character. Nothing here panics: an index that names
//! nothing is given as the number it is (`node 7`), and a range is clamped to the text's character boundaries.

use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as Report, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, Chars, Config};

use crate::diagnostic::{Diagnostic, Loc};
use crate::file_spans::{FileSpans, Place, SourceFile};
use crate::ir::{self, KernelSource, NodeKind};

/// The files a diagnostic's snippets are taken from, by id.
type Files<'t> = SimpleFiles<String, &'t str>;

/// A builder's diagnostic as text for a person: the message, then the line of WGSL it points at (or where
/// it is, in words), then its help and note. The text has no trailing newline.
pub fn render(graph: &ir::Graph, diagnostic: &Diagnostic) -> String {
    let mut files = Files::new();
    let mut labels = Vec::new();
    let mut words = Some(describe_loc(graph, &diagnostic.loc));
    if let Loc::Wgsl { node, range } = &diagnostic.loc
        && let Some(text) = own_wgsl(graph, *node)
    {
        // A kernel read from a `.wgsl` file is shown by the file's name, inline WGSL by its node.
        let name = match kernel(graph, *node).map(|k| &k.source) {
            Some(KernelSource::Wgsl {
                file: Some(path), ..
            }) => path.clone(),
            _ => source_words(graph, *node),
        };
        let id = files.add(name, text);
        labels.push(Label::primary(id, clamp(text, range)));
        words = None;
    }
    emit(&files, diagnostic, labels, words)
}

/// Each of a graph file's diagnostics as text for a person, pointing at the line and column of `source`
/// (the file `graph` was loaded from) where its mistake is written, or of the `.wgsl` file it names. The
/// texts have no trailing newline.
pub fn render_in_file(
    graph: &ir::Graph,
    diagnostics: &[Diagnostic],
    source: &SourceFile,
) -> Vec<String> {
    let spans = FileSpans::parse(&source.text);
    let mut files = Files::new();
    let json = files.add(source.name.clone(), &source.text);
    // Each kernel's WGSL, by node: its `.wgsl` file (whose text was read into the graph when it was loaded),
    // or its inline text, shown as is beside the escaped JSON string it is written in.
    let kernel_files: Vec<Option<usize>> = (0..graph.nodes.len())
        .map(|n| match kernel(graph, n).map(|k| &k.source) {
            Some(KernelSource::Wgsl { text, file }) => {
                let name = match file {
                    Some(file) if spans.wgsl_read_from_file(n) => source.wgsl_name(file),
                    _ => source_words(graph, n),
                };
                Some(files.add(name, text.as_str()))
            }
            _ => None,
        })
        .collect();
    let in_kernel = |node: usize, range: &Range<usize>| {
        let id = kernel_files.get(node).copied().flatten()?;
        Some((id, clamp(own_wgsl(graph, node)?, range)))
    };
    diagnostics
        .iter()
        .map(|d| {
            let words = describe_loc(graph, &d.loc);
            let mut labels = Vec::new();
            match spans.locate(graph, &d.loc) {
                Place::Json(range) => {
                    labels.push(
                        Label::primary(json, clamp(&source.text, &range)).with_message(words),
                    );
                    if let Loc::Wgsl { node, range } = &d.loc
                        && let Some((id, range)) = in_kernel(*node, range)
                    {
                        labels.push(Label::secondary(id, range));
                    }
                }
                Place::WgslFile { node, range } => {
                    let (id, range) = in_kernel(node, &range).unwrap_or((json, 0..0));
                    labels.push(Label::primary(id, range.clone()).with_message(words));
                    // The checks add the `.wgsl` file's line as a note for the macro, which cannot point
                    // into that file; here the snippet shows it already.
                    if repeats_snippet(graph, node, &range, d.note.as_deref()) {
                        let mut d = d.clone();
                        d.note = None;
                        return emit(&files, &d, labels, None);
                    }
                }
            }
            emit(&files, d, labels, None)
        })
        .collect()
}

/// Whether `note` is only the checks' `file:LINE:COLUMN` snippet of `range` of node `n`'s `.wgsl` file.
fn repeats_snippet(graph: &ir::Graph, n: usize, range: &Range<usize>, note: Option<&str>) -> bool {
    let (Some(note), Some(text)) = (note, own_wgsl(graph, n)) else {
        return false;
    };
    let Some(KernelSource::Wgsl {
        file: Some(file), ..
    }) = kernel(graph, n).map(|k| &k.source)
    else {
        return false;
    };
    let (line, column) = line_and_column(text, range.start);
    note.starts_with(&format!("{file}:{line}:{column}\n"))
}

/// `diagnostic` laid out with `labels` into `files`, and where it is in `words` when no label says it.
fn emit(
    files: &Files<'_>,
    diagnostic: &Diagnostic,
    labels: Vec<Label<usize>>,
    words: Option<String>,
) -> String {
    let notes = [
        words.map(|w| format!("at {w}")),
        diagnostic.help.as_ref().map(|h| format!("help: {h}")),
        diagnostic.note.as_ref().map(|n| format!("note: {n}")),
    ];
    let report = Report::error()
        .with_message(&diagnostic.message)
        .with_labels(labels)
        .with_notes(notes.into_iter().flatten().collect());
    // Text for an `Err` or a log as much as for a terminal: no colours, and characters any terminal has.
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    match term::emit_into_string(&config, files, &report) {
        Ok(text) => {
            let head = format!("error: {}", diagnostic.message);
            match text.strip_prefix(&head) {
                // The message as given (a hostile name may end a line of it with spaces); after it, the
                // spaces codespan indents a note's blank lines with are dropped.
                Some(rest) => {
                    let rest: Vec<&str> = rest.trim_end().lines().map(str::trim_end).collect();
                    format!("{head}{}", rest.join("\n"))
                }
                None => text.trim_end().to_string(),
            }
        }
        // Only a range outside its file fails, and ranges are clamped: the words are still worth giving.
        Err(_) => diagnostic.full_message(),
    }
}

/// `range` within `text`, on its character boundaries: a reversed range is taken as empty, an end inside a
/// character takes the whole character.
fn clamp(text: &str, range: &Range<usize>) -> Range<usize> {
    let start = floor_char_boundary(text, range.start);
    start..ceil_char_boundary(text, range.end.max(start))
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
        Loc::BufferType(i) => match graph.buffers.get(*i) {
            Some(b)
                if crate::texture::TextureType::is_texture_text(&b.elem)
                    || crate::texture::SamplerType::is_sampler_text(&b.elem) =>
            {
                format!("the type of {}", buffer_words(graph, *i))
            }
            _ => format!("the element type of {}", buffer_words(graph, *i)),
        },
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
                    let (line, column) = line_and_column(text, range.start);
                    format!("line {line}, column {column} of {source}")
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
    let buffer = graph.buffers.get(i);
    let what = match buffer {
        Some(b) if crate::texture::TextureType::is_texture_text(&b.elem) => "texture",
        Some(b) if crate::texture::SamplerType::is_sampler_text(&b.elem) => "sampler",
        _ => "buffer",
    };
    named(what, buffer.map(|b| b.name.as_str()), i)
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

/// The 1-based line and column (in characters) of byte `index` of `text`.
fn line_and_column(text: &str, index: usize) -> (usize, usize) {
    let before = text.get(..floor_char_boundary(text, index)).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).unwrap_or("").chars().count() + 1;
    (before.matches('\n').count() + 1, column)
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
            overrides: Vec::new(),
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
        assert_eq!(render(&g, &d), "error: node 7 is broken\n = at node 7");
        // No text to show a line of: no snippet.
        let d = Diagnostic::new(wgsl(7, 0..4), "bad WGSL");
        assert_eq!(render(&g, &d), "error: bad WGSL\n = at the WGSL of node 7");
    }

    #[test]
    fn wgsl_columns_count_characters() {
        let d = Diagnostic::new(
            wgsl(0, in_axpy("q")),
            "no definition in scope for identifier: `q`",
        );
        let expected = "\
error: no definition in scope for identifier: `q`
  --> the WGSL of node `axpy`:2:31
  |
2 |     let ŷ = params.a * x[i] + q;
  |                               ^";
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
        assert!(rendered.ends_with("\n  |         ^"), "{rendered}");
    }

    #[test]
    fn a_range_past_the_text_points_at_its_end() {
        let rendered = render(
            &graph(),
            &Diagnostic::new(wgsl(0, 500..600), "expected `}`"),
        );
        assert!(
            rendered.contains("--> the WGSL of node `axpy`:3:14"),
            "{rendered}"
        );
    }

    #[test]
    fn a_kernel_of_a_wgsl_file_is_shown_by_the_file_name() {
        let d = Diagnostic::new(wgsl(1, 13..16), "unused variable").with_help("write one");
        let expected = "\
error: unused variable
  --> kernels/k.wgsl:2:2
  |
2 |     let v = 1;
  |     ^^^
  |
  = help: write one";
        assert_eq!(render(&graph(), &d), expected);
    }

    #[test]
    fn help_and_note_follow_the_location() {
        let d = Diagnostic::new(Loc::Access { node: 0, index: 0 }, "unknown buffer `x`")
            .with_help("did you mean `y`?")
            .with_note("first line\n\nthird line");
        let expected = "\
error: unknown buffer `x`
 = at access `x` of node `axpy`
 = help: did you mean `y`?
 = note: first line

   third line";
        assert_eq!(render(&graph(), &d), expected);
    }

    /// A graph file of [`graph`]'s nodes `axpy` and `k`, with an escaped inline kernel.
    const FILE: &str = r#"{"format": 1, "graph": {"name": "G",
  "buffers": [{"name": "x", "elem": "f32", "role": "input"}],
  "nodes": [
    {"name": "axpy", "kernel": {"accesses": [{"buffer": "x", "mode": "read"}],
      "source": {"wgsl": {"text": "fn main() {\n\t\"é\"; let q = 1;\n}"}}}},
    {"name": "k", "kernel": {"accesses": [{"buffer": "y", "mode": "write"}],
      "source": {"wgsl": {"file": "k.wgsl"}}}},
    {"name": "zero", "fill": {"dst": "x", "value": "0.0", "range": {"end": "x.len() - 1"}}}
  ]}}"#;

    fn file_graph() -> Graph {
        let mut g = crate::file::from_json(&FILE.replace("\"file\": \"k.wgsl\"", "\"text\": \"\""))
            .unwrap_or_default();
        // As `file::load` leaves it: the `.wgsl` file's text read into the graph.
        if let Some(NodeKind::Kernel(k)) = g.nodes.get_mut(1).map(|n| &mut n.kind) {
            k.source = KernelSource::Wgsl {
                text: "fn main() {\n\tlet v = 1;\n}".into(),
                file: Some("k.wgsl".into()),
            };
        }
        g
    }

    fn in_file(loc: Loc) -> String {
        let source = SourceFile::new(std::path::Path::new("dir/g.json"), FILE);
        let d = Diagnostic::new(loc, "m");
        render_in_file(&file_graph(), &[d], &source).concat()
    }

    #[test]
    fn a_file_diagnostic_points_at_its_line_and_column() {
        let g = file_graph();
        assert_eq!(g.nodes.len(), 3, "{g:?}");
        // Where the first `needle` of the file starts, as `dir/g.json:LINE:COLUMN`.
        let at = |needle: &str| {
            let start = FILE.find(needle).unwrap_or(usize::MAX);
            let (line, column) = line_and_column(FILE, start);
            format!("dir/g.json:{line}:{column}")
        };
        let cases = [
            (Loc::Graph, at(r#""G""#)),
            (Loc::Buffer(0), at(r#""x", "elem""#)),
            (Loc::Access { node: 1, index: 0 }, at(r#""y""#)),
            (Loc::AccessMode { node: 0, index: 0 }, at(r#""read""#)),
            (Loc::Node(2), at(r#""zero""#)),
            (Loc::KernelArg { node: 2, index: 0 }, at(r#""0.0""#)),
            (Loc::Access { node: 2, index: 0 }, at(r#""x", "value""#)),
            (
                Loc::SizeTerm {
                    node: 2,
                    dim: 1,
                    term: 0,
                },
                at(r#""x.len() - 1""#),
            ),
            // `entry` is not written: the kernel it would be part of.
            (Loc::KernelEntry(0), at(r#"{"accesses""#)),
            // `q` of `let q`, after the escaped `\n\t\"é\"; let `.
            (wgsl(0, 23..24), at("q = 1")),
            (wgsl(1, 13..16), "dir/k.wgsl:2:2".to_string()),
            // No node 9: the nodes.
            (Loc::Node(9), at("[\n    {")),
        ];
        for (loc, expected) in cases {
            let rendered = in_file(loc.clone());
            assert!(
                rendered.contains(&format!("--> {expected}\n")),
                "{loc:?}: {expected}\n{rendered}"
            );
        }
        let rendered = in_file(wgsl(1, 13..16));
        assert!(
            rendered.contains("^^^ line 2, column 2 of the `.wgsl` file `k.wgsl` of node `k`"),
            "{rendered}"
        );
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
            let d = Diagnostic::new(loc.clone(), "m")
                .with_help("h")
                .with_note("");
            assert!(render(&g, &d).starts_with("error: m\n"));
            assert!(in_file(loc).starts_with("error: m\n"));
        }
    }
}
