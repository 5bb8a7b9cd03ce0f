//! A plugin that misbehaves on request, for tests that show the host contains it. Never load it
//! in a real deployment.
//!
//! Besides the tools that misbehave outright (`spin`, `grow_memory`, `panic`, `recurse`,
//! `escape`, `flood_stdout`, `sleep`, `env`, `progress`, `until_cancelled`, `ok`, `log`,
//! `leftovers`), it has
//! probes an adversarial test drives with arguments of its choosing: `read_file`, `write_file`,
//! `symlink`, `hard_link`, `http_get`, `output`, `burn` and `env_var`. A probe that fails answers
//! with an error result whose text carries the OS, WASI or wasi:http error, so the test can tell
//! what stopped it.

use std::hint::black_box;
use std::io::{self, Write};
use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;
use std::{env, fs, thread};

use palisade_sdk::{NoArgs, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

const MIB: usize = 1024 * 1024;

/// Loops forever. `black_box` keeps the optimizer from proving the loop useless.
fn spin(_: NoArgs) -> String {
    let mut n: u64 = 0;
    loop {
        n = black_box(n.wrapping_add(1));
    }
}

/// Allocates 1 MiB chunks and keeps them, writing every page so the memory is really used.
fn grow_memory(_: NoArgs) -> String {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut chunk = vec![0u8; MIB];
        for page in chunk.chunks_mut(4096) {
            page[0] = 1;
        }
        kept.push(black_box(chunk));
    }
}

/// Memory a previous call may have marked: a static with data in the module's image (7s), and a
/// zero-initialized one. The host reuses memory slots between instances, so this is how a test
/// sees that every call still starts from the pristine image.
static IMAGE_DATA: [AtomicU8; 4096] = [const { AtomicU8::new(7) }; 4096];
static ZEROED: [AtomicU8; 65536] = [const { AtomicU8::new(0) }; 65536];

/// Reports marks left by earlier calls, then leaves its own.
fn leftovers(_: NoArgs) -> String {
    let dirty_data = IMAGE_DATA.iter().filter(|b| b.load(Relaxed) != 7).count();
    let dirty_zeroed = ZEROED.iter().filter(|b| b.load(Relaxed) != 0).count();
    IMAGE_DATA.iter().for_each(|b| b.store(0xAA, Relaxed));
    ZEROED.iter().for_each(|b| b.store(0xAA, Relaxed));
    if dirty_data == 0 && dirty_zeroed == 0 {
        "clean".into()
    } else {
        format!("dirty: {dirty_data} bytes of data, {dirty_zeroed} bytes of zeroed memory")
    }
}

fn panic_on_purpose(_: NoArgs) -> String {
    panic!("misbehave panicked on purpose")
}

/// Recurses without end. The opaque condition and the work after the call keep it from being
/// turned into a loop or removed; the array makes each frame big.
#[inline(never)]
fn deeper(depth: u64) -> u64 {
    let frame = black_box([depth; 32]);
    if black_box(depth) == u64::MAX {
        return depth;
    }
    let below = deeper(depth + 1);
    black_box(below.wrapping_add(frame[(depth % 32) as usize]))
}

fn recurse(_: NoArgs) -> String {
    format!("recursion ended at {}", deeper(0))
}

/// Tries to reach files outside the sandbox; a test asserts no line says `ALLOWED`.
fn escape(_: NoArgs) -> String {
    let mut lines: Vec<String> = [
        "/etc/passwd",
        "../../../../etc/passwd",
        "/roots/../../etc/passwd",
        "/",
    ]
    .into_iter()
    .map(|path| match try_read(path) {
        Ok(what) => format!("ALLOWED: {path}: {what}"),
        Err(e) => format!("denied: {path}: {e}"),
    })
    .collect();
    lines.push(match fs::read_dir("/") {
        Ok(entries) => format!("ALLOWED: / (list): {} entries", entries.count()),
        Err(e) => format!("denied: / (list): {e}"),
    });
    lines.join("\n")
}

/// Seeing a path at all counts as reaching it, even where reading it then fails (a directory).
fn try_read(path: &str) -> io::Result<String> {
    let meta = fs::metadata(path)?;
    Ok(match fs::read(path) {
        Ok(bytes) => format!("read {} bytes", bytes.len()),
        Err(e) => format!(
            "exists ({} bytes, dir: {}), but read failed: {e}",
            meta.len(),
            meta.is_dir()
        ),
    })
}

/// Writes 64 MiB to stdout and to stderr. Write errors are ignored: the host may close or cap the
/// streams, and the point is the pressure, not the delivery.
fn flood_stdout(_: NoArgs) -> String {
    let mut chunk = vec![b'x'; 64 * 1024];
    chunk[64 * 1024 - 1] = b'\n';
    for _ in 0..(64 * MIB / chunk.len()) {
        let _ = io::stdout().write_all(&chunk);
        let _ = io::stderr().write_all(&chunk);
    }
    let _ = io::stdout().flush();
    "flooded".to_string()
}

#[derive(Deserialize, JsonSchema)]
struct Sleep {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

fn sleep(args: Sleep) -> String {
    thread::sleep(Duration::from_millis(args.ms));
    format!("slept {} ms", args.ms)
}

/// What the process sees of its environment and arguments (the host should give none).
#[derive(Deserialize, JsonSchema)]
struct Progress {
    /// How many progress reports to send, as fast as possible.
    steps: u32,
}

/// Floods the host with progress reports, some going backwards: the host must forward only
/// increasing values, rate-limited, and none after the response.
fn progress(args: Progress) -> String {
    for step in 1..=args.steps {
        palisade_sdk::host::report_progress(f64::from(step), Some(f64::from(args.steps)), None);
        palisade_sdk::host::report_progress(0.5, None, Some("backwards"));
    }
    format!("reported {} steps", args.steps)
}

/// Works until the client cancels, checking now and then, as a well-behaved long task does.
fn until_cancelled(_: NoArgs) -> String {
    // A first report, so a client that asked for progress gets an event (over HTTP, an SSE
    // stream) before the answer.
    palisade_sdk::host::report_progress(0.0, None, Some("waiting to be cancelled"));
    for _ in 0..6000 {
        if palisade_sdk::host::is_cancelled() {
            eprintln!("misbehave saw the cancellation and stopped cleanly");
            return "stopped cleanly".into();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    "never cancelled".into()
}

fn environment(_: NoArgs) -> String {
    let args: Vec<String> = env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let vars: Vec<String> = env::vars_os()
        .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
        .collect();
    let mut text = format!("args ({}):", args.len());
    for arg in &args {
        text.push_str(&format!("\n  {arg}"));
    }
    text.push_str(&format!("\nenv ({}):", vars.len()));
    for var in &vars {
        text.push_str(&format!("\n  {var}"));
    }
    text
}

#[derive(Deserialize, JsonSchema)]
struct Log {
    /// One of debug, info, notice, warning, error, critical, alert, emergency.
    level: String,
    /// How many messages to log, numbered from 1.
    count: u32,
}

/// Logs `count` messages at `level` through the host, as fast as it can.
fn log(args: Log) -> Result<String, String> {
    use palisade_sdk::host::LogLevel;
    let level = match args.level.as_str() {
        "debug" => LogLevel::Debug,
        "info" => LogLevel::Info,
        "notice" => LogLevel::Notice,
        "warning" => LogLevel::Warning,
        "error" => LogLevel::Error,
        "critical" => LogLevel::Critical,
        "alert" => LogLevel::Alert,
        "emergency" => LogLevel::Emergency,
        other => return Err(format!("unknown level `{other}`")),
    };
    for n in 1..=args.count {
        palisade_sdk::host::log(level, &format!("message {n}"));
    }
    Ok(format!("logged {} messages", args.count))
}

#[derive(Deserialize, JsonSchema)]
struct ReadFile {
    /// The file to read, as the plugin sees it.
    path: String,
}

/// Reads a file as text.
fn read_file(args: ReadFile) -> Result<String, String> {
    fs::read_to_string(&args.path).map_err(|e| format!("cannot read {}: {e}", args.path))
}

#[derive(Deserialize, JsonSchema)]
struct WriteFile {
    /// The file to create or replace.
    path: String,
    /// What to write into it.
    text: String,
}

/// Creates or replaces a file.
fn write_file(args: WriteFile) -> Result<String, String> {
    fs::write(&args.path, &args.text).map_err(|e| format!("cannot write {}: {e}", args.path))?;
    Ok(format!("wrote {} bytes to {}", args.text.len(), args.path))
}

/// What reading through a freshly made link gave.
fn read_through(link: &str) -> String {
    match fs::read_to_string(link) {
        Ok(text) => text,
        Err(e) => format!("error: {e}"),
    }
}

#[derive(Deserialize, JsonSchema)]
struct Symlink {
    /// What the link points to, stored as given (relative to the link's directory if relative).
    target: String,
    /// Where to create the link.
    link: String,
}

/// Creates a symbolic link, then reads through it.
fn symlink(args: Symlink) -> Result<String, String> {
    make_symlink(&args.target, &args.link).map_err(|e| {
        format!(
            "cannot create symlink {} -> {}: {e}",
            args.link, args.target
        )
    })?;
    Ok(format!("created; read: {}", read_through(&args.link)))
}

/// `std::os::wasi::fs::symlink_path` is unstable (`wasi_ext`); the deprecated `std::fs::soft_link`
/// is stable and does the same through wasi-libc, resolving `link` as every other `std::fs` call
/// here does.
#[allow(deprecated)]
fn make_symlink(target: &str, link: &str) -> io::Result<()> {
    fs::soft_link(target, link)
}

#[derive(Deserialize, JsonSchema)]
struct HardLink {
    /// The existing file.
    source: String,
    /// Where to create the new name for it.
    link: String,
}

/// Creates a hard link, then reads through it.
fn hard_link(args: HardLink) -> Result<String, String> {
    fs::hard_link(&args.source, &args.link).map_err(|e| {
        format!(
            "cannot create hard link {} -> {}: {e}",
            args.link, args.source
        )
    })?;
    Ok(format!("created; read: {}", read_through(&args.link)))
}

#[derive(Deserialize, JsonSchema)]
struct Output {
    /// How many bytes of `x` to answer with.
    bytes: u64,
}

/// Answers with exactly `bytes` bytes of text.
fn output(args: Output) -> Result<String, String> {
    let len =
        usize::try_from(args.bytes).map_err(|_| format!("{} bytes is too many", args.bytes))?;
    Ok("x".repeat(len))
}

/// Arguments of `bad_header`: `x-mcp-header` on a `number`, which 2026-07-28 does not allow.
#[derive(Deserialize, JsonSchema)]
struct BadHeader {
    #[schemars(extend("x-mcp-header" = "Amount"))]
    amount: f64,
}

#[derive(Deserialize, JsonSchema)]
struct Burn {
    /// How many rounds of xorshift to run.
    iterations: u64,
}

/// Burns CPU for a fixed amount of work. `black_box` keeps each round from being folded away.
fn burn(args: Burn) -> String {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..black_box(args.iterations) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = black_box(x);
    }
    x.to_string()
}

#[derive(Deserialize, JsonSchema)]
struct EnvVar {
    /// The environment variable to look up.
    name: String,
}

fn env_var(args: EnvVar) -> Result<String, String> {
    match env::var(&args.name) {
        Ok(value) => Ok(format!("{}={value}", args.name)),
        Err(env::VarError::NotPresent) => Err(format!("{} is not set", args.name)),
        Err(e) => Err(format!("{}: {e}", args.name)),
    }
}

#[derive(Deserialize, JsonSchema)]
struct HttpGet {
    /// An `http://` or `https://` URL.
    url: String,
}

/// Fetches a URL through wasi:http.
fn http_get(args: HttpGet) -> Result<String, String> {
    let (status, body) =
        http::get(&args.url).map_err(|e| format!("request to {} failed: {e}", args.url))?;
    let shown = &body[..body.len().min(200)];
    Ok(format!(
        "status {status}: {}",
        String::from_utf8_lossy(shown)
    ))
}

/// A bare-bones HTTP GET over wasi:http's outgoing-handler.
mod http {
    use wasi::http::outgoing_handler;
    use wasi::http::types::{ErrorCode, Fields, Method, OutgoingRequest, Scheme};
    use wasi::io::streams::StreamError;

    /// The most of a body that is read.
    const BODY_CAP: usize = 64 * 1024;

    /// Splits `url` into scheme, authority and path with query.
    fn parse(url: &str) -> Result<(Scheme, &str, &str), String> {
        let (scheme, rest) = if let Some(rest) = url.strip_prefix("http://") {
            (Scheme::Http, rest)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (Scheme::Https, rest)
        } else {
            return Err("not an http:// or https:// URL".into());
        };
        let rest = rest.split('#').next().unwrap_or(rest);
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err("the URL has no host".into());
        }
        Ok((scheme, authority, path))
    }

    /// A wasi:http error code in its `Debug` form, without the type name: `HttpRequestDenied`,
    /// `DnsError(DnsErrorPayload { .. })`.
    fn describe(e: &ErrorCode) -> String {
        let text = format!("{e:?}");
        match text.strip_prefix("ErrorCode::") {
            Some(rest) => rest.to_string(),
            None => text,
        }
    }

    /// The status and up to [`BODY_CAP`] bytes of the body. Errors carry the wasi:http
    /// `ErrorCode` as [`describe`] writes it.
    pub fn get(url: &str) -> Result<(u16, Vec<u8>), String> {
        let (scheme, authority, path) = parse(url)?;
        // A path such as `?q` needs its leading slash.
        let path = if path.starts_with('/') {
            path.to_string()
        } else {
            format!("/{path}")
        };

        let request = OutgoingRequest::new(Fields::new());
        request
            .set_method(&Method::Get)
            .map_err(|()| "cannot set the method")?;
        request
            .set_scheme(Some(&scheme))
            .map_err(|()| "cannot set the scheme")?;
        request
            .set_authority(Some(authority))
            .map_err(|()| format!("invalid authority `{authority}`"))?;
        request
            .set_path_with_query(Some(&path))
            .map_err(|()| format!("invalid path `{path}`"))?;

        let future = outgoing_handler::handle(request, None).map_err(|e| describe(&e))?;
        future.subscribe().block();
        let response = match future.get() {
            Some(Ok(Ok(response))) => response,
            Some(Ok(Err(e))) => return Err(describe(&e)),
            Some(Err(())) => return Err("the response was already taken".into()),
            None => return Err("the response is not ready after waiting for it".into()),
        };
        let status = response.status();

        // Declared in this order so they drop in reverse: a stream before its body, a body before
        // its response, as the component model requires of child resources.
        let body = response
            .consume()
            .map_err(|()| "cannot take the response body")?;
        let stream = body
            .stream()
            .map_err(|()| "cannot open the response body")?;
        let mut bytes = Vec::new();
        while bytes.len() < BODY_CAP {
            match stream.blocking_read((BODY_CAP - bytes.len()) as u64) {
                Ok(chunk) => bytes.extend_from_slice(&chunk),
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(e)) => {
                    return Err(format!("reading the body failed: {}", e.to_debug_string()));
                }
            }
        }
        Ok((status, bytes))
    }
}

palisade_sdk::export_plugin! {
    tools: [
        Tool::new("spin", spin).description("Loop forever"),
        Tool::new("grow_memory", grow_memory).description("Allocate memory until stopped"),
        Tool::new("panic", panic_on_purpose).description("Panic"),
        Tool::new("recurse", recurse).description("Recurse until the stack runs out"),
        Tool::new("escape", escape).description("Try to read files outside the sandbox"),
        Tool::new("flood_stdout", flood_stdout).description("Write 64 MiB to stdout and to stderr"),
        Tool::new("sleep", sleep).description("Sleep for ms milliseconds"),
        Tool::new("env", environment).description("Show the environment variables and arguments the plugin sees"),
        Tool::new("progress", progress).description("Report progress many times, some of it backwards"),
        Tool::new("until_cancelled", until_cancelled).description("Work until cancelled, checking is-cancelled"),
        Tool::new("ok", |_: NoArgs| "still fine").description("Answer `still fine`"),
        Tool::new("leftovers", leftovers).description("Report marks earlier calls left in memory, then leave some"),
        Tool::new("log", log).description("Log count messages at level through the host"),
        Tool::new("read_file", read_file).description("Read the file at path as text"),
        Tool::new("write_file", write_file).description("Write text to the file at path"),
        Tool::new("symlink", symlink).description("Create a symbolic link at link to target, then read through it"),
        Tool::new("hard_link", hard_link).description("Create a hard link at link to source, then read through it"),
        Tool::new("http_get", http_get).description("GET url through wasi:http and show the status and the start of the body"),
        Tool::new("output", output).description("Answer with exactly bytes bytes of text"),
        Tool::new("burn", burn).description("Run iterations rounds of xorshift and answer the result"),
        Tool::new("env_var", env_var).description("Show the environment variable name"),
        Tool::new("bad_header", |args: BadHeader| format!("{}", args.amount))
            .description("Marks a number parameter for header mirroring, which MCP forbids: the host must leave it out"),
    ],
}
