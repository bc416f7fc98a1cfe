//! One operation's error scope: what the device reports while a bake, a replay, a wait or a buffer
//! operation runs is that operation's error, and nobody else's.
//!
//! wgpu's error scopes are per thread, like the validation layer's callbacks, so an operation opens both on
//! its thread and closes them when it ends. Device loss is not scoped: it is the device's state, which every
//! later operation reports.

#![forbid(unsafe_code)]

use crate::error::Error;
use crate::gpu::Gpu;
use crate::validation::MessageScope;

/// wgpu's validation and out-of-memory scopes, and the validation layer's messages, around one operation.
/// Not `Send`: it belongs to the thread that opened it.
pub(crate) struct OpScope<'a> {
    gpu: &'a Gpu,
    /// wgpu's scopes; `None` for an operation that makes no wgpu call.
    validation: Option<wgpu::ErrorScopeGuard>,
    out_of_memory: Option<wgpu::ErrorScopeGuard>,
    messages: MessageScope,
}

impl<'a> OpScope<'a> {
    /// On the web, the same as [`OpScope::without_wgpu`]: a scope's errors come back there in a future, once
    /// the browser has them, and an operation that returns at once cannot wait for them. What the device
    /// reports of the runtime's calls reaches the device's uncaptured errors instead, which the next awaited
    /// operation (a replay's or a read's future) reports ([`Gpu::check_settled`]).
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn enter(gpu: &'a Gpu) -> Self {
        Self::without_wgpu(gpu)
    }

    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn enter(gpu: &'a Gpu) -> Self {
        let device = gpu.device();
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        OpScope {
            gpu,
            validation: Some(validation),
            out_of_memory: Some(out_of_memory),
            messages: MessageScope::enter(),
        }
    }

    /// The scope of an operation that calls Vulkan only (a replay submitted directly): wgpu's scopes would
    /// catch nothing, and pushing and popping them is most of a direct replay's CPU cost beyond the submit.
    /// The validation layer's messages and the device's loss are still this operation's.
    pub(crate) fn without_wgpu(gpu: &'a Gpu) -> Self {
        OpScope {
            gpu,
            validation: None,
            out_of_memory: None,
            messages: MessageScope::enter(),
        }
    }

    /// Closes the scope. The operation's own result stands unless the device reported something during it,
    /// which says more: device loss first, then out of memory, then wgpu's validation errors, then the
    /// validation layer's messages.
    pub(crate) fn finish<T>(self, result: Result<T, Error>) -> Result<T, Error> {
        self.finish_with(result, Error::Gpu)
    }

    /// [`OpScope::finish`], with wgpu's validation errors described by `invalid` (as a bake's error, say).
    pub(crate) fn finish_with<T>(
        self,
        result: Result<T, Error>,
        invalid: impl FnOnce(String) -> Error,
    ) -> Result<T, Error> {
        // Scopes pop in the reverse order they were pushed.
        let out_of_memory = self.out_of_memory.and_then(pop);
        let validation = self.validation.and_then(pop);
        let messages = self.messages.finish();
        self.gpu.check_lost()?;
        if let Some(e) = out_of_memory {
            return Err(Error::OutOfMemory(e.to_string()));
        }
        if let Some(e) = validation {
            return Err(invalid(e.to_string()));
        }
        if let Some(e) = messages {
            return Err(e);
        }
        result
    }
}

/// A scope's error. On native wgpu the future is already resolved.
#[cfg(not(target_arch = "wasm32"))]
fn pop(scope: wgpu::ErrorScopeGuard) -> Option<wgpu::Error> {
    pollster::block_on(scope.pop())
}

/// The web opens no scope (see [`OpScope::enter`]).
#[cfg(target_arch = "wasm32")]
fn pop(scope: wgpu::ErrorScopeGuard) -> Option<wgpu::Error> {
    drop(scope);
    None
}
