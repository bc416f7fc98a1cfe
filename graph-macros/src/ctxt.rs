//! The one error context of an expansion. Parsing, lowering and the subgraph checks push their errors into
//! it; the checks' diagnostics go through it at the end, and it alone decides which of them to show: one that
//! follows from a mistake already reported (at a location that mistake covers) is not. It must be ended by
//! [`Ctxt::check`] or [`Ctxt::into_errors`]: dropped unchecked, it panics, so no error is lost on the way (as
//! serde_derive's `Ctxt` does).

use std::cell::RefCell;

use graph_core::{Diagnostic, Loc};

use crate::render::render;
use crate::spans::Spans;

/// Every error of one expansion, and the IR locations they cover.
///
/// Methods take `&self`, so the parser's closures and the lowering's helpers can all hold it; each borrow of
/// the inner state ends inside the method that takes it.
pub struct Ctxt {
    /// `None` once the context was checked.
    state: RefCell<Option<State>>,
}

#[derive(Default)]
struct State {
    errors: Vec<syn::Error>,
    /// Locations where a reported mistake makes what the checks say meaningless (see [`follows_from`]).
    covered: Vec<Loc>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            state: RefCell::new(Some(State::default())),
        }
    }

    /// Reports an error; all are shown, in the order reported.
    pub fn error(&self, error: syn::Error) {
        self.with(|state| state.errors.push(error));
    }

    /// Records that a mistake already reported leaves the IR at `loc` standing in for what the user meant
    /// (a kernel checked as empty, an access kept as `read_write`), so what the checks say there is not shown.
    pub fn cover(&self, loc: Loc) {
        self.with(|state| state.covered.push(loc));
    }

    /// Runs one attempt at parsing something. When it fails, what it reported meanwhile is dropped: its own
    /// error, which the caller reports, is the one error of what could not be read, and the rest would only
    /// describe a reading that was abandoned.
    pub fn attempt<T>(&self, attempt: impl FnOnce() -> syn::Result<T>) -> syn::Result<T> {
        let (errors, covered) = self.with(|state| (state.errors.len(), state.covered.len()));
        let result = attempt();
        if result.is_err() {
            self.with(|state| {
                state.errors.truncate(errors);
                state.covered.truncate(covered);
            });
        }
        result
    }

    /// Ends the expansion's error collection with the checks' result: the checked graph when nothing was
    /// reported anywhere, else every error to show, the checks' diagnostics (shown on `spans`) after the
    /// others.
    pub fn check<T>(
        self,
        checks: Result<T, Vec<Diagnostic>>,
        spans: &Spans,
    ) -> Result<T, Vec<syn::Error>> {
        let State {
            mut errors,
            covered,
        } = self.take();
        match checks {
            Ok(checked) if errors.is_empty() => Ok(checked),
            Ok(_) => Err(errors),
            Err(diagnostics) => {
                // A diagnostic is hidden only beside the error that covers it: if nothing else was reported,
                // every diagnostic is shown, so a graph with mistakes never passes for a checked one.
                let nothing_else = errors.is_empty();
                errors.extend(
                    diagnostics
                        .iter()
                        .filter(|d| {
                            nothing_else || !covered.iter().any(|c| follows_from(&d.loc, c))
                        })
                        .map(|d| render(d, spans)),
                );
                Err(errors)
            }
        }
    }

    /// Ends the context with the errors reported so far, for an input that could not be read far enough to
    /// be checked.
    pub fn into_errors(self) -> Vec<syn::Error> {
        self.take().errors
    }

    fn take(self) -> State {
        // Checked now: dropping `self` after this is what every expansion does.
        self.state.borrow_mut().take().unwrap_or_default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut state = self.state.borrow_mut();
        // `check` and `into_errors` take `self`, so an unchecked context is all there is to use.
        f(state.get_or_insert_with(State::default))
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // While unwinding from another panic, a second one would abort and hide the first.
        if self.state.get_mut().is_some() && !std::thread::panicking() {
            panic!(
                "graph!: the expansion's errors were never checked; this is a bug in graph-macros: every \
                 expansion must end with `Ctxt::check` or `Ctxt::into_errors`"
            );
        }
    }
}

/// Whether what the checks say at `loc` follows from a mistake reported at `covered`: the one place that
/// decides which follow-on diagnostics are not shown.
fn follows_from(loc: &Loc, covered: &Loc) -> bool {
    match (covered, loc) {
        // A kernel whose WGSL is missing or unreadable is checked as an empty kernel: what the checks say of
        // its WGSL, its entry point, or the access modes they compare with the WGSL, is about nothing written.
        (
            Loc::KernelSource(kernel),
            Loc::KernelSource(node)
            | Loc::KernelEntry(node)
            | Loc::Wgsl { node, .. }
            | Loc::AccessMode { node, .. },
        ) => kernel == node,
        // An unknown access word stands as `read_write`: what the checks say of that access (how its buffer
        // is used, or its mode) is about the stand-in.
        (
            Loc::AccessMode {
                node: kernel,
                index: at,
            },
            Loc::Access { node, index } | Loc::AccessMode { node, index },
        ) => kernel == node && at == index,
        _ => covered == loc,
    }
}

#[cfg(test)]
mod tests {
    use graph_core::{Diagnostic, Loc};
    use proc_macro2::Span;

    use super::Ctxt;
    use crate::spans::Spans;

    /// The messages of what `check` shows, in order.
    fn shown(cx: Ctxt, diagnostics: Vec<Diagnostic>) -> Vec<String> {
        let spans = Spans::new(Span::call_site());
        match cx.check(Err::<(), _>(diagnostics), &spans) {
            Ok(()) => Vec::new(),
            Err(errors) => errors.iter().map(ToString::to_string).collect(),
        }
    }

    fn at(loc: Loc) -> Diagnostic {
        Diagnostic::new(loc.clone(), format!("{loc:?}"))
    }

    #[test]
    #[should_panic(expected = "errors were never checked")]
    fn dropping_it_unchecked_panics() {
        let cx = Ctxt::new();
        cx.error(syn::Error::new(Span::call_site(), "a mistake"));
        drop(cx);
    }

    #[test]
    fn checked_it_drops_quietly_and_generates_only_without_errors() {
        let spans = Spans::new(Span::call_site());
        assert_eq!(
            Ctxt::new().check(Ok::<_, Vec<Diagnostic>>(7), &spans).ok(),
            Some(7)
        );
        let cx = Ctxt::new();
        cx.error(syn::Error::new(Span::call_site(), "a mistake"));
        let errors = cx.check(Ok::<_, Vec<Diagnostic>>(7), &spans).err();
        assert_eq!(errors.map(|e| e.len()), Some(1));
        assert!(Ctxt::new().into_errors().is_empty());
    }

    /// An unknown access word covers that access: the checks' words on it, and on its mode, are not shown;
    /// the same kind of diagnostic on the node's other access, and the reported error itself, are.
    #[test]
    fn a_diagnostic_at_a_covered_location_is_not_shown() {
        let cx = Ctxt::new();
        cx.error(syn::Error::new(Span::call_site(), "unknown access `raed`"));
        cx.cover(Loc::AccessMode { node: 2, index: 1 });
        let shown = shown(
            cx,
            vec![
                at(Loc::Access { node: 2, index: 1 }),
                at(Loc::AccessMode { node: 2, index: 1 }),
                at(Loc::AccessMode { node: 2, index: 0 }),
                at(Loc::Access { node: 1, index: 1 }),
            ],
        );
        assert_eq!(
            shown,
            [
                "unknown access `raed`",
                "AccessMode { node: 2, index: 0 }",
                "Access { node: 1, index: 1 }",
            ]
        );
    }

    /// A kernel whose WGSL is missing covers what is said of its WGSL, its entry point and its access
    /// modes, not of its accesses' buffers, nor of another kernel.
    #[test]
    fn a_missing_kernel_source_covers_what_depends_on_the_wgsl() {
        let cx = Ctxt::new();
        cx.error(syn::Error::new(
            Span::call_site(),
            "expected the kernel's WGSL",
        ));
        cx.cover(Loc::KernelSource(3));
        let shown = shown(
            cx,
            vec![
                at(Loc::KernelSource(3)),
                at(Loc::KernelEntry(3)),
                at(Loc::Wgsl {
                    node: 3,
                    range: 4..9,
                }),
                at(Loc::AccessMode { node: 3, index: 0 }),
                at(Loc::Access { node: 3, index: 0 }),
                at(Loc::KernelEntry(4)),
                at(Loc::Block(3)),
            ],
        );
        assert_eq!(
            shown,
            [
                "expected the kernel's WGSL",
                "Access { node: 3, index: 0 }",
                "KernelEntry(4)",
                "Block(3)",
            ]
        );
    }

    /// A cover is only ever recorded beside a reported error; were one recorded without, the diagnostics it
    /// would hide are shown, so the graph cannot compile as if checked.
    #[test]
    fn a_cover_hides_nothing_when_nothing_else_was_reported() {
        let cx = Ctxt::new();
        cx.cover(Loc::Block(0));
        assert_eq!(shown(cx, vec![at(Loc::Block(0))]), ["Block(0)"]);
    }

    /// What a failed attempt reported (errors and covers) goes with it; what a successful one did stays.
    #[test]
    fn a_failed_attempt_drops_what_it_reported() {
        let cx = Ctxt::new();
        let error = |text: &str| syn::Error::new(Span::call_site(), text);
        cx.error(error("before"));
        let failed = cx.attempt(|| {
            cx.error(error("inside the failed attempt"));
            cx.cover(Loc::Block(0));
            // A nested attempt that succeeded is undone with the attempt around it.
            cx.attempt(|| {
                cx.error(error("nested"));
                Ok(())
            })?;
            Err::<(), _>(error("the failure"))
        });
        assert!(failed.is_err());
        let kept = cx.attempt(|| {
            cx.error(error("inside the kept attempt"));
            Ok(())
        });
        assert!(kept.is_ok());
        // The cover went with the failed attempt: the diagnostic at `Block(0)` is shown.
        assert_eq!(
            shown(cx, vec![at(Loc::Block(0))]),
            ["before", "inside the kept attempt", "Block(0)"]
        );
    }
}
