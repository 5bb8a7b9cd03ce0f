//! A real OpenID provider on 127.0.0.1: the certified `oidc-provider` package from npm, run by
//! tests/clients/oidc_provider.mjs under Node 22 (`./dev test` installs both). It issues
//! client-credentials JWT access tokens for resources on loopback (RFC 8707), signed with keys
//! the test makes, so that a test can rotate them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::*;

/// A running provider; stopped when dropped.
pub struct OidcProvider {
    child: Child,
    /// `http://127.0.0.1:PORT`, its issuer identifier.
    pub issuer: String,
    /// The port, to start another provider at the same address (a key rotation).
    pub port: u16,
    stderr: PathBuf,
}

fn script() -> PathBuf {
    repo_root().join("tests/clients/oidc_provider.mjs")
}

/// A new private signing key (a one-key JWKS file) named `kid`, for `alg` (RS256, ES256, ...).
pub fn oidc_key(dir: &Path, kid: &str, alg: &str) -> PathBuf {
    let key = run_checked(
        Command::new(node22())
            .arg(script())
            .args(["--generate-key", kid, "--alg", alg]),
        "node, generating a key",
    );
    let path = dir.join(format!("{kid}.json"));
    std::fs::write(&path, key).unwrap();
    path
}

impl OidcProvider {
    /// Starts the provider on `port` (0: any) with `keys` (tokens are signed with the first),
    /// the clients of `clients` (a JSON array, see the script), issuing tokens for any resource
    /// on 127.0.0.1; `extra` are more of the script's flags (`--ttl 1`, `--alg ES256`).
    pub fn start(dir: &Path, port: u16, keys: &[&Path], clients: &Value, extra: &[&str]) -> Self {
        let clients_file = dir.join(format!("clients-{}.json", unique()));
        std::fs::write(&clients_file, clients.to_string()).unwrap();
        let stderr = dir.join(format!("oidc-stderr-{}.txt", unique()));
        let mut command = Command::new(node22());
        command
            .arg(script())
            .arg("--clients")
            .arg(&clients_file)
            .args([
                "--resource",
                "http://127.0.0.1:*",
                "--port",
                &port.to_string(),
            ])
            .args(extra);
        for key in keys {
            command.arg("--keys").arg(key);
        }
        let mut child = command
            // A pipe: the provider exits when it closes, so a test that dies takes it along.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("start the OpenID provider (node)");
        let mut first = String::new();
        let stdout = child.stdout.take().unwrap();
        let _ = BufReader::new(stdout).read_line(&mut first);
        let Some(issuer) = first.trim().strip_prefix("listening ").map(str::to_string) else {
            let _ = child.kill();
            panic!(
                "the OpenID provider did not start: {first:?}\n{}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            );
        };
        let port = issuer.rsplit(':').next().unwrap().parse().unwrap();
        OidcProvider {
            child,
            issuer,
            port,
            stderr,
        }
    }

    /// An access token for `resource` with `scope` (space-separated), for the client
    /// `id`/`secret`; Err: the provider's status and answer.
    pub fn token(
        &self,
        id: &str,
        secret: &str,
        resource: &str,
        scope: &str,
    ) -> Result<String, (u16, String)> {
        let mut response = plain_agent()
            .post(&format!("{}/token", self.issuer))
            .send_form([
                ("grant_type", "client_credentials"),
                ("client_id", id),
                ("client_secret", secret),
                ("resource", resource),
                ("scope", scope),
            ])
            .expect("reach the OpenID provider");
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        if status != 200 {
            return Err((status, text));
        }
        let answer: Value = serde_json::from_str(&text).unwrap();
        Ok(answer["access_token"].as_str().unwrap().to_string())
    }

    /// Like [`token`](Self::token), failing the test when the provider refuses.
    pub fn must_token(&self, id: &str, secret: &str, resource: &str, scope: &str) -> String {
        self.token(id, secret, resource, scope)
            .unwrap_or_else(|e| panic!("the provider refused a token: {e:?}\n{}", self.logs()))
    }

    /// What it wrote on stderr.
    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Stops it now.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        self.stop();
        if std::thread::panicking() {
            eprintln!("--- OpenID provider at {}:\n{}", self.issuer, self.logs());
        }
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
