//! Prompts and completion, served by the prompts plugin (and the notes plugin for completion of
//! a resource template): the capabilities, prompts/list (sorted, prefixed, paginated),
//! prompts/get with text, embedded-resource and image content under every protocol version,
//! the refusal of bad arguments, and completion/complete for prompt arguments and template
//! variables.

use palisade_tests::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use tempfile::TempDir;

const PROMPT_NAMES: [&str; 4] = [
    "prompts_code_review",
    "prompts_commit_message",
    "prompts_describe_image",
    "prompts_summarize",
];

/// The 24 languages the prompts plugin completes `language` from.
const LANGUAGE_COUNT: usize = 24;

fn prompts_server(version: &str, extra: &[&str]) -> Server {
    let mut s = Server::builder()
        .arg("--plugin")
        .arg(plugin_path("prompts"))
        .args(extra)
        .start();
    s.initialize(version);
    s
}

fn names(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|p| p["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn get(s: &mut Server, name: &str, arguments: Value) -> Value {
    s.typed_result(
        "prompts/get",
        json!({"name": name, "arguments": arguments}),
        "GetPromptResult",
    )
}

fn complete(s: &mut Server, params: Value) -> Value {
    let result = s.typed_result("completion/complete", params, "CompleteResult");
    let c = &result["completion"];
    let values = c["values"].as_array().expect("completion.values");
    assert!(values.len() <= 100, "at most 100 values: {result}");
    assert!(c["total"].is_u64(), "total is given: {result}");
    assert!(c["hasMore"].is_boolean(), "hasMore is given: {result}");
    assert!(
        c["total"].as_u64().unwrap() as usize >= values.len(),
        "total counts at least the values sent: {result}"
    );
    result["completion"].clone()
}

fn values(completion: &Value) -> Vec<String> {
    completion["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn complete_prompt(s: &mut Server, prompt: &str, argument: &str, value: &str) -> Value {
    complete(
        s,
        json!({"ref": {"type": "ref/prompt", "name": prompt},
               "argument": {"name": argument, "value": value}}),
    )
}

/// The error of a `prompts/get` that must be refused as invalid params; its message must
/// mention every one of `needles`.
#[track_caller]
fn refused_get(s: &mut Server, params: Value, needles: &[&str]) -> Value {
    let resp = s.request("prompts/get", params.clone());
    let error = expect_error_code(&resp, INVALID_PARAMS);
    let message = error["message"].as_str().unwrap_or_default();
    // An argument must be named in its own right, not found inside the prompt's name.
    let name = params["name"].as_str().unwrap_or_default();
    let without_name = message.replace(name, "");
    for needle in needles {
        let haystack = if *needle == name {
            message
        } else {
            &without_name
        };
        assert!(
            haystack.contains(needle),
            "the error for {params} must mention {needle:?}: {resp}"
        );
    }
    error
}

/// Notes in a temporary directory and a configuration serving them with the prompts plugin.
fn notes_and_prompts(files: &[String]) -> (TempDir, PathBuf) {
    let dir = tempdir();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    for name in files {
        write_file(notes.join(format!("{name}.md")), format!("# {name}\n"));
    }
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.notes]\npath = {}\n\n[[plugins.notes.dirs]]\nhost = {}\nguest = \"/notes\"\n\n[plugins.prompts]\npath = {}\n",
            toml_str(&plugin_arg("notes")),
            toml_str(&path_str(&notes)),
            toml_str(&plugin_arg("prompts")),
        ),
    );
    (dir, config)
}

#[test]
fn capabilities_declare_prompts_and_completions() {
    for version in SUPPORTED_VERSIONS {
        let mut s = Server::builder()
            .arg("--plugin")
            .arg(plugin_path("prompts"))
            .start();
        // While plugins load, every capability they might bring is declared: wait them out.
        s.wait_ready();
        let init = s.initialize(version);
        let caps = &init["capabilities"];
        assert_eq!(
            caps["prompts"],
            json!({"listChanged": true}),
            "{version}: {init}"
        );
        assert!(
            caps.get("resources").is_none(),
            "{version}: the prompts plugin serves no resources: {init}"
        );
        // The `completions` capability exists from 2025-03-26 on.
        if version == "2024-11-05" {
            assert!(caps.get("completions").is_none(), "{version}: {init}");
        } else {
            assert_eq!(caps["completions"], json!({}), "{version}: {init}");
        }
        assert_eq!(caps["logging"], json!({}), "{version}: {init}");
    }
}

#[test]
fn prompts_are_listed_sorted_with_prefixed_names_and_arguments() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    let (prompts, pages) = s.list_all_pages("prompts/list", "prompts", "ListPromptsResult");
    assert_eq!(pages, [4], "four prompts fit in one default page");
    assert_eq!(names(&prompts), PROMPT_NAMES);
    for p in &prompts {
        assert!(
            p["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{p}"
        );
        assert!(p["title"].as_str().is_some_and(|t| !t.is_empty()), "{p}");
    }
    let review = &prompts[0];
    assert_eq!(review["title"], "Code review");
    let args = review["arguments"]
        .as_array()
        .expect("code_review has arguments");
    let arg = |name: &str| {
        args.iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("no argument {name}: {review}"))
    };
    assert_eq!(arg("code")["required"], true, "{review}");
    assert_eq!(arg("language")["required"], false, "{review}");
    assert_eq!(args.len(), 2, "{review}");
    assert!(
        prompts[2].get("arguments").is_none_or(|a| a == &json!([])),
        "describe_image takes no arguments: {}",
        prompts[2]
    );
}

#[test]
fn prompts_list_is_paginated() {
    let mut s = prompts_server(LATEST_VERSION, &["--page-size", "1"]);
    let (prompts, pages) = s.list_all_pages("prompts/list", "prompts", "ListPromptsResult");
    assert_eq!(pages, [1, 1, 1, 1]);
    assert_eq!(names(&prompts), PROMPT_NAMES);
    for bad in [json!("not-a-cursor"), json!(""), json!(1)] {
        let resp = s.request("prompts/list", json!({"cursor": bad}));
        expect_error_code(&resp, INVALID_PARAMS);
    }
}

#[test]
fn code_review_embeds_the_code_as_a_resource() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    let code = "fn main() {\n    println!(\"hi\");\n}\n";
    let r = get(
        &mut s,
        "prompts_code_review",
        json!({"code": code, "language": "Rust"}),
    );
    assert_eq!(r["description"], "Review of 3 lines of Rust code", "{r}");
    let messages = r["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{r}");
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["content"]["type"], "text", "{r}");
    assert!(
        messages[0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Rust code"),
        "{r}"
    );
    let embedded = &messages[1]["content"];
    assert_eq!(embedded["type"], "resource", "{r}");
    assert_eq!(embedded["resource"]["uri"], "prompts://code_review/code");
    assert_eq!(embedded["resource"]["mimeType"], "text/plain");
    assert_eq!(
        embedded["resource"]["text"], code,
        "the code, unchanged: {r}"
    );

    // language is optional.
    let r = get(&mut s, "prompts_code_review", json!({"code": "x"}));
    assert_eq!(r["description"], "Review of 1 line of code", "{r}");
}

#[test]
fn describe_image_sends_an_image() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    for params in [
        json!({"name": "prompts_describe_image", "arguments": {}}),
        // arguments may be left out.
        json!({"name": "prompts_describe_image"}),
    ] {
        let r = s.typed_result("prompts/get", params, "GetPromptResult");
        let messages = r["messages"].as_array().unwrap();
        let image = messages
            .iter()
            .map(|m| &m["content"])
            .find(|c| c["type"] == "image")
            .unwrap_or_else(|| panic!("an image message: {r}"));
        assert_eq!(image["mimeType"], "image/png", "{r}");
        // Base64 of the PNG signature \x89PNG\r\n\x1a\n.
        assert!(
            image["data"].as_str().unwrap().starts_with("iVBORw0KGgo"),
            "base64 PNG data: {r}"
        );
        assert!(
            messages.iter().any(|m| m["content"]["type"] == "text"),
            "{r}"
        );
    }
}

#[test]
fn summarize_and_commit_message_are_text() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    let r = get(
        &mut s,
        "prompts_summarize",
        json!({"text": "A long text.", "style": "bullet points"}),
    );
    let text = r["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(
        text.contains("bullet points") && text.contains("A long text."),
        "{r}"
    );
    let r = get(&mut s, "prompts_summarize", json!({"text": "Short."}));
    let text = r["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("one paragraph"), "the default style: {r}");

    let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
    let r = get(&mut s, "prompts_commit_message", json!({"diff": diff}));
    let text = r["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains(diff.trim_end()), "{r}");
}

#[test]
fn every_prompt_validates_under_every_version() {
    for version in SUPPORTED_VERSIONS {
        let mut s = prompts_server(version, &[]);
        let (prompts, _) = s.list_all_pages("prompts/list", "prompts", "ListPromptsResult");
        assert_eq!(names(&prompts), PROMPT_NAMES, "{version}");
        if version < "2025-06-18" {
            assert!(
                prompts.iter().all(|p| p.get("title").is_none()),
                "{version} has no prompt titles: {prompts:?}"
            );
        }
        let r = get(
            &mut s,
            "prompts_code_review",
            json!({"code": "x = 1", "language": "Python"}),
        );
        assert_eq!(
            r["messages"][1]["content"]["type"], "resource",
            "{version}: {r}"
        );
        let r = get(&mut s, "prompts_describe_image", json!({}));
        assert!(
            r["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["content"]["type"] == "image"),
            "{version}: {r}"
        );
        get(&mut s, "prompts_summarize", json!({"text": "t"}));
        get(&mut s, "prompts_commit_message", json!({"diff": "d"}));
        let c = complete_prompt(&mut s, "prompts_code_review", "language", "py");
        assert_eq!(values(&c), ["Python"], "{version}");
    }
}

#[test]
fn bad_prompt_requests_are_invalid_params() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    refused_get(
        &mut s,
        json!({"name": "prompts_no_such_prompt", "arguments": {}}),
        &["prompts_no_such_prompt"],
    );
    // The plugin's own name is not the public name.
    refused_get(
        &mut s,
        json!({"name": "code_review", "arguments": {"code": "x"}}),
        &["code_review"],
    );
    refused_get(
        &mut s,
        json!({"name": "prompts_code_review", "arguments": {"language": "Rust"}}),
        &["code"],
    );
    refused_get(&mut s, json!({"name": "prompts_code_review"}), &["code"]);
    refused_get(
        &mut s,
        json!({"name": "prompts_code_review", "arguments": {"code": "x", "colour": "red"}}),
        &["colour"],
    );
    refused_get(
        &mut s,
        json!({"name": "prompts_describe_image", "arguments": {"size": "big"}}),
        &["size"],
    );
    for value in [
        json!(3),
        json!(null),
        json!(["a"]),
        json!({"a": 1}),
        json!(true),
    ] {
        refused_get(
            &mut s,
            json!({"name": "prompts_code_review", "arguments": {"code": value}}),
            &["code"],
        );
    }
    for params in [
        json!({}),
        json!({"name": 5}),
        json!({"name": "prompts_summarize", "arguments": "text"}),
        json!({"name": "prompts_summarize", "arguments": ["text"]}),
    ] {
        let resp = s.request("prompts/get", params.clone());
        expect_error_code(&resp, INVALID_PARAMS);
    }
    // Still serving.
    get(&mut s, "prompts_summarize", json!({"text": "still fine"}));
}

#[test]
fn of_two_plugins_serving_the_same_prompt_name_the_later_is_left_out() {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.one]\npath = {p}\nprefix = \"p\"\n\n[plugins.two]\npath = {p}\nprefix = \"p\"\n",
            p = toml_str(&plugin_arg("prompts")),
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    assert!(
        s.wait_for_stderr("plugin not served", secs(5)),
        "{}",
        s.stderr()
    );
    let log = s.stderr();
    for name in ["`one`", "`two`", "p_code_review"] {
        assert!(
            log.contains(name),
            "names both plugins and the prompt ({name}):\n{log}"
        );
    }
    let listed = s.result("prompts/list", json!({}));
    let names: Vec<&str> = listed["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(
        names.iter().filter(|n| **n == "p_code_review").count(),
        1,
        "{names:?}"
    );
}

#[test]
fn languages_complete_by_prefix() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    let c = complete_prompt(&mut s, "prompts_code_review", "language", "ru");
    let v = values(&c);
    assert!(v.contains(&"Rust".to_string()), "{c}");
    assert!(v.contains(&"Ruby".to_string()), "{c}");
    assert!(
        v.iter().all(|l| l.to_lowercase().starts_with("ru")),
        "only matches: {c}"
    );
    assert_eq!(c["total"], v.len(), "{c}");
    assert_eq!(c["hasMore"], false, "{c}");

    // Nothing typed yet: every language.
    let c = complete_prompt(&mut s, "prompts_code_review", "language", "");
    assert_eq!(values(&c).len(), LANGUAGE_COUNT, "{c}");
    assert_eq!(c["total"], LANGUAGE_COUNT, "{c}");
    assert_eq!(c["hasMore"], false, "{c}");

    // No match.
    let c = complete_prompt(&mut s, "prompts_code_review", "language", "zzz");
    assert!(values(&c).is_empty(), "{c}");

    // Another prompt's arguments complete too.
    let c = complete_prompt(&mut s, "prompts_commit_message", "language", "TYPE");
    assert_eq!(values(&c), ["TypeScript"], "{c}");
    let c = complete_prompt(&mut s, "prompts_summarize", "style", "b");
    assert_eq!(values(&c), ["bullet points"], "{c}");
}

#[test]
fn completion_context_arguments_are_accepted() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    let c = complete(
        &mut s,
        json!({"ref": {"type": "ref/prompt", "name": "prompts_code_review"},
               "argument": {"name": "language", "value": "ru"},
               "context": {"arguments": {"code": "fn main() {}"}}}),
    );
    assert!(values(&c).contains(&"Rust".to_string()), "{c}");
}

#[test]
fn arguments_nothing_completes_get_no_values() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    for (prompt, argument) in [
        ("prompts_code_review", "code"),
        ("prompts_summarize", "text"),
        ("prompts_commit_message", "diff"),
    ] {
        let c = complete_prompt(&mut s, prompt, argument, "a");
        assert!(values(&c).is_empty(), "{prompt}.{argument}: {c}");
        assert_eq!(c["total"], 0, "{c}");
        assert_eq!(c["hasMore"], false, "{c}");
    }
}

#[test]
fn completing_an_argument_the_prompt_does_not_take_is_invalid_params() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    let resp = s.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "prompts_code_review"},
               "argument": {"name": "no_such_argument", "value": "a"}}),
    );
    let error = expect_error_code(&resp, INVALID_PARAMS);
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("no_such_argument")),
        "the error names the argument: {resp}"
    );
}

#[test]
fn bad_completion_requests_are_invalid_params() {
    let mut s = prompts_server(LATEST_VERSION, &[]);
    let language = json!({"name": "language", "value": "r"});
    for params in [
        // No such prompt.
        json!({"ref": {"type": "ref/prompt", "name": "prompts_nope"}, "argument": language}),
        // No plugin serves resources at all, so no template.
        json!({"ref": {"type": "ref/resource", "uri": "notes://{name}"}, "argument": language}),
        json!({"ref": {"type": "ref/tool", "name": "prompts_code_review"}, "argument": language}),
        json!({"ref": {"type": "ref/prompt"}, "argument": language}),
        json!({"ref": "prompts_code_review", "argument": language}),
        json!({"argument": language}),
        json!({"ref": {"type": "ref/prompt", "name": "prompts_code_review"}}),
        json!({"ref": {"type": "ref/prompt", "name": "prompts_code_review"},
               "argument": {"name": "language"}}),
        json!({"ref": {"type": "ref/prompt", "name": "prompts_code_review"},
               "argument": {"name": "language", "value": 3}}),
    ] {
        let resp = s.request("completion/complete", params.clone());
        expect_error_code(&resp, INVALID_PARAMS);
    }
    let resp = s.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "prompts_nope"}, "argument": language}),
    );
    let message = resp["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("prompts_nope"), "names the prompt: {resp}");
}

#[test]
fn note_names_complete_through_the_template() {
    let files: Vec<String> = ["alpha", "alps", "beta"].map(String::from).to_vec();
    let (_dir, config) = notes_and_prompts(&files);
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    let note = |value: &str| {
        json!({"ref": {"type": "ref/resource", "uri": "notes://{name}"},
               "argument": {"name": "name", "value": value}})
    };
    let c = complete(&mut s, note("al"));
    assert_eq!(values(&c), ["alpha", "alps"], "{c}");
    let c = complete(&mut s, note(""));
    assert_eq!(values(&c), ["alpha", "alps", "beta"], "{c}");
    // A variable the template does not have.
    let resp = s.request(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "notes://{name}"},
               "argument": {"name": "other", "value": ""}}),
    );
    let error = expect_error_code(&resp, INVALID_PARAMS);
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("other")),
        "the error names the variable: {resp}"
    );
    // A listed (fixed) URI has no variables: nothing to complete.
    s.result("resources/list", Value::Null);
    let c = complete(
        &mut s,
        json!({"ref": {"type": "ref/resource", "uri": "notes://alpha"},
               "argument": {"name": "name", "value": ""}}),
    );
    assert!(values(&c).is_empty(), "{c}");
    // A template nobody serves.
    let resp = s.request(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "nope://{x}"},
               "argument": {"name": "x", "value": ""}}),
    );
    expect_error_code(&resp, INVALID_PARAMS);
    // Prompts complete alongside.
    let c = complete_prompt(&mut s, "prompts_code_review", "language", "ja");
    assert_eq!(values(&c), ["Java", "JavaScript"], "{c}");
}

#[test]
fn completions_are_cut_at_100_values_with_the_total_kept() {
    let files: Vec<String> = (0..130).map(|i| format!("n{i:03}")).collect();
    let (_dir, config) = notes_and_prompts(&files);
    let mut s = Server::start(&["--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    let c = complete(
        &mut s,
        json!({"ref": {"type": "ref/resource", "uri": "notes://{name}"},
               "argument": {"name": "name", "value": "n"}}),
    );
    assert_eq!(values(&c).len(), 100, "{c}");
    assert_eq!(c["total"], 130, "{c}");
    assert_eq!(c["hasMore"], true, "{c}");
}
