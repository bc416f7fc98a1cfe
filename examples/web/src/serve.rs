//! A static file server for the page (native only): what `cargo xtask web` runs and the end-to-end test
//! loads the page from. GET and HEAD of files under one folder, nothing else; every response cross-origin
//! isolated (`Cross-Origin-Opener-Policy` and `-Embedder-Policy`), which is what lets the browser's
//! `performance.now()` resolve 5 us rather than 100 us.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};

/// Serves the files under `root` on `address` (port 0: any free one) from a thread of its own, one more
/// thread per connection; returns the address it listens on. It serves until the program ends.
pub fn serve(root: PathBuf, address: SocketAddr) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(address)?;
    let bound = listener.local_addr()?;
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            std::thread::spawn(move || {
                // A client that goes away mid-request is its own problem.
                let _ = answer(&root, stream);
            });
        }
    });
    Ok(bound)
}

/// Reads one request and answers it.
fn answer(root: &Path, stream: TcpStream) -> std::io::Result<()> {
    // A client that says nothing for this long is dropped, and a request line or header past this size
    // ends the request: a connection cannot hold a thread or memory for ever.
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?).take(64 * 1024);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers, up to the blank line; none matter here.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut words = request.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or("/"));
    let mut stream = stream;
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"GET only\n",
            method,
        );
    }
    match file_of(root, target).and_then(|path| Some((std::fs::read(&path).ok()?, path))) {
        Some((body, path)) => respond(&mut stream, "200 OK", content_type(&path), &body, method),
        None => respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            method,
        ),
    }
}

/// The file a request target names under `root` (`/` is `index.html`); `None` for a target that would leave
/// `root` or is not a plain relative path.
fn file_of(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let relative = path.trim_start_matches('/');
    let relative = if relative.is_empty() {
        "index.html"
    } else {
        relative
    };
    let relative = Path::new(relative);
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let file = root.join(relative);
    file.is_file().then_some(file)
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("wasm") => "application/wasm",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        Some("css") => "text/css",
        _ => "application/octet-stream",
    }
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
    method: &str,
) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cross-Origin-Opener-Policy: same-origin\r\nCross-Origin-Embedder-Policy: require-corp\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_stay_inside_the_root() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(file_of(root, "/Cargo.toml"), Some(root.join("Cargo.toml")));
        assert_eq!(
            file_of(root, "/Cargo.toml?x=1"),
            Some(root.join("Cargo.toml"))
        );
        assert_eq!(file_of(root, "/../Cargo.toml"), None);
        assert_eq!(file_of(root, "/src/../../Cargo.toml"), None);
        assert_eq!(file_of(root, "/missing.html"), None);
    }

    #[test]
    fn it_answers_a_get_and_refuses_the_rest() -> std::io::Result<()> {
        use std::io::Read;
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let address = serve(root.clone(), "127.0.0.1:0".parse().expect("an address"))?;
        let get = |request: &str| -> std::io::Result<String> {
            let mut stream = TcpStream::connect(address)?;
            stream.write_all(request.as_bytes())?;
            let mut answer = String::new();
            stream.read_to_string(&mut answer)?;
            Ok(answer)
        };
        let answer = get("GET /Cargo.toml HTTP/1.1\r\nHost: x\r\n\r\n")?;
        let manifest = std::fs::read_to_string(root.join("Cargo.toml"))?;
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.contains("Cross-Origin-Embedder-Policy: require-corp"));
        assert!(answer.ends_with(&manifest));
        assert!(get("GET /../Cargo.lock HTTP/1.1\r\n\r\n")?.starts_with("HTTP/1.1 404"));
        assert!(get("POST /Cargo.toml HTTP/1.1\r\n\r\n")?.starts_with("HTTP/1.1 405"));
        Ok(())
    }
}
