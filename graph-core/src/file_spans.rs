//! Where each part of a graph is written in its graph file, so that a diagnostic's [`Loc`] can point at the
//! file's line and column rather than name the node in words.
//!
//! serde reads the graph (the IR) and keeps no positions; the file is parsed a second time here, with
//! `jsonc-parser`, only to find the byte range of the JSON value a location stands for (`nodes[3].kernel
//! .accesses[1].buffer`). A location whose value is not written (a field left to its default) points at the
//! nearest enclosing value that is. WGSL locations point into the kernel's `.wgsl` file, or through the JSON
//! string's escapes into the inline text.
//!
//! The file may be anything a user was given: nothing here panics on a location or a text that do not agree.

use std::ops::Range;
use std::path::{Path, PathBuf};

use jsonc_parser::ast::{Object, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};

use crate::diagnostic::Loc;
use crate::file::LoadError;
use crate::ir::{Graph, KernelSource, NodeKind};

/// A graph file's text, kept to point the diagnostics of its graph into.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The file as named to the user (`graphs/blur.json`).
    pub name: String,
    pub text: String,
    /// The folder the kernels' `.wgsl` file names are relative to.
    pub base: PathBuf,
}

impl SourceFile {
    /// The graph file at `path`.
    pub fn read(path: &Path) -> Result<SourceFile, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|e| LoadError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Ok(SourceFile::new(path, text))
    }

    /// A graph file's `text`, named by its `path`.
    pub fn new(path: &Path, text: impl Into<String>) -> SourceFile {
        SourceFile {
            name: path.display().to_string(),
            text: text.into(),
            base: path.parent().unwrap_or(Path::new("")).to_path_buf(),
        }
    }

    /// The name a kernel's `.wgsl` file is shown by: relative to the graph file, as it was read.
    pub fn wgsl_name(&self, file: &str) -> String {
        self.base.join(file).display().to_string()
    }
}

/// Where a location is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A byte range of the graph file.
    Json(Range<usize>),
    /// A byte range of the `.wgsl` file (as named in the graph) that node `node`'s kernel is read from.
    WgslFile { node: usize, range: Range<usize> },
}

/// The JSON values of a graph file, by their byte ranges.
#[derive(Debug)]
pub struct FileSpans<'t> {
    text: &'t str,
    root: Option<Value<'t>>,
}

/// One step of a path from the file's root to a value.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
    /// The key of an object other than `name`: a node's kind (`"kernel": {..}`), a source's (`"wgsl"`).
    Kind,
}

use Step::{Index, Key, Kind};

impl<'t> FileSpans<'t> {
    /// The spans of `text`; a text that is not JSON has none, and every location is then the whole file.
    pub fn parse(text: &'t str) -> Self {
        let root = parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
            .ok()
            .and_then(|parsed| parsed.value);
        FileSpans { text, root }
    }

    /// Where `loc` of `graph` (the graph this file holds) is written.
    pub fn locate(&self, graph: &Graph, loc: &Loc) -> Place {
        if let Loc::Wgsl { node, range } = loc
            && let Some(place) = self.locate_wgsl(graph, *node, range)
        {
            return place;
        }
        Place::Json(self.range_of(&json_path(graph, loc)))
    }

    fn locate_wgsl(&self, graph: &Graph, node: usize, range: &Range<usize>) -> Option<Place> {
        let NodeKind::Kernel(kernel) = &graph.nodes.get(node)?.kind else {
            return None;
        };
        let KernelSource::Wgsl { file, .. } = &kernel.source else {
            return None;
        };
        // A file saved by `to_json` holds the text of a `.wgsl` file kernel too, and `load` reads that.
        let Some(value) = self.inline_wgsl(node) else {
            return (file.is_some() && self.wgsl_read_from_file(node)).then(|| Place::WgslFile {
                node,
                range: range.clone(),
            });
        };
        let literal = value.as_string_lit()?;
        // Inside the quotes; a string the parser took is at least its two quotes.
        let inner = literal.range.start + 1
            ..literal
                .range
                .end
                .saturating_sub(1)
                .max(literal.range.start + 1);
        let raw = self.text.get(inner.clone())?;
        let start = inner.start + raw_offset(raw, range.start);
        let end = inner.start + raw_offset(raw, range.end.max(range.start));
        Some(Place::Json(start..end))
    }

    /// The kernel text of node `n` written in the file, when it is (not empty). serde also reads a struct
    /// from an array of its fields in order, so `"wgsl": ["text", "file"]` holds its text first.
    pub fn inline_wgsl(&self, n: usize) -> Option<&Value<'t>> {
        let text = match self.wgsl_source(n)? {
            Value::Array(array) => array.elements.first(),
            source => child(source, Key("text")),
        };
        text.filter(|v| v.as_string_lit().is_some_and(|s| !s.value.is_empty()))
    }

    /// Whether node `n`'s kernel text was read from the `.wgsl` file it names: its source is written as an
    /// object without text. When the source's shape is not the one `to_json` writes, the text may have come
    /// from the graph file itself, and a mistake in it is shown there, never under the name of a file that
    /// was not read.
    pub fn wgsl_read_from_file(&self, n: usize) -> bool {
        matches!(self.wgsl_source(n), Some(source @ Value::Object(_)) if self.inline_wgsl(n).is_none()
            && child(source, Key("file")).is_some())
    }

    /// The `"wgsl"` value of node `n`'s kernel source, when the path to it is written as objects.
    fn wgsl_source(&self, n: usize) -> Option<&Value<'t>> {
        let path = [
            Key("graph"),
            Key("nodes"),
            Index(n),
            Key("kernel"),
            Key("source"),
            Key("wgsl"),
        ];
        self.value_at(&path)
    }

    /// The value at the end of `path`, when every step of it is written.
    fn value_at(&self, path: &[Step<'_>]) -> Option<&Value<'t>> {
        let mut value = self.root.as_ref()?;
        for step in path {
            value = child(value, *step)?;
        }
        Some(value)
    }

    /// The range of the deepest value along `path` that is written; the whole text without one.
    fn range_of(&self, path: &[Step<'_>]) -> Range<usize> {
        let Some(mut value) = self.root.as_ref() else {
            return 0..self.text.len();
        };
        for step in path {
            match child(value, *step) {
                Some(next) => value = next,
                None => break,
            }
        }
        let range = value.range();
        range.start..range.end
    }
}

fn child<'v, 't>(value: &'v Value<'t>, step: Step<'_>) -> Option<&'v Value<'t>> {
    match (value, step) {
        (Value::Object(object), Key(key)) => object.get(key).map(|p| &p.value),
        (Value::Object(object), Kind) => kind_of(object),
        (Value::Array(array), Index(i)) => array.elements.get(i),
        _ => None,
    }
}

fn kind_of<'v, 't>(object: &'v Object<'t>) -> Option<&'v Value<'t>> {
    object
        .properties
        .iter()
        .find(|p| p.name.as_str() != "name")
        .map(|p| &p.value)
}

/// The path to the JSON value `loc` stands for (see the format in [`crate::file`]).
fn json_path<'g>(graph: &'g Graph, loc: &Loc) -> Vec<Step<'g>> {
    let mut path = vec![Key("graph")];
    let node_path = |n: usize| [Key("graph"), Key("nodes"), Index(n)];
    match loc {
        Loc::Graph => path.push(Key("name")),
        Loc::ParamsBlock => path.push(Key("params")),
        Loc::Param(i) => path.extend([Key("params"), Index(*i), Key("name")]),
        Loc::ParamType(i) => path.extend([Key("params"), Index(*i), Key("type")]),
        Loc::Buffer(i) => path.extend([Key("buffers"), Index(*i), Key("name")]),
        // A texture's type is its `texture`, a sampler's its `sampler` (format 2); in format 1 a texture's
        // lookup stops at the entry.
        Loc::BufferType(i) => {
            let elem = graph.buffers.get(*i).map(|b| b.elem.as_str());
            let key = match elem {
                Some(e) if crate::texture::TextureType::is_texture_text(e) => "texture",
                Some(e) if crate::texture::SamplerType::is_sampler_text(e) => "sampler",
                _ => "elem",
            };
            path.extend([Key("buffers"), Index(*i), Key(key)])
        }
        Loc::Node(n) => path.extend([Key("nodes"), Index(*n), Key("name")]),
        Loc::Access { node, index } | Loc::AccessMode { node, index } => {
            path = node_path(*node).to_vec();
            path.push(Kind);
            let field = if matches!(loc, Loc::Access { .. }) {
                "buffer"
            } else {
                "mode"
            };
            match graph.nodes.get(*node).map(|n| &n.kind) {
                // Copies, fills, uploads and readbacks name their buffers as fields.
                Some(NodeKind::Copy { .. }) => {
                    path.push(Key(if *index == 0 { "src" } else { "dst" }))
                }
                Some(NodeKind::Fill { .. } | NodeKind::Upload { .. }) => path.push(Key("dst")),
                Some(NodeKind::Readback { .. }) => path.push(Key("src")),
                _ => path.extend([Key("accesses"), Index(*index), Key(field)]),
            }
        }
        Loc::KernelArg { node, index } => {
            path = node_path(*node).to_vec();
            path.push(Kind);
            match graph.nodes.get(*node).map(|n| &n.kind) {
                Some(NodeKind::Fill { .. }) => path.push(Key("value")),
                _ => path.extend([Key("args"), Index(*index), Key("value")]),
            }
        }
        Loc::KernelSource(n) | Loc::Wgsl { node: n, .. } => {
            path = node_path(*n).to_vec();
            path.extend([Kind, Key("source"), Kind, Kind]);
        }
        Loc::KernelEntry(n) => {
            path = node_path(*n).to_vec();
            path.extend([Kind, Key("entry")]);
        }
        Loc::Dispatch(n) => {
            path = node_path(*n).to_vec();
            path.extend([Kind, Key("dispatch")]);
        }
        Loc::SizeTerm { node, dim, .. } => {
            // A size is one JSON string: its terms have no range of their own, so the whole size is shown.
            path = node_path(*node).to_vec();
            path.push(Kind);
            match graph.nodes.get(*node).map(|n| &n.kind) {
                Some(NodeKind::Kernel(_)) => path.extend([Key("dispatch"), Kind, Index(*dim)]),
                Some(NodeKind::Copy { .. }) => path.extend([
                    Key(if *dim < 2 { "src_range" } else { "dst_range" }),
                    Key(if dim % 2 == 0 { "start" } else { "end" }),
                ]),
                _ => path.extend([
                    Key("range"),
                    Key(if dim % 2 == 0 { "start" } else { "end" }),
                ]),
            }
        }
        Loc::Alternatives(i) => path.extend([Key("alternatives"), Index(*i), Key("name")]),
        Loc::Block(i) => path.extend([Key("blocks"), Index(*i), Key("name")]),
        Loc::Edge(i) => path.extend([Key("edges"), Index(*i)]),
        Loc::EdgeFrom(i) => path.extend([Key("edges"), Index(*i), Key("from")]),
        Loc::EdgeTo(i) => path.extend([Key("edges"), Index(*i), Key("to")]),
    }
    path
}

/// The byte offset in `raw`, the text of a JSON string between its quotes, of byte `decoded` of the string it
/// stands for: escapes (`\n`, `\"`, `\u00e9`, surrogate pairs) are one character of the string but several
/// bytes of the file. An offset past the string is its end.
fn raw_offset(raw: &str, decoded: usize) -> usize {
    let mut chars = raw.char_indices().peekable();
    let mut at = 0;
    while let Some((i, c)) = chars.next() {
        if at >= decoded {
            return i;
        }
        at += if c == '\\' {
            match chars.next() {
                Some((u, 'u')) => {
                    let code = hex4(&mut chars);
                    // A high surrogate and the low one after it are one character of four bytes.
                    let low_follows = raw.get(u + 5..).is_some_and(|rest| rest.starts_with("\\u"));
                    if (0xD800..0xDC00).contains(&code) && low_follows {
                        chars.next();
                        chars.next();
                        hex4(&mut chars);
                        4
                    } else {
                        char::from_u32(code).map_or(3, char::len_utf8)
                    }
                }
                _ => 1,
            }
        } else {
            c.len_utf8()
        };
    }
    raw.len()
}

/// The code of the four hex digits after `\u`; the digits are consumed, whatever they are.
fn hex4(chars: &mut impl Iterator<Item = (usize, char)>) -> u32 {
    chars
        .take(4)
        .fold(0, |code, (_, c)| code * 16 + c.to_digit(16).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_escapes_as_the_characters_they_stand_for() {
        // `a\nb\"é\u00e9😀\ud83d\ude00c`: decoded, a=0 \n=1 b=2 "=3 é=4..6 é=6..8 😀=8..12 😀=12..16 c=16.
        let raw = r#"a\nb\"é\u00e9😀\ud83d\ude00c"#;
        let cases = [
            (0, 0),
            (1, 1),
            (2, 3),
            (3, 4),
            (4, 6),
            (6, 8),
            (8, 14),
            (12, 18),
            (16, 30),
            (17, 31),
            (99, 31),
        ];
        for (decoded, expected) in cases {
            assert_eq!(raw_offset(raw, decoded), expected, "byte {decoded}");
        }
    }
}
