//! WIT values → MCP JSON, shaped for the negotiated revision: a field the revision does not define
//! is left out, and a content kind it does not know is turned into text that says what it was.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

use super::version::ProtocolVersion as V;
use crate::catalog::{CatalogPrompt, CatalogTool};
use crate::runtime::bindings::completion::CompletionResult;
use crate::runtime::bindings::host::ListKind;
use crate::runtime::bindings::prompts::PromptResult;
use crate::runtime::bindings::resources::{Resource, ResourceTemplate};
use crate::runtime::bindings::tools::{CallResult, ToolAnnotations};
use crate::runtime::bindings::types::{
    Annotations, ContentBlock, Icon, IconTheme, MediaContent, ResourceBody, ResourceContents, Role,
};

/// A tool for `tools/list`.
pub fn tool(entry: &CatalogTool, v: V) -> Value {
    let t = &entry.tool;
    let mut out = Map::new();
    out.insert("name".into(), entry.public_name.clone().into());
    put_opt(&mut out, "description", t.description.clone());
    out.insert(
        "inputSchema".into(),
        Value::Object(entry.input_schema.clone()),
    );
    if v >= V::V2025_03_26
        && let Some(a) = &t.annotations
    {
        out.insert("annotations".into(), tool_annotations(a));
    }
    if v >= V::V2025_06_18 {
        put_opt(&mut out, "title", t.title.clone());
        if let Some(schema) = &entry.output_schema {
            out.insert("outputSchema".into(), Value::Object(schema.clone()));
        }
        put_meta(&mut out, t.meta.as_deref());
    }
    if v >= V::V2025_11_25 {
        put_icons(&mut out, &t.icons);
    }
    // 2026-07-28 has no `execution`: there the server alone decides (the tasks extension).
    if v == V::V2025_11_25 && entry.task != crate::config::TaskSupport::Forbidden {
        out.insert(
            "execution".into(),
            serde_json::json!({ "taskSupport": entry.task.as_str() }),
        );
    }
    Value::Object(out)
}

/// A resource for `resources/list`.
pub fn resource(r: &Resource, v: V) -> Value {
    let mut out = Map::new();
    out.insert("uri".into(), r.uri.clone().into());
    out.insert("name".into(), r.name.clone().into());
    put_opt(&mut out, "description", r.description.clone());
    put_opt(&mut out, "mimeType", r.mime_type.clone());
    put_opt(&mut out, "size", r.size);
    put_annotations(&mut out, r.annotations.as_ref(), v);
    put_descriptor_extras(&mut out, r.title.clone(), r.meta.as_deref(), &r.icons, v);
    Value::Object(out)
}

/// A resource template for `resources/templates/list`.
pub fn resource_template(t: &ResourceTemplate, v: V) -> Value {
    let mut out = Map::new();
    out.insert("uriTemplate".into(), t.uri_template.clone().into());
    out.insert("name".into(), t.name.clone().into());
    put_opt(&mut out, "description", t.description.clone());
    put_opt(&mut out, "mimeType", t.mime_type.clone());
    put_annotations(&mut out, t.annotations.as_ref(), v);
    put_descriptor_extras(&mut out, t.title.clone(), t.meta.as_deref(), &t.icons, v);
    Value::Object(out)
}

/// A prompt for `prompts/list`.
pub fn prompt(entry: &CatalogPrompt, v: V) -> Value {
    let p = &entry.prompt;
    let mut out = Map::new();
    out.insert("name".into(), entry.public_name.clone().into());
    put_opt(&mut out, "description", p.description.clone());
    if !p.arguments.is_empty() {
        let arguments: Vec<Value> = p
            .arguments
            .iter()
            .map(|a| {
                let mut arg = Map::new();
                arg.insert("name".into(), a.name.clone().into());
                put_opt(&mut arg, "description", a.description.clone());
                arg.insert("required".into(), a.required.into());
                if v >= V::V2025_06_18 {
                    put_opt(&mut arg, "title", a.title.clone());
                }
                Value::Object(arg)
            })
            .collect();
        out.insert("arguments".into(), arguments.into());
    }
    put_descriptor_extras(&mut out, p.title.clone(), p.meta.as_deref(), &p.icons, v);
    Value::Object(out)
}

/// The result of `prompts/get`.
pub fn prompt_result(result: &PromptResult, v: V) -> Value {
    let messages: Vec<Value> = result
        .messages
        .iter()
        .map(|m| json!({ "role": role(m.role), "content": content_block(&m.content, v) }))
        .collect();
    let mut out = Map::new();
    put_opt(&mut out, "description", result.description.clone());
    out.insert("messages".into(), messages.into());
    put_meta(&mut out, result.meta.as_deref());
    Value::Object(out)
}

/// Most values a `completion/complete` answer may carry.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// The result of `completion/complete`, cut to [`MAX_COMPLETION_VALUES`].
pub fn completion_result(result: &CompletionResult) -> Value {
    let values: Vec<&String> = result.values.iter().take(MAX_COMPLETION_VALUES).collect();
    let has_more = result.has_more || result.values.len() > MAX_COMPLETION_VALUES;
    let total = result
        .total
        .map(|t| t as usize)
        .unwrap_or(result.values.len())
        .max(result.values.len());
    json!({ "completion": { "values": values, "total": total, "hasMore": has_more } })
}

/// `title` (2025-06-18), `_meta` (2025-06-18) and `icons` (2025-11-25) of a listed item.
fn put_descriptor_extras(
    out: &mut Map<String, Value>,
    title: Option<String>,
    meta: Option<&str>,
    icons: &[Icon],
    v: V,
) {
    if v >= V::V2025_06_18 {
        put_opt(out, "title", title);
        put_meta(out, meta);
    }
    if v >= V::V2025_11_25 {
        put_icons(out, icons);
    }
}

fn tool_annotations(a: &ToolAnnotations) -> Value {
    let mut out = Map::new();
    put_opt(&mut out, "title", a.title.clone());
    put_opt(&mut out, "readOnlyHint", a.read_only_hint);
    put_opt(&mut out, "destructiveHint", a.destructive_hint);
    put_opt(&mut out, "idempotentHint", a.idempotent_hint);
    put_opt(&mut out, "openWorldHint", a.open_world_hint);
    Value::Object(out)
}

/// The result of `tools/call`.
pub fn call_result(result: &CallResult, v: V) -> Value {
    let mut content: Vec<Value> = result.content.iter().map(|c| content_block(c, v)).collect();
    let mut out = Map::new();
    match result
        .structured_content
        .as_deref()
        .map(serde_json::from_str::<Value>)
    {
        Some(Ok(structured)) if v >= V::V2025_06_18 => {
            out.insert("structuredContent".into(), structured);
        }
        // Older revisions have no structured content: the spec asks for the JSON as text.
        Some(Ok(structured)) if content.is_empty() => {
            content.push(json!({ "type": "text", "text": structured.to_string() }));
        }
        Some(Err(e)) => tracing::warn!("dropping structured content that is not JSON: {e}"),
        _ => {}
    }
    out.insert("content".into(), Value::Array(content));
    if result.is_error {
        out.insert("isError".into(), true.into());
    }
    put_meta(&mut out, result.meta.as_deref());
    Value::Object(out)
}

/// A tool execution error: the model reads `message`.
pub fn call_error(message: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}

/// A tool error for a call a limit refused or stopped; when waiting helps, `_meta` says how long
/// (`palisade/retryAfterMs`) for programs, as the text does for the model.
pub fn limit_error(message: &str, retry_after: Option<std::time::Duration>) -> Value {
    let mut result = call_error(message);
    if let Some(after) = retry_after {
        result["_meta"] = json!({ "palisade/retryAfterMs": after.as_millis() as u64 });
    }
    result
}

/// One content block.
pub fn content_block(block: &ContentBlock, v: V) -> Value {
    let mut out = Map::new();
    match block {
        ContentBlock::Text(t) => {
            out.insert("type".into(), "text".into());
            out.insert("text".into(), t.text.clone().into());
            put_annotations(&mut out, t.annotations.as_ref(), v);
            put_content_meta(&mut out, t.meta.as_deref(), v);
        }
        ContentBlock::Image(m) => put_media(&mut out, "image", m, v),
        ContentBlock::Audio(m) if v >= V::V2025_03_26 => put_media(&mut out, "audio", m, v),
        ContentBlock::Audio(m) => {
            return stand_in(format!(
                "[{} bytes of {} audio left out: protocol {v} has no audio content]",
                m.data.len(),
                m.mime_type
            ));
        }
        ContentBlock::ResourceLink(l) if v >= V::V2025_06_18 => {
            out.insert("type".into(), "resource_link".into());
            out.insert("uri".into(), l.uri.clone().into());
            out.insert("name".into(), l.name.clone().into());
            put_opt(&mut out, "title", l.title.clone());
            put_opt(&mut out, "description", l.description.clone());
            put_opt(&mut out, "mimeType", l.mime_type.clone());
            put_opt(&mut out, "size", l.size);
            put_annotations(&mut out, l.annotations.as_ref(), v);
            if v >= V::V2025_11_25 {
                put_icons(&mut out, &l.icons);
            }
            put_content_meta(&mut out, l.meta.as_deref(), v);
        }
        ContentBlock::ResourceLink(l) => {
            return stand_in(format!("[resource: {} ({})]", l.uri, l.name));
        }
        ContentBlock::EmbeddedResource(r) => {
            out.insert("type".into(), "resource".into());
            out.insert("resource".into(), resource_contents(&r.resource, v));
            put_annotations(&mut out, r.annotations.as_ref(), v);
            put_content_meta(&mut out, r.meta.as_deref(), v);
        }
    }
    Value::Object(out)
}

/// Image and audio content share one shape: base64 data and a MIME type.
fn put_media(out: &mut Map<String, Value>, kind: &str, m: &MediaContent, v: V) {
    out.insert("type".into(), kind.into());
    out.insert("data".into(), BASE64.encode(&m.data).into());
    out.insert("mimeType".into(), m.mime_type.clone().into());
    put_annotations(out, m.annotations.as_ref(), v);
    put_content_meta(out, m.meta.as_deref(), v);
}

fn stand_in(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

/// Text or blob contents of a resource.
pub fn resource_contents(c: &ResourceContents, v: V) -> Value {
    let mut out = Map::new();
    out.insert("uri".into(), c.uri.clone().into());
    put_opt(&mut out, "mimeType", c.mime_type.clone());
    match &c.body {
        ResourceBody::Text(text) => out.insert("text".into(), text.clone().into()),
        ResourceBody::Blob(bytes) => out.insert("blob".into(), BASE64.encode(bytes).into()),
    };
    put_content_meta(&mut out, c.meta.as_deref(), v);
    Value::Object(out)
}

fn put_annotations(out: &mut Map<String, Value>, a: Option<&Annotations>, v: V) {
    let Some(a) = a else { return };
    let mut map = Map::new();
    if !a.audience.is_empty() {
        let audience: Vec<Value> = a.audience.iter().map(|r| role(*r).into()).collect();
        map.insert("audience".into(), audience.into());
    }
    if let Some(p) = a.priority.filter(|p| (0.0..=1.0).contains(p)) {
        map.insert("priority".into(), p.into());
    }
    if v >= V::V2025_06_18 {
        put_opt(&mut map, "lastModified", a.last_modified.clone());
    }
    if !map.is_empty() {
        out.insert("annotations".into(), Value::Object(map));
    }
}

/// The role as MCP names it: `user` or `assistant`.
pub fn role(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn put_icons(out: &mut Map<String, Value>, icons: &[Icon]) {
    if icons.is_empty() {
        return;
    }
    let icons: Vec<Value> = icons
        .iter()
        .map(|i| {
            let mut m = Map::new();
            m.insert("src".into(), i.src.clone().into());
            put_opt(&mut m, "mimeType", i.mime_type.clone());
            if !i.sizes.is_empty() {
                m.insert("sizes".into(), i.sizes.clone().into());
            }
            if let Some(theme) = i.theme {
                let theme = match theme {
                    IconTheme::Light => "light",
                    IconTheme::Dark => "dark",
                };
                m.insert("theme".into(), theme.into());
            }
            Value::Object(m)
        })
        .collect();
    out.insert("icons".into(), icons.into());
}

/// `_meta` on content and resource contents exists from 2025-06-18 on.
fn put_content_meta(out: &mut Map<String, Value>, meta: Option<&str>, v: V) {
    if v >= V::V2025_06_18 {
        put_meta(out, meta);
    }
}

/// A plugin's `_meta`, if it is a JSON object; anything else is dropped with a warning.
/// Whether a `_meta` key is not a plugin's to set: the host's own (`palisade/`), or one the MCP
/// specification reserves (a prefix whose second label is `modelcontextprotocol` or `mcp`, such
/// as `io.modelcontextprotocol/related-task`).
pub fn is_reserved_meta_key(key: &str) -> bool {
    let Some((prefix, _)) = key.split_once('/') else {
        return false;
    };
    if prefix == "palisade" {
        return true;
    }
    prefix.split('.').nth(1).is_some_and(|label| {
        label.eq_ignore_ascii_case("modelcontextprotocol") || label.eq_ignore_ascii_case("mcp")
    })
}

/// Removes the reserved keys ([`is_reserved_meta_key`]) from the `_meta` of a tool result made of
/// a plugin's answer, and of its content blocks; returns the keys removed.
pub fn strip_reserved_meta(result: &mut Value) -> Vec<String> {
    let mut removed = Vec::new();
    let mut strip = |holder: &mut Value| {
        if let Some(meta) = holder.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.retain(|key, _| {
                let reserved = is_reserved_meta_key(key);
                if reserved && removed.len() < 16 {
                    removed.push(key.clone());
                }
                !reserved
            });
        }
    };
    strip(result);
    if let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) {
        for block in content {
            strip(block);
            if let Some(resource) = block.get_mut("resource") {
                strip(resource);
            }
        }
    }
    removed
}

fn put_meta(out: &mut Map<String, Value>, meta: Option<&str>) {
    let Some(text) = meta else { return };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => {
            out.insert("_meta".into(), Value::Object(m));
        }
        _ => tracing::warn!("dropping _meta that is not a JSON object"),
    }
}

fn put_opt<T: Into<Value>>(out: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(value) = value {
        out.insert(key.into(), value.into());
    }
}

/// The notification that announces a change of the `kind` list.
pub fn list_changed_method(kind: ListKind) -> &'static str {
    match kind {
        ListKind::Tools => "notifications/tools/list_changed",
        ListKind::Resources => "notifications/resources/list_changed",
        ListKind::Prompts => "notifications/prompts/list_changed",
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn reserved_meta_keys_are_the_hosts_and_the_specifications() {
        for reserved in [
            "palisade/retryAfterMs",
            "io.modelcontextprotocol/related-task",
            "dev.mcp/x",
            "com.MCP.tools/y",
        ] {
            assert!(is_reserved_meta_key(reserved), "{reserved}");
        }
        for free in [
            "com.example.mcp/keep",
            "mine",
            "example.com/x",
            "palisadex/y",
        ] {
            assert!(!is_reserved_meta_key(free), "{free}");
        }
        let mut result = serde_json::json!({
            "_meta": { "palisade/retryAfterMs": 1, "com.example/ok": 2 },
            "content": [{ "type": "resource", "_meta": { "io.modelcontextprotocol/related-task": {} },
                          "resource": { "uri": "a:b", "_meta": { "dev.mcp/x": 1, "k": 3 } } }]
        });
        let removed = strip_reserved_meta(&mut result);
        assert_eq!(removed.len(), 3, "{removed:?}");
        assert_eq!(result["_meta"], serde_json::json!({ "com.example/ok": 2 }));
        assert_eq!(result["content"][0]["_meta"], serde_json::json!({}));
        assert_eq!(
            result["content"][0]["resource"]["_meta"],
            serde_json::json!({ "k": 3 })
        );
    }

    use super::*;
    use crate::runtime::bindings::types::{ResourceLink, TextContent};

    fn text(s: &str) -> ContentBlock {
        ContentBlock::Text(TextContent {
            text: s.into(),
            annotations: Some(Annotations {
                audience: vec![Role::User],
                priority: Some(0.5),
                last_modified: Some("2025-01-12T15:00:58Z".into()),
            }),
            meta: Some(r#"{"k":1}"#.into()),
        })
    }

    #[test]
    fn fields_follow_the_revision() {
        let old = content_block(&text("hi"), V::V2024_11_05);
        assert_eq!(
            old,
            json!({"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5}})
        );
        let new = content_block(&text("hi"), V::V2025_11_25);
        assert_eq!(new["annotations"]["lastModified"], "2025-01-12T15:00:58Z");
        assert_eq!(new["_meta"], json!({"k":1}));
    }

    #[test]
    fn unknown_content_kinds_become_text_for_old_clients() {
        let audio = ContentBlock::Audio(MediaContent {
            data: vec![1, 2, 3],
            mime_type: "audio/wav".into(),
            annotations: None,
            meta: None,
        });
        assert_eq!(content_block(&audio, V::V2024_11_05)["type"], "text");
        assert_eq!(content_block(&audio, V::V2025_03_26)["data"], "AQID");
        let link = ContentBlock::ResourceLink(ResourceLink {
            uri: "file:///a".into(),
            name: "a".into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: vec![],
            meta: None,
        });
        assert_eq!(content_block(&link, V::V2025_03_26)["type"], "text");
        assert_eq!(
            content_block(&link, V::V2025_06_18)["type"],
            "resource_link"
        );
    }

    #[test]
    fn structured_content_is_text_before_2025_06_18() {
        let result = CallResult {
            content: vec![],
            structured_content: Some(r#"{"a":1}"#.into()),
            is_error: false,
            meta: None,
        };
        let old = call_result(&result, V::V2025_03_26);
        assert_eq!(old, json!({"content":[{"type":"text","text":"{\"a\":1}"}]}));
        let new = call_result(&result, V::V2025_06_18);
        assert_eq!(new["structuredContent"], json!({"a":1}));
    }
}
