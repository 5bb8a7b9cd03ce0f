//! Resources, served by the notes plugin: the capability, resources/list (merged, sorted,
//! paginated), templates, resources/read through a listed URI or a template, not-found errors,
//! subscriptions with updates from files changed on disk or by a tool, list changes, and the
//! refusal to start when two plugins claim the same URIs.
//!
//! Only the notes plugin serves resources, and none of the plugins returns binary (blob)
//! contents, so neither pagination across two resource plugins nor blobs are tested here.

use palisade_tests::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use tempfile::TempDir;

/// How long a change made on disk may take to be announced (the watcher lets bursts settle).
fn watch_wait() -> std::time::Duration {
    secs(20)
}

/// A temporary directory holding `notes/` (with `files`) and a configuration that grants it to
/// the notes plugin at `/notes` with `mode`.
struct Notes {
    _dir: TempDir,
    dir: PathBuf,
    config: PathBuf,
}

impl Notes {
    fn new(mode: &str, files: &[(&str, &str)]) -> Notes {
        let tmp = tempdir();
        // Canonical, as the watcher reports paths.
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let dir = root.join("notes");
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            write_file(dir.join(name), text);
        }
        let config = config_file(
            &root,
            &format!(
                "[plugins.notes]\npath = {}\n\n[[plugins.notes.dirs]]\nhost = {}\nguest = \"/notes\"\nmode = {}\n",
                toml_str(&plugin_arg("notes")),
                toml_str(&path_str(&dir)),
                toml_str(mode),
            ),
        );
        Notes {
            _dir: tmp,
            dir,
            config,
        }
    }

    fn start(&self, version: &str, extra: &[&str]) -> Server {
        let mut s = Server::builder()
            .arg("--config")
            .arg(&self.config)
            .args(extra)
            .start();
        s.initialize(version);
        s
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

fn uris(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|r| r["uri"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn list_resources(s: &mut Server) -> Vec<Value> {
    s.list_all_pages("resources/list", "resources", "ListResourcesResult")
        .0
}

fn read(s: &mut Server, uri: &str) -> Value {
    s.typed_result("resources/read", json!({"uri": uri}), "ReadResourceResult")
}

/// The one text content of a `resources/read` result, after checking its uri and MIME type.
#[track_caller]
fn read_text(s: &mut Server, uri: &str) -> String {
    let result = read(s, uri);
    let contents = result["contents"].as_array().expect("contents is an array");
    assert_eq!(contents.len(), 1, "one note, one content: {result}");
    let c = &contents[0];
    assert_eq!(c["uri"], uri, "the content names the URI read: {result}");
    assert_eq!(c["mimeType"], "text/markdown", "{result}");
    assert!(c.get("blob").is_none(), "a note is text: {result}");
    c["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {result}"))
        .to_string()
}

fn subscribe(s: &mut Server, uri: &str) {
    let r = s.typed_result("resources/subscribe", json!({"uri": uri}), "EmptyResult");
    assert!(
        r.as_object()
            .is_some_and(|o| o.keys().all(|k| k == "_meta")),
        "subscribe answers an empty result: {r}"
    );
}

fn wait_updated(s: &mut Server, uri: &str) -> Value {
    let n = s.wait_notification_where(
        "notifications/resources/updated",
        |p| p["uri"] == uri,
        watch_wait(),
    );
    n.unwrap_or_else(|| {
        s.fail(format!(
            "no notifications/resources/updated for {uri} within {:?}",
            watch_wait()
        ))
    })
}

fn wait_list_changed(s: &mut Server) {
    if s.wait_notification_where(
        "notifications/resources/list_changed",
        |_| true,
        watch_wait(),
    )
    .is_none()
    {
        s.fail(format!(
            "no notifications/resources/list_changed within {:?}",
            watch_wait()
        ));
    }
}

/// Makes sure every file change made before this call has been handled and announced: the
/// subscribed note `sentinel` is changed twice, each time waiting for its update. The watcher
/// handles changes in batches, in order, and the second change falls in a later batch than
/// anything written before the first, so whatever those earlier changes announce has arrived
/// by the time the second update does. (One round would not do: within one batch the order of
/// announcements is not defined.)
fn barrier(s: &mut Server, notes: &Notes, sentinel: &str) {
    for round in 0..2 {
        write_file(
            notes.path(&format!("{sentinel}.md")),
            format!("barrier round {round}\n"),
        );
        wait_updated(s, &format!("notes://{sentinel}"));
    }
}

#[test]
fn capabilities_declare_resources_when_a_plugin_serves_them() {
    let notes = Notes::new("read-only", &[("a.md", "# A\n")]);
    for version in SUPPORTED_VERSIONS {
        let mut s = Server::builder().arg("--config").arg(&notes.config).start();
        // While plugins load, every capability they might bring is declared: wait them out.
        s.wait_ready();
        let init = s.initialize(version);
        let caps = &init["capabilities"];
        assert_eq!(
            caps["resources"],
            json!({"subscribe": true, "listChanged": true}),
            "{version}: {init}"
        );
        assert!(
            caps.get("prompts").is_none(),
            "{version}: notes has no prompts: {init}"
        );
        // notes completes the `name` of its template; the capability exists from 2025-03-26.
        if version == "2024-11-05" {
            assert!(
                caps.get("completions").is_none(),
                "{version} has no completions capability: {init}"
            );
        } else {
            assert_eq!(caps["completions"], json!({}), "{version}: {init}");
        }
        assert_eq!(caps["logging"], json!({}), "{version}: {init}");
        assert_eq!(
            caps["tools"],
            json!({"listChanged": true}),
            "add_note: {init}"
        );
    }
}

#[test]
fn notes_are_listed_sorted_with_mime_type_and_size() {
    let notes = Notes::new(
        "read-only",
        &[
            ("b.md", "# B\n"),
            ("a.md", "# A\nalpha\n"),
            ("my note.md", "spaces é\n"),
            ("c.md", ""),
            ("ignored.txt", "not markdown"),
            (".hidden.md", "a hidden file is no note"),
            ("dir.md/inside.md", "a directory is no note"),
        ],
    );
    let mut s = notes.start(LATEST_VERSION, &[]);
    let resources = list_resources(&mut s);
    assert_eq!(
        uris(&resources),
        ["notes://a", "notes://b", "notes://c", "notes://my%20note"],
        "every *.md file, sorted by URI, names percent-encoded: {resources:?}"
    );
    for (r, (name, file)) in resources.iter().zip([
        ("a", "a.md"),
        ("b", "b.md"),
        ("c", "c.md"),
        ("my note", "my note.md"),
    ]) {
        assert_eq!(r["name"], name, "{r}");
        assert_eq!(r["mimeType"], "text/markdown", "{r}");
        let size = std::fs::metadata(notes.path(file)).unwrap().len();
        assert_eq!(r["size"], size, "size in bytes of {file}: {r}");
    }
    // Listed live: a note removed on disk is gone from the next listing.
    std::fs::remove_file(notes.path("b.md")).unwrap();
    let again = list_resources(&mut s);
    assert_eq!(
        uris(&again),
        ["notes://a", "notes://c", "notes://my%20note"],
        "{again:?}"
    );
}

#[test]
fn listings_validate_under_every_version() {
    let notes = Notes::new("read-only", &[("a.md", "# A\n"), ("b.md", "# B\n")]);
    for version in SUPPORTED_VERSIONS {
        let mut s = notes.start(version, &[]);
        let resources = list_resources(&mut s);
        assert_eq!(uris(&resources), ["notes://a", "notes://b"], "{version}");
        let (templates, _) = s.list_all_pages(
            "resources/templates/list",
            "resourceTemplates",
            "ListResourceTemplatesResult",
        );
        assert_eq!(templates.len(), 1, "{version}: {templates:?}");
        // `title` exists from 2025-06-18 on; older clients must not get it.
        if version < "2025-06-18" {
            assert!(
                templates[0].get("title").is_none(),
                "{version}: {templates:?}"
            );
        } else {
            assert_eq!(templates[0]["title"], "Note", "{version}: {templates:?}");
        }
        assert_eq!(read_text(&mut s, "notes://a"), "# A\n", "{version}");
    }
}

#[test]
fn resources_list_is_paginated_with_opaque_cursors() {
    let files: Vec<(String, String)> = (1..=5)
        .map(|i| (format!("n{i}.md"), format!("note {i}\n")))
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let notes = Notes::new("read-only", &files);
    let mut s = notes.start(LATEST_VERSION, &["--page-size", "2"]);

    let (resources, pages) = s.list_all_pages("resources/list", "resources", "ListResourcesResult");
    assert_eq!(pages, [2, 2, 1], "five notes in pages of two");
    assert_eq!(
        uris(&resources),
        [
            "notes://n1",
            "notes://n2",
            "notes://n3",
            "notes://n4",
            "notes://n5"
        ]
    );

    // The same cursor gives the same page.
    let first = s.result("resources/list", Value::Null);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a first page of two of five has a nextCursor")
        .to_string();
    let second = s.result("resources/list", json!({"cursor": cursor}));
    let second_again = s.result("resources/list", json!({"cursor": cursor}));
    assert_eq!(
        uris(second["resources"].as_array().unwrap()),
        ["notes://n3", "notes://n4"]
    );
    assert_eq!(second, second_again);

    // Cursors this server did not hand out are invalid params
    // (server/utilities/pagination.mdx, Error Handling).
    for bad in [json!("not-a-cursor"), json!(""), json!("🙃"), json!(2)] {
        let resp = s.request("resources/list", json!({"cursor": bad}));
        expect_error_code(&resp, INVALID_PARAMS);
        let resp = s.request("resources/templates/list", json!({"cursor": bad}));
        expect_error_code(&resp, INVALID_PARAMS);
    }

    // One template: one page, no cursor, even with pages of one.
    let mut s = notes.start(LATEST_VERSION, &["--page-size", "1"]);
    let (templates, pages) = s.list_all_pages(
        "resources/templates/list",
        "resourceTemplates",
        "ListResourceTemplatesResult",
    );
    assert_eq!(pages, [1], "{templates:?}");
}

#[test]
fn the_note_template_is_listed() {
    let notes = Notes::new("read-only", &[]);
    let mut s = notes.start(LATEST_VERSION, &[]);
    let result = s.typed_result(
        "resources/templates/list",
        Value::Null,
        "ListResourceTemplatesResult",
    );
    let templates = result["resourceTemplates"].as_array().unwrap();
    assert_eq!(templates.len(), 1, "{result}");
    let t = &templates[0];
    assert_eq!(t["uriTemplate"], "notes://{name}", "{t}");
    assert_eq!(t["name"], "note", "{t}");
    assert_eq!(t["title"], "Note", "{t}");
    assert_eq!(t["mimeType"], "text/markdown", "{t}");
    assert!(
        t["description"].as_str().is_some_and(|d| !d.is_empty()),
        "{t}"
    );
    assert!(
        result.get("nextCursor").is_none_or(Value::is_null),
        "{result}"
    );

    // With no notes the resource list is empty, the template still there.
    assert!(list_resources(&mut s).is_empty());
}

#[test]
fn reading_a_listed_note_returns_its_text() {
    let text = "# Shopping\n\n- 🍞 bread\n- \"quoted\" \\ backslash\n";
    let notes = Notes::new(
        "read-only",
        &[("shopping.md", text), ("my note.md", "with a space\n")],
    );
    let mut s = notes.start(LATEST_VERSION, &[]);
    let listed = uris(&list_resources(&mut s));
    assert_eq!(listed, ["notes://my%20note", "notes://shopping"]);
    assert_eq!(read_text(&mut s, "notes://shopping"), text);
    // A listed URI is read as listed, percent-encoding and all.
    assert_eq!(read_text(&mut s, "notes://my%20note"), "with a space\n");
    // Read live: the file's current text.
    write_file(notes.path("shopping.md"), "changed\n");
    assert_eq!(read_text(&mut s, "notes://shopping"), "changed\n");
}

#[test]
fn a_note_created_after_start_is_read_through_the_template() {
    let notes = Notes::new("read-only", &[]);
    let mut s = notes.start(LATEST_VERSION, &[]);
    write_file(notes.path("later.md"), "written after the server started\n");
    // Not listed yet: the URI is routed by the template `notes://{name}`.
    assert_eq!(
        read_text(&mut s, "notes://later"),
        "written after the server started\n"
    );
}

#[test]
fn unknown_resources_are_not_found_with_their_uri() {
    let notes = Notes::new("read-only", &[("a.md", "# A\n")]);
    // A file beside the notes directory: no note name may reach it.
    write_file(notes.dir.parent().unwrap().join("secret.md"), "top secret");
    let mut s = notes.start(LATEST_VERSION, &[]);
    list_resources(&mut s);
    for uri in [
        // No plugin serves the scheme.
        "nope://x",
        // The template matches, the plugin has no such note.
        "notes://missing",
        // Names that would leave the notes directory.
        "notes://..%2Fsecret",
        "notes://%2E%2E%2Fsecret",
    ] {
        let resp = s.request("resources/read", json!({"uri": uri}));
        let error = expect_error_code(&resp, RESOURCE_NOT_FOUND);
        assert_eq!(
            error["data"]["uri"], uri,
            "the error's data names the URI: {resp}"
        );
        assert!(!resp.to_string().contains("top secret"), "{resp}");
    }
    for params in [json!({}), json!({"uri": 7}), json!({"uri": null})] {
        let resp = s.request("resources/read", params.clone());
        expect_error_code(&resp, INVALID_PARAMS);
    }
    // Still serving.
    assert_eq!(read_text(&mut s, "notes://a"), "# A\n");
}

#[test]
fn subscribe_and_unsubscribe_answer_empty_results() {
    let notes = Notes::new("read-only", &[("a.md", "# A\n")]);
    let mut s = notes.start(LATEST_VERSION, &[]);
    subscribe(&mut s, "notes://a");
    // A URI the template serves may be subscribed before it exists.
    subscribe(&mut s, "notes://not-yet");
    // Subscribing twice is harmless.
    subscribe(&mut s, "notes://a");

    let resp = s.request("resources/subscribe", json!({"uri": "nope://x"}));
    let error = expect_error_code(&resp, RESOURCE_NOT_FOUND);
    assert_eq!(error["data"]["uri"], "nope://x", "{resp}");
    for params in [json!({}), json!({"uri": 1})] {
        let resp = s.request("resources/subscribe", params.clone());
        expect_error_code(&resp, INVALID_PARAMS);
        let resp = s.request("resources/unsubscribe", params);
        expect_error_code(&resp, INVALID_PARAMS);
    }

    for uri in ["notes://a", "notes://not-yet", "notes://never-subscribed"] {
        let r = s.typed_result("resources/unsubscribe", json!({"uri": uri}), "EmptyResult");
        assert!(
            r.as_object()
                .is_some_and(|o| o.keys().all(|k| k == "_meta")),
            "{r}"
        );
    }
}

#[test]
fn a_subscribed_note_changed_on_disk_is_announced() {
    let notes = Notes::new(
        "read-write",
        &[
            ("x.md", "x v1\n"),
            ("other.md", "o v1\n"),
            ("my note.md", "m v1\n"),
            ("sentinel.md", "s\n"),
        ],
    );
    let mut s = notes.start(LATEST_VERSION, &[]);
    // The host learns which file backs which resource when the resources are listed.
    list_resources(&mut s);
    subscribe(&mut s, "notes://x");
    subscribe(&mut s, "notes://sentinel");
    subscribe(&mut s, "notes://my%20note");

    // A note nobody subscribed to changes first, then the subscribed one.
    write_file(notes.path("other.md"), "o v2\n");
    write_file(notes.path("x.md"), "x v2\n");
    let n = wait_updated(&mut s, "notes://x");
    assert_eq!(n["params"], json!({"uri": "notes://x"}), "{n}");
    assert_eq!(read_text(&mut s, "notes://x"), "x v2\n");

    // The URI as listed, percent-encoded.
    write_file(notes.path("my note.md"), "m v2\n");
    wait_updated(&mut s, "notes://my%20note");

    barrier(&mut s, &notes, "sentinel");
    let stray: Vec<Value> = s
        .take_notifications("notifications/resources/updated")
        .into_iter()
        .filter(|n| n["params"]["uri"] == "notes://other")
        .collect();
    assert!(
        stray.is_empty(),
        "updates only for subscribed resources: {stray:?}"
    );
}

#[test]
fn a_subscription_made_first_thing_is_announced_in_both_eras() {
    let notes = Notes::new("read-write", &[("x.md", "x v1\n")]);
    // No resources/list first: the subscription itself learns which file backs the note.
    let mut s = notes.start(LATEST_VERSION, &[]);
    subscribe(&mut s, "notes://x");
    write_file(notes.path("x.md"), "x v2\n");
    wait_updated(&mut s, "notes://x");
    drop(s);

    let mut s = Server::builder().arg("--config").arg(&notes.config).start();
    s.send_stateless_with_id(
        json!("listen-x"),
        "subscriptions/listen",
        json!({ "notifications": { "resourceSubscriptions": ["notes://x"] } }),
        &json!({}),
    );
    let acknowledged = s.wait_notification_where(
        "notifications/subscriptions/acknowledged",
        |p| p["_meta"][META_SUBSCRIPTION_ID] == "listen-x",
        startup_timeout(),
    );
    assert!(acknowledged.is_some(), "no acknowledgment");
    write_file(notes.path("x.md"), "x v3\n");
    wait_updated(&mut s, "notes://x");
}

#[test]
fn after_unsubscribe_changes_are_not_announced() {
    let notes = Notes::new("read-write", &[("x.md", "x v1\n"), ("sentinel.md", "s\n")]);
    let mut s = notes.start(LATEST_VERSION, &[]);
    list_resources(&mut s);
    subscribe(&mut s, "notes://x");
    subscribe(&mut s, "notes://sentinel");

    write_file(notes.path("x.md"), "x v2\n");
    wait_updated(&mut s, "notes://x");
    // Everything that first change announces is in before the unsubscription.
    barrier(&mut s, &notes, "sentinel");
    s.take_notifications("notifications/resources/updated");

    s.typed_result(
        "resources/unsubscribe",
        json!({"uri": "notes://x"}),
        "EmptyResult",
    );
    write_file(notes.path("x.md"), "x v3\n");
    barrier(&mut s, &notes, "sentinel");
    let late: Vec<Value> = s
        .take_notifications("notifications/resources/updated")
        .into_iter()
        .filter(|n| n["params"]["uri"] == "notes://x")
        .collect();
    assert!(
        late.is_empty(),
        "no update after resources/unsubscribe: {late:?}"
    );
    // The change itself is there to read.
    assert_eq!(read_text(&mut s, "notes://x"), "x v3\n");
}

#[test]
fn new_and_removed_note_files_change_the_list() {
    let notes = Notes::new("read-write", &[("sentinel.md", "s\n")]);
    let mut s = notes.start(LATEST_VERSION, &[]);
    assert_eq!(uris(&list_resources(&mut s)), ["notes://sentinel"]);
    subscribe(&mut s, "notes://sentinel");

    write_file(notes.path("new.md"), "# New\n");
    wait_list_changed(&mut s);
    assert_eq!(
        uris(&list_resources(&mut s)),
        ["notes://new", "notes://sentinel"]
    );

    // Whatever the creation announced is in; then a removal.
    barrier(&mut s, &notes, "sentinel");
    s.take_notifications("notifications/resources/list_changed");
    std::fs::remove_file(notes.path("new.md")).unwrap();
    wait_list_changed(&mut s);
    assert_eq!(uris(&list_resources(&mut s)), ["notes://sentinel"]);
}

#[test]
fn add_note_announces_the_update_and_the_list_change() {
    let notes = Notes::new("read-write", &[("a.md", "# A\n")]);
    let mut s = notes.start(LATEST_VERSION, &[]);
    assert_eq!(uris(&list_resources(&mut s)), ["notes://a"]);
    subscribe(&mut s, "notes://fresh");

    let r = s.call_tool(
        "notes_add_note",
        json!({"name": "fresh", "text": "# Fresh\nfrom the tool\n"}),
    );
    assert!(ok_text(&r).contains("notes://fresh"), "{r}");
    wait_updated(&mut s, "notes://fresh");
    wait_list_changed(&mut s);

    assert_eq!(
        std::fs::read_to_string(notes.path("fresh.md")).unwrap(),
        "# Fresh\nfrom the tool\n",
        "add_note writes <dir>/<name>.md"
    );
    assert_eq!(
        uris(&list_resources(&mut s)),
        ["notes://a", "notes://fresh"]
    );
    assert_eq!(
        read_text(&mut s, "notes://fresh"),
        "# Fresh\nfrom the tool\n"
    );

    // Replacing it announces the update again.
    s.take_notifications("notifications/resources/updated");
    let r = s.call_tool("notes_add_note", json!({"name": "fresh", "text": "v2\n"}));
    ok_text(&r);
    wait_updated(&mut s, "notes://fresh");
    assert_eq!(read_text(&mut s, "notes://fresh"), "v2\n");

    // Names that are not plain file names are tool errors; nothing is written outside.
    for bad in ["../escape", "a/b", ".hidden", ""] {
        let r = s.call_tool("notes_add_note", json!({"name": bad, "text": "x"}));
        assert!(is_tool_error(&r), "name {bad:?}: {r}");
    }
    assert!(!notes.dir.parent().unwrap().join("escape.md").exists());
}

#[test]
fn add_note_fails_cleanly_on_a_read_only_grant() {
    let notes = Notes::new("read-only", &[("a.md", "# A\n")]);
    let mut s = notes.start(LATEST_VERSION, &[]);
    let r = s.call_tool("notes_add_note", json!({"name": "b", "text": "x"}));
    error_text(&r, "could not write");
    assert!(!notes.path("b.md").exists(), "nothing written");
    assert_eq!(uris(&list_resources(&mut s)), ["notes://a"]);
}

#[test]
fn the_example_configuration_serves_the_example_notes() {
    let config = repo_root().join("plugins/palisade.toml");
    let mut s = Server::start(&["--config", &path_str(&config)]);
    let init = s.initialize(LATEST_VERSION);
    // Lists wait only 2 s for plugins still loading: load first.
    s.wait_ready();
    for cap in ["tools", "resources", "prompts", "completions", "logging"] {
        assert!(
            init["capabilities"].get(cap).is_some(),
            "{cap} declared: {init}"
        );
    }
    let listed = uris(&list_resources(&mut s));
    for expected in ["notes://recipes", "notes://todo", "notes://welcome"] {
        assert!(
            listed.iter().any(|u| u == expected),
            "{expected}: {listed:?}"
        );
    }
    let welcome =
        std::fs::read_to_string(repo_root().join("plugins/notes/example/welcome.md")).unwrap();
    assert_eq!(read_text(&mut s, "notes://welcome"), welcome);
}

/// Proves: of two plugins claiming the same URIs, the one further down the configuration is
/// not served (with an error naming both), and the first serves on.
#[test]
fn of_two_plugins_claiming_the_same_uris_the_later_loses_its_resources() {
    // The notes plugin twice, under two names: both serve `notes://{name}`.
    let dir = tempdir();
    let notes = repo_root().join("plugins/notes/example");
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.beta]\npath = {p}\n[[plugins.beta.dirs]]\nhost = {d}\nguest = \"/notes\"\n\n\
             [plugins.alpha]\npath = {p}\n",
            p = toml_str(&plugin_arg("notes")),
            d = toml_str(&path_str(&notes)),
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    assert!(
        s.wait_for_stderr("resources not served", secs(5)),
        "{}",
        s.stderr()
    );
    let log = s.stderr();
    assert!(log.contains("`alpha`") && log.contains("`beta`"), "{log}");
    // Tools are no resources: both plugins serve theirs.
    let (tools, _) = s.list_all_tools();
    let names = tool_names(&tools);
    assert!(names.iter().any(|n| n.starts_with("beta_")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("alpha_")), "{names:?}");
    assert!(!read_text(&mut s, "notes://welcome").is_empty());
}

/// Proves: resources and templates of two plugins are merged into one list sorted by URI and
/// paginated across the plugins' boundary; each URI is read from the plugin that serves it.
#[test]
fn lists_merge_and_paginate_across_plugins() {
    let notes = Notes::new("read-only", &[("a.md", "A"), ("z.md", "Z")]);
    let mut config = std::fs::read_to_string(&notes.config).unwrap();
    config.push_str(&format!(
        "\n[plugins.conformance]\npath = {}\nprefix = \"\"\n",
        toml_str(&plugin_arg("conformance"))
    ));
    std::fs::write(&notes.config, config).unwrap();
    let mut s = notes.start("2025-11-25", &["--page-size", "2"]);
    let (resources, pages) = s.list_all_pages("resources/list", "resources", "ListResourcesResult");
    assert_eq!(
        uris(&resources),
        [
            "notes://a",
            "notes://z",
            "test://static-binary",
            "test://static-text",
            "test://watched-resource"
        ]
    );
    assert_eq!(pages, [2, 2, 1]);
    let (templates, pages) = s.list_all_pages(
        "resources/templates/list",
        "resourceTemplates",
        "ListResourceTemplatesResult",
    );
    let templates: Vec<&str> = templates
        .iter()
        .filter_map(|t| t["uriTemplate"].as_str())
        .collect();
    assert_eq!(templates, ["notes://{name}", "test://template/{id}/data"]);
    assert_eq!(pages, [2]);
    assert_eq!(read_text(&mut s, "notes://z"), "Z");
    let text = read(&mut s, "test://static-text");
    assert_eq!(text["contents"][0]["mimeType"], "text/plain", "{text}");
    assert!(
        text["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("static text")),
        "{text}"
    );
}
