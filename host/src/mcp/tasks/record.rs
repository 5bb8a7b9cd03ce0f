//! What the server keeps of a task: its status, its questions waiting for the client, and how it
//! ended. The same record serves both wire forms; `wire.rs` shapes it for each.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mcp::jsonrpc::RpcError;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The call runs.
    Working,
    /// The call waits for the client's answers (`input_requests`).
    InputRequired,
    /// The call gave a result (in the extension, a tool error too).
    Completed,
    /// The call ended in a protocol error (in 2025-11-25, a tool error too).
    Failed,
    /// The client cancelled it.
    Cancelled,
}

impl Status {
    /// The status on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    /// Whether the task has ended: nothing changes it any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

/// The wire form a task was created in, which decides how it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Form {
    /// The 2026-07-28 extension `io.modelcontextprotocol/tasks`.
    Extension,
    /// The core tasks of 2025-11-25.
    Core,
}

/// How a task's call ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    /// The result the call would have answered with.
    Result(Value),
    /// The JSON-RPC error it would have answered with: `{code, message, data?}`.
    Error(Value),
}

impl Outcome {
    /// The outcome of a call that answered `answer`.
    pub fn of(answer: Result<Value, RpcError>) -> Outcome {
        match answer {
            Ok(result) => Outcome::Result(result),
            Err(error) => Outcome::Error(error_object(&error)),
        }
    }

    /// Bytes it holds, as counted against what the server keeps.
    pub fn bytes(&self) -> u64 {
        let value = match self {
            Outcome::Result(v) | Outcome::Error(v) => v,
        };
        serde_json::to_vec(value).map_or(0, |v| v.len() as u64)
    }
}

/// A JSON-RPC error as its error object.
pub fn error_object(error: &RpcError) -> Value {
    let mut out = Map::new();
    out.insert("code".into(), error.code.into());
    out.insert("message".into(), error.message.clone().into());
    if let Some(data) = &error.data {
        out.insert("data".into(), data.clone());
    }
    Value::Object(out)
}

/// One task, as the store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Its id: 128 random bits, in hex.
    pub id: String,
    /// Who created it, and alone may see it (see `Session::task_owner`).
    pub owner: String,
    /// The plugin that runs it.
    pub plugin: String,
    /// The tool called, by its public name.
    pub tool: String,
    /// The wire form it was created in.
    pub form: Form,
    /// Where it is.
    pub status: Status,
    /// What it is doing or why it ended, for people.
    pub status_message: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it last changed, likewise.
    pub updated_ms: u64,
    /// How long it is kept after it was created.
    pub ttl_ms: u64,
    /// How often the client should poll.
    pub poll_interval_ms: u64,
    /// The questions waiting for the client, by key: `{method, params}`.
    pub input_requests: Map<String, Value>,
    /// How it ended, once it has.
    pub outcome: Option<Outcome>,
    /// The replica running it, with `[cluster]`.
    #[serde(default)]
    pub runner: Option<String>,
    /// Until when the runner's hold on it lasts (milliseconds since the epoch): past it, a task
    /// not ended is taken for failed, its replica gone.
    #[serde(default)]
    pub lease_until_ms: u64,
    /// Counts its changes: a shared store keeps only the newest version.
    #[serde(default)]
    pub version: u64,
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A new task id: 128 random bits from the OS, in hex (safe in a header and a URL).
pub fn new_task_id() -> Result<String, RpcError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        RpcError::new(
            crate::mcp::jsonrpc::INTERNAL_ERROR,
            format!("no randomness from the OS for a task id: {e}"),
        )
    })?;
    Ok(hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_are_128_random_bits_in_hex() {
        let (a, b) = (new_task_id().unwrap(), new_task_id().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn only_completed_failed_and_cancelled_are_terminal() {
        assert!(!Status::Working.is_terminal());
        assert!(!Status::InputRequired.is_terminal());
        assert!(Status::Completed.is_terminal());
        assert!(Status::Failed.is_terminal());
        assert!(Status::Cancelled.is_terminal());
    }
}
