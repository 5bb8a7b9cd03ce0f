//! MCP over stdio: one JSON-RPC message per line on stdin and stdout. Nothing else is ever written
//! to stdout; logs go to stderr.

use std::sync::Arc;

use anyhow::Result;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, FramedRead};

use super::queue::{self, QueueSender};
use crate::mcp::jsonrpc::{self, INVALID_REQUEST, RpcError};
use crate::mcp::{Outbox, Outgoing, Server, Session};

/// Longest message accepted; a longer line is answered with an error and skipped.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// Serves one session on stdin/stdout until stdin closes, then answers what is in flight and
/// returns.
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
    let codec =
        AnyDelimiterCodec::new_with_max_length(b"\n".to_vec(), b"\n".to_vec(), MAX_MESSAGE_BYTES);
    let mut lines = FramedRead::new(tokio::io::stdin(), codec);
    let mut overflowed = std::pin::pin!(outbox.0.overflowed());
    loop {
        let line = tokio::select! {
            line = lines.next() => line,
            () = &mut overflowed => {
                // The client stopped reading stdout: nothing it sends can be answered.
                anyhow::bail!(
                    "the client has not read {} MiB the server wrote to stdout; stopping",
                    queue::MAX_QUEUED_BYTES >> 20
                );
            }
        };
        let Some(line) = line else { break };
        match line {
            Ok(line) => session.receive(&line),
            Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => {
                let error = RpcError::new(
                    INVALID_REQUEST,
                    format!("message longer than {MAX_MESSAGE_BYTES} bytes"),
                );
                outbox.send(Outgoing {
                    message: jsonrpc::error_response(&Value::Null, &error),
                    related: None,
                });
            }
            Err(AnyDelimiterCodecError::Io(e)) => {
                tracing::warn!("stdin: {e}");
                break;
            }
        }
    }
    tracing::info!("stdin closed; finishing requests in flight");
    session.drain().await;
    drop(session);
    drop(outbox);
    writer.await??;
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
