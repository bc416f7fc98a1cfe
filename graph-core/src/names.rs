//! Name checks: duplicates, unknown names and "did you mean" suggestions.

use std::collections::HashMap;

use crate::diagnostic::{Diagnostic, Diagnostics, Loc};

/// The closest candidate to `name`, if one is close enough to be a plausible typo (a swap of two letters
/// counts as one edit).
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(name, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// An unknown-name diagnostic, with a suggestion when one is close.
pub fn unknown<'a>(
    loc: Loc,
    what: &str,
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Diagnostic {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    let diagnostic = Diagnostic::new(loc, format!("unknown {what} `{}`", escaped(name)));
    match did_you_mean(name, candidates.iter().copied()) {
        Some(best) => diagnostic.with_help(format!("did you mean `{}`?", escaped(best))),
        None if candidates.is_empty() => {
            diagnostic.with_help(format!("this graph declares no {what}"))
        }
        None => diagnostic.with_help(format!(
            "the declared {what}s are {}",
            candidates
                .iter()
                .map(|c| format!("`{}`", escaped(c)))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// A name table built while reporting duplicates: the second declaration of a name is the error.
#[derive(Debug)]
pub struct NameTable<'a> {
    index: HashMap<&'a str, usize>,
    names: Vec<&'a str>,
}

impl<'a> NameTable<'a> {
    /// Indexes `names`; each repeat is reported at its own location, pointing back at the first.
    pub fn build(
        what: &str,
        names: impl IntoIterator<Item = &'a str>,
        loc: impl Fn(usize) -> Loc,
        diags: &mut Diagnostics,
    ) -> Self {
        let mut index = HashMap::new();
        let mut all = Vec::new();
        for (i, name) in names.into_iter().enumerate() {
            all.push(name);
            if index.contains_key(name) {
                diags.push(
                    Diagnostic::new(loc(i), format!("duplicate {what} `{}`", escaped(name)))
                        .with_help(format!(
                            "each {what} needs its own name; `{}` was declared earlier",
                            escaped(name)
                        )),
                );
            } else {
                index.insert(name, i);
            }
        }
        NameTable { index, names: all }
    }

    pub fn get(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.names.iter().copied()
    }

    /// Looks `name` up, reporting an unknown name at `loc`.
    pub fn resolve(
        &self,
        what: &str,
        name: &str,
        loc: Loc,
        diags: &mut Diagnostics,
    ) -> Option<usize> {
        let found = self.get(name);
        if found.is_none() {
            diags.push(unknown(loc, what, name, self.names()));
        }
        found
    }
}

/// Whether `name` is an identifier: a letter or `_`, then letters, digits and `_`, and not `_` alone, by
/// the rule Rust and WGSL share (Unicode's XID, read with the crate `proc-macro2` and naga read it with).
/// Every name in a graph is one: the macro's parser takes nothing else, kernels see buffers and parameters
/// by name, and sizes write buffer names; the builder and graph files are held to the same rule by the
/// checks ([`not_an_identifier`]).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(is_identifier_start);
    first_ok && name != "_" && chars.all(is_identifier_continue)
}

/// A character that may begin an identifier.
pub fn is_identifier_start(c: char) -> bool {
    c == '_' || unicode_ident::is_xid_start(c)
}

/// A character that may continue an identifier (digits and `_` included).
pub fn is_identifier_continue(c: char) -> bool {
    unicode_ident::is_xid_continue(c)
}

/// `name` refused as the name of `what` (`a node`), at `loc`: `why` says who reads the name.
pub fn not_an_identifier(loc: Loc, what: &str, name: &str, why: &str) -> Diagnostic {
    Diagnostic::new(loc, format!("{} cannot name {what}: {why}", shown(name)))
        .with_help("letters, digits and `_`, not starting with a digit: `blur_tmp`")
}

/// The most characters of a text a message quotes.
const SHOWN_CHARS: usize = 80;

/// A name or value as a message quotes it: in backticks, with control characters, line breaks and NUL
/// escaped as Rust writes them (`a\nb`), cut short when long; an empty one is "an empty name".
pub fn shown(text: &str) -> String {
    if text.is_empty() {
        return "an empty name".to_string();
    }
    format!("`{}`", escaped(text))
}

/// `text` with what a terminal would not show as written escaped ([`visible`]), cut to [`SHOWN_CHARS`]
/// characters.
pub fn escaped(text: &str) -> String {
    let mut out = visible(&text.chars().take(SHOWN_CHARS).collect::<String>());
    if text.chars().nth(SHOWN_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// `text` with NUL, line breaks, tabs and other control characters escaped as Rust writes them (`a\nb`),
/// and the invisible marks that reorder or hide text (zero-width, bidirectional, line and paragraph
/// separators) as `\u{..}`; printable text stays as it is (`ŷ`, `日本`). A diagnostic's message and help
/// go through it, so a name refused for holding one is still shown on one line, as it is.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\0' | '\t' | '\n' | '\r' => out.extend(c.escape_debug()),
            c if c.is_control()
                || (c.is_whitespace() && c != ' ')
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}') =>
            {
                out.extend(c.escape_unicode())
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(did_you_mean("axpyy", ["axpy", "scale"]), Some("axpy"));
        assert_eq!(did_you_mean("zzz", ["axpy", "scale"]), None);
    }

    #[test]
    fn reports_the_second_declaration() {
        let mut diags = Diagnostics::default();
        let table = NameTable::build("node", ["a", "b", "a"], Loc::Node, &mut diags);
        let list = diags.into_vec();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].loc, Loc::Node(2));
        assert_eq!(table.get("a"), Some(0));
    }

    #[test]
    fn identifiers_are_what_rust_and_wgsl_read_as_one() {
        for name in ["x", "blur_tmp", "_x", "x1", "ŷ", "日本", "__pad"] {
            assert!(is_identifier(name), "{name:?}");
        }
        for name in [
            "",
            "_",
            "1x",
            "a b",
            "a\0",
            "x\n",
            "a-b",
            "x.len()",
            "½",
            "a\u{2028}",
        ] {
            assert!(!is_identifier(name), "{name:?}");
        }
    }

    #[test]
    fn a_shown_name_escapes_what_would_not_print_and_is_cut_short() {
        assert_eq!(shown(""), "an empty name");
        assert_eq!(shown("a b"), "`a b`");
        assert_eq!(shown("a\0b\n"), "`a\\0b\\n`");
        assert_eq!(shown("ŷ"), "`ŷ`");
        assert_eq!(shown("a\u{202e}b\u{2028}"), "`a\\u{202e}b\\u{2028}`");
        let long = shown(&"x".repeat(100));
        assert!(long.ends_with("…`") && long.chars().count() < 90, "{long}");
    }

    #[test]
    fn unknown_lists_candidates_when_none_is_close() {
        let d = unknown(Loc::Graph, "buffer", "q", ["alpha", "beta"]);
        assert_eq!(
            d.help.as_deref(),
            Some("the declared buffers are `alpha`, `beta`")
        );
    }
}
