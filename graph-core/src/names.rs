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
    let diagnostic = Diagnostic::new(loc, format!("unknown {what} `{name}`"));
    match did_you_mean(name, candidates.iter().copied()) {
        Some(best) => diagnostic.with_help(format!("did you mean `{best}`?")),
        None if candidates.is_empty() => {
            diagnostic.with_help(format!("this graph declares no {what}"))
        }
        None => diagnostic.with_help(format!(
            "the declared {what}s are {}",
            candidates
                .iter()
                .map(|c| format!("`{c}`"))
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
                    Diagnostic::new(loc(i), format!("duplicate {what} `{name}`")).with_help(
                        format!("each {what} needs its own name; `{name}` was declared earlier"),
                    ),
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

/// Whether `name` can name a buffer or a parameter: kernels see it as a WGSL identifier, and sizes in
/// graph files write it as one (letters, digits and `_`, not starting with a digit, not `_` alone).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_');
    first_ok && name != "_" && chars.all(|c| c.is_alphanumeric() || c == '_')
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
    fn unknown_lists_candidates_when_none_is_close() {
        let d = unknown(Loc::Graph, "buffer", "q", ["alpha", "beta"]);
        assert_eq!(
            d.help.as_deref(),
            Some("the declared buffers are `alpha`, `beta`")
        );
    }
}
