//! Serves the built page: `serve FOLDER [ADDRESS]` (default `127.0.0.1:8080`), until stopped.
//! `cargo xtask web` builds the page into `examples/web/pkg` and runs this.

#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::path::PathBuf;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(args.next().ok_or("usage: serve FOLDER [ADDRESS]")?);
    let address: SocketAddr = args
        .next()
        .as_deref()
        .unwrap_or("127.0.0.1:8080")
        .parse()
        .map_err(|e| format!("not an address: {e}"))?;
    let bound = web_example::serve::serve(root.clone(), address)
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    println!(
        "serving {} at http://{bound}/ (Ctrl-C stops)",
        root.display()
    );
    loop {
        std::thread::park();
    }
}
