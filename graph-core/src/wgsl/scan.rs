//! A small WGSL scanner that finds `params.NAME` in a kernel, so an unknown parameter gets our own error
//! (with a suggestion) at the name itself, before naga reports a missing struct member.

use std::ops::Range;

/// One `params.name` in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamUse {
    pub name: String,
    /// The byte range of `name`.
    pub range: Range<usize>,
    /// The byte range of the whole access, `params` to the end of `name`.
    pub access: Range<usize>,
}

/// Every `params . ident` outside comments, in order.
pub fn param_uses(text: &str) -> Vec<ParamUse> {
    let tokens = identifiers_and_dots(text);
    tokens
        .windows(3)
        .filter_map(|w| match w {
            [Tok::Ident(a, base), Tok::Dot, Tok::Ident(name, range)] if *a == "params" => {
                Some(ParamUse {
                    name: name.to_string(),
                    range: range.clone(),
                    access: base.start..range.end,
                })
            }
            _ => None,
        })
        .collect()
}

enum Tok<'a> {
    Ident(&'a str, Range<usize>),
    Dot,
    Other,
}

fn identifiers_and_dots(text: &str) -> Vec<Tok<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
        } else if text[i..].starts_with("/*") {
            i = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| i + 2 + n + 2);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(&text[start..i], start..i));
        } else if c.is_ascii_digit() {
            // Skip whole numbers, `1.5f` included, so their dots are not member access.
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Other);
        } else {
            if c == b'.' {
                out.push(Tok::Dot);
            } else if !c.is_ascii_whitespace() {
                out.push(Tok::Other);
            }
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_member_accesses_outside_comments() {
        let text = "let a = params . alpha * 1.5f; // params.nope\n/* params.no */ y = params.n;";
        let uses = param_uses(text);
        let names: Vec<&str> = uses.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(names, vec!["alpha", "n"]);
        assert_eq!(&text[uses[0].range.clone()], "alpha");
    }
}
