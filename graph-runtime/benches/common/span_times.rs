//! Where a bake's time goes: a `tracing` subscriber that adds up, by span name, the time the runtime's spans
//! (`bake`, `fuse`, `compile program`, `native pipelines`, ...) were entered. Spans nest, so a parent's time
//! includes its children's.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// The spans open now (id to name and when it was entered), and the totals by name since the last
/// [`take`].
struct Times {
    next: AtomicU64,
    open: Mutex<BTreeMap<u64, (&'static str, Option<Instant>)>>,
    totals: Mutex<BTreeMap<&'static str, Duration>>,
}

static TIMES: Times = Times {
    next: AtomicU64::new(1),
    open: Mutex::new(BTreeMap::new()),
    totals: Mutex::new(BTreeMap::new()),
};

struct Collector;

impl Subscriber for Collector {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_span()
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = TIMES.next.fetch_add(1, Ordering::Relaxed);
        let mut open = TIMES.open.lock().unwrap_or_else(|e| e.into_inner());
        open.insert(id, (span.metadata().name(), None));
        Id::from_u64(id)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, span: &Id) {
        let mut open = TIMES.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, entered)) = open.get_mut(&span.into_u64()) {
            *entered = Some(Instant::now());
        }
    }

    fn exit(&self, span: &Id) {
        let now = Instant::now();
        let mut open = TIMES.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((name, Some(entered))) = open.get_mut(&span.into_u64()).map(|s| *s) {
            let mut totals = TIMES.totals.lock().unwrap_or_else(|e| e.into_inner());
            *totals.entry(name).or_default() += now - entered;
        }
    }

    fn try_close(&self, span: Id) -> bool {
        let mut open = TIMES.open.lock().unwrap_or_else(|e| e.into_inner());
        open.remove(&span.into_u64());
        true
    }
}

/// Starts collecting, for the whole process; false if another subscriber was set first.
pub fn install() -> bool {
    tracing::subscriber::set_global_default(Collector).is_ok()
}

/// The totals by span name since the last call, longest first, and starts again from zero.
pub fn take() -> Vec<(&'static str, Duration)> {
    let mut totals = TIMES.totals.lock().unwrap_or_else(|e| e.into_inner());
    let mut taken: Vec<_> = std::mem::take(&mut *totals).into_iter().collect();
    taken.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    taken
}
