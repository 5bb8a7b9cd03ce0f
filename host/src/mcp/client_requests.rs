//! Requests plugins make of the client: elicitation (`elicitation/create`) and sampling
//! (`sampling/createMessage`), sent only when the client declared it can answer them.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

use super::version::ProtocolVersion as V;
use super::{Session, wire};
use crate::runtime::bindings::host::{
    ElicitationAction, ElicitationRequest, ElicitationResponse, SamplingRequest, SamplingResponse,
};
use crate::runtime::bindings::types::{
    ContentBlock, EmbeddedResource, MediaContent, ResourceBody, ResourceContents, ResourceLink,
    Role, TextContent,
};
use crate::runtime::{ClientAnswer, ClientChannel};

/// How long a person may take to answer an elicitation (the call's own time limit also applies).
const ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the client's model may take to sample.
const SAMPLING_TIMEOUT: Duration = Duration::from_secs(300);

/// The session, as the client a plugin call may ask.
pub(super) struct SessionClient {
    pub(super) session: Arc<Session>,
    /// The client's request the call serves.
    pub(super) related: Value,
}

impl ClientChannel for SessionClient {
    fn elicit(&self, request: ElicitationRequest) -> ClientAnswer<ElicitationResponse> {
        let params = self.session.elicitation_params(request);
        self.ask("elicitation/create", params, ELICITATION_TIMEOUT, |r| {
            parse_elicitation(&r)
        })
    }

    fn sample(&self, request: SamplingRequest) -> ClientAnswer<SamplingResponse> {
        let params = self.session.sampling_params(request);
        self.ask(
            "sampling/createMessage",
            params,
            SAMPLING_TIMEOUT,
            parse_sampling,
        )
    }
}

impl SessionClient {
    /// Sends `method` with `params` (or the reason there are none) on the call's request, and
    /// parses the client's answer.
    fn ask<T: 'static>(
        &self,
        method: &'static str,
        params: Result<Value, String>,
        timeout: Duration,
        parse: fn(Value) -> Result<T, String>,
    ) -> ClientAnswer<T> {
        let (session, related) = (self.session.clone(), self.related.clone());
        Box::pin(async move {
            let result = session
                .ask_client(method, params?, timeout, Some(&related))
                .await?;
            parse(result)
        })
    }
}

impl Session {
    /// The client's declared capability `name`, if any.
    fn client_capability(&self, name: &str) -> Option<&Value> {
        self.client_capabilities
            .get()?
            .get(name)
            .filter(|c| c.is_object())
    }

    fn elicitation_params(&self, request: ElicitationRequest) -> Result<Value, String> {
        let version = self.version().ok_or("the session is not initialized")?;
        if version < V::V2025_06_18 {
            return Err(format!(
                "protocol {version} has no elicitation (2025-06-18 added it)"
            ));
        }
        let capability = self
            .client_capability("elicitation")
            .ok_or("the client cannot be asked: it did not declare the elicitation capability")?;
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
                Ok(json!({ "message": form.message, "requestedSchema": schema }))
            }
            ElicitationRequest::Url(url) => {
                if version < V::V2025_11_25 || capability.get("url").is_none() {
                    return Err("the client does not support URL-mode elicitation".into());
                }
                Ok(json!({
                    "mode": "url",
                    "message": url.message,
                    "url": url.url,
                    "elicitationId": url.elicitation_id,
                }))
            }
        }
    }

    fn sampling_params(&self, request: SamplingRequest) -> Result<Value, String> {
        let version = self.version().ok_or("the session is not initialized")?;
        self.client_capability("sampling")
            .ok_or("the client cannot be asked: it did not declare the sampling capability")?;
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
                    return Err(format!(
                        "protocol {version} allows exactly one content block per sampling message, not {n}"
                    ));
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
