//! The flagship's graph in a web page: `cargo xtask web` builds this crate for wasm32 with wasm-bindgen, puts
//! it beside `index.html` in `examples/web/pkg/` and serves it. The page (`page.rs`) runs `EdgePipeline` on
//! the browser's WebGPU device. The rest is native too: the graph's drawing (`graph_svg`), unit-tested here,
//! and the server (`serve`), which the end-to-end test (`tests/page.rs`) loads the page from.

#![forbid(unsafe_code)]

pub mod graph_svg;
#[cfg(target_arch = "wasm32")]
mod page;
#[cfg(not(target_arch = "wasm32"))]
pub mod serve;
