//! Validation mode (`GRAPH_RUNTIME_VALIDATION=1`): wgpu's validation and the Vulkan validation layer on, and
//! every message the layer reports turned into an error of the operation that caused it.
//!
//! The layer calls back on the thread that made the Vulkan call, inside that call, and wgpu-hal logs the
//! message through `log`. So messages are attributed by thread: each runtime operation (creating a `Gpu`,
//! bake, replay, wait, buffer reads and writes) opens a message scope on its thread for its duration, and
//! the messages logged in it are that operation's error. Two threads never see each other's messages, and one
//! graph's replay never reports another's. A message logged on a thread with no scope open (the
//! application's own wgpu calls) is kept for that thread and reported by [`crate::Gpu::check`].
//!
//! Validation mode proves itself when a `Gpu` is made: it plants a real validation error and fails unless the
//! layer reports it, so a missing layer or a foreign logger fails loudly instead of validating nothing.

#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::Error;

static LOGGER: ValidationLogger = ValidationLogger;

/// The environment variable that turns validation mode on.
pub const VALIDATION_ENV: &str = "GRAPH_RUNTIME_VALIDATION";

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether validation mode is on: asked for in the environment, or by [`enable`].
pub fn requested() -> bool {
    static FROM_ENV: OnceLock<bool> = OnceLock::new();
    let from_env = *FROM_ENV
        .get_or_init(|| std::env::var(VALIDATION_ENV).is_ok_and(|v| v != "0" && !v.is_empty()));
    from_env || ENABLED.load(Ordering::Relaxed)
}

/// Turns validation mode on for every `Gpu` made after this call, as `GRAPH_RUNTIME_VALIDATION=1` does.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
    install();
}

/// Makes one invalid Vulkan call on `device` (a `Gpu`'s: `gpu.device()`), which the validation layer
/// reports: a positive control for tests of validation mode. Inside a runtime operation (a host task of a
/// replay, say), the report is that operation's error. Returns `false`, doing nothing, on a device that is not
/// a Vulkan one.
pub fn plant_error(device: &wgpu::Device) -> bool {
    crate::native::plant_invalid_buffer(device)
}

/// Installs the logger that catches the layer's messages (wgpu-hal logs them), once per process. Returns
/// whether it is the process's logger: if the application installed its own first, messages go there.
pub(crate) fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let ours = log::set_logger(&LOGGER).is_ok();
        if ours {
            log::set_max_level(log::LevelFilter::Warn);
        }
        ours
    })
}

thread_local! {
    /// The scopes open on this thread, innermost last, each with the messages logged while it was.
    static SCOPES: RefCell<Vec<Vec<String>>> = const { RefCell::new(Vec::new()) };
    /// Messages logged on this thread while no scope was open.
    static LOOSE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Collects the validation messages logged on this thread while it is open (nested scopes collect their
/// own). Not `Send`: a scope belongs to its thread.
#[derive(Debug)]
pub(crate) struct MessageScope {
    depth: usize,
    finished: bool,
    _thread_bound: PhantomData<*const ()>,
}

impl MessageScope {
    pub(crate) fn enter() -> Self {
        let depth = SCOPES.with(|s| {
            let mut scopes = s.borrow_mut();
            scopes.push(Vec::new());
            scopes.len()
        });
        MessageScope {
            depth,
            finished: false,
            _thread_bound: PhantomData,
        }
    }

    /// Closes the scope: the messages logged in it, as one error.
    pub(crate) fn finish(mut self) -> Option<Error> {
        self.finished = true;
        let messages = self.pop();
        (!messages.is_empty()).then(|| Error::Validation(messages.join("\n")))
    }

    fn pop(&self) -> Vec<String> {
        SCOPES.with(|s| {
            let mut scopes = s.borrow_mut();
            // Scopes close in the reverse order they opened; anything left above this one is closed with it.
            let mut messages = Vec::new();
            while scopes.len() >= self.depth {
                messages.extend(scopes.pop().unwrap_or_default());
            }
            messages
        })
    }
}

impl Drop for MessageScope {
    fn drop(&mut self) {
        if !self.finished {
            // Unwinding through the operation: its messages go to the thread's loose list, not nowhere.
            let messages = self.pop();
            LOOSE.with(|l| l.borrow_mut().extend(messages));
        }
    }
}

/// The messages logged on this thread outside any scope since the last call, as one error.
pub(crate) fn take_loose() -> Option<Error> {
    let messages = LOOSE.with(|l| std::mem::take(&mut *l.borrow_mut()));
    (!messages.is_empty()).then(|| Error::Validation(messages.join("\n")))
}

/// Plants a real validation error on `device` and checks that the layer reported it through our logger.
pub(crate) fn prove_active(device: &wgpu::Device) -> Result<(), Error> {
    if !install() {
        return Err(Error::ValidationUnavailable(
            "the application installed its own `log` logger first, so the layer's messages cannot be caught"
                .into(),
        ));
    }
    let scope = MessageScope::enter();
    let planted = crate::native::plant_invalid_buffer(device);
    let reported = scope.finish();
    match (planted, reported) {
        (false, _) => Err(Error::ValidationUnavailable(
            "validation mode needs the Vulkan backend, and this device is not a Vulkan one".into(),
        )),
        (true, Some(Error::Validation(text))) if text.contains(crate::native::PLANTED_VUID) => {
            Ok(())
        }
        (true, _) => Err(Error::ValidationUnavailable(format!(
            "the Khronos validation layer did not report a planted error ({}) through wgpu: the layer is not \
             installed, or the device's instance was made without `InstanceFlags::VALIDATION`",
            crate::native::PLANTED_VUID
        ))),
    }
}

struct ValidationLogger;

impl ValidationLogger {
    /// Whether a logged line is a validation finding. The loader's GENERAL messages are not; VALIDATION ones
    /// (the layer's, sync hazards included) are, but one: layers older than SPIR-V's WGSL source-language enum
    /// (Debian 12 ships 1.3.239) reject the `OpSource WGSL` debug instruction naga writes in debug mode. It is
    /// not about our commands, and newer layers accept it.
    fn is_finding(text: &str) -> bool {
        text.contains("VALIDATION") && !text.contains("Invalid source language operand")
    }
}

impl log::Log for ValidationLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let text = record.args().to_string();
        eprintln!("[{}] {}: {text}", record.level(), record.target());
        if !Self::is_finding(&text) {
            return;
        }
        // To the innermost scope open on this thread, else to the thread's loose messages. A thread being
        // torn down has neither; its message was printed.
        let unscoped = SCOPES
            .try_with(|s| match s.try_borrow_mut() {
                Ok(mut scopes) => match scopes.last_mut() {
                    Some(scope) => {
                        scope.push(text.clone());
                        None
                    }
                    None => Some(text.clone()),
                },
                Err(_) => Some(text.clone()),
            })
            .unwrap_or(None);
        if let Some(text) = unscoped {
            let _ = LOOSE.try_with(|l| {
                if let Ok(mut loose) = l.try_borrow_mut() {
                    loose.push(text);
                }
            });
        }
    }

    fn flush(&self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use log::Log;

    fn log(level: log::Level, text: &str) {
        LOGGER.log(
            &log::Record::builder()
                .level(level)
                .target("wgpu_hal::vulkan::instance")
                .args(format_args!("{text}"))
                .build(),
        );
    }

    #[test]
    fn a_scope_keeps_findings_and_drops_loader_chatter_and_the_known_false_positive() {
        let scope = MessageScope::enter();
        log(
            log::Level::Error,
            "VALIDATION [SYNC-HAZARD-WRITE-AFTER-WRITE (0x5c0ec5d6)] a hazard",
        );
        log(
            log::Level::Warn,
            "GENERAL [Loader Message (0x0)] adding layers",
        );
        log(
            log::Level::Error,
            "VALIDATION [UNASSIGNED-CoreValidation-Shader-InconsistentSpirv] Invalid source language operand: 10",
        );
        log(log::Level::Info, "VALIDATION below the threshold");
        let Some(Error::Validation(kept)) = scope.finish() else {
            panic!("the hazard is a finding");
        };
        assert_eq!(kept.lines().count(), 1, "{kept}");
        assert!(kept.contains("SYNC-HAZARD-WRITE-AFTER-WRITE"));
    }

    #[test]
    fn nested_scopes_and_threads_keep_their_own_messages() {
        let outer = MessageScope::enter();
        log(log::Level::Error, "VALIDATION outer");
        let inner = MessageScope::enter();
        log(log::Level::Error, "VALIDATION inner");
        let other_thread = std::thread::spawn(|| {
            let scope = MessageScope::enter();
            log(log::Level::Error, "VALIDATION elsewhere");
            scope.finish()
        });
        let Some(Error::Validation(inner)) = inner.finish() else {
            panic!("inner");
        };
        assert_eq!(inner, "VALIDATION inner");
        let Some(Error::Validation(outer)) = outer.finish() else {
            panic!("outer");
        };
        assert_eq!(outer, "VALIDATION outer");
        let elsewhere = other_thread.join().expect("thread");
        assert!(matches!(elsewhere, Some(Error::Validation(t)) if t == "VALIDATION elsewhere"));
        // Outside any scope: kept for this thread.
        log(log::Level::Error, "VALIDATION loose");
        assert!(matches!(take_loose(), Some(Error::Validation(t)) if t == "VALIDATION loose"));
        assert!(take_loose().is_none());
    }
}
