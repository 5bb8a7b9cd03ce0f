//! Resources, prompts, completion and logging: results checked against their own definitions.

use serde_json::{Value, json};
use std::time::{Duration, Instant};

use crate::*;

// -- resources & prompts helpers --
//
// For tests of resources, prompts, completion and logging. The harness validates every result
// only as a generic `Result` (it does not know what a request of these methods returns); these
// helpers also check the specific result definition of the protocol version in force.

/// JSON-RPC error code MCP uses for an unknown resource (server/resources.mdx, Error Handling).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

impl Server {
    /// Sends a request, expects a result, and validates it against the schema definition
    /// `definition` (such as `ListResourcesResult`) of the protocol version in force.
    #[track_caller]
    pub fn typed_result(&mut self, method: &str, params: Value, definition: &str) -> Value {
        let result = self.result(method, params);
        let version = self.version.clone();
        if let Err(e) = validate_against(&version, definition, &result) {
            self.fail(format!("result of {method}: {e}\nresult: {result}"));
        }
        result
    }

    /// Every item of the paginated list `method` (`key` names the array in its result, such as
    /// `resources`), following `nextCursor` to the end; each page is validated against
    /// `definition`. Also returns the size of each page.
    pub fn list_all_pages(
        &mut self,
        method: &str,
        key: &str,
        definition: &str,
    ) -> (Vec<Value>, Vec<usize>) {
        let mut items = Vec::new();
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => Value::Null,
            };
            let result = self.typed_result(method, params, definition);
            let Some(page) = result[key].as_array().cloned() else {
                self.fail(format!(
                    "{method}: the result has no array {key:?}: {result}"
                ));
            };
            pages.push(page.len());
            items.extend(page);
            match result.get("nextCursor") {
                None | Some(Value::Null) => return (items, pages),
                Some(Value::String(c)) => cursor = Some(c.clone()),
                Some(other) => self.fail(format!("nextCursor is not a string: {other}")),
            }
        }
        self.fail(format!("{method} pagination did not end after 1000 pages"));
    }

    /// Waits (at most `timeout`) for a notification with `method` whose `params` satisfy `pred`,
    /// and takes it; one kept in [`notifications`](Self::notifications) comes first. Other
    /// messages arriving meanwhile are kept. `None` on timeout or when stdout closed.
    pub fn wait_notification_where(
        &mut self,
        method: &str,
        pred: impl Fn(&Value) -> bool,
        timeout: Duration,
    ) -> Option<Value> {
        let is_it = |m: &Value| {
            m.get("id").is_none()
                && m.get("method").and_then(Value::as_str) == Some(method)
                && pred(m.get("params").unwrap_or(&Value::Null))
        };
        if let Some(pos) = self.notifications.iter().position(&is_it) {
            return Some(self.notifications.remove(pos));
        }
        if let Some(pos) = self.inbox.iter().position(&is_it) {
            return self.inbox.remove(pos);
        }
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_message(deadline) {
                Recv::Msg(m) if is_it(&m) => return Some(m),
                Recv::Msg(m) => self.file_away(m),
                Recv::Timeout | Recv::Closed => return None,
            }
        }
    }

    /// Takes every notification with `method` received so far (without waiting).
    pub fn take_notifications(&mut self, method: &str) -> Vec<Value> {
        let is_it = |m: &Value| {
            m.get("id").is_none() && m.get("method").and_then(Value::as_str) == Some(method)
        };
        let (mut taken, kept): (Vec<Value>, Vec<Value>) =
            self.notifications.drain(..).partition(|m| is_it(m));
        self.notifications = kept;
        let (from_inbox, inbox): (Vec<Value>, Vec<Value>) =
            self.inbox.drain(..).partition(|m| is_it(m));
        self.inbox = inbox.into();
        taken.extend(from_inbox);
        taken
    }
}

/// The `error` of an error response with `code`; panics (quoting the response) otherwise.
#[track_caller]
pub fn expect_error_code(resp: &Value, code: i64) -> Value {
    assert_eq!(
        error_code(resp),
        Some(code),
        "expected an error response with code {code}, got {resp}"
    );
    resp["error"].clone()
}
