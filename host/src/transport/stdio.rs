//! MCP over stdio: one JSON-RPC message per line on stdin and stdout. Nothing else is ever written
//! to stdout; logs go to stderr. A thread of its own reads stdin and another writes stdout, both
//! blocking: tokio's `Stdin`/`Stdout` hand every read and write to the blocking pool, a thread
//! hop per message that costs more than a small tool call.

use std::io::{self, Write as _};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::lines::{Line, Lines};
use super::queue::{self, QueueReceiver, QueueSender};
use crate::mcp::jsonrpc::{self, PARSE_ERROR, RpcError};
use crate::mcp::{Accepted, Outbox, Outgoing, Server, Session};

/// Longest message accepted; a longer line is answered with an error and skipped.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// After stdin closes, how long requests in flight have to finish and be answered before they
/// are cancelled: the client is gone, so nobody waits for them beyond this.
pub const EOF_GRACE: Duration = Duration::from_secs(2);

/// How long the answers already written wait to reach stdout once everything is done.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// Lines read ahead of the session: past this the reader waits (the client's pipe fills).
const READ_AHEAD: usize = 64;

/// Serves one session on stdin/stdout until stdin closes, then answers what finishes within
/// [`EOF_GRACE`], cancels the rest, and returns.
pub async fn serve(server: Arc<Server>) -> Result<()> {
    let (outbox, outgoing) = queue::channel(queue::MAX_QUEUED_BYTES);
    let outbox = StdoutOutbox(outbox);
    let written = spawn_writer(outgoing)?;
    let mut lines = spawn_reader()?;

    let identity = server.access.stdio_identity();
    if let Some(metrics) = &server.metrics {
        metrics.count_sessions(Box::new(|| vec![("stdio", 1)]));
    }
    let shutdown = server.shutdown.clone();
    let session = Session::new(server, Arc::new(outbox.clone()), identity);
    let mut overflowed = std::pin::pin!(outbox.0.overflowed());
    let mut grace = EOF_GRACE;
    loop {
        let line = tokio::select! {
            line = lines.recv() => line.unwrap_or(Ok(None)),
            () = shutdown.stopping() => {
                grace = shutdown.grace();
                break;
            }
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
    tracing::info!("stdin closed or stopping; finishing requests in flight");
    session.finish(grace).await;
    drop(session);
    drop(outbox);
    // A plugin task still holding the session would keep the writer waiting: bounded.
    match tokio::time::timeout(FLUSH_WAIT, written).await {
        Ok(Ok(result)) => result?,
        Ok(Err(_)) => anyhow::bail!("stdout: the writer stopped unexpectedly"),
        Err(_) => tracing::warn!("stdout: gave up waiting for the last answers to be written"),
    }
    Ok(())
}

/// Reads stdin line by line on a thread of its own. The thread ends at the end of input, or
/// stays blocked in its read until the process ends.
fn spawn_reader() -> io::Result<mpsc::Receiver<io::Result<Option<Line>>>> {
    let (tx, rx) = mpsc::channel(READ_AHEAD);
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut lines = Lines::new(io::stdin().lock(), MAX_MESSAGE_BYTES);
            loop {
                let line = lines.next_line();
                let last = !matches!(line, Ok(Some(_)));
                if tx.blocking_send(line).is_err() || last {
                    return;
                }
            }
        })?;
    Ok(rx)
}

/// Writes what the session sends to stdout on a thread of its own: everything queued at once,
/// then one flush. Reports when every sender is gone and all is written, or writing failed.
fn spawn_writer(mut outgoing: QueueReceiver<Vec<u8>>) -> io::Result<oneshot::Receiver<Result<()>>> {
    let (done, written) = oneshot::channel();
    std::thread::Builder::new()
        .name("stdout".into())
        .spawn(move || {
            let mut write = || -> io::Result<()> {
                while let Some(mut batch) = outgoing.blocking_recv() {
                    while let Some(more) = outgoing.try_recv() {
                        batch.extend_from_slice(&more);
                    }
                    // Locked per batch, not while waiting: nothing else ever blocks on it.
                    let mut stdout = io::stdout().lock();
                    stdout.write_all(&batch)?;
                    stdout.flush()?;
                }
                Ok(())
            };
            let _ = done.send(write().map_err(|e| anyhow::anyhow!("stdout: {e}")));
        })?;
    Ok(written)
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
