//! Requests plugins make of the client: elicitation (`elicitation/create`), sampling
//! (`sampling/createMessage`) and its roots (`roots/list`), shaped for the client's revision and
//! put only to a client that declared it can answer them. Initialize-based sessions send them at
//! once (`session::asks::SessionClient`); the stateless revision returns them as input requests
//! (`super::stateless::input_round`).

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

use super::version::ProtocolVersion as V;
use super::wire;
use crate::runtime::bindings::host::{
    ClientRoot, ElicitationAction, ElicitationRequest, ElicitationResponse, InputRequest,
    InputResponse, SamplingRequest, SamplingResponse,
};
use crate::runtime::bindings::types::{
    ContentBlock, EmbeddedResource, MediaContent, ResourceBody, ResourceContents, ResourceLink,
    Role, TextContent,
};

/// How long a person may take to answer an elicitation (the call's own time limit also applies).
const ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the client's model may take to sample.
const SAMPLING_TIMEOUT: Duration = Duration::from_secs(300);
/// How long the server waits for the client's roots.
pub(crate) const ROOTS_TIMEOUT: Duration = Duration::from_secs(30);

/// What the client of one request can be asked: its revision and declared capabilities.
pub(super) struct ClientView<'a> {
    pub version: V,
    pub capabilities: &'a Value,
}

/// Why a request cannot be put to the client.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Unaskable {
    /// The client did not declare this capability (`sampling`, `elicitation`, `roots`).
    Missing(&'static str),
    /// The plugin's request is malformed, or the revision cannot carry it.
    Invalid(String),
}

impl std::fmt::Display for Unaskable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unaskable::Missing(capability) => write!(
                f,
                "the client cannot be asked: it did not declare the {capability} capability"
            ),
            Unaskable::Invalid(why) => f.write_str(why),
        }
    }
}

impl From<String> for Unaskable {
    fn from(why: String) -> Unaskable {
        Unaskable::Invalid(why)
    }
}

impl From<&str> for Unaskable {
    fn from(why: &str) -> Unaskable {
        Unaskable::Invalid(why.into())
    }
}

/// An input request as the client receives it: its method and params.
pub(super) fn input_request(
    client: &ClientView<'_>,
    request: InputRequest,
) -> Result<(&'static str, Value), Unaskable> {
    match request {
        InputRequest::Elicit(r) => Ok(("elicitation/create", client.elicitation_params(r)?)),
        InputRequest::Sample(r) => Ok(("sampling/createMessage", client.sampling_params(r)?)),
        InputRequest::ListRoots => {
            client
                .capability("roots")
                .ok_or(Unaskable::Missing("roots"))?;
            Ok(("roots/list", json!({})))
        }
    }
}

/// The client's answer to an input request of `method`, for the plugin.
pub(super) fn input_response(method: &str, answer: Value) -> Result<InputResponse, String> {
    match method {
        "elicitation/create" => parse_elicitation(&answer).map(InputResponse::Elicit),
        "sampling/createMessage" => parse_sampling(answer).map(InputResponse::Sample),
        _ => parse_roots(&answer).map(InputResponse::ListRoots),
    }
}

/// How long the client may take to answer `method`.
pub fn answer_timeout(method: &str) -> Duration {
    match method {
        "elicitation/create" => ELICITATION_TIMEOUT,
        "sampling/createMessage" => SAMPLING_TIMEOUT,
        _ => ROOTS_TIMEOUT,
    }
}

impl ClientView<'_> {
    /// The client's declared capability `name`, if any.
    fn capability(&self, name: &str) -> Option<&Value> {
        self.capabilities.get(name).filter(|c| c.is_object())
    }

    fn elicitation_params(&self, request: ElicitationRequest) -> Result<Value, Unaskable> {
        let version = self.version;
        if version < V::V2025_06_18 {
            return Err(Unaskable::Invalid(format!(
                "protocol {version} has no elicitation (2025-06-18 added it)"
            )));
        }
        let capability = self
            .capability("elicitation")
            .ok_or(Unaskable::Missing("elicitation"))?;
        match request {
            ElicitationRequest::Form(form) => {
                // An empty `elicitation` object means form mode (2025-11-25 added `form`/`url`).
                let form_ok = capability.get("form").is_some() || capability.get("url").is_none();
                if !form_ok {
                    return Err("the client supports only URL-mode elicitation".into());
                }
                let schema: Value = serde_json::from_str(&form.requested_schema)
                    .map_err(|e| format!("requested-schema is not JSON: {e}"))?;
                if !schema.is_object() {
                    return Err("requested-schema must be a JSON object".into());
                }
                let mut params = json!({ "message": form.message, "requestedSchema": schema });
                if version.is_stateless() {
                    params["mode"] = "form".into();
                }
                Ok(params)
            }
            ElicitationRequest::Url(url) => {
                if version < V::V2025_11_25 || capability.get("url").is_none() {
                    return Err("the client does not support URL-mode elicitation".into());
                }
                let mut params = json!({ "mode": "url", "message": url.message, "url": url.url });
                // 2026-07-28 dropped the id: the retry itself says the interaction ended.
                if !version.is_stateless() {
                    params["elicitationId"] = url.elicitation_id.into();
                }
                Ok(params)
            }
        }
    }

    fn sampling_params(&self, request: SamplingRequest) -> Result<Value, Unaskable> {
        let version = self.version;
        self.capability("sampling")
            .ok_or(Unaskable::Missing("sampling"))?;
        let mut messages = Vec::new();
        for message in &request.messages {
            let mut content: Vec<Value> = message
                .content
                .iter()
                .map(|c| wire::content_block(c, version))
                .collect();
            let content = match content.len() {
                1 => content.remove(0),
                _ if version >= V::V2025_11_25 => Value::Array(content),
                n => {
                    return Err(Unaskable::Invalid(format!(
                        "protocol {version} allows exactly one content block per sampling message, not {n}"
                    )));
                }
            };
            messages.push(json!({ "role": wire::role(message.role), "content": content }));
        }
        let mut params = match request.extra.as_deref().map(serde_json::from_str::<Value>) {
            None => Map::new(),
            Some(Ok(Value::Object(extra))) => extra,
            Some(_) => return Err("extra must be a JSON object".into()),
        };
        params.insert("messages".into(), messages.into());
        params.insert("maxTokens".into(), request.max_tokens.into());
        if let Some(system) = request.system_prompt {
            params.insert("systemPrompt".into(), system.into());
        }
        if let Some(t) = request.temperature {
            params.insert("temperature".into(), t.into());
        }
        if !request.stop_sequences.is_empty() {
            params.insert("stopSequences".into(), request.stop_sequences.into());
        }
        if let Some(prefs) = request.model_preferences {
            let prefs: Value = serde_json::from_str(&prefs)
                .map_err(|e| format!("model-preferences is not JSON: {e}"))?;
            params.insert("modelPreferences".into(), prefs);
        }
        Ok(Value::Object(params))
    }
}

fn parse_roots(result: &Value) -> Result<Vec<ClientRoot>, String> {
    let list = result
        .get("roots")
        .and_then(Value::as_array)
        .ok_or("the client's roots answer has no `roots` array")?;
    list.iter()
        .map(|root| {
            let uri = root
                .get("uri")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("a root without a `uri`: {root}"))?;
            Ok(ClientRoot {
                uri: uri.to_string(),
                name: root.get("name").and_then(Value::as_str).map(String::from),
            })
        })
        .collect()
}

fn parse_elicitation(result: &Value) -> Result<ElicitationResponse, String> {
    let action = match result.get("action").and_then(Value::as_str) {
        Some("accept") => ElicitationAction::Accept,
        Some("decline") => ElicitationAction::Decline,
        Some("cancel") => ElicitationAction::Cancel,
        _ => {
            return Err(format!(
                "the client's elicitation answer has no valid action: {result}"
            ));
        }
    };
    let content = result
        .get("content")
        .filter(|c| c.is_object())
        .map(Value::to_string);
    Ok(ElicitationResponse { action, content })
}

fn parse_sampling(result: Value) -> Result<SamplingResponse, String> {
    let role = match result.get("role").and_then(Value::as_str) {
        Some("assistant") => Role::Assistant,
        Some("user") => Role::User,
        _ => {
            return Err(format!(
                "the client's sampling answer has no valid role: {result}"
            ));
        }
    };
    let content = match result.get("content") {
        Some(Value::Array(blocks)) => blocks.iter().map(parse_content).collect(),
        Some(block) => vec![parse_content(block)],
        None => return Err("the client's sampling answer has no content".into()),
    };
    Ok(SamplingResponse {
        role,
        content,
        model: result
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        stop_reason: result
            .get("stopReason")
            .and_then(Value::as_str)
            .map(String::from),
        raw: result.to_string(),
    })
}

/// A content block from the client; a kind the contract has no shape for arrives as its JSON
/// text, so the plugin still sees it.
fn parse_content(block: &Value) -> ContentBlock {
    let text = |key: &str| block.get(key).and_then(Value::as_str).map(String::from);
    let media = || {
        Some(MediaContent {
            data: BASE64.decode(text("data")?).ok()?,
            mime_type: text("mimeType")?,
            annotations: None,
            meta: None,
        })
    };
    let parsed = match block.get("type").and_then(Value::as_str) {
        Some("text") => text("text").map(|text| {
            ContentBlock::Text(TextContent {
                text,
                annotations: None,
                meta: None,
            })
        }),
        Some("image") => media().map(ContentBlock::Image),
        Some("audio") => media().map(ContentBlock::Audio),
        Some("resource_link") => Some(ContentBlock::ResourceLink(ResourceLink {
            uri: text("uri").unwrap_or_default(),
            name: text("name").unwrap_or_default(),
            title: text("title"),
            description: text("description"),
            mime_type: text("mimeType"),
            size: block.get("size").and_then(Value::as_u64),
            annotations: None,
            icons: Vec::new(),
            meta: None,
        })),
        Some("resource") => block.get("resource").and_then(|r| {
            let body = match (r.get("text"), r.get("blob")) {
                (Some(Value::String(t)), _) => ResourceBody::Text(t.clone()),
                (_, Some(Value::String(b))) => ResourceBody::Blob(BASE64.decode(b).ok()?),
                _ => return None,
            };
            Some(ContentBlock::EmbeddedResource(EmbeddedResource {
                resource: ResourceContents {
                    uri: r.get("uri")?.as_str()?.to_string(),
                    mime_type: r.get("mimeType").and_then(Value::as_str).map(String::from),
                    body,
                    meta: None,
                },
                annotations: None,
                meta: None,
            }))
        }),
        _ => None,
    };
    parsed.unwrap_or_else(|| {
        ContentBlock::Text(TextContent {
            text: block.to_string(),
            annotations: None,
            meta: None,
        })
    })
}
