//! The HTTP+SSE transport of 2024-11-05 for old clients: `GET /sse` opens the stream and names
//! the endpoint to POST to; messages posted there get 202 and are answered on the stream; the
//! session ends with the stream. Every message received is validated against the schema.

use std::io::{BufRead, BufReader, Read};

use palisade_tests::*;
use serde_json::{Value, json};

/// The event stream of `GET /sse`, read line by line: `(event type, data)` per event.
struct Sse2024Stream {
    lines: std::io::Lines<BufReader<Box<dyn Read + Send>>>,
}

impl Sse2024Stream {
    fn open(server: &HttpServer, headers: &[(&str, &str)]) -> Result<Sse2024Stream, u16> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_per_read(Some(default_timeout()))
            .build()
            .into();
        let mut request = agent
            .get(format!("http://{}/sse", server.addr))
            .header("Accept", "text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.call().expect("GET /sse");
        if response.status() != 200 {
            return Err(response.status().as_u16());
        }
        let reader: Box<dyn Read + Send> = Box::new(response.into_body().into_reader());
        Ok(Sse2024Stream {
            lines: BufReader::new(reader).lines(),
        })
    }

    fn next_event(&mut self) -> (String, String) {
        let (mut event, mut data) = (String::from("message"), String::new());
        for line in self.lines.by_ref() {
            let line = line.expect("reading the SSE stream");
            if line.is_empty() && !data.is_empty() {
                return (event, data);
            }
            if let Some(v) = line.strip_prefix("event:") {
                event = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.trim_start());
            }
        }
        panic!("the SSE stream ended");
    }

    /// The next message, validated against 2024-11-05.
    fn next_message(&mut self) -> Value {
        let (event, data) = self.next_event();
        assert_eq!(event, "message", "{data}");
        let message: Value = serde_json::from_str(&data).expect("JSON");
        validate_http_message("2024-11-05", &message).unwrap_or_else(|e| panic!("{e}: {message}"));
        message
    }
}

fn post(server: &HttpServer, endpoint: &str, message: Value) -> u16 {
    let (status, _) = raw_http(
        &server.addr,
        &format!(
            "POST {endpoint} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n",
            server.addr
        ),
        message.to_string().as_bytes(),
    );
    status
}

#[test]
fn an_old_client_talks_through_sse_and_posted_messages() {
    let server = HttpServer::start(&["--no-watch", "--plugin", &plugin_arg("hello")]);
    let mut stream = Sse2024Stream::open(&server, &[]).expect("GET /sse");
    let (event, endpoint) = stream.next_event();
    assert_eq!(event, "endpoint");
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}});
    assert_eq!(post(&server, &endpoint, init), 202);
    let answer = stream.next_message();
    assert_eq!(answer["id"], 1);
    assert_eq!(
        answer["result"]["protocolVersion"], "2024-11-05",
        "{answer}"
    );

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(&server, &endpoint, initialized), 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "hello_greet", "arguments": {"name": "Legacy"}}});
    assert_eq!(post(&server, &endpoint, call), 202);
    let answer = stream.next_message();
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["content"][0]["text"], "Hello, Legacy!");

    // Errors come on the stream too.
    let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": "no/such"});
    assert_eq!(post(&server, &endpoint, unknown), 202);
    assert_eq!(stream.next_message()["error"]["code"], -32601);
    // A POST that is no JSON-RPC message is refused where it was sent, echoing its id.
    let (status, answer) = raw_http(
        &server.addr,
        &format!(
            "POST {endpoint} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n",
            server.addr
        ),
        br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#,
    );
    assert_eq!(status, 400, "{answer}");
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    let error: Value = serde_json::from_str(body).expect("a JSON-RPC error");
    assert_eq!(
        (&error["error"]["code"], &error["id"]),
        (&json!(-32600), &json!(7))
    );

    // The session ends with its stream.
    drop(stream);
    assert!(server.wait_for_stderr("HTTP+SSE session ended", default_timeout()));
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    assert_eq!(post(&server, &endpoint, ping), 404);
}

#[test]
fn the_sse_2024_transport_has_the_same_guards() {
    let server = HttpServer::start(&["--no-watch", "--plugin", &plugin_arg("hello")]);
    assert_eq!(
        Sse2024Stream::open(&server, &[("Origin", "https://evil.example")]).err(),
        Some(403)
    );
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    assert_eq!(post(&server, "/messages?sessionId=unknown", ping), 404);
}
