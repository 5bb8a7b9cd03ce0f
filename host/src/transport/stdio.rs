//! MCP over stdio: one JSON-RPC message per line on stdin and stdout. Nothing else is ever written
//! to stdout; logs go to stderr.

use std::sync::Arc;

use anyhow::Result;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, FramedRead};

use crate::mcp::jsonrpc::{self, INVALID_REQUEST, RpcError};
use crate::mcp::{Outgoing, Server, Session};

/// Longest message accepted; a longer line is answered with an error and skipped.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// Serves one session on stdin/stdout until stdin closes, then answers what is in flight and
/// returns.
pub async fn serve(server: Arc<Server>) -> Result<()> {
    let (outbox, mut outgoing) = mpsc::unbounded_channel::<Outgoing>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        // One stream: what a message relates to does not matter here.
        while let Some(Outgoing { message, .. }) = outgoing.recv().await {
            let mut line = serde_json::to_vec(&message)?;
            line.push(b'\n');
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
    while let Some(line) = lines.next().await {
        match line {
            Ok(line) => session.receive(&line),
            Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => {
                let error = RpcError::new(
                    INVALID_REQUEST,
                    format!("message longer than {MAX_MESSAGE_BYTES} bytes"),
                );
                let _ = outbox.send(Outgoing {
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
