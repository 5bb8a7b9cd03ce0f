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

/// A browser's login to a console, as a plain HTTP client keeps it: its cookie.
struct Login {
    agent: ureq::Agent,
    base: String,
    cookie: String,
}

impl Login {
    /// Logs in with the link the server `s` printed (which then works no more).
    fn with_link(s: &Server) -> Login {
        let stderr = s.stderr();
        let link = stderr
            .split("palisade: console at ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| s.fail("no console link on stderr"))
            .to_string();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(secs(30)))
            .build()
            .into();
        let login = agent.get(&link).call().unwrap();
        assert_eq!(login.status(), 303);
        let cookie = login.headers()["set-cookie"].to_str().unwrap().to_string();
        assert!(
            cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
            "{cookie}"
        );
        assert_eq!(
            agent.get(&link).call().unwrap().status(),
            401,
            "the link works once"
        );
        Login {
            base: link.split("/console/").next().unwrap().to_string(),
            cookie: cookie.split(';').next().unwrap().to_string(),
            agent,
        }
    }

    /// The page at `path` once it `holds` what is wanted.
    fn page_when(&self, path: &str, holds: &str) -> String {
        let get = || {
            (self.agent.get(&format!("{}{path}", self.base)))
                .header("Cookie", &self.cookie)
                .call()
                .unwrap()
                .into_body()
                .read_to_string()
                .unwrap()
        };
        poll_until(secs(20), get, |page| page.contains(holds))
    }

    /// Posts the form `body` to `path` from the console's own origin; the status.
    fn post(&self, path: &str, body: String) -> u16 {
        (self.agent.post(&format!("{}{path}", self.base)))
            .header("Cookie", &self.cookie)
            .header("Origin", &self.base)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .send(body)
            .unwrap()
            .status()
            .as_u16()
    }
}

/// The value of the form field `name` in `page`.
fn field(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let at = page.find(&marker).unwrap() + marker.len();
    page[at..].split('"').next().unwrap().to_string()
}

/// A stdio server with `--console`, serving fetch (asking) and misbehave (its wait as a task).
fn stdio_with_console(dir: &std::path::Path) -> Server {
    let config = config_file(
        dir,
        &format!(
            "[plugins.fetch]\npath = {}\nask = true\n\n{}\n\
             [plugins.misbehave.tools.until_cancelled]\ntask = \"optional\"\n",
            toml_str(&plugin_arg("fetch")),
            plugin_sections(&["misbehave"]),
        ),
    );
    Server::builder()
        .args([
            "--no-watch",
            "--config",
            &path_str(&config),
            "--console",
            "127.0.0.1:0",
        ])
        .start()
}

/// The laptop case without a browser: MCP on stdio from a client that cannot show questions,
/// `--console` beside it; the one-time link logs in, the question is answered with the login's
/// CSRF token, and the page arrives in the client. Without the token the answer is refused. A
/// task is cancelled from the console by a digest of its id.
#[test]
fn a_stdio_server_with_console_lets_the_link_holder_answer_a_question() {
    let dir = tempdir();
    let site = FakeApi::start(|_| Reply::html(PAGE));
    let mut s = stdio_with_console(dir.path());
    s.initialize(LATEST_VERSION);
    s.wait_ready();
    let console = Login::with_link(&s);

    let id = s.send_request(
        "tools/call",
        serde_json::json!({"name": "fetch_fetch", "arguments": {"url": site.url("/")}}),
    );
    let page = console.page_when("/console/grants", "its client cannot be asked");
    let (question, csrf) = (field(&page, "id"), field(&page, "csrf"));
    let answer = |csrf: &str| {
        console.post(
            "/console/grants/answer",
            format!("id={question}&decision=once&csrf={csrf}"),
        )
    };
    assert_eq!(answer("forged"), 403);
    assert_eq!(answer(&csrf), 303);
    let response = s.wait_response(&id, secs(30));
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("Hello from the console test"), "{response}");

    // A task is listed by a digest of its id (the owner's credential), and cancelled by it.
    let task = s.result(
        "tools/call",
        serde_json::json!({ "name": "misbehave_until_cancelled", "arguments": {}, "task": {} }),
    );
    let task_id = task["task"]["taskId"].as_str().unwrap().to_string();
    let calls = console.page_when("/console/calls", "name=\"task\"");
    assert!(
        !calls.contains(&task_id),
        "the task's id is not in the page"
    );
    let handle = field(&calls, "task");
    assert_eq!(
        console.post(
            "/console/tasks/cancel",
            format!("task={handle}&csrf={csrf}")
        ),
        303
    );
    let got = s.result("tasks/get", serde_json::json!({ "taskId": task_id }));
    assert_eq!(got["status"], "cancelled", "{got}");
}

/// A client that can show questions is asked too; when an operator answers first, the client
/// is told its question is no longer needed (`notifications/cancelled` for it), and the call
/// goes on with the operator's answer.
#[test]
fn an_operators_answer_withdraws_the_question_from_a_client_that_was_asked() {
    let dir = tempdir();
    let site = FakeApi::start(|_| Reply::html(PAGE));
    let mut s = stdio_with_console(dir.path());
    s.initialize_with_capabilities(LATEST_VERSION, serde_json::json!({ "elicitation": {} }));
    s.wait_ready();
    let console = Login::with_link(&s);
    let id = s.send_request(
        "tools/call",
        serde_json::json!({"name": "fetch_fetch", "arguments": {"url": site.url("/")}}),
    );
    let asked = s.wait_server_request("elicitation/create", secs(20));
    let page = console.page_when("/console/grants", "Allow once");
    assert!(
        !page.contains("its client cannot be asked"),
        "the client was asked"
    );
    let body = format!(
        "id={}&decision=once&csrf={}",
        field(&page, "id"),
        field(&page, "csrf")
    );
    assert_eq!(console.post("/console/grants/answer", body), 303);
    let response = s.wait_response(&id, secs(30));
    assert!(
        response["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Hello from the console test")),
        "{response}"
    );
    let withdrawn = s.wait_notification("notifications/cancelled", secs(10));
    assert_eq!(withdrawn["params"]["requestId"], asked["id"], "{withdrawn}");
}
