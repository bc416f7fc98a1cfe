//! What a future waits for: a value some callback (a map's, a finished submission's, the driver thread's)
//! hands over once, and the waker to call when it does. The futures of [`crate::Buffer::read`] and of a
//! replay ([`crate::Submission`]) are woken once, when their result is there: they never spin.

#![forbid(unsafe_code)]

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use crate::gpu::lock;

/// A value handed over once, and the future waiting for it.
#[derive(Debug)]
pub(crate) struct Completion<T> {
    state: Mutex<(Option<T>, Option<Waker>)>,
}

impl<T> Default for Completion<T> {
    fn default() -> Self {
        Completion {
            state: Mutex::new((None, None)),
        }
    }
}

impl<T> Completion<T> {
    /// Hands `value` over, unless one was handed over before, and wakes the future waiting for it.
    pub(crate) fn complete(&self, value: T) {
        let waker = {
            let mut state = lock(&self.state);
            if state.0.is_some() {
                return;
            }
            state.0 = Some(value);
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The value, if it was handed over (taken: a second call sees none).
    pub(crate) fn take(&self) -> Option<T> {
        lock(&self.state).0.take()
    }

    /// The value if it is there; else `Pending`, with the waker stored under the lock `complete` takes, so a
    /// value handed over after this look wakes this task.
    pub(crate) fn poll(&self, cx: &Context<'_>) -> Poll<T> {
        let mut state = lock(&self.state);
        match state.0.take() {
            Some(value) => Poll::Ready(value),
            None => {
                state.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Several callbacks (a replay's readback maps), done when each has arrived, or failed at the first failure.
#[derive(Debug)]
pub(crate) struct Countdown {
    left: AtomicUsize,
    pub(crate) done: Completion<Result<(), String>>,
}

impl Countdown {
    /// Waits for `count` arrivals; done at once when `count` is 0.
    pub(crate) fn new(count: usize) -> Self {
        let countdown = Countdown {
            left: AtomicUsize::new(count),
            done: Completion::default(),
        };
        if count == 0 {
            countdown.done.complete(Ok(()));
        }
        countdown
    }

    /// One callback arrived with `result`.
    pub(crate) fn arrive(&self, result: Result<(), String>) {
        match result {
            Err(reason) => self.done.complete(Err(reason)),
            Ok(()) => {
                if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    self.done.complete(Ok(()));
                }
            }
        }
    }
}
