//! A task on the wire, in each form: the extension's flat `CreateTaskResult` and detailed task
//! (`ttlMs`, `pollIntervalMs`, the outcome inlined), and 2025-11-25's nested `CreateTaskResult`
//! and plain `Task` (`ttl`, `pollInterval`).

use std::time::{Duration, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::record::{Outcome, Status, TaskRecord};
use crate::mcp::jsonrpc::RpcError;

/// The extension's identifier, in capabilities and `_meta`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `_meta` key (2025-11-25) tying a message to a task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// An ISO 8601 time (UTC, milliseconds) from milliseconds since the Unix epoch.
fn timestamp(ms: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

/// The fields every task has, with the TTL and poll interval under the form's names.
fn task_fields(task: &TaskRecord, ttl: &str, poll: &str) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("taskId".into(), task.id.clone().into());
    out.insert("status".into(), task.status.as_str().into());
    if let Some(message) = &task.status_message {
        out.insert("statusMessage".into(), message.clone().into());
    }
    out.insert("createdAt".into(), timestamp(task.created_ms).into());
    out.insert("lastUpdatedAt".into(), timestamp(task.updated_ms).into());
    out.insert(ttl.into(), task.ttl_ms.into());
    out.insert(poll.into(), task.poll_interval_ms.into());
    out
}

/// The extension's `CreateTaskResult`: the task, flat, with `resultType: "task"`.
pub fn created(task: &TaskRecord) -> Value {
    let mut out = task_fields(task, "ttlMs", "pollIntervalMs");
    out.insert("resultType".into(), "task".into());
    Value::Object(out)
}

/// The extension's detailed task (`tasks/get`, `notifications/tasks`): the task with its
/// questions, its result or its error, as its status has them.
pub fn detailed(task: &TaskRecord) -> Value {
    let mut out = task_fields(task, "ttlMs", "pollIntervalMs");
    match (task.status, &task.outcome) {
        (Status::InputRequired, _) => {
            out.insert(
                "inputRequests".into(),
                Value::Object(task.input_requests.clone()),
            );
        }
        (Status::Completed, Some(Outcome::Result(result))) => {
            let mut result = result.clone();
            if let Some(fields) = result.as_object_mut() {
                // The inlined result is what the call would have answered: complete.
                fields.insert("resultType".into(), "complete".into());
                if let Some(Value::Object(meta)) = fields.get_mut("_meta") {
                    meta.remove(RELATED_TASK);
                }
            }
            out.insert("result".into(), result);
        }
        (Status::Failed, Some(Outcome::Error(error))) => {
            out.insert("error".into(), error.clone());
        }
        _ => {}
    }
    Value::Object(out)
}

/// A 2025-11-25 `Task` (`tasks/get`, `tasks/cancel`, `tasks/list`, the status notification).
pub fn core_task(task: &TaskRecord) -> Value {
    Value::Object(task_fields(task, "ttl", "pollInterval"))
}

/// The 2025-11-25 `CreateTaskResult`: `{task}`.
pub fn core_created(task: &TaskRecord) -> Value {
    json!({ "task": core_task(task) })
}

/// What `tasks/result` answers for an ended task (2025-11-25): exactly what the call would
/// have, with the task named in `_meta`. A cancelled task has no result: an error says so.
pub fn core_result(task: &TaskRecord) -> Result<Value, RpcError> {
    match &task.outcome {
        Some(Outcome::Result(result)) => {
            let mut result = result.clone();
            if let Some(fields) = result.as_object_mut() {
                let meta = fields
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(RELATED_TASK.into(), json!({ "taskId": task.id }));
                }
            }
            Ok(result)
        }
        Some(Outcome::Error(error)) => Err(RpcError {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
            message: (error.get("message").and_then(Value::as_str))
                .unwrap_or("the task failed")
                .to_string(),
            data: error.get("data").cloned(),
        }),
        None => Err(RpcError::new(
            crate::mcp::jsonrpc::INTERNAL_ERROR,
            format!("task {} was cancelled: it has no result", task.id),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::Form;
    use super::*;

    fn task(status: Status, outcome: Option<Outcome>) -> TaskRecord {
        TaskRecord {
            id: "0123".into(),
            owner: "o".into(),
            plugin: "p".into(),
            tool: "t".into(),
            form: Form::Extension,
            status,
            status_message: None,
            created_ms: 1_764_000_000_000,
            updated_ms: 1_764_000_001_000,
            ttl_ms: 60_000,
            poll_interval_ms: 1000,
            input_requests: Map::new(),
            outcome,
            runner: None,
            lease_until_ms: 0,
            version: 0,
        }
    }

    #[test]
    fn the_extension_result_is_flat_and_names_ttl_in_milliseconds() {
        let created = created(&task(Status::Working, None));
        assert_eq!(created["resultType"], "task");
        assert_eq!(created["ttlMs"], 60_000);
        assert_eq!(created["pollIntervalMs"], 1000);
        assert_eq!(created["createdAt"], "2025-11-24T16:00:00.000Z");
        for absent in [
            "task",
            "ttl",
            "pollInterval",
            "result",
            "error",
            "inputRequests",
        ] {
            assert!(created.get(absent).is_none(), "{absent}: {created}");
        }
    }

    #[test]
    fn a_detailed_task_inlines_what_its_status_has() {
        let result = json!({ "content": [], "isError": true,
                             "_meta": { RELATED_TASK: { "taskId": "x" }, "k": 1 } });
        let done = detailed(&task(Status::Completed, Some(Outcome::Result(result))));
        assert_eq!(done["result"]["resultType"], "complete");
        assert_eq!(done["result"]["isError"], true);
        assert_eq!(done["result"]["_meta"], json!({ "k": 1 }));
        let error = json!({ "code": -32603, "message": "boom" });
        let failed = detailed(&task(Status::Failed, Some(Outcome::Error(error.clone()))));
        assert_eq!(failed["error"], error);
        assert!(failed.get("result").is_none());
        let working = detailed(&task(Status::Working, None));
        assert!(working.get("inputRequests").is_none() && working.get("result").is_none());
    }

    #[test]
    fn the_core_form_nests_the_created_task_and_tags_the_result() {
        let created = core_created(&task(Status::Working, None));
        assert_eq!(created["task"]["ttl"], 60_000);
        assert!(created.get("resultType").is_none());
        let ended = task(
            Status::Completed,
            Some(Outcome::Result(json!({ "content": [] }))),
        );
        let result = core_result(&ended).unwrap();
        assert_eq!(result["_meta"][RELATED_TASK]["taskId"], "0123");
        let error = json!({ "code": -32000, "message": "m", "data": { "a": 1 } });
        let failed = task(Status::Failed, Some(Outcome::Error(error)));
        let e = core_result(&failed).unwrap_err();
        assert_eq!((e.code, e.data), (-32000, Some(json!({ "a": 1 }))));
        assert!(core_result(&task(Status::Cancelled, None)).is_err());
    }
}
