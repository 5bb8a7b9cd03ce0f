//! The operator's console against a real server: Debian's Chromium, driven by playwright-core
//! (tests/clients/console.mjs), logs in, watches calls, answers and revokes grants and cancels a
//! call while the official TypeScript SDK calls the tools; then the audit log names the operator
//! of every action. Screenshots are kept in target/test-artifacts/console (docs/console.md shows
//! them).

use palisade_tests::*;

const ALICE: &str = "alice-operator-token-0123456789";
const BOB: &str = "bob-client-token-0123456789abc";
const PAGE: &str = "<html><head><title>Console test</title></head><body><h1>Hello from the console test</h1></body></html>";

#[test]
fn an_operator_logs_in_watches_answers_revokes_and_cancels_in_a_browser() {
    let dir = tempdir();
    let config = config_file(
        dir.path(),
        &format!(
            "[audit]\npath = \"audit.jsonl\"\n\n\
             [[auth.tokens]]\nname = \"alice\"\nsha256 = \"{}\"\nscope = \"all\"\n\n\
             [[auth.tokens]]\nname = \"bob\"\nsha256 = \"{}\"\nscope = \"all\"\n\n\
             [console]\noperators = [\"alice\"]\nquestion_wait_s = 60\n\n\
             {}\n\n[plugins.fetch]\npath = {}\nask = true\n",
            sha256_hex(ALICE),
            sha256_hex(BOB),
            plugin_sections(&["hello", "misbehave"]),
            toml_str(&plugin_arg("fetch")),
        ),
    );
    let server = HttpServer::start_with(Server::builder().args([
        "--no-watch",
        "--config",
        &path_str(&config),
        "--console",
        "127.0.0.1:0",
    ]));
    let stderr = server.stderr();
    let link: String = stderr
        .split("palisade: console at ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| server.fail("no console link on stderr"))
        .to_string();
    let console = link.split("/console/").next().unwrap().to_string();

    // What every answer carries, and who may not reach it.
    let agent = plain_agent();
    let css = agent
        .get(&format!("{console}/console/assets/console.css"))
        .call()
        .unwrap();
    let csp = css.headers().get("content-security-policy").unwrap();
    assert!(
        csp.to_str()
            .unwrap()
            .starts_with("default-src 'none'; script-src 'self'"),
        "{csp:?}"
    );
    let rebound = agent
        .get(&format!("{console}/console"))
        .header("Host", "attacker.example")
        .call()
        .unwrap();
    assert_eq!(rebound.status(), 403, "a Host that is not this server");

    let site = FakeApi::start(|_| Reply::html(PAGE));
    let artifacts = repo_root().join("target/test-artifacts/console");
    let stdout = run_node_client(
        "console.mjs",
        &[
            &server.url,
            &link,
            ALICE,
            BOB,
            &site.url("/"),
            &path_str(&artifacts),
        ],
        &|| server.stderr(),
    );
    assert!(stdout.contains("cancelled a running call"), "{stdout}");
    assert!(artifacts.join("grant-question.png").exists());

    // Every action is in the audit log, with the operator who took it.
    let audit = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_operator = |outcome: &str| {
        lines
            .iter()
            .filter(|l| l["outcome"] == outcome && l["operator"] == "console-link")
            .count()
    };
    assert_eq!(by_operator("operator-answered"), 2, "{audit}");
    assert_eq!(by_operator("operator-revoked"), 1, "{audit}");
    assert_eq!(by_operator("operator-cancelled"), 1, "{audit}");
    let granted = lines
        .iter()
        .find(|l| l["outcome"] == "grant-always")
        .unwrap_or_else(|| panic!("no grant-always line: {audit}"));
    assert_eq!(granted["client"], "operator:console-link", "{granted}");
    assert!(
        lines
            .iter()
            .any(|l| l["outcome"] == "cancelled" && l["tool"] == "misbehave_until_cancelled"),
        "{audit}"
    );
}
