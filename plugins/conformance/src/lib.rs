//! The fixtures the official MCP conformance suite (`@modelcontextprotocol/conformance`) expects
//! of a server under test: tools, resources, a resource template, prompts and a completion, named
//! and shaped as its server scenarios check them. Serve it with `prefix = ""` so the names are the
//! exact ones the suite asks for. `FIXTURES.md` beside this crate lists what each scenario checks.
//!
//! The fixtures of the draft revision, 2026-07-28, ask the client through `host::ask`: over that
//! revision the host answers a call with `input_required` and runs it again once the client
//! sends the answers, so they return early while an answer is awaited.

use std::borrow::Cow;
use std::thread;
use std::time::Duration;

use palisade_sdk::host::{
    self, Answers, AskError, ElicitationAction, ElicitationRequest, ElicitationResponse,
    FormElicitation, InputRequest, ListKind, LogLevel, SamplingMessage, SamplingRequest,
};
use palisade_sdk::types::{ContentBlock, Role};
use palisade_sdk::{
    Arguments, NoArgs, PluginError, Prompt, PromptMessage, Resource, ResourceContents,
    ResourceTemplate, Tool, ToolResult, prefix_matches,
};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde_json::{Value, json};

/// A 1x1 red pixel: the PNG the reference server sends (`TEST_IMAGE_BASE64`).
const RED_PIXEL_PNG: &[u8] = include_bytes!("red-pixel.png");
/// One sample of silence: a minimal, well-formed 8 kHz mono 16-bit WAV file.
const SILENCE_WAV: &[u8] = include_bytes!("silence.wav");

/// The resource whose subscription the suite tests.
const WATCHED_URI: &str = "test://watched-resource";

/// Pause between the log messages and progress reports of the slow tools. The suite asks for
/// about 50 ms; the host sends at most one progress notification per 50 ms and keeps only the
/// latest report of a shorter gap, so a wider pause keeps all three reports.
const STEP_PAUSE: Duration = Duration::from_millis(100);

// ---- tools: content ----

fn simple_text(_: NoArgs) -> &'static str {
    "This is a simple text response for testing."
}

fn image_content(_: NoArgs) -> ToolResult {
    ToolResult::new().with_image(RED_PIXEL_PNG, "image/png")
}

fn audio_content(_: NoArgs) -> ToolResult {
    ToolResult::new().with_audio(SILENCE_WAV, "audio/wav")
}

fn embedded_resource(_: NoArgs) -> ToolResult {
    ToolResult::new().with_embedded_resource(
        ResourceContents::text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .mime_type("text/plain"),
    )
}

fn multiple_content_types(_: NoArgs) -> ToolResult {
    ToolResult::text("Multiple content types test:")
        .with_image(RED_PIXEL_PNG, "image/png")
        .with_embedded_resource(
            ResourceContents::text(
                "test://mixed-content-resource",
                r#"{"test":"data","value":123}"#,
            )
            .mime_type("application/json"),
        )
}

fn error_handling(_: NoArgs) -> ToolResult {
    ToolResult::error("This tool intentionally returns an error for testing")
}

// ---- tools: notifications during a call ----

fn tool_with_logging(_: NoArgs) -> &'static str {
    host::log(LogLevel::Info, "Tool execution started");
    thread::sleep(STEP_PAUSE);
    host::log(LogLevel::Info, "Tool processing data");
    thread::sleep(STEP_PAUSE);
    host::log(LogLevel::Info, "Tool execution completed");
    "Tool with logging executed successfully"
}

fn tool_with_progress(_: NoArgs) -> ToolResult {
    for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            thread::sleep(STEP_PAUSE);
        }
        if host::is_cancelled() {
            return ToolResult::error("cancelled");
        }
        let message = format!("Completed step {progress} of 100");
        host::report_progress(progress, Some(100.0), Some(&message));
    }
    ToolResult::text("Tool with progress executed successfully")
}

fn trigger_resource_update(_: NoArgs) -> String {
    host::notify_resource_updated(WATCHED_URI);
    format!("Reported an update of {WATCHED_URI} to its subscribers")
}

// ---- tools: requests to the client ----

/// Arguments of `test_sampling`.
#[derive(Deserialize, JsonSchema)]
struct Sampling {
    /// The prompt to send to the LLM
    prompt: String,
}

fn sampling(args: Sampling) -> ToolResult {
    let request = SamplingRequest {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: vec![ContentBlock::text(args.prompt)],
        }],
        system_prompt: None,
        max_tokens: 100,
        temperature: None,
        stop_sequences: Vec::new(),
        model_preferences: None,
        extra: None,
    };
    match host::sample(&request) {
        Ok(response) => {
            let answer = response.text();
            let answer = if answer.is_empty() {
                "No response".to_string()
            } else {
                answer
            };
            ToolResult::text(format!("LLM response: {answer}"))
        }
        Err(error) => ToolResult::error(format!("Sampling not supported or error: {error}")),
    }
}

/// Arguments of `test_elicitation`.
#[derive(Deserialize, JsonSchema)]
struct Elicitation {
    /// The message to show the user
    message: String,
}

/// The form `test_elicitation` shows, as the scenario describes it.
const USER_INFO_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "username": { "type": "string", "description": "User's response" },
    "email": { "type": "string", "description": "User's email address" }
  },
  "required": ["username", "email"]
}"#;

/// SEP-1034: a default for every primitive type.
const DEFAULTS_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "name": { "type": "string", "description": "User name", "default": "John Doe" },
    "age": { "type": "integer", "description": "User age", "default": 30 },
    "score": { "type": "number", "description": "User score", "default": 95.5 },
    "status": {
      "type": "string",
      "description": "User status",
      "enum": ["active", "inactive", "pending"],
      "default": "active"
    },
    "verified": { "type": "boolean", "description": "Verification status", "default": true }
  },
  "required": []
}"#;

/// SEP-1330: the five kinds of enum.
const ENUMS_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "untitledSingle": {
      "type": "string",
      "description": "Select one option",
      "enum": ["option1", "option2", "option3"]
    },
    "titledSingle": {
      "type": "string",
      "description": "Select one option with titles",
      "oneOf": [
        { "const": "value1", "title": "First Option" },
        { "const": "value2", "title": "Second Option" },
        { "const": "value3", "title": "Third Option" }
      ]
    },
    "legacyEnum": {
      "type": "string",
      "description": "Select one option (legacy)",
      "enum": ["opt1", "opt2", "opt3"],
      "enumNames": ["Option One", "Option Two", "Option Three"]
    },
    "untitledMulti": {
      "type": "array",
      "description": "Select multiple options",
      "minItems": 1,
      "maxItems": 3,
      "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
    },
    "titledMulti": {
      "type": "array",
      "description": "Select multiple options with titles",
      "minItems": 1,
      "maxItems": 3,
      "items": {
        "anyOf": [
          { "const": "value1", "title": "First Choice" },
          { "const": "value2", "title": "Second Choice" },
          { "const": "value3", "title": "Third Choice" }
        ]
      }
    }
  },
  "required": []
}"#;

/// Shows a form; the answer as `action=..., content={...}`, or why there is none.
fn ask(message: &str, schema: &str) -> Result<String, String> {
    let request = ElicitationRequest::Form(FormElicitation {
        message: message.to_string(),
        requested_schema: schema.to_string(),
    });
    let ElicitationResponse { action, content } =
        host::elicit(&request).map_err(|e| format!("Elicitation not supported or error: {e}"))?;
    let action = match action {
        ElicitationAction::Accept => "accept",
        ElicitationAction::Decline => "decline",
        ElicitationAction::Cancel => "cancel",
    };
    Ok(format!(
        "action={action}, content={}",
        content.as_deref().unwrap_or("{}")
    ))
}

fn elicitation(args: Elicitation) -> Result<String, String> {
    ask(&args.message, USER_INFO_SCHEMA).map(|answer| format!("User response: {answer}"))
}

fn elicitation_defaults(_: NoArgs) -> Result<String, String> {
    ask(
        "Please review and update the form fields with defaults",
        DEFAULTS_SCHEMA,
    )
    .map(|answer| format!("Elicitation completed: {answer}"))
}

fn elicitation_enums(_: NoArgs) -> Result<String, String> {
    ask("Please select options from the enum fields", ENUMS_SCHEMA)
        .map(|answer| format!("Elicitation completed: {answer}"))
}

// ---- tools: schema preservation (SEP-1613, SEP-2106) ----

/// Arguments of `json_schema_2020_12_tool`: any object its schema allows, echoed back.
#[derive(Deserialize)]
#[serde(transparent)]
struct SchemaFeatures(serde_json::Value);

/// Written by hand: the suite checks that `$schema`, `$defs`, `additionalProperties` (and, from
/// 0.2.0, `allOf`/`anyOf`, `if`/`then`/`else` and `$anchor`) reach the client unchanged.
impl JsonSchema for SchemaFeatures {
    fn schema_name() -> Cow<'static, str> {
        "SchemaFeatures".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {
                        "street": { "type": "string" },
                        "city": { "type": "string" }
                    }
                }
            },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" },
                "contactMethod": { "type": "string", "enum": ["phone", "email"] },
                "phone": { "type": "string" },
                "email": { "type": "string" }
            },
            "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
            "if": {
                "properties": { "contactMethod": { "const": "phone" } },
                "required": ["contactMethod"]
            },
            "then": { "required": ["phone"] },
            "else": { "required": ["email"] },
            "additionalProperties": false
        })
    }
}

fn json_schema_2020_12(args: SchemaFeatures) -> String {
    format!("JSON Schema 2020-12 tool called with: {}", args.0)
}

// ---- tools: draft revision 2026-07-28 (SEP-2575 stateless, SEP-2322 input_required) ----

/// A form of one required field, as the draft scenarios describe theirs.
fn one_field_form(message: &str, field: &str, kind: &str) -> InputRequest {
    InputRequest::form(
        message,
        &json!({
            "type": "object",
            "properties": { field: { "type": kind } },
            "required": [field],
        }),
    )
}

/// The question of `test_input_required_result_elicitation` and others.
fn name_form() -> InputRequest {
    one_field_form("What is your name?", "name", "string")
}

/// The submitted text of a form field, when the user accepted and filled it in.
fn text_field(answer: &ElicitationResponse, field: &str) -> Option<String> {
    match answer.field(field)? {
        Value::String(text) => Some(text),
        _ => None,
    }
}

/// `Hello, <name>!`, or what the user did instead of naming themselves.
fn greeting(answer: &ElicitationResponse) -> String {
    match text_field(answer, "name") {
        Some(name) => format!("Hello, {name}!"),
        None => "No name given".to_string(),
    }
}

/// The roots a client listed, as text.
fn roots_text(answers: &Answers, key: &str) -> Result<String, AskError> {
    let roots = answers.roots(key)?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("Found {} root(s): {}", uris.len(), uris.join(", ")))
}

/// Needs sampling. The client of `server-stateless` declares no capabilities, so the answer
/// fails, and the host turns the error into MissingRequiredClientCapability (-32021).
fn missing_capability(_: NoArgs) -> Result<&'static str, String> {
    let answers = host::ask([("sample_input", InputRequest::sample_text("Say hi", 20))]);
    answers.sampling("sample_input")?;
    Ok("Success")
}

/// Asks for a name. `server-stateless` checks that the response stream carries no request of
/// the server's own: over 2026-07-28 the question travels in an `input_required` result.
fn streaming_elicitation(_: NoArgs) -> Result<String, String> {
    let answers = host::ask([("user_name", name_form())]);
    match answers.elicitation("user_name") {
        Ok(answer) => Ok(greeting(answer)),
        Err(AskError::Failed(why)) => Ok(format!("Elicitation is unavailable: {why}")),
        Err(awaiting) => Err(awaiting.into()),
    }
}

/// Logs three messages; `server-stateless` checks that none reach a client that set no log level.
fn logging_tool(_: NoArgs) -> &'static str {
    host::log(LogLevel::Info, "Tool execution started");
    host::log(LogLevel::Info, "Tool processing data");
    host::log(LogLevel::Info, "Tool execution completed");
    "Logging test completed"
}

fn trigger_tool_change(_: NoArgs) -> &'static str {
    host::notify_list_changed(ListKind::Tools);
    "Tool list change triggered"
}

fn trigger_prompt_change(_: NoArgs) -> &'static str {
    host::notify_list_changed(ListKind::Prompts);
    "Prompt list change triggered"
}

fn input_required_elicitation(_: NoArgs) -> Result<String, String> {
    let answers = host::ask([("user_name", name_form())]);
    Ok(greeting(answers.elicitation("user_name")?))
}

fn input_required_sampling(_: NoArgs) -> Result<String, String> {
    let question = InputRequest::sample_text("What is the capital of France?", 100);
    let answers = host::ask([("capital_question", question)]);
    let answer = answers.sampling("capital_question")?;
    Ok(format!("Sampled: {}", answer.text()))
}

fn input_required_list_roots(_: NoArgs) -> Result<String, String> {
    let answers = host::ask([("client_roots", InputRequest::ListRoots)]);
    Ok(roots_text(&answers, "client_roots")?)
}

/// The question of the request-state fixtures, under `key`: one required boolean.
fn confirmation(key: &str) -> Result<bool, AskError> {
    let answers = host::ask([(key, one_field_form("Please confirm", "ok", "boolean"))]);
    let answer = answers.elicitation(key)?;
    Ok(answer
        .field("ok")
        .and_then(|ok| ok.as_bool())
        .unwrap_or(false))
}

/// The host keeps the answers of earlier rounds in `requestState`, signed; this tool only asks.
fn input_required_request_state(_: NoArgs) -> Result<String, String> {
    let confirmed = confirmation("confirm")?;
    Ok(format!("state-ok: confirmed={confirmed}"))
}

/// A tampered `requestState` never reaches the plugin: the host refuses it.
fn input_required_tampered_state(_: NoArgs) -> Result<String, String> {
    confirmation("confirm")?;
    Ok("tamper-check passed".to_string())
}

/// Three questions of three kinds in one round.
fn input_required_multiple_inputs(_: NoArgs) -> Result<String, String> {
    let answers = host::ask([
        ("user_name", name_form()),
        (
            "greeting",
            InputRequest::sample_text("Generate a greeting", 50),
        ),
        ("client_roots", InputRequest::ListRoots),
    ]);
    answers.ready()?;
    let name = greeting(answers.elicitation("user_name")?);
    let sampled = answers.sampling("greeting")?.text();
    let roots = roots_text(&answers, "client_roots")?;
    Ok(format!("{name} Sampled greeting: {sampled}. {roots}"))
}

/// Two rounds: the second question is only asked once the first is answered.
fn input_required_multi_round(_: NoArgs) -> Result<String, String> {
    let first = host::ask([(
        "step1",
        one_field_form("Step 1: What is your name?", "name", "string"),
    )]);
    let name = text_field(first.elicitation("step1")?, "name");
    let second = host::ask([(
        "step2",
        one_field_form("Step 2: What is your favorite color?", "color", "string"),
    )]);
    let color = text_field(second.elicitation("step2")?, "color");
    Ok(format!(
        "{} likes {}",
        name.as_deref().unwrap_or("Someone"),
        color.as_deref().unwrap_or("no color")
    ))
}

/// Asks for an elicitation and a sampling at once. The client of
/// `input-required-result-capability-check` declares only sampling: the host fails the
/// elicitation at once and asks the client for the sampling alone. Failed questions are left out.
fn input_required_capabilities(_: NoArgs) -> Result<String, String> {
    let answers = host::ask([
        (
            "elicit_input",
            one_field_form("Elicit request", "value", "string"),
        ),
        (
            "sample_input",
            InputRequest::sample_text("Sample request", 50),
        ),
    ]);
    answers.ready()?;
    let answered: Vec<&str> = answers
        .iter()
        .filter(|(_, answer)| answer.is_ok())
        .map(|(key, _)| key)
        .collect();
    Ok(format!("Answered: {}", answered.join(", ")))
}

/// Arguments of `test_custom_header`.
#[derive(Deserialize, JsonSchema)]
struct CustomHeader {
    /// The region to run in, mirrored into the Mcp-Param-Region header
    region: String,
}

fn custom_header(args: CustomHeader) -> String {
    format!("Region: {}", args.region)
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("test_simple_text", simple_text)
            .description("Tests simple text content response"),
        Tool::new("test_image_content", image_content).description("Tests image content response"),
        Tool::new("test_audio_content", audio_content).description("Tests audio content response"),
        Tool::new("test_embedded_resource", embedded_resource)
            .description("Tests embedded resource content response"),
        Tool::new("test_multiple_content_types", multiple_content_types)
            .description("Tests response with multiple content types (text, image, resource)"),
        Tool::new("test_tool_with_logging", tool_with_logging)
            .description("Tests tool that emits log messages during execution"),
        Tool::new("test_error_handling", error_handling)
            .description("Tests error response handling"),
        Tool::new("test_tool_with_progress", tool_with_progress)
            .description("Tests tool that reports progress notifications"),
        Tool::new("test_sampling", sampling)
            .description("Tests server-initiated sampling (LLM completion request)"),
        Tool::new("test_elicitation", elicitation)
            .description("Tests server-initiated elicitation (user input request)"),
        Tool::new("test_elicitation_sep1034_defaults", elicitation_defaults)
            .description("Tests elicitation with default values per SEP-1034"),
        Tool::new("test_elicitation_sep1330_enums", elicitation_enums)
            .description("Tests elicitation with enum schema improvements per SEP-1330"),
        Tool::new("json_schema_2020_12_tool", json_schema_2020_12).description(
            "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
        ),
        Tool::new("test_trigger_resource_update", trigger_resource_update).description(
            "Reports an update of test://watched-resource, so its subscribers get \
             notifications/resources/updated (not a suite fixture: the suite never triggers one)",
        ),
        Tool::new("test_missing_capability", missing_capability).description(
            "Tests MissingRequiredClientCapability: needs sampling, which the client may lack",
        ),
        Tool::new("test_streaming_elicitation", streaming_elicitation).description(
            "Tests that an elicitation during a call travels in its result, not as a request",
        ),
        Tool::new("test_logging_tool", logging_tool)
            .description("Tests that log messages reach only clients that asked for a log level"),
        Tool::new("test_trigger_tool_change", trigger_tool_change)
            .description("Reports that the tool list changed (notifications/tools/list_changed)"),
        Tool::new("test_trigger_prompt_change", trigger_prompt_change).description(
            "Reports that the prompt list changed (notifications/prompts/list_changed)",
        ),
        Tool::new(
            "test_input_required_result_elicitation",
            input_required_elicitation,
        )
        .description("Tests input_required with one elicitation (asks for a name)"),
        Tool::new(
            "test_input_required_result_sampling",
            input_required_sampling,
        )
        .description("Tests input_required with one sampling request"),
        Tool::new(
            "test_input_required_result_list_roots",
            input_required_list_roots,
        )
        .description("Tests input_required with one roots/list request"),
        Tool::new(
            "test_input_required_result_request_state",
            input_required_request_state,
        )
        .description("Tests that requestState carries the call's state between rounds"),
        Tool::new(
            "test_input_required_result_multiple_inputs",
            input_required_multiple_inputs,
        )
        .description(
            "Tests input_required with an elicitation, a sampling and a roots/list at once",
        ),
        Tool::new(
            "test_input_required_result_multi_round",
            input_required_multi_round,
        )
        .description("Tests input_required over two rounds: a name, then a favorite color"),
        Tool::new(
            "test_input_required_result_tampered_state",
            input_required_tampered_state,
        )
        .description("Tests that a tampered requestState is refused"),
        Tool::new(
            "test_input_required_result_capabilities",
            input_required_capabilities,
        )
        .description("Tests that input_required asks only for what the client declared it can do"),
        Tool::new("test_custom_header", custom_header)
            .description(
                "Tests x-mcp-header: the region argument is mirrored into the Mcp-Param-Region \
                 HTTP header",
            )
            .mirror_header("region", "Region"),
    ]
}

// ---- resources ----

/// `test://template/{id}/data`: JSON naming the id, keys in the reference server's order.
fn template_data(uri: &str, vars: &Arguments) -> ResourceContents {
    let id = &vars["id"];
    let text = format!(
        r#"{{"id":{},"templateTest":true,"data":{}}}"#,
        serde_json::Value::from(id.as_str()),
        serde_json::Value::from(format!("Data for ID: {id}")),
    );
    ResourceContents::text(uri, text).mime_type("application/json")
}

fn resources() -> Vec<Resource> {
    vec![
        Resource::new(
            "test://static-text",
            "static-text",
            || "This is the content of the static text resource.",
        )
        .title("Static Text Resource")
        .description("A static text resource for testing")
        .mime_type("text/plain"),
        Resource::new("test://static-binary", "static-binary", || {
            RED_PIXEL_PNG.to_vec()
        })
        .title("Static Binary Resource")
        .description("A static binary resource (image) for testing")
        .mime_type("image/png"),
        Resource::new(
            WATCHED_URI,
            "watched-resource",
            || "Watched resource content",
        )
        .title("Watched Resource")
        .description(
            "A resource clients may subscribe to; test_trigger_resource_update reports an \
                 update of it",
        )
        .mime_type("text/plain"),
    ]
}

// ---- prompts ----

fn simple_prompt(_: &Arguments) -> PromptMessage {
    PromptMessage::user("This is a simple prompt for testing.")
}

fn prompt_with_arguments(args: &Arguments) -> PromptMessage {
    PromptMessage::user(format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        args["arg1"], args["arg2"]
    ))
}

fn prompt_with_embedded_resource(args: &Arguments) -> Vec<PromptMessage> {
    vec![
        PromptMessage::embedded_resource(
            ResourceContents::text(
                args["resourceUri"].as_str(),
                "Embedded resource content for testing.",
            )
            .mime_type("text/plain"),
        ),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

fn prompt_with_image(_: &Arguments) -> Vec<PromptMessage> {
    vec![
        PromptMessage::image(RED_PIXEL_PNG, "image/png"),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// Asks for the context to use: `input_required` on `prompts/get`. While the answer is awaited,
/// the error returned is discarded by the host.
fn input_required_prompt(_: &Arguments) -> Result<PromptMessage, PluginError> {
    let answers = host::ask([(
        "user_context",
        one_field_form("What context should the prompt use?", "context", "string"),
    )]);
    let context = text_field(answers.elicitation("user_context")?, "context");
    Ok(PromptMessage::user(format!(
        "Prompt with context: {}",
        context.as_deref().unwrap_or("none")
    )))
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("test_simple_prompt", simple_prompt)
            .title("Simple Test Prompt")
            .description("A simple prompt without arguments"),
        Prompt::new("test_prompt_with_arguments", prompt_with_arguments)
            .title("Prompt With Arguments")
            .description("A prompt with required arguments")
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true)
            // The values of the scenario's example answer.
            .complete("arg1", |typed, _| {
                prefix_matches(typed, ["paris", "park", "party"])
            })
            .complete("arg2", |typed, _| prefix_matches(typed, ["hello", "world"])),
        Prompt::new(
            "test_prompt_with_embedded_resource",
            prompt_with_embedded_resource,
        )
        .title("Prompt With Embedded Resource")
        .description("A prompt that includes an embedded resource")
        .argument("resourceUri", "URI of the resource to embed", true),
        Prompt::new("test_prompt_with_image", prompt_with_image)
            .title("Prompt With Image")
            .description("A prompt that includes image content"),
        Prompt::new("test_input_required_result_prompt", input_required_prompt)
            .description("Tests input_required on prompts/get"),
    ]
}

palisade_sdk::export_plugin! {
    tools: tools(),
    resources: resources(),
    resource_templates: [
        ResourceTemplate::new("test://template/{id}/data", "template", template_data)
            .title("Resource Template")
            .description("A resource template with parameter substitution")
            .mime_type("application/json"),
    ],
    prompts: prompts(),
}
