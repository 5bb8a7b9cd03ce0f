//! MCP over stdio: one JSON-RPC message per line on stdin and stdout. Nothing else is ever written
//! to stdout; logs go to stderr.

use std::sync::Arc;

use std::time::Duration;

use anyhow::Result;
use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};

use super::lines::{Line, Lines};
use super::queue::{self, QueueSender};
use crate::mcp::jsonrpc::{self, PARSE_ERROR, RpcError};
use crate::mcp::{Accepted, Outbox, Outgoing, Server, Session};

/// Longest message accepted; a longer line is answered with an error and skipped.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// After stdin closes, how long requests in flight have to finish and be answered before they
/// are cancelled: the client is gone, so nobody waits for them beyond this.
pub const EOF_GRACE: Duration = Duration::from_secs(2);

/// How long the answers already written wait to reach stdout once everything is done.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// Serves one session on stdin/stdout until stdin closes, then answers what finishes within
/// [`EOF_GRACE`], cancels the rest, and returns.
pub async fn serve(server: Arc<Server>) -> Result<()> {
    let (outbox, mut outgoing) = queue::channel(queue::MAX_QUEUED_BYTES);
    let outbox = StdoutOutbox(outbox);
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = outgoing.recv().await {
            stdout.write_all(&line).await?;
            stdout.flush().await?;
        }
        anyhow::Ok(())
    });

    let identity = server.access.stdio_identity();
    let session = Session::new(server, Arc::new(outbox.clone()), identity);
    let mut lines = Lines::new(BufReader::new(tokio::io::stdin()), MAX_MESSAGE_BYTES);
    let mut overflowed = std::pin::pin!(outbox.0.overflowed());
    loop {
        let line = tokio::select! {
            line = lines.next() => line,
            () = &mut overflowed => {
                // The client stopped reading stdout: nothing it sends can be answered.
                session.close();
                anyhow::bail!(
                    "the client has not read {} MiB the server wrote to stdout; stopping",
                    queue::MAX_QUEUED_BYTES >> 20
                );
            }
        };
        match line {
            Ok(Some(Line::Message(line))) => session.receive(&line),
            Ok(Some(Line::TooLong)) => {
                tracing::warn!("skipped a message longer than {MAX_MESSAGE_BYTES} bytes");
                let error = RpcError::new(
                    PARSE_ERROR,
                    format!(
                        "message longer than {} MiB: skipped, not read",
                        MAX_MESSAGE_BYTES >> 20
                    ),
                );
                session.deliver(Accepted::Invalid(jsonrpc::error_response(
                    &Value::Null,
                    &error,
                )));
            }
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("stdin: {e}");
                break;
            }
        }
    }
    tracing::info!("stdin closed; finishing requests in flight");
    session.finish(EOF_GRACE).await;
    drop(session);
    drop(outbox);
    // A plugin task still holding the session would keep the writer waiting: bounded.
    match tokio::time::timeout(FLUSH_WAIT, writer).await {
        Ok(written) => written??,
        Err(_) => tracing::warn!("stdout: gave up waiting for the last answers to be written"),
    }
    Ok(())
}

/// The session's messages, one JSON line each, in a queue of bounded bytes for stdout. (One
/// stream: what a message relates to does not matter here.)
#[derive(Clone)]
struct StdoutOutbox(QueueSender<Vec<u8>>);

impl Outbox for StdoutOutbox {
    fn send(&self, outgoing: Outgoing) {
        match serde_json::to_vec(&outgoing.message) {
            Ok(mut line) => {
                line.push(b'\n');
                // Past the cap the queue closes and `serve` stops.
                let len = line.len();
                self.0.send(line, len);
            }
            Err(e) => tracing::error!("cannot serialize a message: {e}"),
        }
    }
}
