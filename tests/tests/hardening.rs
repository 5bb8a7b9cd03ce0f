//! Hardening: nothing a plugin or a client controls can exhaust the host. Each test attacks the
//! host itself (not the sandbox) with the `hostile` plugin or a client of its own, checks the
//! attack is refused or bounded with an explanation, and ends by showing other plugins still
//! answer. (How fast they answer during an attack is measured by the benchmark, not here.)

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use palisade_tests::*;
use serde_json::{Value, json};
use tempfile::TempDir;

/// A directory with `data/` (granted to hostile at /data, read-write, holding its `mode` file)
/// and a configuration serving hello, notes (the example notes) and hostile, in that order.
struct Setup {
    dir: TempDir,
}

impl Setup {
    fn new(mode: &str) -> Setup {
        let dir = tempdir();
        write_file(dir.path().join("data/mode"), mode);
        Setup { dir }
    }

    fn data(&self, rel: &str) -> PathBuf {
        self.dir.path().join("data").join(rel)
    }

    fn config(&self, extra: &str) -> PathBuf {
        self.config_keys("", extra)
    }

    /// [`Setup::config`] with `keys` in hostile's own section.
    fn config_keys(&self, keys: &str, extra: &str) -> PathBuf {
        config_file(
            self.dir.path(),
            &format!(
                r#"{hello_and_notes}
[plugins.hostile]
path = {hostile}
{keys}

[[plugins.hostile.dirs]]
host = "data"
guest = "/data"
mode = "read-write"

{extra}
"#,
                hello_and_notes = hello_and_notes_sections(),
                hostile = toml_str(&plugin_arg("hostile")),
            ),
        )
    }

    fn server(&self) -> Server {
        self.server_with("")
    }

    fn server_with(&self, extra: &str) -> Server {
        let config = self.config(extra);
        let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
        s.initialize(LATEST_VERSION);
        // Loaded before the test changes what the plugins will do.
        s.wait_ready();
        s
    }
}

/// Another plugin still answers, promptly.
#[track_caller]
fn still_serving(s: &mut Server) {
    let started = Instant::now();
    assert_eq!(
        ok_text(&s.call_tool("hello_greet", json!({"name": "neighbour"}))),
        "Hello, neighbour!"
    );
    // Liveness, not a benchmark.
    assert!(
        started.elapsed() < secs(10),
        "the server was slow to answer after the attack: {:?}",
        started.elapsed()
    );
}

fn uris(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r[field].as_str().map(String::from))
        .collect()
}

#[test]
fn schemas_the_host_cannot_check_cheaply_are_refused_naming_the_tool() {
    let setup = Setup::new("plain");
    let mut s = setup.server();
    let (tools, _) = s.list_all_tools();
    let names = tool_names(&tools);
    for served in [
        "hostile_ok",
        "hostile_regex",
        "hostile_random",
        "hostile_open",
    ] {
        assert!(
            names.iter().any(|n| n == served),
            "{served} missing: {names:?}"
        );
    }
    for refused in ["hostile_lookahead", "hostile_bomb", "hostile_huge_schema"] {
        assert!(
            !names.iter().any(|n| n == refused),
            "{refused} served: {names:?}"
        );
        assert!(
            s.wait_for_stderr(refused, secs(5)),
            "the log names {refused}:\n{}",
            s.stderr()
        );
    }
    let log = s.stderr();
    assert!(log.contains("expanded"), "the reason for the bomb:\n{log}");
    assert!(
        log.contains("bytes, over the"),
        "the reason for the huge schema:\n{log}"
    );
    // A name with a control character is no public name.
    assert!(!names.iter().any(|n| n.contains('\u{7}')));

    // `^(a+)+$` against 50,000 a's and a `!`: forever for a backtracking engine.
    let input = format!("{}!", "a".repeat(50_000));
    let result = s.call_tool("hostile_regex", json!({ "s": input }));
    let text = tool_text(&result);
    assert!(
        is_tool_error(&result) && text.contains("invalid arguments"),
        "{text}"
    );
    assert!(
        text.len() < 10_000,
        "the error does not echo the whole argument"
    );
    assert_eq!(
        ok_text(&s.call_tool("hostile_regex", json!({"s": "aaaa"}))),
        "fine"
    );
    still_serving(&mut s);
}

#[test]
fn resources_described_badly_are_left_out_and_the_rest_served() {
    let setup = Setup::new("plain");
    let mut s = setup.server();
    let listed = s.result("resources/list", json!({}));
    let listed = uris(&listed, "resources", "uri");
    assert!(listed.iter().any(|u| u == "hostile://about"), "{listed:?}");
    for bad in [
        "hostile://bell\u{7}",
        "hostile://nameless",
        "file:///etc/passwd",
    ] {
        assert!(!listed.iter().any(|u| u == bad), "{bad} listed: {listed:?}");
    }
    let templates = s.result("resources/templates/list", json!({}));
    let templates = uris(&templates, "resourceTemplates", "uriTemplate");
    assert!(
        templates.iter().any(|t| t == "hostile://item/{id}"),
        "{templates:?}"
    );
    assert!(
        !templates
            .iter()
            .any(|t| t.starts_with("hostile://huge") || t == "{+anything}")
    );
    // The 30 kB template is named in the log, not copied into it.
    let log = s.stderr();
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 4096, "a log line of {longest} bytes");
    // A URI of a megabyte routes nowhere, at once.
    let huge = format!("hostile://item/{}", "x".repeat(1 << 20));
    let response = s.request("resources/read", json!({ "uri": huge }));
    assert!(response.get("error").is_some(), "{response}");
    still_serving(&mut s);
}

#[test]
fn a_plugin_claiming_another_plugins_uris_loses_its_resources_and_the_others_serve() {
    let setup = Setup::new("steal");
    let mut s = setup.server();
    assert!(
        s.wait_for_stderr("resources not served", secs(5)),
        "{}",
        s.stderr()
    );
    let log = s.stderr();
    assert!(
        log.contains("`notes`") && log.contains("`hostile`"),
        "{log}"
    );
    // Its tools still serve; none of its resources do.
    let (tools, _) = s.list_all_tools();
    assert!(tool_names(&tools).iter().any(|n| n == "hostile_ok"));
    let listed = s.result("resources/list", json!({}));
    let listed = uris(&listed, "resources", "uri");
    assert!(
        !listed.iter().any(|u| u.starts_with("hostile:")),
        "{listed:?}"
    );
    let read = s.result("resources/read", json!({"uri": "notes://welcome"}));
    let text = read["contents"][0]["text"].as_str().unwrap_or_default();
    assert!(!text.contains("hostile served"), "{text}");
    assert!(text.contains("Welcome") || !text.is_empty(), "{read}");
    still_serving(&mut s);
}

#[test]
fn uris_listed_after_load_stay_in_the_plugins_own_namespace() {
    let setup = Setup::new("plain");
    let mut s = setup.server();
    write_file(setup.data("mode"), "grab");
    let listed = s.result("resources/list", json!({}));
    let listed = uris(&listed, "resources", "uri");
    assert!(listed.iter().any(|u| u == "hostile://more"), "{listed:?}");
    for foreign in ["notes://grabbed", "elsewhere://x"] {
        assert!(
            !listed.iter().any(|u| u == foreign),
            "{foreign} listed: {listed:?}"
        );
    }
    let response = s.request("resources/read", json!({"uri": "notes://grabbed"}));
    assert!(
        !response.to_string().contains("hostile served"),
        "the notes namespace was taken over: {response}"
    );
    let response = s.request("resources/read", json!({"uri": "elsewhere://x"}));
    assert!(response.get("error").is_some(), "{response}");
    still_serving(&mut s);
}

#[cfg(unix)]
#[test]
fn a_fifo_in_a_granted_directory_cannot_hold_a_host_thread() {
    let setup = Setup::new("plain");
    let status = Command::new("mkfifo")
        .arg(setup.data("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink("pipe", setup.data("link-to-pipe")).unwrap();
    let mut s = setup.server();
    // More than tokio's blocking threads would take to be noticed, were each held.
    for n in 0..40 {
        let path = if n % 2 == 0 {
            "/data/pipe"
        } else {
            "/data/link-to-pipe"
        };
        let result = s.call_tool("hostile_open", json!({ "path": path }));
        let text = tool_text(&result);
        assert!(is_tool_error(&result), "{text}");
        assert!(
            !text.contains("time limit"),
            "refused at once, not stopped by the deadline: {text}"
        );
    }
    write_file(setup.data("plain.txt"), "regular");
    assert_eq!(
        ok_text(&s.call_tool("hostile_open", json!({"path": "/data/plain.txt"}))),
        "read 7 bytes"
    );
    still_serving(&mut s);
}

#[test]
fn gigabytes_of_random_bytes_are_refused() {
    let setup = Setup::new("plain");
    let mut s = setup.server();
    assert_eq!(
        ok_text(&s.call_tool("hostile_random", json!({"bytes": 1024}))),
        "got 1024 random bytes"
    );
    let result = s.call_tool("hostile_random", json!({"bytes": 1u64 << 32}));
    let text = tool_text(&result);
    assert!(
        is_tool_error(&result) && text.contains("exceeds limit"),
        "{text}"
    );
    still_serving(&mut s);
}

#[test]
fn tool_definitions_are_pinned_and_answers_must_match_the_output_schema() {
    let setup = Setup::new("plain");
    let config = setup.config("");
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    // Lists wait only 2 s for plugins still loading: load first.
    s.wait_ready();
    let description = |s: &mut Server| {
        let (tools, _) = s.list_all_tools();
        tools
            .iter()
            .find(|t| t["name"] == "hostile_rug_pull")
            .map(|t| t["description"].clone())
            .unwrap()
    };
    assert_eq!(description(&mut s), "Read nothing, harmlessly");
    // The plugin now describes the tool differently and says its list changed.
    write_file(setup.data("mode"), "grab");
    ok_text(&s.call_tool("hostile_announce", json!({})));
    assert!(
        s.wait_for_stderr("new tool definitions refused", secs(20)),
        "{}",
        s.stderr()
    );
    assert!(
        s.stderr()
            .contains("tool `rug_pull`: its description changed")
    );
    assert_eq!(description(&mut s), "Read nothing, harmlessly");

    let result = s.call_tool("hostile_lying", json!({}));
    let text = tool_text(&result);
    assert!(
        is_tool_error(&result) && text.contains("does not match its outputSchema"),
        "{text}"
    );
    assert!(result.get("structuredContent").is_none(), "{result}");
    still_serving(&mut s);
}

/// `palisade serve` with `args`, expected to refuse to start with `needle` on stderr.
fn refused_with(args: &[&str], needle: &str) {
    let mut full = vec!["serve", "--no-watch"];
    full.extend_from_slice(args);
    let out = run_palisade(&full, true, secs(120));
    assert!(
        out.status.is_some() && !out.success(),
        "{args:?} must refuse:\n{out}"
    );
    assert!(
        out.stderr.contains(needle),
        "stderr must say {needle:?}:\n{out}"
    );
}

#[cfg(unix)]
#[test]
fn the_compile_cache_cannot_be_written_by_others_or_reached_by_a_plugin() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempdir();
    let hello = plugin_arg("hello");
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    refused_with(
        &["--plugin", &hello, "--cache-dir", &path_str(&shared)],
        "other users can write it",
    );

    // A grant that holds the cache.
    let cache = dir.path().join("granted/cache");
    std::fs::create_dir_all(&cache).unwrap();
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.hello]\npath = {}\n\n[[plugins.hello.dirs]]\nhost = \"granted\"\nguest = \"/g\"\n",
            toml_str(&hello)
        ),
    );
    refused_with(
        &[
            "--config",
            &path_str(&config),
            "--cache-dir",
            &path_str(&cache),
        ],
        "contains the compile cache",
    );
    // A root that holds it.
    refused_with(
        &[
            "--plugin",
            &hello,
            "--root",
            &path_str(dir.path()),
            "--cache-dir",
            &path_str(&cache),
        ],
        "contains the compile cache",
    );

    // A tampered entry is compiled again, never run.
    let own = dir.path().join("own");
    let out = run_palisade(
        &["compile", &hello, "--cache-dir", &path_str(&own)],
        false,
        secs(120),
    );
    assert!(out.success(), "{out}");
    let entry = std::fs::read_dir(&own)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .expect("an entry");
    let mut bytes = std::fs::read(&entry).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap();
    let mut s = Server::start(&[
        "--no-watch",
        "--plugin",
        &hello,
        "--cache-dir",
        &path_str(&own),
    ]);
    s.initialize(LATEST_VERSION);
    assert!(
        s.wait_for_stderr("cache entry refused, compiling again", secs(5)),
        "{}",
        s.stderr()
    );
    still_serving(&mut s);
    assert_ne!(
        std::fs::read(&entry).unwrap(),
        bytes,
        "the entry was written anew"
    );
}

#[cfg(unix)]
#[test]
fn calls_are_refused_while_the_audit_log_cannot_be_written() {
    let setup = Setup::new("plain");
    let audit = setup.dir.path().join("audit.jsonl");
    // Writing to /dev/full fails as on a full disk.
    std::os::unix::fs::symlink("/dev/full", &audit).unwrap();
    let mut s = setup.server_with("[audit]\npath = \"audit.jsonl\"\n");
    // The first call runs; its line cannot be written.
    ok_text(&s.call_tool("hello_greet", json!({"name": "a"})));
    for _ in 0..2 {
        let response = s.call_tool_response("hello_greet", json!({"name": "b"}));
        let error = s.expect_error(&response);
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains("cannot write its audit log"), "{error}");
        assert!(
            !message.contains(&*setup.dir.path().to_string_lossy())
                && !message.contains("/dev/full"),
            "no host path goes to the client: {message}"
        );
    }
    assert!(s.stderr().contains("cannot write the audit log"));
    // Room again: calls are served, after a line counting those refused.
    std::fs::remove_file(&audit).unwrap();
    assert_eq!(
        ok_text(&s.call_tool("hello_greet", json!({"name": "c"}))),
        "Hello, c!"
    );
    let text = std::fs::read_to_string(&audit).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["outcome"], "audit-gap", "{text}");
    assert!(
        first["detail"]
            .as_str()
            .unwrap()
            .starts_with("2 calls refused"),
        "{text}"
    );
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(target_os = "linux")]
#[test]
fn a_stdio_client_that_stops_reading_is_dropped_before_the_server_grows() {
    let misbehave = plugin_arg("misbehave");
    let cache = shared_cache_dir();
    let mut child = Command::new(palisade_bin())
        .args(["serve", "--no-watch", "--plugin", &misbehave, "--cache-dir"])
        .arg(&cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let line = |v: Value| format!("{v}\n");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LATEST_VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    stdin.write_all(line(init).as_bytes()).unwrap();
    stdin
        .write_all(
            line(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).as_bytes(),
        )
        .unwrap();
    // 200 answers of 1 MB each, and the client reads none of them. It sends them 10 ms apart,
    // as a client would, so that they are not all refused for being more than the plugin's 16
    // calls at once (its calls take turns on one core here).
    for id in 1..=200 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "misbehave_output", "arguments": {"bytes": 1_000_000}}});
        if stdin.write_all(line(call).as_bytes()).is_err() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let pid = child.id();
    let deadline = Instant::now() + secs(60);
    let mut peak = 0;
    let status = loop {
        peak = peak.max(rss_kib(pid));
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the server kept a client that does not read"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("has not read"), "{stderr}");
    // 64 MiB of queue, the call in hand and the server itself; not the 200 MB it was sent.
    assert!(peak < 190 * 1024, "peak RSS {peak} KiB");
}

#[test]
fn a_schema_within_the_rules_still_validates_arguments() {
    // The ordinary path is unchanged by the bounds: hello's schema refuses a wrong type.
    let mut s = Server::start(&["--no-watch", "--plugin", &plugin_arg("hello")]);
    s.initialize(LATEST_VERSION);
    let result = s.call_tool("hello_greet", json!({"name": 42}));
    assert!(is_tool_error(&result), "{result}");
    still_serving(&mut s);
}

/// An HTTP server of hello, with `http` lines in `[server.http]` and `limits` for hello.
fn http_server(http: &str, limits: &str) -> (HttpServer, TempDir) {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[server.http]\n{http}\n\n[plugins.hello]\npath = {}\n\n[plugins.hello.limits]\n{limits}\n",
            toml_str(&plugin_arg("hello"))
        ),
    );
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    (server, dir)
}

/// Whether the server closed `stream` (a read gives end of file or an error) within `wait`.
fn closed_within(stream: &mut std::net::TcpStream, wait: std::time::Duration) -> bool {
    use std::io::Read as _;
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 256];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            // An answer (a 408, say) may come before the close.
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn a_client_sending_a_byte_at_a_time_is_cut_off() {
    let (server, _dir) = http_server("header_timeout_s = 1\nbody_timeout_s = 1", "");
    // Half the headers, then nothing.
    let mut slow = std::net::TcpStream::connect(&server.addr).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        .unwrap();
    assert!(
        closed_within(&mut slow, secs(10)),
        "headers never finished, connection kept"
    );
    // All the headers, half the body.
    let mut slow = std::net::TcpStream::connect(&server.addr).unwrap();
    slow.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
    )
    .unwrap();
    assert!(
        closed_within(&mut slow, secs(10)),
        "body never finished, connection kept"
    );
    // Meanwhile a well-behaved client is served.
    let mut client = server.client();
    client.initialize(LATEST_VERSION);
    assert_eq!(
        ok_text(&client.call_tool("hello_greet", json!({"name": "web"}))),
        "Hello, web!"
    );
}

#[test]
fn connections_and_sessions_are_capped_per_client() {
    let (server, _dir) = http_server("", "");
    // Idle connections from one address, past the cap: the oldest that sent no request gives
    // way to the new one, which is served.
    let mut held: Vec<std::net::TcpStream> = (0..128)
        .map(|_| std::net::TcpStream::connect(&server.addr).unwrap())
        .collect();
    let mut extra = std::net::TcpStream::connect(&server.addr).unwrap();
    assert!(
        closed_within(&mut held[0], secs(5)),
        "the oldest connection without a request was kept past the cap"
    );
    extra
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut extra, &mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(held);
    // Sessions: 64 per client, then 429 with a reason. A server of its own: the first may not
    // have seen all 128 connections close yet when these arrive, on a busy machine.
    let (server, _sessions_dir) = http_server("", "");
    let mut clients = Vec::new();
    for _ in 0..64 {
        let mut client = server.client();
        client.initialize(LATEST_VERSION);
        clients.push(client);
    }
    let mut one_more = server.client();
    let message = one_more.request_message(
        "initialize",
        json!({"protocolVersion": LATEST_VERSION, "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    let reply = one_more.post(&message);
    assert_eq!(reply.status, 429, "{reply:?}");
    assert!(reply.text().contains("sessions open"));
    // The sessions opened still work.
    assert_eq!(
        ok_text(&clients[0].call_tool("hello_greet", json!({"name": "x"}))),
        "Hello, x!"
    );
}

#[test]
fn session_caps_are_configurable_and_refusals_name_them() {
    const ALICE: &str = "alice-token-0123456789abcdef0123";
    const BOB: &str = "bob-token-0123456789abcdef0123456";
    let sha256 = |token: &str| {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(token.as_bytes()))
    };
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            r#"[server.http]
max_sessions = 3
max_sessions_per_client = 2

[[auth.tokens]]
name = "alice"
sha256 = "{}"
scope = "all"

[[auth.tokens]]
name = "bob"
sha256 = "{}"
scope = "all"

[plugins.hello]
path = {}
"#,
            sha256(ALICE),
            sha256(BOB),
            toml_str(&plugin_arg("hello"))
        ),
    );
    let server = HttpServer::start(&["--no-watch", "--config", &path_str(&config)]);
    let client_of = |token: &str| {
        let mut client = server.client();
        client
            .headers
            .push(("Authorization".into(), format!("Bearer {token}")));
        client
    };
    let try_initialize = |token: &str, id: &str| {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": LATEST_VERSION, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let reply = client_of(token).post(&message);
        (reply.status, reply.json())
    };
    let mut alice: Vec<HttpClient> = (0..2)
        .map(|_| {
            let mut client = client_of(ALICE);
            client.initialize(LATEST_VERSION);
            client
        })
        .collect();
    // Alice's share is full; the refusal says which setting, and answers her request's id.
    let (status, body) = try_initialize(ALICE, "alice-3");
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["id"], "alice-3");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_sessions_per_client"),
        "{body}"
    );
    // Bob's first session is the third of three; his second finds the server full.
    client_of(BOB).initialize(LATEST_VERSION);
    let (status, body) = try_initialize(BOB, "bob-2");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["id"], "bob-2");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("[server.http] max_sessions)"),
        "{body}"
    );
    // Ending a session makes room again.
    assert_eq!(alice.remove(0).delete(&[]).status, 204);
    client_of(BOB).initialize(LATEST_VERSION);
    assert_eq!(
        ok_text(&alice[0].call_tool("hello_greet", json!({"name": "x"}))),
        "Hello, x!"
    );
}

#[test]
fn a_new_session_does_not_reset_an_anonymous_clients_rate() {
    let (server, _dir) = http_server("", "calls_per_minute_per_client = 2");
    let mut first = server.client();
    first.initialize(LATEST_VERSION);
    for _ in 0..2 {
        ok_text(&first.call_tool("hello_greet", json!({"name": "a"})));
    }
    // A fresh session from the same address is the same client.
    let mut second = server.client();
    second.initialize(LATEST_VERSION);
    let result = second.call_tool("hello_greet", json!({"name": "b"}));
    let text = tool_text(&result);
    assert!(
        is_tool_error(&result) && text.contains("calls_per_minute_per_client"),
        "{text}"
    );
}

#[test]
fn plugin_text_cannot_forge_the_servers_log_lines_nor_serve_an_empty_name() {
    let setup = Setup::new("plain");
    let mut s = setup.server();
    let (tools, _) = s.list_all_tools();
    let names = tool_names(&tools);
    assert!(!names.iter().any(|n| n == "hostile_"), "{names:?}");
    assert!(
        s.wait_for_stderr("its name is empty", secs(5)),
        "the log says why: {}",
        s.stderr()
    );
    assert_eq!(ok_text(&s.call_tool("hostile_forge", json!({}))), "logged");
    // Both the `log` import and stdout end up escaped on one line each.
    assert!(
        s.wait_for_stderr("ok\\n2026-01-01", secs(5)),
        "{}",
        s.stderr()
    );
    assert!(
        s.wait_for_stderr("ok\\r2026-01-01", secs(5)),
        "{}",
        s.stderr()
    );
    let log = s.stderr();
    assert!(
        !log.lines()
            .any(|l| l.starts_with("2026-01-01T00:00:00.000000Z")),
        "a plugin wrote a line of its own:\n{log}"
    );
    assert!(!log.contains('\r'), "{log}");
    still_serving(&mut s);
}

#[test]
fn a_plugin_asks_as_itself_within_its_cap_and_only_sends_users_to_granted_hosts() {
    let setup = Setup::new("plain");
    let config = setup.config_keys(
        "network = [\"https://login.example.com\"]",
        "[plugins.hostile.limits]\nquestions_per_call = 3\n",
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize_with_capabilities(
        "2025-11-25",
        json!({"elicitation": {"form": {}, "url": {}}}),
    );
    s.notify("notifications/initialized", Value::Null);
    s.wait_ready();

    // Three questions, each marked as the plugin's; the fourth stops the call.
    let id = s.send_request(
        "tools/call",
        json!({"name": "hostile_ask_many", "arguments": {"count": 1000}}),
    );
    for n in 0..3 {
        let asked = s.wait_server_request("elicitation/create", default_timeout());
        assert_eq!(
            asked["params"]["message"],
            format!("[plugin `hostile`] Question {n}"),
            "{asked}"
        );
        s.respond(&asked["id"], json!({"action": "decline"}));
    }
    let answer = s.wait_response(&id, default_timeout());
    let text = error_text(&answer["result"], "asked the client more than 3 questions");
    assert!(text.contains("questions_per_call"), "{text}");
    s.expect_no_server_request("elicitation/create", std::time::Duration::from_millis(300));

    // URL mode: a host outside the grants is refused without asking the user.
    let result = s.call_tool(
        "hostile_elicit_url",
        json!({"url": "https://evil.example.net/login"}),
    );
    let text = error_text(&result, "only to hosts its network grant lists");
    assert!(text.contains("evil.example.net"), "{text}");
    s.expect_no_server_request("elicitation/create", std::time::Duration::from_millis(300));
    let id = s.send_request(
        "tools/call",
        json!({"name": "hostile_elicit_url", "arguments": {"url": "https://login.example.com/x"}}),
    );
    let asked = s.wait_server_request("elicitation/create", default_timeout());
    assert_eq!(asked["params"]["mode"], "url", "{asked}");
    assert_eq!(
        asked["params"]["message"],
        "[plugin `hostile`] Sign in to continue"
    );
    s.respond(&asked["id"], json!({"action": "accept"}));
    let answer = s.wait_response(&id, default_timeout());
    assert_eq!(ok_text(&answer["result"]), "ElicitationAction::Accept");

    // The host's and MCP's reserved _meta keys are not the plugin's to send.
    let result = s.call_tool("hostile_reserved_meta", json!({}));
    assert_eq!(
        result["_meta"],
        json!({"com.example.mcp/kept": true}),
        "{result}"
    );
    assert!(
        s.wait_for_stderr("dropped _meta keys", secs(5)),
        "{}",
        s.stderr()
    );
    still_serving(&mut s);
}

/// A plugin's relist never changes what other plugins serve: hostile, first in the
/// configuration and prefixed `hello`, relists with `greet`, which the `hello` plugin serves.
#[test]
fn a_relist_never_takes_a_name_another_plugin_serves() {
    let dir = tempdir();
    write_file(dir.path().join("data/mode"), "plain");
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.hostile]\npath = {}\nprefix = \"hello\"\n\n[[plugins.hostile.dirs]]\n\
             host = \"data\"\nguest = \"/data\"\nmode = \"read-write\"\n\n{}",
            toml_str(&plugin_arg("hostile")),
            hello_and_notes_sections()
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    still_serving(&mut s);
    write_file(dir.path().join("data/mode"), "collide");
    assert_eq!(
        ok_text(&s.call_tool("hello_announce", json!({}))),
        "announced"
    );
    assert!(
        s.wait_for_stderr("new listing refused", secs(10)),
        "{}",
        s.stderr()
    );
    assert!(s.stderr().contains("hello_greet"), "{}", s.stderr());
    // hello still serves its tool, and hostile its previous listing.
    still_serving(&mut s);
    let (tools, _) = s.list_all_tools();
    let greet: Vec<&Value> = tools
        .iter()
        .filter(|t| t["name"] == "hello_greet")
        .collect();
    assert_eq!(greet.len(), 1, "{tools:?}");
    assert_ne!(greet[0]["description"], "Greet, as the hostile plugin");
    assert_eq!(ok_text(&s.call_tool("hello_ok", json!({}))), "fine");
}

/// A component at every per-component maximum of the instance pool (64 core instances, 2
/// memories), allowed 64 calls at once, leaves the pool to the other plugins: their calls go on
/// while all 64 of its calls hold instances.
#[test]
fn one_plugins_calls_never_take_the_whole_instance_pool() {
    let setup = Setup::new("plain");
    let hog = wat_component(setup.dir.path(), "generic-pool-hog");
    let mut s = setup.server_with(&format!(
        "[plugins.hog]\npath = {}\n\n[plugins.hog.limits]\nconcurrent_calls = 64\n\
         timeout_ms = 2000\nfuel_per_call = 1000000000000\n",
        toml_str(&path_str(&hog))
    ));
    let ids: Vec<Value> = (0..64)
        .map(|_| s.send_request("tools/call", json!({"name": "hog_hold", "arguments": {}})))
        .collect();
    // For as long as the 64 calls hold their instances, another plugin's calls are served.
    // Paced, so the neighbour stays within its own rate limit (3000 calls a minute) however
    // fast its calls are.
    let started = Instant::now();
    while started.elapsed() < std::time::Duration::from_millis(1500) {
        still_serving(&mut s);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    for id in ids {
        let answer = s.wait_response(&id, default_timeout());
        error_text(&answer["result"], "time limit");
    }
    still_serving(&mut s);
}

/// A plugin that asks for a relist on every call, with the files watched, gets at most one
/// reload a second: the reload's own reads of the files are no change that starts another.
#[test]
fn reloads_hold_to_one_a_second_while_files_are_watched() {
    let setup = Setup::new("plain");
    let config = setup.config("");
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    let reloads = |s: &Server| s.stderr().matches(" reloaded ").count();
    let started = Instant::now();
    for _ in 0..20 {
        assert_eq!(
            ok_text(&s.call_tool("hostile_announce", json!({}))),
            "announced"
        );
    }
    assert!(s.wait_for_stderr(" reloaded ", secs(10)), "{}", s.stderr());
    // A storm keeps reloading on its own after the calls stop; watch for one.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let seconds = started.elapsed().as_secs_f64();
    let count = reloads(&s);
    assert!(
        count as f64 <= seconds + 1.0,
        "{count} reloads in {seconds:.1} s:\n{}",
        s.stderr()
    );
    still_serving(&mut s);
}

/// Compiling costs host memory in proportion to a component's code: a component over
/// `max_component_mib` or `max_component_functions` is refused before it is compiled (or, over
/// the size, read), naming the plugin and the setting; the others serve.
#[test]
fn components_too_large_to_compile_are_refused_naming_the_plugin() {
    let dir = tempdir();
    let adder = wat_component(dir.path(), "generic-adder");
    let config = config_file(
        dir.path(),
        &format!(
            "[server]\nmax_component_mib = 8\nmax_component_functions = 100\n\n\
             [plugins.adder]\npath = {}\n\n[plugins.big]\npath = {}\n\n[plugins.many]\npath = {}\n",
            toml_str(&path_str(&adder)),
            toml_str(&plugin_arg("http-py")),
            toml_str(&plugin_arg("hostile")),
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    let log = s.stderr();
    let line = |needle: &str| log.lines().find(|l| l.contains(needle)).unwrap_or_default();
    let big = line("plugin `big`");
    assert!(
        big.contains("too large to compile") && big.contains("max_component_mib"),
        "{log}"
    );
    let many = line("plugin `many`");
    assert!(
        many.contains("functions, more than 100") && many.contains("max_component_functions"),
        "{log}"
    );
    let sum = s.call_tool("adder_add_add", json!({"x": 2, "y": 3}));
    assert_eq!(sum["structuredContent"], json!({"result": 5}), "{sum}");
}

/// Updates are matched against the reporting plugin's own templates only, under a cap on its
/// templates and a bound on the matching work of one call; the rest are dropped, said once.
#[test]
fn resource_updates_cost_the_plugin_within_a_bound_and_stall_no_one() {
    let setup = Setup::new("flood");
    let mut s = setup.server();
    assert!(
        s.wait_for_stderr("resource templates left out", secs(5)),
        "{}",
        s.stderr()
    );
    let started = Instant::now();
    let text = ok_text(&s.call_tool("hostile_flood", json!({"count": 3000})));
    assert_eq!(text, "sent 3000");
    assert!(
        s.wait_for_stderr("resource updates of this call dropped", secs(10)),
        "{}",
        s.stderr()
    );
    // Liveness, not a benchmark: unbounded, 30 such updates took 13.6 s.
    assert!(started.elapsed() < secs(10), "{:?}", started.elapsed());
    still_serving(&mut s);
}

/// Calls that build answers far over their output limit are refused without the host copying
/// them, and their instances are reset off the async workers: 16 at once leave other plugins
/// answering. (How fast they answer meanwhile is `./dev bench`'s "errors of 100 MiB" row.)
#[test]
fn concurrent_huge_answers_are_refused_and_stall_no_one() {
    let setup = Setup::new("plain");
    let mut s = setup.server_with("[plugins.hostile.limits]\nconcurrent_calls = 16\n");
    let ids: Vec<Value> = (0..16)
        .map(|_| {
            s.send_request(
                "tools/call",
                json!({"name": "hostile_huge_error", "arguments": {"mib": 100}}),
            )
        })
        .collect();
    still_serving(&mut s);
    for id in ids {
        let answer = s.wait_response(&id, default_timeout());
        error_text(&answer["result"], "output limit");
    }
    still_serving(&mut s);
}
