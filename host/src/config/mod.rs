//! `palisade.toml`: the operator's configuration, validated before anything is loaded.
//!
//! Every field is documented in docs/configuration.md. `file.rs` is the file as written (its
//! sections private to this module), `resolve/` checks it and fills in defaults (reporting
//! every problem through `problems.rs`, reading the machine through `io.rs`), `model.rs` is what
//! the rest of the server gets.

pub mod access;
mod cluster;
mod error;
mod file;
pub mod io;
mod keyring;
mod model;
mod oauth;
mod problems;
mod resolve;

pub use crate::sources::parse_sha256;
pub use access::{AccessConfig, Identity, OAuthSubject, Scope};
pub use cluster::{ClusterSettings, FailPolicy};
pub use error::{ConfigError, InvalidValue};
pub use io::{ConfigIo, SystemIo};
pub use model::*;
pub(crate) use oauth::check_transport;
pub use oauth::{ClaimRule, OAuthSettings};
pub use resolve::{check_plugin_name, parse_listen, parse_roots_at};

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("/tmp/palisade.toml"), &SystemIo)
    }

    #[test]
    fn console_operators_must_be_known_tokens_or_oauth_subjects() {
        let token = format!(
            "[[auth.tokens]]\nname = \"alice\"\nsha256 = \"{}\"\nscope = \"all\"\n",
            "a".repeat(64)
        );
        let config = parse(&format!(
            "{token}\n[console]\noperators = [\"alice\", \"alice\"]\nlisten = \"7777\"\n"
        ))
        .unwrap();
        assert_eq!(
            config.console.operators,
            vec![std::sync::Arc::<str>::from("alice")]
        );
        assert_eq!(
            config.console.listen,
            Some("127.0.0.1:7777".parse().unwrap())
        );
        assert_eq!(config.console.question_wait, DEFAULT_QUESTION_WAIT);
        assert!(config.console.enabled());
        assert!(!Config::default().console.enabled());

        let err = parse(&format!(
            "{token}\n[console]\noperators = [\"mallory\", \"oauth:sub\", \"\"]\n\
             question_wait_s = 0\nlisten = \"nowhere\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("5 problems"), "{err}");
        assert!(
            err.contains("line 7: [console] operator \"mallory\" is not the name"),
            "{err}"
        );
        assert!(err.contains("[auth.oauth] is not configured"), "{err}");
        assert!(err.contains("an operator is empty"), "{err}");
        assert!(err.contains("question_wait_s = 0 is out of range"), "{err}");
        assert!(err.contains("[console] listen = `nowhere`"), "{err}");

        let err =
            parse("[server.http]\nlisten = \"127.0.0.1:8080\"\n[console]\nlisten = \"8080\"\n")
                .unwrap_err()
                .to_string();
        assert!(
            err.contains("the console goes on an address of its own"),
            "{err}"
        );
    }

    #[test]
    fn unknown_field_names_file_line_and_field() {
        let err = parse("[plugins.hello]\npath = \"h.wasm\"\nfuel = 3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("/tmp/palisade.toml"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("unknown field `fuel`"), "{err}");
        assert!(err.contains("how to fix"), "{err}");
    }

    #[test]
    fn defaults_apply_and_paths_are_relative_to_the_file() {
        let config = parse("[plugins.hello]\npath = \"h.wasm\"\n").unwrap();
        assert_eq!(config.page_size, DEFAULT_PAGE_SIZE);
        let p = &config.plugins[0];
        assert_eq!(p.prefix, "hello");
        assert_eq!(p.spec.path, Path::new("/tmp/h.wasm"));
        assert_eq!(p.spec.roots, RootsAccess::None);
        assert_eq!(p.spec.limits, Limits::default());
    }

    #[test]
    fn zero_limit_is_refused_with_its_line() {
        let err = parse("[plugins.a]\npath = \"a.wasm\"\n[plugins.a.limits]\ntimeout_ms = 0\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 4"), "{err}");
        assert!(err.contains("limits.timeout_ms"), "{err}");
    }

    #[test]
    fn grants_env_network_and_tools_are_read() {
        let config = parse(
            r#"[plugins.a]
path = "a.wasm"
network = ["api.example.com", "http://127.0.0.1:8080"]
[plugins.a.env]
PLAIN = "v"
KEY = { from_host = "PATH" }
[plugins.a.tools.write]
confirm = true
annotations = { readOnlyHint = false }
[plugins.a.limits]
calls_per_minute = 10
output_kib = 1
"#,
        )
        .unwrap();
        let p = &config.plugins[0];
        assert_eq!(
            p.spec.env,
            [
                ("KEY".into(), std::env::var("PATH").unwrap()),
                ("PLAIN".into(), "v".into())
            ]
        );
        assert_eq!(p.spec.network.len(), 2);
        assert!(p.spec.network[1].allow_http);
        let tool = &p.tools["write"];
        assert!(tool.confirm);
        assert_eq!(tool.annotations.read_only_hint, Some(false));
        assert_eq!(p.spec.limits.calls_per_minute, 10);
        assert_eq!(p.spec.limits.output_bytes, 1024);
        assert_eq!(
            p.spec.limits.concurrent_calls,
            Limits::default().concurrent_calls
        );
    }

    #[test]
    fn tasks_settings_limits_and_a_tools_task_support_are_read() {
        let config = parse(
            r#"[plugins.a]
path = "a.wasm"
[plugins.a.tools.crawl]
task = "optional"
[plugins.a.limits]
task_timeout_s = 600
task_fuel = 5
running_tasks = 2
[tasks]
ttl_s = 120
poll_interval_ms = 250
running_per_client = 3
kept_mib = 8
"#,
        )
        .unwrap();
        let p = &config.plugins[0];
        assert_eq!(p.tools["crawl"].task, Some(TaskSupport::Optional));
        assert_eq!(
            (p.spec.limits.task_timeout_ms, p.spec.limits.task_fuel),
            (600_000, 5)
        );
        assert_eq!(p.spec.limits.running_tasks, 2);
        assert_eq!(
            config.tasks,
            TaskSettings {
                ttl: std::time::Duration::from_secs(120),
                poll_interval: std::time::Duration::from_millis(250),
                running_per_client: 3,
                kept_bytes: 8 << 20,
            }
        );
        assert_eq!(parse("").unwrap().tasks, TaskSettings::default());
    }

    #[test]
    fn bad_task_settings_are_refused_all_in_one_run() {
        let err = parse(
            r#"[plugins.a]
path = "a.wasm"
[plugins.a.limits]
task_timeout_s = 999999999
[tasks]
ttl_s = 5
poll_interval_ms = 0
"#,
        )
        .unwrap_err()
        .to_string();
        for needle in [
            "task_timeout_s",
            "ttl_s = 5",
            "poll_interval_ms = 0",
            "line 6",
            "line 7",
        ] {
            assert!(err.contains(needle), "{needle}: {err}");
        }
        let err =
            parse("[plugins.a]\npath = \"a.wasm\"\n[plugins.a.tools.t]\ntask = \"sometimes\"\n")
                .unwrap_err()
                .to_string();
        assert!(err.contains("unknown variant `sometimes`"), "{err}");
    }

    #[test]
    fn bad_grants_are_refused_with_the_field() {
        for (section, needle) in [
            ("network = [\"https://a.com/path\"]", "network"),
            ("network = [\"*\"]", "network"),
            (
                "[plugins.a.env]\nX = { from_host = \"PALISADE_SURELY_UNSET_VAR\" }",
                "PALISADE_SURELY_UNSET_VAR is not set",
            ),
            (
                "[plugins.a.env]\n\"A=B\" = \"x\"",
                "not a valid variable name",
            ),
            (
                "[plugins.a.limits]\nconcurrent_calls = 0",
                "limits.concurrent_calls",
            ),
            (
                "[plugins.a.tools.t]\nannotations = { readonly = true }",
                "unknown field",
            ),
            ("sha256 = \"abc\"", "sha256"),
        ] {
            let err = parse(&format!("[plugins.a]\npath = \"a.wasm\"\n{section}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{section}: {err}");
        }
    }

    #[test]
    fn oauth_settings_are_checked_and_map_to_scopes() {
        let base = "[auth.scopes]\nreaders = [\"hello\"]\n[auth.oauth]\n";
        let config = parse(&format!(
            "{base}issuer = \"https://id.example.com\"\nalgorithms = [\"ES256\"]\n[auth.oauth.scopes]\n\"tools:read\" = \"readers\"\n"
        ))
        .unwrap();
        assert!(config.access.tokens_required());
        let oauth = config.access.oauth.as_ref().unwrap();
        assert_eq!(oauth.algorithms, [jsonwebtoken::Algorithm::ES256]);
        assert!(oauth.scopes["tools:read"].allows_item("hello", "greet"));
        let map = "[auth.oauth.scopes]\n\"tools:read\" = \"readers\"\n";
        for (oauth, needle) in [
            (
                "issuer = \"http://id.example.com\"",
                "must be an https:// URL",
            ),
            ("issuer = \"id.example.com\"", "not a URL"),
            (
                "issuer = \"https://id.example.com\"\nresource = \"https://m.example.com/mcp#x\"",
                "no fragment",
            ),
            (
                "issuer = \"https://id.example.com\"\nalgorithms = [\"HS256\"]",
                "shared-secret",
            ),
            (
                "issuer = \"https://id.example.com\"\nalgorithms = [\"none\"]",
                "not an algorithm",
            ),
            (
                "issuer = \"https://id.example.com\"\nalgorithms = []",
                "empty",
            ),
            (
                "issuer = \"https://id.example.com\"\nclock_skew_s = 3600",
                "clock_skew_s",
            ),
        ] {
            let err = parse(&format!("{base}{oauth}\n{map}"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(needle), "{oauth}: {err}");
        }
        let err = parse(&format!("{base}issuer = \"https://id.example.com\"\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("grants nothing"), "{err}");
        let err = parse(&format!(
            "{base}issuer = \"https://id.example.com\"\nadvertised_scopes = [\"tools:write\"]\n{map}"
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("advertised_scopes"), "{err}");
        assert_eq!(oauth.advertised, ["tools:read"]);
        let err = parse(&format!(
            "{base}issuer = \"https://id.example.com\"\n[auth.oauth.scopes]\n\"x\" = \"writers\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("not a scope") && err.contains("readers"),
            "{err}"
        );
        // Plain HTTP to a provider on this machine is fine (development, tests).
        assert!(parse(&format!("{base}issuer = \"http://127.0.0.1:8080\"\n{map}")).is_ok());
    }

    #[test]
    fn auth_tokens_and_scopes_are_checked() {
        let hash = hex::encode(access::sha256("a-long-enough-token"));
        let config = parse(&format!(
            "[auth]\nstdio_scope = \"mine\"\n[auth.scopes]\nmine = [\"a/x_*\"]\n[[auth.tokens]]\nname = \"t\"\nsha256 = \"{hash}\"\nscope = \"all\"\n"
        ))
        .unwrap();
        assert!(config.access.tokens_required());
        assert_eq!(
            &*config
                .access
                .authenticate("a-long-enough-token")
                .unwrap()
                .client,
            "t"
        );
        assert!(config.access.stdio_scope.allows_item("a", "x_1"));
        assert!(!config.access.stdio_scope.allows_item("a", "y"));
        for (auth, needle) in [
            ("[auth]\nstdio_scope = \"nope\"", "not a scope"),
            ("[auth.scopes]\nall = [\"a\"]", "built in"),
            (
                "[[auth.tokens]]\nname = \"t\"\nscope = \"all\"",
                "exactly one of sha256, file or env",
            ),
            (
                "[[auth.tokens]]\nname = \"t\"\nscope = \"all\"\nsha256 = \"zz\"",
                "64 hex digits",
            ),
            (
                "[[auth.tokens]]\nname = \"t\"\nscope = \"all\"\nenv = \"PALISADE_SURELY_UNSET_VAR\"",
                "is not set",
            ),
        ] {
            let err = parse(auth).unwrap_err().to_string();
            assert!(err.contains(needle), "{auth}: {err}");
        }
    }

    #[test]
    fn errors_speak_of_numbers_values_and_syntax_as_people_do() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        let e = err("[plugins.a]\npath = \"a.wasm\"\n[plugins.a.limits]\ntimeout_ms = -5\n");
        assert!(e.contains("expected a whole number, 0 or more"), "{e}");
        assert!(!e.contains("u64"), "{e}");
        let e = err("[plugins.a]\npath = \"a.wasm\"\nroots = \"sometimes\"\n");
        assert!(
            e.contains("expected one of `none`, `read-only`, `read-write`"),
            "{e}"
        );
        assert!(e.contains("correct or remove the field"), "{e}");
        let e = err("[plugins.a\npath = \"a.wasm\"\n");
        assert!(e.contains("fix the TOML syntax at that line"), "{e}");
        assert!(!e.contains("correct or remove the field"), "{e}");
    }

    #[test]
    fn a_dirs_error_names_the_line_of_its_own_entry() {
        let err = parse(
            "[plugins.a]\npath = \"a.wasm\"\n\n[[plugins.a.dirs]]\nhost = \".\"\nguest = \"/a\"\n\n\
             [[plugins.a.dirs]]\nhost = \"surely-not-here\"\nguest = \"/b\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(", line 9: [plugins.a] dirs[1].host = \"surely-not-here\""),
            "{err}"
        );
        let err = parse(
            "[plugins.a]\npath = \"a.wasm\"\n[[plugins.a.dirs]]\nhost = \".\"\nguest = \"/a\"\n\
             [[plugins.a.dirs]]\nhost = \".\"\nguest = \"/a\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(", line 8: [plugins.a] dirs[1].guest"), "{err}");
    }

    #[test]
    fn relative_guest_path_is_refused() {
        let err = parse(
            "[plugins.a]\npath = \"a.wasm\"\n[[plugins.a.dirs]]\nhost = \".\"\nguest = \"data\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("absolute path"), "{err}");
    }

    #[test]
    fn reserved_or_repeated_guest_paths_are_refused() {
        let dirs = |a: &str, b: &str| {
            format!(
                "[plugins.a]\npath = \"a.wasm\"\n[[plugins.a.dirs]]\nhost = \".\"\nguest = \"{a}\"\n[[plugins.a.dirs]]\nhost = \".\"\nguest = \"{b}\"\n"
            )
        };
        let err = parse(&dirs("/data", "/data/")).unwrap_err().to_string();
        assert!(err.contains("granted twice"), "{err}");
        let err = parse(&dirs("/data", "/roots/x")).unwrap_err().to_string();
        assert!(err.contains("reserved"), "{err}");
        assert!(parse(&dirs("/data", "/more")).is_ok());
    }

    #[test]
    fn bad_roots_value_is_explained() {
        let err = parse("[plugins.a]\npath = \"a.wasm\"\nroots = \"all\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3"), "{err}");
        assert!(err.contains("read-only"), "{err}");
    }

    #[test]
    fn roots_at_takes_host_paths_or_roots() {
        assert_eq!(parse("").unwrap().roots_at, RootsAt::HostPaths);
        let under = parse("[server]\nroots_at = \"/roots\"\n").unwrap();
        assert_eq!(under.roots_at, RootsAt::UnderRoots);
        let err = parse("[server]\nroots_at = \"/mnt\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2"), "{err}");
        assert!(
            err.contains("host-paths") && err.contains("/roots"),
            "{err}"
        );
    }

    #[test]
    fn every_problem_of_a_file_is_told_in_one_run_with_its_line() {
        let io = io::MemoryIo::default();
        let text = "[server]\npage_size = 0\n\n[plugins.a]\npath = \"a.wasm\"\n\
                    [[plugins.a.dirs]]\nhost = \"missing\"\nguest = \"/data\"\n\n\
                    [plugins.b]\npath = \"b.wasm\"\nprefix = \"not ok\"\n\
                    [plugins.b.limits]\ntimeout_ms = 0\n";
        let err = Config::parse(text, Path::new("/etc/p.toml"), &io)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("4 problems in /etc/p.toml:"), "{err}");
        for expected in [
            "/etc/p.toml, line 2: [server] page_size = 0 is out of range",
            "/etc/p.toml, line 7: [plugins.a] dirs[0].host = \"missing\": /etc/missing is not a directory",
            "/etc/p.toml, line 12: [plugins.b] prefix = \"not ok\" is not a valid prefix",
            "/etc/p.toml, line 14: [plugins.b] limits.timeout_ms = 0 would refuse every call",
        ] {
            assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
        }
    }

    #[test]
    fn the_machine_is_read_through_the_io_only() {
        // No scratch directory, no environment, no D-Bus: the io says what exists.
        let io = io::MemoryIo {
            dirs: vec!["/srv/data".into()],
            env: [("API_KEY".to_string(), "k-123456".to_string())].into(),
            keyring: [("palisade/db".to_string(), "hunter2-long".to_string())].into(),
            ..io::MemoryIo::default()
        };
        let text = r#"[plugins.a]
path = "a.wasm"
[[plugins.a.dirs]]
host = "data"
guest = "/data"
[plugins.a.env]
KEY = { from_host = "API_KEY" }
[plugins.a.secrets]
DB = { keyring = "palisade/db" }
"#;
        let config = Config::parse(text, Path::new("/srv/p.toml"), &io).unwrap();
        let spec = &config.plugins[0].spec;
        assert_eq!(spec.dirs[0].host, Path::new("/srv/data"));
        assert_eq!(spec.env, vec![("KEY".into(), "k-123456".into())]);
        assert_eq!(spec.secrets[0].value.expose(), "hunter2-long");
        let missing = Config::parse(
            &text.replace("palisade/db", "palisade/other"),
            Path::new("/srv/p.toml"),
            &io,
        )
        .unwrap_err()
        .to_string();
        assert!(
            missing.contains("line 9: [plugins.a] secrets DB: no keyring entry palisade/other"),
            "{missing}"
        );
    }

    /// Each limit's default as the configuration writes it (MiB, KiB), by field name.
    fn default_limits() -> Vec<(&'static str, u64)> {
        let d = Limits::default();
        vec![
            ("fuel_per_call", d.fuel_per_call),
            ("timeout_ms", d.timeout_ms),
            ("memory_mib", d.memory_bytes >> 20),
            ("output_kib", d.output_bytes >> 10),
            ("fuel_per_second", d.fuel_per_second),
            ("fuel_burst", d.fuel_burst),
            ("calls_per_minute", d.calls_per_minute),
            ("calls_per_minute_per_client", d.calls_per_minute_per_client),
            ("concurrent_calls", d.concurrent_calls),
            ("questions_per_call", d.questions_per_call),
            ("task_timeout_s", d.task_timeout_ms / 1000),
            ("task_fuel", d.task_fuel),
            ("running_tasks", d.running_tasks),
        ]
    }

    /// A limit's default lives in one place (`Limits::default` in the runtime's spec.rs); the
    /// documents that show it are checked here, so changing it fails this test at each one.
    #[test]
    fn the_documented_defaults_of_the_limits_are_the_defaults() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        let read = |name: &str| std::fs::read_to_string(docs.join(name)).unwrap();
        let configuration = read("configuration.md");
        let security = read("security.md");
        let number_after = |text: &str, prefix: &str| -> Option<u64> {
            let rest = text.split(prefix).nth(1)?;
            rest.trim_start()
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        };
        for (field, default) in default_limits() {
            let written = number_after(&configuration, &format!("\n{field} = "));
            assert_eq!(
                written,
                Some(default),
                "docs/configuration.md [plugins.files.limits] {field}"
            );
            let tabled = number_after(&security, &format!("| `{field}` | "));
            if field != "questions_per_call" {
                assert_eq!(
                    tabled,
                    Some(default),
                    "docs/security.md, Limits table: {field}"
                );
            }
            let inspected = number_after(&security, &format!(" {field}="));
            if let Some(inspected) = inspected {
                assert_eq!(
                    inspected, default,
                    "docs/security.md, inspect sample: {field}"
                );
            }
        }
    }
}
