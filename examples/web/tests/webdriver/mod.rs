//! Just enough of a WebDriver client to drive headless Chromium through `chromedriver`: start it, open a
//! session, load a page, run scripts, take a screenshot. HTTP/1.1 over a `TcpStream`, one request per
//! connection; JSON through serde_json.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

/// A running `chromedriver`, stopped when dropped.
pub struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    /// Starts `chromedriver` on a free port and waits (up to 30 s) until it says it is ready.
    pub fn start(program: &Path) -> Fallible<Driver> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let child = Command::new(program)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let driver = Driver { child, port };
        let start = Instant::now();
        loop {
            if let Ok(status) = driver.request("GET", "/status", None)
                && status["value"]["ready"] == json!(true)
            {
                return Ok(driver);
            }
            if start.elapsed() > Duration::from_secs(30) {
                return Err(format!("{} did not become ready", program.display()).into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A browser session with `capabilities` (W3C `alwaysMatch`).
    pub fn session(&self, capabilities: Value) -> Fallible<Session<'_>> {
        let body = json!({ "capabilities": { "alwaysMatch": capabilities } });
        let answer = self.request("POST", "/session", Some(&body))?;
        let id = answer["value"]["sessionId"]
            .as_str()
            .ok_or_else(|| format!("no session: {answer}"))?
            .to_string();
        Ok(Session { driver: self, id })
    }

    /// One request; the answer's JSON, or an error with WebDriver's message.
    fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Fallible<Value> {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(300)))?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )?;
        let content = read_answer(&mut BufReader::new(stream))?;
        let value: Value = serde_json::from_str(&content)?;
        if let Some(error) = value["value"]["error"].as_str() {
            return Err(format!(
                "WebDriver {method} {path}: {error}: {}",
                value["value"]["message"]
            )
            .into());
        }
        Ok(value)
    }
}

/// An HTTP answer's body, read to its end as its headers say (`Content-Length`, or chunks): chromedriver keeps
/// the connection open whatever the request asks.
fn read_answer(reader: &mut impl BufRead) -> Fallible<String> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    if !line.starts_with("HTTP/1.") {
        return Err(format!("not an HTTP answer: {line:?}").into());
    }
    let (mut length, mut chunked) = (None, false);
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':').unwrap_or((header, ""));
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = Some(value.trim().parse::<usize>()?),
            "transfer-encoding" => chunked = value.trim().eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16)?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        let length = length.ok_or("an HTTP answer without a length")?;
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(String::from_utf8(body)?)
}

/// A browser session, deleted when dropped.
pub struct Session<'a> {
    driver: &'a Driver,
    id: String,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self
            .driver
            .request("DELETE", &format!("/session/{}", self.id), None);
    }
}

impl Session<'_> {
    pub fn navigate(&self, url: &str) -> Fallible<()> {
        self.post("url", json!({ "url": url })).map(|_| ())
    }

    /// Runs `script` (a function body: `return ...;`) in the page; its value.
    pub fn execute(&self, script: &str) -> Fallible<Value> {
        let answer = self.post("execute/sync", json!({ "script": script, "args": [] }))?;
        Ok(answer["value"].clone())
    }

    /// Runs `script` until it returns something other than `null`, every 100 ms, for up to `limit`.
    pub fn wait_for(&self, script: &str, limit: Duration) -> Fallible<Value> {
        let start = Instant::now();
        loop {
            let value = self.execute(script)?;
            if !value.is_null() {
                return Ok(value);
            }
            if start.elapsed() > limit {
                return Err(format!("waited {limit:?} for `{script}`").into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A screenshot of the page, as PNG bytes.
    pub fn screenshot(&self) -> Fallible<Vec<u8>> {
        let answer =
            self.driver
                .request("GET", &format!("/session/{}/screenshot", self.id), None)?;
        let text = answer["value"].as_str().ok_or("no screenshot")?;
        base64(text)
    }

    fn post(&self, what: &str, body: Value) -> Fallible<Value> {
        self.driver
            .request("POST", &format!("/session/{}/{what}", self.id), Some(&body))
    }
}

/// Standard base64 (with padding), decoded.
pub fn base64(text: &str) -> Fallible<Vec<u8>> {
    let value = |c: u8| -> Fallible<u32> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("{:?} is not base64", c as char).into()),
        }
        .into())
    };
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        let mut bits = 0u32;
        for &c in chunk {
            bits = bits << 6 | value(c)?;
        }
        // 4 characters are 3 bytes; 3 are 2; 2 are 1.
        let bytes = chunk.len() * 6 / 8;
        bits <<= 6 * (4 - chunk.len());
        out.extend_from_slice(&bits.to_be_bytes()[1..1 + bytes]);
    }
    Ok(out)
}
