//! Components that do not export `palisade:plugin`: every exported function is a tool, with
//! schemas from its WIT types, a description from the WIT's docs, arguments converted from JSON
//! and results rendered back, under the same limits as any plugin.
//!
//! `generic-types` (plugins/fixtures/generic-types: Rust and wit-bindgen alone) has every WIT
//! type in an argument or a result; `generic-hostile` (tests/fixtures/generic-hostile.wat) is
//! written by hand to return what no toolchain would.

use std::path::Path;

use palisade_tests::*;
use serde_json::{Value, json};

/// A server with the plugin at `path` under the name `gen` (so its tools are `gen_...`), and
/// `extra` appended to its section.
fn serve(dir: &Path, path: &Path, extra: &str) -> Server {
    let config = config_file(
        dir,
        &format!(
            "[plugins.gen]\npath = {}\n{extra}\n",
            toml_str(&path_str(path))
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    // Lists wait only 2 s for plugins still loading: load first.
    s.wait_ready();
    s
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", tool_names(tools)))
}

#[test]
fn every_exported_function_is_a_tool_with_exact_schemas_and_its_docs() {
    let dir = tempdir();
    let with_docs = with_package_docs(
        dir.path(),
        "generic-types",
        "plugins/fixtures/generic-types/wit",
    );
    let mut s = serve(dir.path(), &with_docs, "");
    let (tools, _) = s.list_all_tools();
    assert_eq!(
        tool_names(&tools),
        [
            "gen_greet",
            "gen_numbers_add-u8",
            "gen_numbers_divide",
            "gen_numbers_extremes",
            "gen_numbers_half",
            "gen_numbers_negate",
            "gen_numbers_not-a-number",
            "gen_numbers_sum-all",
            "gen_shapes_bump-all",
            "gen_shapes_check-name",
            "gen_shapes_describe",
            "gen_shapes_double-maybe",
            "gen_shapes_first-char",
            "gen_shapes_invert",
            "gen_shapes_is-even",
            "gen_shapes_next-color",
            "gen_shapes_nothing",
            "gen_shapes_perm-names",
            "gen_shapes_repeat",
            "gen_shapes_reverse-bytes",
            "gen_shapes_shift",
            "gen_shapes_swap",
        ],
        "the resource's constructor and method and the function taking a resource are left out"
    );
    // Every schema is a valid JSON Schema (2020-12), input and output.
    for t in &tools {
        for key in ["inputSchema", "outputSchema"] {
            if let Some(schema) = t.get(key) {
                assert!(
                    jsonschema::meta::is_valid(schema),
                    "{} {key} is not a valid schema: {schema}",
                    t["name"]
                );
            }
        }
    }
    // Descriptions from the WIT's doc comments, parameters described from `- `x`:` and
    // `@param` lines.
    assert_eq!(
        tool(&tools, "gen_greet")["description"],
        "Greets someone by name."
    );
    let sum = tool(&tools, "gen_numbers_sum-all");
    assert_eq!(
        sum["inputSchema"]["properties"]["a"]["description"],
        "a signed byte"
    );
    let shift = tool(&tools, "gen_shapes_shift");
    assert_eq!(
        shift["inputSchema"]["properties"]["p"]["description"],
        "the point to move"
    );
    assert_eq!(
        shift["_meta"]["palisade/export"],
        "test:generic/shapes@0.1.0#shift"
    );
    // Integers with the range of their width.
    let ranges: Vec<(String, Value, Value)> = sum["inputSchema"]["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["minimum"].clone(), v["maximum"].clone()))
        .collect();
    assert_eq!(
        ranges,
        [
            ("a".into(), json!(-128), json!(127)),
            ("b".into(), json!(0), json!(65535)),
            ("c".into(), json!(-32768), json!(32767)),
            ("d".into(), json!(0), json!(4294967295u64)),
            ("e".into(), json!(-2147483648i64), json!(2147483647)),
            ("f".into(), json!(0), json!(u64::MAX)),
            ("g".into(), json!(i64::MIN), json!(i64::MAX)),
        ]
    );
    // A record: required only where not an option; as a result, the record is the structured
    // content and every field is there.
    let point_in = &shift["inputSchema"]["properties"]["p"];
    assert_eq!(point_in["required"], json!(["x", "y"]));
    assert_eq!(
        shift["outputSchema"]["required"],
        json!(["x", "y", "label"])
    );
    let describe = tool(&tools, "gen_shapes_describe");
    assert_eq!(
        describe["inputSchema"]["properties"]["c"],
        json!({"type": "string", "enum": ["red", "green", "blue"]})
    );
    assert_eq!(
        describe["inputSchema"]["properties"]["s"]["oneOf"][3],
        json!({"const": "dot"})
    );
    let flags = &tool(&tools, "gen_shapes_invert")["inputSchema"]["properties"]["p"];
    assert_eq!(flags["uniqueItems"], true);
    assert_eq!(flags["items"]["enum"], json!(["read", "write", "exec"]));
    let swap = &tool(&tools, "gen_shapes_swap")["inputSchema"]["properties"]["t"];
    assert_eq!(swap["prefixItems"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        (swap["minItems"].clone(), swap["maxItems"].clone()),
        (json!(2), json!(2))
    );
    assert_eq!(
        tool(&tools, "gen_shapes_reverse-bytes")["inputSchema"]["properties"]["data"],
        json!({"type": "string", "contentEncoding": "base64"})
    );
    // `result<_, _>` without an ok payload, and no result: no output schema.
    assert!(
        tool(&tools, "gen_shapes_is-even")
            .get("outputSchema")
            .is_none()
    );
    assert!(
        tool(&tools, "gen_shapes_nothing")
            .get("outputSchema")
            .is_none()
    );
}

#[test]
fn without_docs_a_description_names_the_interface_and_function() {
    let dir = tempdir();
    let mut s = serve(dir.path(), &plugin_path("generic-types"), "");
    let (tools, _) = s.list_all_tools();
    assert_eq!(
        tool(&tools, "gen_numbers_add-u8")["description"],
        "`add-u8` from the interface `test:generic/numbers@0.1.0`."
    );
    assert_eq!(
        tool(&tools, "gen_greet")["description"],
        "`greet`, exported by the component."
    );
}

#[test]
fn every_type_goes_in_and_comes_back() {
    let dir = tempdir();
    let mut s = serve(dir.path(), &plugin_path("generic-types"), "");
    let cases: Vec<(&str, Value, Value)> = vec![
        ("greet", json!({"name": "Ann"}), json!("Hello, Ann!")),
        ("numbers_add-u8", json!({"a": 200, "b": 100}), json!(44)),
        (
            "numbers_negate",
            json!({"x": -9_007_199_254_740_993i64}),
            json!(9_007_199_254_740_993i64),
        ),
        (
            "numbers_sum-all",
            json!({"a": -1, "b": 2, "c": -3, "d": 4, "e": -5, "f": 6, "g": -7}),
            json!(-4.0),
        ),
        ("numbers_half", json!({"x": 3}), json!(1.5)),
        ("numbers_extremes", json!({}), json!([u64::MAX, i64::MIN])),
        ("numbers_divide", json!({"a": 7, "b": 2}), json!(3)),
        ("numbers_not-a-number", json!({}), Value::Null),
        (
            "shapes_describe",
            json!({"s": {"labelled": {"x": 1, "y": 2, "label": "home"}}, "c": "green"}),
            json!("green point (1, 2) labelled home"),
        ),
        (
            "shapes_describe",
            json!({"s": {"rect": [2.0, 3.5]}, "c": "blue"}),
            json!("blue 2x3.5 rectangle"),
        ),
        (
            "shapes_describe",
            json!({"s": "dot", "c": "red"}),
            json!("red dot"),
        ),
        (
            "shapes_perm-names",
            json!({"p": ["exec", "read"]}),
            json!(["read", "exec"]),
        ),
        (
            "shapes_invert",
            json!({"p": ["write"]}),
            json!(["read", "exec"]),
        ),
        (
            "shapes_invert",
            json!({"p": []}),
            json!(["read", "write", "exec"]),
        ),
        ("shapes_first-char", json!({"s": "éa"}), json!("é")),
        ("shapes_first-char", json!({"s": ""}), Value::Null),
        (
            "shapes_reverse-bytes",
            json!({"data": "AQID"}),
            json!("AwIB"),
        ),
        ("shapes_swap", json!({"t": ["x", 5]}), json!([5, "x"])),
        (
            "shapes_repeat",
            json!({"s": "ab", "n": 3}),
            json!(["ab", "ab", "ab"]),
        ),
        (
            "shapes_bump-all",
            json!({"points": [{"x": 1, "y": 1}, {"x": 2, "y": 3, "label": "q"}]}),
            json!([{"x": 2, "y": 2, "label": null}, {"x": 3, "y": 4, "label": "q"}]),
        ),
        ("shapes_check-name", json!({"name": "bob"}), json!(3)),
        ("shapes_next-color", json!({"c": "blue"}), json!("red")),
        ("shapes_double-maybe", json!({"n": 21}), json!(42)),
        ("shapes_double-maybe", json!({}), Value::Null),
        ("shapes_double-maybe", json!({"n": null}), Value::Null),
    ];
    for (name, arguments, expected) in cases {
        let result = s.call_tool(&format!("gen_{name}"), arguments.clone());
        assert!(!is_tool_error(&result), "{name} {arguments}: {result}");
        assert_eq!(
            result["structuredContent"],
            json!({"result": expected}),
            "{name} {arguments}"
        );
        // The text is the string itself, or the JSON of anything else.
        let text = match &expected {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        assert_eq!(tool_text(&result), text, "{name} {arguments}");
    }
    // A record result is the structured content itself.
    let shifted = s.call_tool("gen_shapes_shift", json!({"p": {"x": 1, "y": 2}, "dx": 5}));
    assert_eq!(
        shifted["structuredContent"],
        json!({"x": 6, "y": 2, "label": null})
    );
    // No result: an empty content list.
    let nothing = s.call_tool("gen_shapes_nothing", json!({"n": 1}));
    assert_eq!(nothing["content"], json!([]));
    assert!(!is_tool_error(&nothing));
}

#[test]
fn err_results_are_tool_errors() {
    let dir = tempdir();
    let mut s = serve(dir.path(), &plugin_path("generic-types"), "");
    let divide = s.call_tool("gen_numbers_divide", json!({"a": 7, "b": 0}));
    assert_eq!(error_text(&divide, "cannot divide"), "cannot divide 7 by 0");
    assert!(divide.get("structuredContent").is_none(), "{divide}");
    let name = s.call_tool("gen_shapes_check-name", json!({"name": "far too long"}));
    assert_eq!(error_text(&name, "too-long"), "too-long");
    let odd = s.call_tool("gen_shapes_is-even", json!({"n": 3}));
    error_text(&odd, "test:generic/shapes@0.1.0#is-even` failed");
    let even = s.call_tool("gen_shapes_is-even", json!({"n": 4}));
    assert!(!is_tool_error(&even), "{even}");
}

#[test]
fn arguments_that_do_not_fit_are_refused_naming_the_argument() {
    let dir = tempdir();
    let mut s = serve(dir.path(), &plugin_path("generic-types"), "");
    let refused: Vec<(&str, Value, &str)> = vec![
        // By the schema, before the plugin runs.
        ("numbers_add-u8", json!({"a": 256, "b": 1}), "/a"),
        ("numbers_add-u8", json!({"a": -1, "b": 1}), "/a"),
        ("numbers_add-u8", json!({"a": 1.5, "b": 1}), "/a"),
        (
            "numbers_add-u8",
            json!({"a": 1}),
            "\"b\" is a required property",
        ),
        (
            "numbers_add-u8",
            json!({"a": 1, "b": 2, "c": 3}),
            "Additional properties",
        ),
        ("shapes_first-char", json!({"s": 5}), "/s"),
        (
            "shapes_shift",
            json!({"p": {"x": "1", "y": 2}, "dx": 1}),
            "/p/x",
        ),
        (
            "shapes_shift",
            json!({"p": {"x": 1, "y": 2, "z": 0}, "dx": 1}),
            "/p",
        ),
        ("shapes_describe", json!({"s": "square", "c": "red"}), "/s"),
        (
            "shapes_describe",
            json!({"s": {"circle": 1, "dot": 2}, "c": "red"}),
            "/s",
        ),
        ("shapes_describe", json!({"s": "dot", "c": "purple"}), "/c"),
        ("shapes_invert", json!({"p": ["read", "read"]}), "/p"),
        ("shapes_invert", json!({"p": ["fly"]}), "/p/0"),
        ("shapes_swap", json!({"t": ["x"]}), "/t"),
        ("shapes_swap", json!({"t": ["x", 1, 2]}), "/t"),
        (
            "shapes_bump-all",
            json!({"points": [{"x": 1, "y": 1}, {"y": 1}]}),
            "/points/1",
        ),
        // By the conversion, for what a schema cannot say.
        (
            "shapes_reverse-bytes",
            json!({"data": "not base64!"}),
            "argument `data`: expected base64",
        ),
        (
            "numbers_half",
            json!({"x": 1e39}),
            "argument `x`: expected a number within f32's range",
        ),
    ];
    for (name, arguments, needle) in refused {
        let result = s.call_tool(&format!("gen_{name}"), arguments.clone());
        let text = error_text(&result, "invalid arguments");
        assert!(text.contains(needle), "{name} {arguments}: {text}");
    }
}

#[test]
fn what_a_hostile_component_returns_is_bounded_and_checked() {
    let dir = tempdir();
    let hostile = wat_component(dir.path(), "generic-hostile");
    // 1 MiB of output: the bomb's first string is 1 MiB, and 65536 of them would be 64 GiB.
    let mut s = serve(
        dir.path(),
        &hostile,
        "[plugins.gen.limits]\noutput_kib = 1024\n",
    );
    let (tools, _) = s.list_all_tools();
    assert_eq!(
        tool_names(&tools),
        [
            "gen_add",
            "gen_bomb",
            "gen_far",
            "gen_not-a-char",
            "gen_shout",
            "gen_wild"
        ]
    );
    let honest = |s: &mut Server| {
        let sum = s.call_tool("gen_add", json!({"a": 3, "b": 4}));
        assert_eq!(sum["structuredContent"], json!({"result": 7}), "{sum}");
    };
    honest(&mut s);
    let shout = s.call_tool("gen_shout", json!({"s": "quiet please"}));
    assert_eq!(tool_text(&shout), "QUIET PLEASE");
    let bomb = s.call_tool("gen_bomb", json!({}));
    error_text(&bomb, "output limit");
    honest(&mut s);
    for (name, needle) in [
        ("gen_wild", "out of bounds"),
        ("gen_far", "out of bounds"),
        ("gen_not-a-char", "out of range for `char`"),
    ] {
        let result = s.call_tool(name, json!({}));
        error_text(&result, needle);
        honest(&mut s);
    }
}

#[test]
fn two_functions_with_one_tool_name_refuse_the_plugin_naming_both() {
    let dir = tempdir();
    let colliding = wat_component(dir.path(), "generic-collision");
    let refused = assert_plugin_refused(
        &["--no-watch", "--plugin", &path_str(&colliding)],
        "would both be the tool `util_f`",
    );
    let stderr = refused.stderr();
    assert!(
        stderr.contains("`x:one/util#f`") && stderr.contains("`y:two/util#f`"),
        "{stderr}"
    );
}

#[test]
fn a_plugin_of_another_contract_version_is_refused_naming_both_versions() {
    let dir = tempdir();
    let other = wat_component(dir.path(), "contract-other-version");
    assert_plugin_refused(
        &["--no-watch", "--plugin", &path_str(&other)],
        "it exports `palisade:plugin/tools@0.1.0`, but this server serves palisade:plugin@0.2.0", // another version on purpose
    );
}

#[test]
fn wasi_config_in_both_versions_and_a_granted_host() {
    let dir = tempdir();
    let port = local_http_server("sunny");
    let other = local_http_server("not for this plugin");
    let grant = format!(
        "network = [\"http://127.0.0.1:{port}\"]\n\n[plugins.gen.config]\ngreeting = \"Howdy\"\n\
         api-url = \"http://127.0.0.1:{port}\"\ntoken = {{ from_host = \"PALISADE_TEST_CONFIG_TOKEN\" }}\n"
    );
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.gen]\npath = {}\n{grant}",
            toml_str(&plugin_arg("generic-service"))
        ),
    );
    let mut s = Server::builder()
        .args(["--no-watch", "--config", &path_str(&config)])
        .env("PALISADE_TEST_CONFIG_TOKEN", "t0ken")
        .start();
    s.initialize(LATEST_VERSION);
    // 0.2.0-draft and 0.2.0-rc.1: the same values through either.
    let greet = s.call_tool("gen_greet", json!({"name": "Ann"}));
    assert_eq!(tool_text(&greet), "Howdy, Ann!");
    let token = s.call_tool("gen_setting", json!({"key": "token"}));
    assert_eq!(token["structuredContent"], json!({"result": "t0ken"}));
    let missing = s.call_tool("gen_setting", json!({"key": "nope"}));
    assert_eq!(missing["structuredContent"], json!({"result": null}));
    let all = s.call_tool("gen_settings", json!({}));
    assert_eq!(
        all["structuredContent"]["result"],
        json!([
            ["api-url", format!("http://127.0.0.1:{port}")],
            ["greeting", "Howdy"],
            ["token", "t0ken"]
        ])
    );
    let fetched = s.call_tool("gen_fetch", json!({"path": "/weather"}));
    assert_eq!(tool_text(&fetched), "200 sunny");
    drop(s);

    // No config and no grant: an empty store, and the host is refused.
    let bare = config_file(
        dir.path(),
        &format!(
            "[plugins.gen]\npath = {}\n\n[plugins.gen.config]\napi-url = \"http://127.0.0.1:{other}\"\n",
            toml_str(&plugin_arg("generic-service"))
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&bare)]);
    s.initialize(LATEST_VERSION);
    let greet = s.call_tool("gen_greet", json!({"name": "Ann"}));
    assert_eq!(
        error_text(&greet, "greeting"),
        "no `greeting` is configured"
    );
    let refused = s.call_tool("gen_fetch", json!({"path": "/"}));
    let text = error_text(&refused, "HttpRequestDenied");
    assert!(!text.contains("not for this plugin"), "{text}");
}

#[test]
fn per_function_settings_apply_as_to_any_tool() {
    let dir = tempdir();
    let mut s = serve(
        dir.path(),
        &plugin_path("generic-types"),
        "[plugins.gen.tools.greet]\ndescription = \"Says hello.\"\nconfirm = true\n\
         [plugins.gen.tools.greet.annotations]\nreadOnlyHint = true\ntitle = \"Greeter\"\n",
    );
    let (tools, _) = s.list_all_tools();
    let greet = tool(&tools, "gen_greet");
    assert_eq!(greet["description"], "Says hello.");
    assert_eq!(greet["annotations"]["readOnlyHint"], true);
    assert_eq!(greet["annotations"]["title"], "Greeter");
    // confirm = true: a client that cannot be asked gets a refusal, the plugin never runs.
    let refused = s.call_tool("gen_greet", json!({"name": "Ann"}));
    assert!(is_tool_error(&refused), "{refused}");
}

#[test]
fn inspect_shows_each_function_its_origin_and_what_was_left_out() {
    let out = run_palisade(
        &["inspect", &plugin_arg("generic-types")],
        false,
        default_timeout(),
    );
    assert!(out.success(), "{}", out.stderr);
    let text = out.stdout;
    for needle in [
        "provides: tools, one per exported function",
        "numbers_add-u8: `add-u8` from the interface `test:generic/numbers@0.1.0`.",
        "    from: test:generic/numbers@0.1.0#add-u8",
        "\"maximum\":255",
        "    output schema: ",
        "functions left out (3):",
        "test:generic/shapes@0.1.0#read-counter: it takes or returns a resource (`borrow`)",
        "test:generic/shapes@0.1.0#[constructor]counter",
    ] {
        assert!(text.contains(needle), "`{needle}` not in:\n{text}");
    }
    let service = run_palisade(
        &["inspect", &plugin_arg("generic-service")],
        false,
        default_timeout(),
    );
    assert!(
        service
            .stdout
            .contains("wasi:config/store@0.2.0-draft: provided; keys: nothing granted"),
        "{}",
        service.stdout
    );
    assert!(
        service
            .stdout
            .contains("wasi:config/store@0.2.0-rc.1: provided; keys: nothing granted"),
        "{}",
        service.stdout
    );
}

#[test]
fn a_component_linked_to_the_one_it_imports_from_runs_as_one_under_the_callers_limits() {
    let dir = tempdir();
    let adder = wat_component(dir.path(), "generic-adder");
    let calculator = wat_component(dir.path(), "generic-calculator");
    let hostile = wat_component(dir.path(), "generic-hostile");
    let write_config = |link: &str, limits: &str| {
        config_file(
            dir.path(),
            &format!(
                "[plugins.calc]\npath = {}\n{link}\n{limits}\n[plugins.adder]\npath = {}\n\n\
                 [plugins.other]\npath = {}\n",
                toml_str(&path_str(&calculator)),
                toml_str(&path_str(&adder)),
                toml_str(&path_str(&hostile)),
            ),
        )
    };
    // Alone, the calculator's import is not provided: the call fails, naming it.
    let alone = write_config("", "");
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&alone)]);
    s.initialize(LATEST_VERSION);
    let result = s.call_tool("calc_calculate_add-three", json!({"a": 1, "b": 2, "c": 3}));
    error_text(
        &result,
        "docs:adder/add@0.1.0#add` is not available to this plugin",
    );
    drop(s);

    // Linked: composed into one component. The adder is still served as a plugin of its own.
    let linked = write_config(
        "link = [\"adder\"]",
        "[plugins.calc.limits]\nfuel_per_call = 20000000\n",
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&linked)]);
    s.initialize(LATEST_VERSION);
    let (tools, _) = s.list_all_tools();
    assert_eq!(
        tool_names(&tools),
        [
            "adder_add_add",
            "calc_calculate_add-three",
            "other_add",
            "other_bomb",
            "other_far",
            "other_not-a-char",
            "other_shout",
            "other_wild"
        ]
    );
    let sum = s.call_tool("calc_calculate_add-three", json!({"a": 1, "b": 2, "c": 3}));
    assert_eq!(sum["structuredContent"], json!({"result": 6}), "{sum}");
    // The adder spins on 0: the calculator's fuel, not the adder's, stops it.
    let spun = s.call_tool("calc_calculate_add-three", json!({"a": 0, "b": 2, "c": 3}));
    error_text(&spun, "fuel");
    let again = s.call_tool("calc_calculate_add-three", json!({"a": 4, "b": 5, "c": 6}));
    assert_eq!(again["structuredContent"], json!({"result": 15}), "{again}");
    drop(s);

    // Linking what exports nothing it imports, itself, or an unknown plugin is refused.
    let wrong = write_config("link = [\"other\"]", "");
    assert_plugin_refused(
        &["--no-watch", "--config", &path_str(&wrong)],
        "none of the linked components (`other`) exports an interface it imports",
    );
    let itself = write_config("link = [\"calc\"]", "");
    assert_serve_refused(
        &["--no-watch", "--config", &path_str(&itself)],
        "links the plugin itself",
    );
    let unknown = write_config("link = [\"nope\"]", "");
    assert_serve_refused(
        &["--no-watch", "--config", &path_str(&unknown)],
        "names `nope`, which is not a plugin of this file",
    );
}

#[test]
fn keyvalue_only_when_granted_kept_on_disk_under_its_cap() {
    let dir = tempdir();
    let notes = plugin_arg("generic-notes");
    // Without the grant the imports are there (the plugin loads) but every use fails.
    let bare = config_file(
        dir.path(),
        &format!("[plugins.gen]\npath = {}\n", toml_str(&notes)),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&bare)]);
    s.initialize(LATEST_VERSION);
    let refused = s.call_tool("gen_remember", json!({"key": "a", "text": "x"}));
    error_text(
        &refused,
        "wasi:keyvalue/store@0.2.0-draft#open` is not available to this plugin",
    );
    drop(s);
    assert!(!dir.path().join("palisade-keyvalue").exists());

    let granted = config_file(
        dir.path(),
        &format!(
            "[plugins.gen]\npath = {}\n\n[plugins.gen.keyvalue]\nmax_kib = 4\n",
            toml_str(&notes)
        ),
    );
    let start = || {
        let mut s = Server::start(&["--no-watch", "--config", &path_str(&granted)]);
        s.initialize(LATEST_VERSION);
        s
    };
    let mut s = start();
    let ok = |s: &mut Server, tool: &str, args: Value| {
        let result = s.call_tool(&format!("gen_{tool}"), args.clone());
        assert!(!is_tool_error(&result), "{tool} {args}: {result}");
        result["structuredContent"]["result"].clone()
    };
    ok(&mut s, "remember", json!({"key": "b", "text": "bee"}));
    ok(
        &mut s,
        "remember-many",
        json!({"notes": [["a", "ay"], ["c", "sea"]]}),
    );
    assert_eq!(ok(&mut s, "recall", json!({"key": "a"})), json!("ay"));
    assert_eq!(ok(&mut s, "recall", json!({"key": "z"})), Value::Null);
    assert_eq!(
        ok(&mut s, "recall-many", json!({"keys": ["c", "z", "b"]})),
        json!(["sea", null, "bee"])
    );
    assert_eq!(ok(&mut s, "visit", json!({"key": "n"})), json!(1));
    assert_eq!(ok(&mut s, "visit", json!({"key": "n"})), json!(2));
    ok(&mut s, "forget", json!({"key": "c"}));
    assert_eq!(ok(&mut s, "keys", json!({})), json!(["a", "b", "n"]));
    // Past the cap (4 KiB): refused, and nothing of it is kept.
    let big = "x".repeat(5000);
    let full = s.call_tool("gen_remember", json!({"key": "big", "text": big}));
    error_text(&full, "more than its 4096 (keyvalue.max_kib)");
    assert_eq!(ok(&mut s, "recall", json!({"key": "big"})), Value::Null);
    // A counter over a note that is not 8 bytes is an error, not a guess.
    let not_counter = s.call_tool("gen_visit", json!({"key": "a"}));
    error_text(&not_counter, "is not a counter");
    drop(s);

    // On disk, private, and there after a restart.
    let file = dir.path().join("palisade-keyvalue/gen.json");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let mut s = start();
    assert_eq!(ok(&mut s, "recall", json!({"key": "b"})), json!("bee"));
    assert_eq!(ok(&mut s, "visit", json!({"key": "n"})), json!(3));
    drop(s);

    // A damaged store file is refused, not emptied.
    std::fs::write(&file, b"{not json").unwrap();
    let refused = assert_plugin_refused(
        &["--no-watch", "--config", &path_str(&granted)],
        "key-value store",
    );
    drop(refused);
    assert_eq!(std::fs::read(&file).unwrap(), b"{not json");
}

#[test]
fn an_http_handler_is_one_request_tool_bounded_like_any_answer() {
    let dir = tempdir();
    let handler = plugin_arg("generic-http");
    let config = config_file(
        dir.path(),
        &format!(
            "[plugins.web]\npath = {}\nhttp_handler = true\n\n[plugins.web.limits]\noutput_kib = 1024\n",
            toml_str(&handler)
        ),
    );
    let mut s = Server::start(&["--no-watch", "--config", &path_str(&config)]);
    s.initialize(LATEST_VERSION);
    let (tools, _) = s.list_all_tools();
    assert_eq!(tool_names(&tools), ["web_request"]);
    assert!(jsonschema::meta::is_valid(&tools[0]["inputSchema"]));
    let hello = s.call_tool("web_request", json!({"path": "/hello?name=Ann"}));
    assert_eq!(hello["structuredContent"]["status"], 200, "{hello}");
    assert_eq!(hello["structuredContent"]["body"], "Hello, Ann!");
    assert_eq!(
        hello["structuredContent"]["headers"]["content-type"],
        "text/plain"
    );
    assert_eq!(tool_text(&hello), "HTTP 200\n\nHello, Ann!");
    let echo = s.call_tool(
        "web_request",
        json!({"method": "POST", "path": "/notes", "headers": {"x-greeting": "hi"}, "body": "a note"}),
    );
    assert_eq!(
        echo["structuredContent"]["body"],
        "Method::Post /notes x-greeting=hi body=a note"
    );
    let failed = s.call_tool("web_request", json!({"path": "/fail"}));
    assert!(is_tool_error(&failed), "{failed}");
    assert_eq!(failed["structuredContent"]["status"], 500);
    // 2 MiB of body against 1 MiB of output: stopped, and the server goes on.
    let big = s.call_tool("web_request", json!({"path": "/big"}));
    error_text(&big, "output limit");
    let again = s.call_tool("web_request", json!({"path": "/hello?name=Bo"}));
    assert_eq!(again["structuredContent"]["body"], "Hello, Bo!");
    let bad = s.call_tool("web_request", json!({"path": "no-slash"}));
    error_text(&bad, "invalid arguments");
    drop(s);

    // Without http_handler the component has no tool; with it on a component that has no
    // handler, the plugin is refused.
    let without = config_file(
        dir.path(),
        &format!("[plugins.web]\npath = {}\n", toml_str(&handler)),
    );
    assert_plugin_refused(
        &["--no-watch", "--config", &path_str(&without)],
        "exports no function a tool can be made of",
    );
    let wrong = config_file(
        dir.path(),
        &format!(
            "[plugins.web]\npath = {}\nhttp_handler = true\n",
            toml_str(&plugin_arg("generic-types"))
        ),
    );
    assert_plugin_refused(
        &["--no-watch", "--config", &path_str(&wrong)],
        "does not export wasi:http/incoming-handler",
    );
}

#[test]
fn python_and_javascript_components_of_plain_functions_are_served() {
    for plugin in ["generic-py", "generic-js"] {
        let dir = tempdir();
        let mut s = serve(dir.path(), &plugin_path(plugin), "");
        let (tools, _) = s.list_all_tools();
        assert_eq!(
            tool_names(&tools),
            ["gen_shout", "gen_text_split", "gen_text_stats-of"],
            "{plugin}: componentize-py's exports.init is left out"
        );
        let shout = s.call_tool("gen_shout", json!({"word": "hey", "times": 3}));
        assert_eq!(tool_text(&shout), "HEY HEY HEY", "{plugin}");
        let stats = s.call_tool("gen_text_stats-of", json!({"text": "a bb ccc"}));
        assert_eq!(
            stats["structuredContent"],
            json!({"words": 3, "chars": 8, "longest": "ccc"}),
            "{plugin}"
        );
        let none = s.call_tool("gen_text_stats-of", json!({"text": ""}));
        assert_eq!(
            none["structuredContent"]["longest"],
            Value::Null,
            "{plugin}"
        );
        let split = s.call_tool("gen_text_split", json!({"text": "a,b", "separator": ","}));
        assert_eq!(
            split["structuredContent"],
            json!({"result": ["a", "b"]}),
            "{plugin}"
        );
        let failed = s.call_tool("gen_text_split", json!({"text": "a,b", "separator": ""}));
        assert_eq!(
            error_text(&failed, "separator"),
            "the separator is empty",
            "{plugin}"
        );
    }
}

#[test]
fn a_wasmcp_tools_component_is_served_through_the_adapter() {
    let dir = tempdir();
    let mut s = serve(dir.path(), &plugin_path("wasmcp-tools"), "");
    // Both pages of list-tools; the context told the component the revision.
    let (tools, _) = s.list_all_tools();
    assert_eq!(
        tool_names(&tools),
        [
            "gen_broken",
            "gen_fail",
            "gen_greet",
            "gen_media",
            "gen_stream"
        ]
    );
    let greet = tool(&tools, "gen_greet");
    assert_eq!(greet["description"], "Greets someone (context 2025-11-25).");
    assert_eq!(greet["annotations"]["readOnlyHint"], true);
    let hello = s.call_tool("gen_greet", json!({"name": "Ann"}));
    assert_eq!(tool_text(&hello), "Hello, Ann!");
    let media = s.call_tool("gen_media", json!({}));
    assert_eq!(
        media["content"],
        json!([
            {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "https://example.com/doc", "name": "doc"},
            {"type": "resource", "resource": {"uri": "memo://one", "text": "memo text"}}
        ])
    );
    let failed = s.call_tool("gen_fail", json!({}));
    assert_eq!(error_text(&failed, "it failed"), "it failed");
    let broken = s.call_tool("gen_broken", json!({}));
    assert_eq!(
        error_text(&broken, "bad things"),
        "invalid-params: bad things"
    );
    let stream = s.call_tool("gen_stream", json!({}));
    error_text(&stream, "answered with a stream");
    // The server goes on.
    let again = s.call_tool("gen_greet", json!({"name": "Bo"}));
    assert_eq!(tool_text(&again), "Hello, Bo!");
    let out = run_palisade(
        &["inspect", &plugin_arg("wasmcp-tools")],
        false,
        default_timeout(),
    );
    for needle in [
        "provides: tools, through the wasmcp adapter (wasmcp:mcp-v20251125/tools@0.1.1)",
        "wasmcp:mcp-v20251125/mcp@0.1.1: types only: nothing to provide",
    ] {
        assert!(
            out.stdout.contains(needle),
            "`{needle}` not in:\n{}",
            out.stdout
        );
    }
}
