//! Diagnostics with abstract locations: the macro turns a [`Loc`] into a span, a run-time builder into words.

use std::fmt;
use std::ops::Range;

use crate::names::visible;

/// What a diagnostic points at. Indices are positions in the [`crate::ir::Graph`] vectors.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Loc {
    /// The graph as a whole (its name).
    Graph,
    /// The `params { .. }` block.
    ParamsBlock,
    Param(usize),
    ParamType(usize),
    Buffer(usize),
    BufferType(usize),
    /// A node's name.
    Node(usize),
    /// The buffer named in a node's access list.
    Access {
        node: usize,
        index: usize,
    },
    /// The access mode (`read`, `write`, `read_write`) of a node's access.
    AccessMode {
        node: usize,
        index: usize,
    },
    /// A library kernel's argument (`alpha: params.a`).
    KernelArg {
        node: usize,
        index: usize,
    },
    /// The kernel's source: inline body, `.wgsl` path or library path.
    KernelSource(usize),
    /// The `entry(..)` clause.
    KernelEntry(usize),
    /// The `threads(..)` / `workgroups(..)` clause.
    Dispatch(usize),
    /// A term of one dimension of a dispatch size, numbered in preorder (see [`crate::size::SizeExpr`]).
    SizeTerm {
        node: usize,
        dim: usize,
        term: usize,
    },
    /// A byte range of a kernel's own WGSL text (not the generated declarations).
    Wgsl {
        node: usize,
        range: Range<usize>,
    },
    /// A group of alternatives, by its name.
    Alternatives(usize),
    /// A block under GPU control (`if`, `repeat`), by its name.
    Block(usize),
    /// An explicit edge, whole.
    Edge(usize),
    EdgeFrom(usize),
    EdgeTo(usize),
}

/// One problem found in a graph. A diagnostic made and dropped is a mistake lost: it must be pushed into the
/// run's [`Diagnostics`].
#[must_use = "a diagnostic must be reported: push it into the run's `Diagnostics`"]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub loc: Loc,
    pub message: String,
    /// What to do about it, when we know.
    pub help: Option<String>,
    /// Extra text to show as is, such as naga's rendering of a WGSL error in a file.
    pub note: Option<String>,
}

impl Diagnostic {
    /// A diagnostic at `loc`. The message quotes what the user wrote, which may hold anything (a graph file's
    /// name with a NUL or a line break): what would not show as written is escaped ([`visible`]).
    pub fn new(loc: Loc, message: impl Into<String>) -> Self {
        Diagnostic {
            loc,
            message: visible(&message.into()),
            help: None,
            note: None,
        }
    }

    /// What to do; escaped as the message is.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(visible(&help.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// The message with its help and note, as one text for a compile error or an `Err`.
    pub fn full_message(&self) -> String {
        let mut text = self.message.clone();
        if let Some(help) = &self.help {
            text.push_str("\nhelp: ");
            text.push_str(help);
        }
        if let Some(note) = &self.note {
            text.push_str("\nnote: ");
            text.push_str(note);
        }
        text
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.full_message())
    }
}

/// Collects every diagnostic of a check run, so all are reported at once: the one sink from the checks to
/// the renderers (spans in the macro, words in the builder and the file loader).
#[must_use = "the diagnostics of a run must be reported: call `into_vec`"]
#[derive(Debug, Default)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.list.push(diagnostic);
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.list
    }
}
