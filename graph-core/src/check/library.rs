//! Library kernels: the kernel exists, and is given each binding and argument once, with the right types.

use super::Checker;
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{AccessMode, KernelSource, NodeKind};
use crate::library::GENERIC;
use crate::names::{did_you_mean, escaped, unknown};
use crate::types::ValueType;

impl Checker<'_> {
    /// A library kernel exists, gets each of its bindings and arguments once, and gets buffers of its types;
    /// its accesses take the library's modes.
    pub(super) fn check_library_bindings(&mut self) {
        for (n, node) in self.graph.nodes.iter().enumerate() {
            let NodeKind::Kernel(kernel) = &node.kind else {
                continue;
            };
            let KernelSource::Library(path) = &kernel.source else {
                continue;
            };
            let Some(lib) = self.library.get(path) else {
                let mut d = unknown(
                    Loc::KernelSource(n),
                    "library kernel",
                    &format!("kernels::{path}"),
                    [],
                );
                d = d.with_help(match did_you_mean(path, self.library.paths()) {
                    Some(best) => format!("did you mean `kernels::{best}`?"),
                    None => format!(
                        "the library has {}",
                        self.library
                            .paths()
                            .map(|p| format!("`kernels::{p}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
                self.diags.push(d);
                // Without the library's modes the accesses mean nothing: drop them rather than guess.
                self.accesses[n].iter_mut().for_each(|a| *a = None);
                continue;
            };
            let errors_before = self.diags.len();
            // A misspelt name is suggested among the names not given yet.
            let unbound: Vec<&str> = lib
                .bindings
                .iter()
                .map(|b| b.name)
                .filter(|name| !kernel.accesses.iter().any(|a| a.binding == *name))
                .collect();
            // A name suggested for a misspelling is not reported missing as well: one typo, one error.
            let mut suggested: Vec<&str> = Vec::new();
            // The type of the generic bindings, and the buffer that set it.
            let mut generic: Option<(ValueType, &str)> = None;
            for (i, access) in kernel.accesses.iter().enumerate() {
                let loc = Loc::Access { node: n, index: i };
                let Some(binding) = lib.bindings.iter().find(|b| b.name == access.binding) else {
                    let all: Vec<&str> = lib.bindings.iter().map(|b| b.name).collect();
                    suggested.extend(did_you_mean(&access.binding, unbound.iter().copied()));
                    let d = misspelt(
                        Loc::AccessMode { node: n, index: i },
                        "binding",
                        format!(
                            "`kernels::{path}` has no binding `{}`",
                            escaped(&access.binding)
                        ),
                        &access.binding,
                        &unbound,
                        &all,
                    );
                    self.diags.push(d);
                    self.accesses[n][i] = None;
                    continue;
                };
                if kernel.accesses[..i]
                    .iter()
                    .any(|a| a.binding == access.binding)
                {
                    self.diags.push(Diagnostic::new(
                        loc,
                        format!(
                            "`kernels::{path}` binding `{}` is bound twice",
                            access.binding
                        ),
                    ));
                    self.accesses[n][i] = None;
                    continue;
                }
                if let Some(a) = self.accesses[n][i].as_mut() {
                    a.mode = binding.mode;
                    // A generic binding takes the type of the first generic binding given.
                    let expected = match binding.elem {
                        GENERIC => generic.map(|(t, _)| t),
                        elem => ValueType::parse(elem).ok(),
                    };
                    let actual = self.buffer_types[a.buffer];
                    // The library's kernels index elements one by one: a `u8` or `u16` buffer's WGSL view is
                    // its packed words.
                    if let Some(packed) = actual.filter(|t| t.scalar.packed().is_some()) {
                        self.diags.push(
                            Diagnostic::new(
                                loc,
                                format!(
                                    "`kernels::{path}` reads and writes its elements one by one, but buffer `{}` \
                                     holds `{packed}` elements, packed {} to a `u32` word",
                                    access.buffer,
                                    packed.scalar.packed().unwrap_or(1)
                                ),
                            )
                            .with_help(
                                "use the graph's own `fill` and `copy` nodes, or a kernel of your own over the \
                                 words (`unpack4xU8`, `pack4xU8`, `u8_at`, `with_u8_at`)",
                            ),
                        );
                        self.accesses[n][i] = None;
                        continue;
                    }
                    if binding.elem == GENERIC
                        && generic.is_none()
                        && let Some(actual) = actual
                    {
                        generic = Some((actual, access.buffer.as_str()));
                    }
                    if let (Some(expected), Some(actual)) = (expected, actual)
                        && expected != actual
                    {
                        let d = match (binding.elem, generic) {
                            (GENERIC, Some((_, first))) => Diagnostic::new(
                                loc,
                                format!(
                                    "`kernels::{path}` binding `{}` takes the element type of `{first}` \
                                     (`{expected}`), but buffer `{}` holds `{actual}`",
                                    binding.name, access.buffer
                                ),
                            )
                            .with_help(format!(
                                "`kernels::{path}` takes any element type, one for all its buffers"
                            )),
                            _ => Diagnostic::new(
                                loc,
                                format!(
                                    "`kernels::{path}` binding `{}` takes `array<{expected}>`, but buffer `{}` holds `{actual}`",
                                    binding.name, access.buffer
                                ),
                            ),
                        };
                        self.diags.push(d);
                    }
                }
            }
            for binding in lib.bindings {
                if !kernel.accesses.iter().any(|a| a.binding == binding.name)
                    && !suggested.contains(&binding.name)
                {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::KernelSource(n),
                            format!("`kernels::{path}` needs a buffer for binding `{}`", binding.name),
                        )
                        .with_help(format!(
                            "add `{}: BUFFER`, naming a buffer of {} elements that the kernel will {}",
                            binding.name,
                            match binding.elem {
                                GENERIC => "any type of".to_string(),
                                elem => format!("`{elem}`"),
                            },
                            match binding.mode {
                                AccessMode::Read => "read",
                                AccessMode::Write => "overwrite",
                                AccessMode::ReadWrite => "read and write",
                            }
                        )),
                    );
                }
            }
            let ungiven: Vec<&str> = lib
                .args
                .iter()
                .map(|a| a.name)
                .filter(|name| !kernel.args.iter().any(|a| a.name == *name))
                .collect();
            for (i, arg) in kernel.args.iter().enumerate() {
                let loc = Loc::KernelArg { node: n, index: i };
                if !lib.args.iter().any(|a| a.name == arg.name) {
                    let all: Vec<&str> = lib.args.iter().map(|a| a.name).collect();
                    suggested.extend(did_you_mean(&arg.name, ungiven.iter().copied()));
                    let d = misspelt(
                        loc,
                        "argument",
                        format!("`kernels::{path}` has no argument `{}`", escaped(&arg.name)),
                        &arg.name,
                        &ungiven,
                        &all,
                    );
                    self.diags.push(d);
                } else if kernel.args[..i].iter().any(|a| a.name == arg.name) {
                    self.diags.push(Diagnostic::new(
                        loc,
                        format!("argument `{}` is given twice", escaped(&arg.name)),
                    ));
                }
            }
            for arg in lib.args {
                if !kernel.args.iter().any(|a| a.name == arg.name) && !suggested.contains(&arg.name)
                {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::KernelSource(n),
                            format!("`kernels::{path}` needs argument `{}`", arg.name),
                        )
                        .with_help(format!(
                            "add `{}: VALUE`, {} such as a literal or `params.NAME`",
                            arg.name,
                            match arg.ty {
                                GENERIC => "a value of the bound buffers' element type".to_string(),
                                ty => format!("a `{ty}`"),
                            }
                        )),
                    );
                }
            }
            // Only a library kernel bound without error is validated: its WGSL is not the user's to fix.
            if self.diags.len() == errors_before {
                self.library_kernels[n] = Some(lib);
            }
        }
    }
}

/// An unknown library binding or argument `name`: suggests the closest of the names not given yet (a name
/// already given is not what the user meant), else lists them all.
fn misspelt(
    loc: Loc,
    what: &str,
    message: String,
    name: &str,
    not_given: &[&str],
    all: &[&str],
) -> Diagnostic {
    let d = Diagnostic::new(loc, message);
    if let Some(best) = did_you_mean(name, not_given.iter().copied()) {
        return d.with_help(format!("did you mean `{best}`?"));
    }
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (all, not_given.is_empty()) {
        ([], _) => d.with_help(format!("it takes no {what}")),
        ([one], true) => d.with_help(format!("its only {what} is `{one}`, given already")),
        (_, true) => d.with_help(format!("its {what}s are {}, all given already", list(all))),
        (_, false) => d.with_help(format!(
            "its {what}s are {}; not given yet: {}",
            list(all),
            list(not_given)
        )),
    }
}
