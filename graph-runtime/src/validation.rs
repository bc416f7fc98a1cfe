//! Validation mode (`GRAPH_RUNTIME_VALIDATION=1`): wgpu's validation and the Vulkan validation layer on, and
//! every validation message they report turned into an error of the next wait or readback.

use std::sync::{Mutex, OnceLock};

static MESSAGES: Mutex<Vec<String>> = Mutex::new(Vec::new());
static LOGGER: ValidationLogger = ValidationLogger;

/// Whether validation mode was asked for in the environment.
pub fn requested() -> bool {
    static REQUESTED: OnceLock<bool> = OnceLock::new();
    *REQUESTED.get_or_init(|| {
        std::env::var("GRAPH_RUNTIME_VALIDATION").is_ok_and(|v| v != "0" && !v.is_empty())
    })
}

/// Installs the logger that catches the layer's messages (wgpu-hal logs them); once per process. If the
/// application installed its own logger first, messages go there instead and are not turned into errors.
pub fn install() {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
}

/// Every validation message since the last call, as one error.
pub fn take_error() -> Option<crate::Error> {
    if !requested() {
        return None;
    }
    let messages = drain();
    (!messages.is_empty()).then(|| crate::Error::Validation(messages.join("\n")))
}

fn drain() -> Vec<String> {
    std::mem::take(
        &mut *MESSAGES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    )
}

struct ValidationLogger;

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
        // The loader's GENERAL messages are not validation findings; VALIDATION ones (the layer's, sync
        // hazards included) are, but one: layers older than SPIR-V's WGSL source-language enum (Debian 12 ships
        // 1.3.239) reject the `OpSource WGSL` debug instruction naga writes in debug mode. It is not about our
        // commands, and newer layers accept it.
        let known_false_positive = text.contains("Invalid source language operand");
        if text.contains("VALIDATION") && !known_false_positive {
            MESSAGES
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(text);
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
    fn keeps_validation_findings_and_drops_loader_chatter_and_the_known_false_positive() {
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
        let kept = drain();
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(kept[0].contains("SYNC-HAZARD-WRITE-AFTER-WRITE"));
    }
}
