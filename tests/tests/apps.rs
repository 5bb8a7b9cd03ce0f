//! MCP Apps from plugins (extension `io.modelcontextprotocol/ui`): the example weather plugin's
//! forecast tool names its view, a `ui://` resource of the extension's mime type whose
//! `_meta.ui` the host keeps, in both protocol eras. A real host loads the view: the official
//! TypeScript SDK and the ext-apps host bridge in Debian's Chromium, driven by playwright-core
//! (tests/clients/apps_view.mjs), hand it the tool's result and read the chart it drew.

use std::path::Path;

use palisade_tests::*;
use serde_json::{Value, json};

const KEY: &str = "key-0123456789abcdef";
const KEY_VAR: &str = "PALISADE_TEST_WEATHER_KEY";
const VIEW: &str = "ui://weather/forecast";
const MIME: &str = "text/html;profile=mcp-app";

/// The forecast API: eight points for Paris, 404 for anything else.
fn forecast_api() -> FakeApi {
    FakeApi::start(|seen| match (seen.route(), seen.query("q").as_deref()) {
        ("/data/2.5/forecast", Some("Paris")) => {
            let points: Vec<Value> = (0..8)
                .map(|i| {
                    json!({ "dt_txt": format!("2026-11-28 {:02}:00:00", i * 3),
                            "main": { "temp": 10.0 + f64::from(i) * 0.5 - f64::from(i % 3) },
                            "weather": [{ "description": "light rain" }] })
                })
                .collect();
            Reply::json(
                200,
                json!({ "city": { "name": "Paris", "country": "FR" }, "list": points }),
            )
        }
        _ => Reply::json(404, json!({ "cod": "404", "message": "city not found" })),
    })
}

/// `palisade.toml` in `dir` serving the weather plugin against `api`.
fn weather_config(dir: &Path, api: &FakeApi) -> String {
    let config = config_file(
        dir,
        &format!(
            "[plugins.weather]\npath = {}\nnetwork = [{:?}]\n\n[plugins.weather.config]\n\
             api_url = {:?}\n\n[plugins.weather.secrets]\nOPENWEATHER_API_KEY = {{ env = \"{KEY_VAR}\" }}\n",
            toml_str(&plugin_arg("weather")),
            api.grant(),
            api.url("")
        ),
    );
    path_str(&config)
}

#[test]
fn a_plugins_view_keeps_its_scheme_mime_type_and_meta_in_both_eras_and_renders_in_chromium() {
    let api = forecast_api();
    let dir = tempdir();
    let config = weather_config(dir.path(), &api);
    let server = HttpServer::start_with(
        Server::builder()
            .args(["--no-watch", "--config", &config])
            .env(KEY_VAR, KEY),
    );

    // 2026-07-28: the tool's `_meta.ui`, the view's listing and contents, as the plugin gave them.
    let mut stateless = server.stateless_client();
    let caps = json!({ "extensions": {
        "io.modelcontextprotocol/ui": { "mimeTypes": [MIME] } } });
    let tools = stateless.stateless_result("tools/list", json!({}), &caps);
    let forecast = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "weather_forecast")
        .expect("weather_forecast is listed");
    assert_eq!(
        forecast["_meta"],
        json!({ "ui": { "resourceUri": VIEW, "visibility": ["model", "app"] },
                "ui/resourceUri": VIEW })
    );
    let listed = stateless.stateless_result("resources/list", json!({}), &caps);
    let view = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == VIEW)
        .expect("the view is listed");
    assert_eq!(view["mimeType"], MIME);
    assert_eq!(view["_meta"], json!({ "ui": { "prefersBorder": true } }));
    let read = stateless.stateless_result("resources/read", json!({ "uri": VIEW }), &caps);
    let contents = &read["contents"][0];
    assert_eq!(
        (&contents["uri"], &contents["mimeType"]),
        (&json!(VIEW), &json!(MIME))
    );
    assert_eq!(
        contents["_meta"],
        json!({ "ui": { "prefersBorder": true } })
    );
    assert!(contents["text"].as_str().unwrap().contains("ui/initialize"));

    // 2025-11-25, through a real host: the TypeScript SDK reads and calls, the ext-apps bridge
    // in Chromium shows the view the result, and the chart is checked point by point.
    let stdout = run_node_client(
        "apps_view.mjs",
        &[&server.url, "weather_forecast", r#"{"city": "Paris"}"#],
        &|| server.stderr(),
    );
    assert!(stdout.contains("the view drew 8 points"), "{stdout}");
    assert_eq!(api.last().query("appid").as_deref(), Some(KEY));
}
