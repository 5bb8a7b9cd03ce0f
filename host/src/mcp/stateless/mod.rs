//! Requests of the stateless revision (2026-07-28): everything a request needs comes with it, so
//! they are served the same on any connection, process, or replica behind a load balancer.

pub mod input_round;
pub mod meta;
pub mod request_state;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::mcp::handlers::{self, StatelessCall};
use crate::mcp::jsonrpc::{self, RpcError};
use crate::mcp::version::ProtocolVersion;
use crate::mcp::{Change, Session, wire};
use crate::runtime::bindings::host::ListKind;
use input_round::InputRound;
use meta::{META_SUBSCRIPTION_ID, RequestMeta, finish_result};

/// Serves one stateless request of `session`; its result is complete with `resultType`, the
/// server's identity and cache hints.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn serve(
    session: &Arc<Session>,
    meta: RequestMeta,
    version: ProtocolVersion,
    id: &Value,
    method: &str,
    params: Map<String, Value>,
    cancelled: CancellationToken,
) -> Result<Value, RpcError> {
    let mut result = match method {
        "server/discover" => Ok(session.server().discover_result(version)),
        "subscriptions/listen" => {
            let call = StatelessCall { meta, round: None };
            listen(session, version, id, &params, &call, &cancelled).await
        }
        "tools/list"
        | "resources/list"
        | "resources/templates/list"
        | "prompts/list"
        | "completion/complete"
        | "tasks/get"
        | "tasks/update"
        | "tasks/cancel" => {
            let call = StatelessCall { meta, round: None };
            handlers::dispatch(session, version, id, method, params, cancelled, Some(&call)).await
        }
        "tools/call" | "prompts/get" | "resources/read" => {
            let (target, arguments) = round_key(method, &params);
            let round = Arc::new(InputRound::open(
                &session.server().request_state,
                &meta,
                version,
                session.identity().client.clone(),
                method,
                &target,
                &arguments,
                &params,
            )?);
            let call = StatelessCall {
                meta,
                round: Some(round.clone()),
            };
            let result =
                handlers::dispatch(session, version, id, method, params, cancelled, Some(&call))
                    .await;
            let failed = match &result {
                Ok(r) => r.get("isError") == Some(&Value::Bool(true)),
                Err(_) => true,
            };
            round.outcome(failed).unwrap_or(result)
        }
        // `initialize`, `ping`, `logging/setLevel` and `resources/(un)subscribe` are gone
        // from this revision, like anything unknown.
        _ => Err(RpcError::method_not_found(
            method,
            &format!("protocol {version}"),
        )),
    }?;
    finish_result(method, &mut result, session.server().cache_scope());
    Ok(result)
}

/// `subscriptions/listen`: acknowledges what it will send, then sends it, each notification
/// tagged with the request's id, until the client cancels (no response) or the server shuts
/// down (a graceful result).
async fn listen(
    session: &Arc<Session>,
    version: ProtocolVersion,
    id: &Value,
    params: &Map<String, Value>,
    call: &StatelessCall,
    cancelled: &CancellationToken,
) -> Result<Value, RpcError> {
    let filter = Filter::parse(params)?;
    if filter.tasks.is_some() && !handlers::declares_tasks(&call.meta.capabilities) {
        return Err(handlers::tasks_extension_required(
            "notifications.taskIds follows tasks",
        ));
    }
    let honored = honor(session, filter).await;
    handlers::learn_resource_files(
        session,
        version,
        id,
        &honored.resources,
        call,
        cancelled.clone(),
    )
    .await;
    // Subscribe before acknowledging, so nothing that happens after the ack is missed.
    let mut changes = session.server().subscribe_changes();
    let tag = |mut params: Value| {
        params["_meta"] = json!({ META_SUBSCRIPTION_ID: id });
        params
    };
    session.send_related(
        Some(id),
        jsonrpc::notification(
            "notifications/subscriptions/acknowledged",
            tag(json!({ "notifications": honored.to_json() })),
        ),
    );
    // Each task followed is watched beside the changes, until the subscription ends.
    let following = CancellationToken::new();
    let _stop_following = following.clone().drop_guard();
    for task in honored.tasks.iter().flatten() {
        tokio::spawn(follow_task(
            session.clone(),
            task.clone(),
            id.clone(),
            following.clone(),
        ));
    }
    loop {
        let change = tokio::select! {
            change = changes.recv() => change,
            _ = cancelled.cancelled() => return Ok(json!({})),
            _ = session.shutting_down().cancelled() => {
                return Ok(json!({ "_meta": { META_SUBSCRIPTION_ID: id } }));
            }
        };
        let notifications = match change {
            Ok(change) => honored.notifications_for(&change),
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "a subscription fell behind; announcing every list it follows"
                );
                honored.every_list()
            }
            Err(broadcast::error::RecvError::Closed) => return Ok(json!({})),
        };
        for (method, params) in notifications {
            session.send_related(Some(id), jsonrpc::notification(method, tag(params)));
        }
    }
}

/// Sends `notifications/tasks` on the subscription `listen_id` each time the task `task_id`
/// changes (and once at once, so a change before the subscription is not missed), until it
/// ends or `stop`.
async fn follow_task(
    session: Arc<Session>,
    task_id: String,
    listen_id: Value,
    stop: CancellationToken,
) {
    let owner = session.task_owner();
    let tasks = &session.server().tasks;
    let Ok(mut changes) = tasks.watch(&task_id, &owner).await else {
        return;
    };
    loop {
        let Ok(task) = tasks.get(&task_id, &owner).await else {
            return;
        };
        let mut params = crate::mcp::tasks::wire::detailed(&task);
        params["_meta"] = json!({ META_SUBSCRIPTION_ID: listen_id });
        session.send_related(
            Some(&listen_id),
            jsonrpc::notification("notifications/tasks", params),
        );
        if task.status.is_terminal() {
            return;
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = stop.cancelled() => return,
        }
    }
}

/// The part of `filter` this server will honor for this client: resource URIs it can read,
/// tasks that are its own.
async fn honor(session: &Session, mut filter: Filter) -> Filter {
    // A URI of a plugin still loading is known once it is ready.
    let catalog = session
        .server()
        .catalog_with(None, |c| {
            filter
                .resources
                .iter()
                .all(|uri| c.resources.route(uri).is_some())
        })
        .await;
    filter.resources.retain(|uri| {
        catalog
            .resources
            .route(uri)
            .is_some_and(|p| session.scope().allows_plugin(&p.name))
    });
    if let Some(tasks) = &mut filter.tasks {
        let owner = session.task_owner();
        let mut honored = Vec::new();
        for id in tasks.drain(..) {
            if session.server().tasks.get(&id, &owner).await.is_ok() {
                honored.push(id);
            }
        }
        *tasks = honored;
    }
    filter
}

/// What identifies a request across its attempts besides its method: the tool, prompt or
/// resource, and the arguments.
fn round_key(method: &str, params: &Map<String, Value>) -> (String, Value) {
    let text = |key: &str| {
        params
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match method {
        "resources/read" => (text("uri"), Value::Null),
        _ => (
            text("name"),
            params.get("arguments").cloned().unwrap_or(Value::Null),
        ),
    }
}

/// The notifications a `subscriptions/listen` asked for.
#[derive(Debug, Default, Clone, PartialEq)]
struct Filter {
    tools: bool,
    prompts: bool,
    resource_list: bool,
    resources: BTreeSet<String>,
    /// Tasks to follow (`taskIds`, the tasks extension), when asked for.
    tasks: Option<Vec<String>>,
}

/// Tasks one subscription may follow.
const MAX_FOLLOWED_TASKS: usize = 64;

impl Filter {
    fn parse(params: &Map<String, Value>) -> Result<Filter, RpcError> {
        let notifications = match params.get("notifications") {
            None | Some(Value::Null) => return Ok(Filter::default()),
            Some(Value::Object(n)) => n,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.notifications must be an object",
                ));
            }
        };
        let flag = |key: &str| match notifications.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(RpcError::invalid_params(format!(
                "params.notifications.{key} must be true or false"
            ))),
        };
        let resources = match notifications.get("resourceSubscriptions") {
            None | Some(Value::Null) => BTreeSet::new(),
            Some(Value::Array(uris)) => uris
                .iter()
                .map(|u| u.as_str().map(String::from))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    RpcError::invalid_params(
                        "params.notifications.resourceSubscriptions must be a list of URIs",
                    )
                })?,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.notifications.resourceSubscriptions must be a list of URIs",
                ));
            }
        };
        let tasks = match notifications.get("taskIds") {
            None | Some(Value::Null) => None,
            Some(Value::Array(ids)) if ids.len() <= MAX_FOLLOWED_TASKS => Some(
                ids.iter()
                    .map(|id| id.as_str().map(String::from))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        RpcError::invalid_params("params.notifications.taskIds must be task ids")
                    })?,
            ),
            Some(_) => {
                return Err(RpcError::invalid_params(format!(
                    "params.notifications.taskIds must be a list of at most \
                     {MAX_FOLLOWED_TASKS} task ids"
                )));
            }
        };
        Ok(Filter {
            tasks,
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resource_list: flag("resourcesListChanged")?,
            resources,
        })
    }

    /// The filter as the acknowledgment states it: only what is honored.
    fn to_json(&self) -> Value {
        let mut out = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resource_list),
        ] {
            if on {
                out.insert(key.into(), true.into());
            }
        }
        if !self.resources.is_empty() {
            out.insert("resourceSubscriptions".into(), json!(self.resources));
        }
        if let Some(tasks) = &self.tasks {
            out.insert("taskIds".into(), json!(tasks));
        }
        Value::Object(out)
    }

    fn follows(&self, kind: ListKind) -> bool {
        match kind {
            ListKind::Tools => self.tools,
            ListKind::Prompts => self.prompts,
            ListKind::Resources => self.resource_list,
        }
    }

    fn notifications_for(&self, change: &Change) -> Vec<(&'static str, Value)> {
        match change {
            Change::ListChanged(kind) | Change::ListGrew(kind, _) if self.follows(*kind) => {
                vec![(wire::list_changed_method(*kind), json!({}))]
            }
            Change::ResourceUpdated(uri) if self.resources.contains(uri) => {
                vec![("notifications/resources/updated", json!({ "uri": uri }))]
            }
            _ => Vec::new(),
        }
    }

    fn every_list(&self) -> Vec<(&'static str, Value)> {
        [ListKind::Tools, ListKind::Prompts, ListKind::Resources]
            .into_iter()
            .filter(|k| self.follows(*k))
            .map(|k| (wire::list_changed_method(k), json!({})))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_sends_only_what_it_asked_for() {
        let params = json!({ "notifications": {
            "toolsListChanged": true,
            "resourceSubscriptions": ["file:///a"],
        }});
        let filter = Filter::parse(params.as_object().unwrap()).unwrap();
        assert_eq!(
            filter.to_json(),
            json!({ "toolsListChanged": true, "resourceSubscriptions": ["file:///a"] })
        );
        assert_eq!(
            filter
                .notifications_for(&Change::ListChanged(ListKind::Tools))
                .len(),
            1
        );
        assert!(
            filter
                .notifications_for(&Change::ListChanged(ListKind::Prompts))
                .is_empty()
        );
        assert!(
            filter
                .notifications_for(&Change::ResourceUpdated("file:///b".into()))
                .is_empty()
        );
        assert_eq!(
            filter.notifications_for(&Change::ResourceUpdated("file:///a".into()))[0].1,
            json!({ "uri": "file:///a" })
        );
        for bad in [
            json!({ "notifications": 1 }),
            json!({ "notifications": { "toolsListChanged": "yes" } }),
            json!({ "notifications": { "resourceSubscriptions": [1] } }),
        ] {
            assert!(Filter::parse(bad.as_object().unwrap()).is_err());
        }
    }
}
