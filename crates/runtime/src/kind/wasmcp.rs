//! Components built with the wasmcp toolkit: they export `wasmcp:mcp-v20251125/tools` (or the
//! 2025-06-18 package), whose `list-tools` and `call-tool` take a message context and MCP
//! records. This adapter calls them through the generic path (wasmtime's dynamic values, under
//! the output limit) and maps their records onto Palisade's, so their tools are served unchanged.
//!
//! The adapter reads the functions' types from the component, not from a copy of the toolkit's
//! WIT: the context is built from its own type (every option empty, the protocol version set,
//! lists empty), and results are read by field name. What Palisade does not carry is refused
//! with a message: streamed text or blobs (`text-stream`, `blob-stream`). The toolkit's imports
//! are linked as any import: its types-only interfaces need nothing; `server-io`, `sessions`
//! and `server-auth` functions are not provided (a call that uses them fails).

use base64::Engine as _;
use serde_json::{Value as Json, json};
use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, ComponentExportIndex};

use super::answers::Listing;
use super::generic::call_dynamic;
use crate::bindings::{tools, types};
use crate::call::CallContext;
use crate::error::CallError;
use crate::generic::types::{Signature, WitType};
use crate::generic::value::{self, Value};
use crate::run::Runner;

/// The exported interfaces the adapter serves, by prefix (any 0.1.x version).
const PACKAGES: [&str; 2] = ["wasmcp:mcp-v20251125/tools@", "wasmcp:mcp-v20250618/tools@"];

/// The protocol revision the context says, per package.
fn revision(interface: &str) -> &'static str {
    if interface.starts_with("wasmcp:mcp-v20250618/") {
        "2025-06-18"
    } else {
        "2025-11-25"
    }
}

/// Pages of `list-tools` the adapter follows.
pub const MAX_PAGES: usize = 100;

/// One exported function: where it is and its types.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Where to call it.
    pub export: ComponentExportIndex,
    /// Its types.
    pub signature: Signature,
}

/// A wasmcp tools component's two functions.
#[derive(Debug, Clone)]
pub struct Wasmcp {
    /// The exported interface's name.
    pub interface: String,
    /// `list-tools`.
    pub list_tools: Endpoint,
    /// `call-tool`.
    pub call_tool: Endpoint,
}

impl Wasmcp {
    /// Every tool the component lists, page by page.
    pub(super) async fn list(&self, runner: &Runner) -> Result<Listing, CallError> {
        let endpoint = &self.list_tools;
        let mut listed = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let args = self
                .arguments(endpoint, json!({ "cursor": cursor }))
                .map_err(CallError::Stopped)?;
            let result = call_dynamic(
                runner,
                CallContext::default(),
                endpoint.export,
                &endpoint.signature,
                args,
            )
            .await?;
            let (page, next) = tools_page(endpoint, result)
                .map_err(|why| CallError::Stopped(format!("list-tools: {why}")))?;
            listed.extend(page);
            match next {
                Some(next) => cursor = Some(next),
                None => {
                    return Ok(Listing {
                        tools: listed,
                        ..Listing::default()
                    });
                }
            }
        }
        Err(CallError::Stopped(format!(
            "list-tools: more than {MAX_PAGES} pages"
        )))
    }

    /// Calls the tool `name` through the component's `call-tool`.
    pub(super) async fn call_tool(
        &self,
        runner: &Runner,
        name: &str,
        arguments: String,
        call: CallContext,
    ) -> Result<tools::CallResult, CallError> {
        let endpoint = &self.call_tool;
        let args = self
            .arguments(endpoint, json!({"name": name, "arguments": arguments}))
            .map_err(CallError::Stopped)?;
        let result = call_dynamic(runner, call, endpoint.export, &endpoint.signature, args).await?;
        call_result(endpoint, name, result)
            .map_err(|message| super::answers::plugin_error(types::ErrorCode::Internal, message))
    }
}

impl Wasmcp {
    /// The wasmcp tools interface `component` exports, if it does; an error if it does but its
    /// functions are not what the adapter knows.
    pub(crate) fn find(engine: &Engine, component: &Component) -> Option<Result<Wasmcp, String>> {
        let ty = component.component_type();
        let (interface, item) = ty
            .exports(engine)
            .find(|(name, _)| PACKAGES.iter().any(|p| name.starts_with(p)))?;
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            return Some(Err(format!("`{interface}` is not an instance")));
        };
        let parent = component.get_export_index(None, interface)?;
        let endpoint = |name: &str| -> Result<Endpoint, String> {
            let func = instance
                .exports(engine)
                .find(|(n, _)| *n == name)
                .and_then(|(_, item)| match item.ty {
                    ComponentItem::ComponentFunc(func) => Some(func),
                    _ => None,
                })
                .ok_or_else(|| format!("`{interface}` has no function `{name}`"))?;
            let export = component
                .get_export_index(Some(&parent), name)
                .ok_or_else(|| format!("`{interface}#{name}` cannot be found"))?;
            let signature = Signature::with_handles(&func)
                .map_err(|why| format!("`{interface}#{name}`: {why}"))?;
            if signature.params.len() != 2 {
                return Err(format!("`{interface}#{name}` does not take (ctx, request)"));
            }
            Ok(Endpoint { export, signature })
        };
        Some((|| {
            Ok(Wasmcp {
                interface: interface.to_string(),
                list_tools: endpoint("list-tools")?,
                call_tool: endpoint("call-tool")?,
            })
        })())
    }

    /// The arguments of a call of `endpoint`: the context, and the request `request` (JSON,
    /// over the request type's defaults).
    pub(crate) fn arguments(
        &self,
        endpoint: &Endpoint,
        request: Json,
    ) -> Result<Vec<Value>, String> {
        let (ctx_ty, request_ty) = (
            &endpoint.signature.params[0].1,
            &endpoint.signature.params[1].1,
        );
        let mut ctx = default_json(ctx_ty);
        if let (Some(ctx), WitType::Record(fields)) = (ctx.as_object_mut(), ctx_ty)
            && fields
                .iter()
                .any(|(n, t)| n == "protocol-version" && *t == WitType::String)
        {
            ctx.insert("protocol-version".into(), json!(revision(&self.interface)));
        }
        let mut full = default_json(request_ty);
        if let (Some(full), Json::Object(given)) = (full.as_object_mut(), request) {
            full.extend(given);
        }
        let ctx = value::from_json(ctx_ty, &ctx, "ctx").map_err(|e| e.to_string())?;
        let request = value::from_json(request_ty, &full, "request").map_err(|e| e.to_string())?;
        Ok(vec![ctx, request])
    }
}

/// What `list-tools` answered, page by page: the tools, and the next cursor.
pub(crate) fn tools_page(
    endpoint: &Endpoint,
    result: Option<Value>,
) -> Result<(Vec<tools::Tool>, Option<String>), String> {
    let page = ok_payload(endpoint, result)?;
    let listed = page["tools"].as_array().cloned().unwrap_or_default();
    let tools = listed
        .iter()
        .map(tool)
        .collect::<Result<Vec<_>, String>>()?;
    let next = page["next-cursor"].as_str().map(str::to_string);
    Ok((tools, next))
}

/// What `call-tool` answered for the tool `name`.
pub(crate) fn call_result(
    endpoint: &Endpoint,
    name: &str,
    result: Option<Value>,
) -> Result<tools::CallResult, String> {
    let answer = ok_payload(endpoint, result)?;
    if answer.is_null() {
        return Err(format!("the component has no tool `{name}`"));
    }
    let content = answer["content"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(content_block)
        .collect::<Result<Vec<_>, String>>()?;
    Ok(tools::CallResult {
        content,
        structured_content: answer["structured-content"].as_str().map(str::to_string),
        is_error: answer["is-error"].as_bool().unwrap_or(false),
        meta: answer["meta"].as_str().map(str::to_string),
    })
}

/// The `ok` of a `result<T, error-code>`, as JSON; the error's message otherwise.
fn ok_payload(endpoint: &Endpoint, result: Option<Value>) -> Result<Json, String> {
    let (Some(ty), Some(result)) = (&endpoint.signature.result, result) else {
        return Err("the function returned nothing".into());
    };
    let json = value::to_json(ty, &result);
    if let Some(ok) = json.get("ok") {
        return Ok(ok.clone());
    }
    if json == "ok" {
        return Ok(Json::Null);
    }
    // `error-code` is a variant of records with a message: {"invalid-params": {"message": ...}}.
    let error = json.get("err").cloned().unwrap_or(json);
    let (kind, detail) = match &error {
        Json::Object(map) => map
            .iter()
            .next()
            .map(|(k, v)| (k.clone(), v.clone()))
            .unwrap_or_default(),
        other => (other.to_string(), Json::Null),
    };
    let message = detail["message"].as_str().unwrap_or_default();
    Err(format!("{kind}: {message}")
        .trim_end_matches(": ")
        .to_string())
}

/// A value for every part of `ty`: options empty, lists and strings empty, numbers 0, the
/// first case of a variant.
fn default_json(ty: &WitType) -> Json {
    match ty {
        WitType::Bool => json!(false),
        WitType::String => json!(""),
        WitType::List(item) if **item == WitType::U8 => json!(""),
        WitType::List(_) | WitType::Flags(_) => json!([]),
        WitType::Record(fields) => Json::Object(
            fields
                .iter()
                .map(|(n, t)| (n.clone(), default_json(t)))
                .collect(),
        ),
        WitType::Tuple(types) => Json::Array(types.iter().map(default_json).collect()),
        WitType::Option(_) | WitType::Handle => Json::Null,
        WitType::Enum(names) => names.first().map_or(Json::Null, |n| json!(n)),
        WitType::Variant(cases) => match cases.first() {
            Some((name, None)) => json!(name),
            Some((name, Some(t))) => json!({name: default_json(t)}),
            None => Json::Null,
        },
        WitType::Result { ok, .. } => match ok {
            None => json!("ok"),
            Some(t) => json!({"ok": default_json(t)}),
        },
        WitType::Char => json!(" "),
        WitType::F32 | WitType::F64 => json!(0.0),
        _ => json!(0),
    }
}

fn tool(listed: &Json) -> Result<tools::Tool, String> {
    let name = listed["name"].as_str().ok_or("a listed tool has no name")?;
    let options = &listed["options"];
    let text = |key: &str| options[key].as_str().map(str::to_string);
    Ok(tools::Tool {
        name: name.to_string(),
        title: text("title"),
        description: text("description"),
        input_schema: listed["input-schema"].as_str().unwrap_or("{}").to_string(),
        output_schema: text("output-schema"),
        annotations: options["annotations"]
            .as_object()
            .map(|a| tools::ToolAnnotations {
                title: a.get("title").and_then(Json::as_str).map(str::to_string),
                read_only_hint: a.get("read-only-hint").and_then(Json::as_bool),
                destructive_hint: a.get("destructive-hint").and_then(Json::as_bool),
                idempotent_hint: a.get("idempotent-hint").and_then(Json::as_bool),
                open_world_hint: a.get("open-world-hint").and_then(Json::as_bool),
            }),
        // Nothing in the component says; the configuration may (`task = ...`).
        task_support: tools::TaskSupport::Forbidden,
        icons: icons(&options["icons"]),
        meta: text("meta"),
    })
}

fn icons(json: &Json) -> Vec<types::Icon> {
    json.as_array()
        .into_iter()
        .flatten()
        .filter_map(|icon| {
            Some(types::Icon {
                src: icon["src"].as_str()?.to_string(),
                mime_type: icon["mime-type"].as_str().map(str::to_string),
                sizes: icon["sizes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect(),
                theme: match icon["theme"].as_str() {
                    Some("light") => Some(types::IconTheme::Light),
                    Some("dark") => Some(types::IconTheme::Dark),
                    _ => None,
                },
            })
        })
        .collect()
}

fn annotations(json: &Json) -> Option<types::Annotations> {
    let a = json.as_object()?;
    Some(types::Annotations {
        audience: a
            .get("audience")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| match r.as_str() {
                Some("user") => Some(types::Role::User),
                Some("assistant") => Some(types::Role::Assistant),
                _ => None,
            })
            .collect(),
        priority: a.get("priority").and_then(Json::as_f64),
        last_modified: a
            .get("last-modified")
            .and_then(Json::as_str)
            .map(str::to_string),
    })
}

/// `text-data` or `blob-data`: the inline case; streams are refused.
fn inline(data: &Json) -> Result<&Json, String> {
    if let Some(inline) = data.get("text").or_else(|| data.get("blob")) {
        return Ok(inline);
    }
    Err(
        "the tool answered with a stream (text-stream or blob-stream), which Palisade does not \
         read yet"
            .into(),
    )
}

fn bytes(data: &Json) -> Result<Vec<u8>, String> {
    let text = inline(data)?.as_str().unwrap_or_default();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| e.to_string())
}

fn content_block(block: &Json) -> Result<types::ContentBlock, String> {
    let (kind, body) = block
        .as_object()
        .and_then(|o| o.iter().next())
        .ok_or("a content block without a case")?;
    let options = &body["options"];
    let meta = options["meta"].as_str().map(str::to_string);
    Ok(match kind.as_str() {
        "text" => types::ContentBlock::Text(types::TextContent {
            text: inline(&body["text"])?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            annotations: annotations(&options["annotations"]),
            meta,
        }),
        "image" | "audio" => {
            let media = types::MediaContent {
                data: bytes(&body["data"])?,
                mime_type: body["mime-type"].as_str().unwrap_or_default().to_string(),
                annotations: annotations(&options["annotations"]),
                meta,
            };
            if kind == "image" {
                types::ContentBlock::Image(media)
            } else {
                types::ContentBlock::Audio(media)
            }
        }
        "resource-link" => types::ContentBlock::ResourceLink(types::ResourceLink {
            uri: body["uri"].as_str().unwrap_or_default().to_string(),
            name: body["name"].as_str().unwrap_or_default().to_string(),
            title: options["title"].as_str().map(str::to_string),
            description: options["description"].as_str().map(str::to_string),
            mime_type: options["mime-type"].as_str().map(str::to_string),
            size: options["size"].as_u64(),
            annotations: annotations(&options["annotations"]),
            icons: icons(&options["icons"]),
            meta,
        }),
        "embedded-resource" => {
            let (case, contents) = body["resource"]
                .as_object()
                .and_then(|o| o.iter().next())
                .ok_or("an embedded resource without contents")?;
            let resource_body = if case == "blob" {
                types::ResourceBody::Blob(bytes(&contents["blob"])?)
            } else {
                types::ResourceBody::Text(
                    inline(&contents["text"])?
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            };
            types::ContentBlock::EmbeddedResource(types::EmbeddedResource {
                resource: types::ResourceContents {
                    uri: contents["uri"].as_str().unwrap_or_default().to_string(),
                    mime_type: contents["options"]["mime-type"]
                        .as_str()
                        .map(str::to_string),
                    body: resource_body,
                    meta: contents["options"]["meta"].as_str().map(str::to_string),
                },
                annotations: annotations(&options["annotations"]),
                meta,
            })
        }
        other => return Err(format!("a content block of unknown kind `{other}`")),
    })
}
