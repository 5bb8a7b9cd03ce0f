//! Real services the tests start on 127.0.0.1, each in its own temporary directory with a
//! generated configuration, stopped when dropped: nginx (a load balancer, a file server) and
//! the CNCF distribution registry (Debian's `docker-registry`). `./dev test` installs both.

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::*;

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The first of `candidates` that is a file, else `name` on PATH; panics naming the package.
fn find_program(candidates: &[&str], name: &str, package: &str) -> PathBuf {
    for candidate in candidates {
        if Path::new(candidate).is_file() {
            return candidate.into();
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "{name} not found (looked in {candidates:?} and on PATH): run ./dev test, which installs \
         it (Debian package {package})"
    );
}

/// A program the test started, listening at `addr`; killed when dropped, its logs printed when
/// the test failed.
pub struct Service {
    name: &'static str,
    child: Child,
    /// Its temporary directory: configuration, data, logs.
    pub dir: tempfile::TempDir,
    /// `127.0.0.1:PORT`
    pub addr: String,
    logs: Vec<&'static str>,
}

impl Service {
    /// Starts `command` (configured by `configure`, given the directory and the address) until
    /// it listens, retrying on another port when the one picked was taken meanwhile.
    fn start(
        name: &'static str,
        logs: Vec<&'static str>,
        configure: &dyn Fn(&Path, &str) -> Command,
    ) -> Service {
        let mut last_error = String::new();
        for _ in 0..5 {
            let dir = tempdir();
            let addr = format!("127.0.0.1:{}", free_port());
            let mut command = configure(dir.path(), &addr);
            let stderr = File::create(dir.path().join("stderr.txt")).unwrap();
            let mut child = command
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
            let deadline = Instant::now() + secs(30);
            loop {
                if TcpStream::connect(&addr).is_ok() {
                    return Service {
                        name,
                        child,
                        dir,
                        addr,
                        logs,
                    };
                }
                if let Ok(Some(status)) = child.try_wait() {
                    let mut text = format!("{name} exited ({status}):\n");
                    for log in logs.iter().chain(&["stderr.txt"]) {
                        text.push_str(
                            &std::fs::read_to_string(dir.path().join(log)).unwrap_or_default(),
                        );
                    }
                    last_error = text;
                    break;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    last_error = format!("{name} did not listen within 30 s");
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if !last_error.contains("in use") {
                break;
            }
        }
        panic!("cannot start {name}: {last_error}");
    }

    /// Every log file of the service, for a failure message.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        for log in self.logs.iter().chain(&["stderr.txt"]) {
            let body = std::fs::read_to_string(self.dir.path().join(log)).unwrap_or_default();
            text.push_str(&format!(
                "--- {} at {}: {log}\n{body}\n",
                self.name, self.addr
            ));
        }
        text
    }

    /// Stops it now (a registry that is down).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
        if std::thread::panicking() {
            eprintln!("{}", self.logs());
        }
    }
}

/// nginx with `http_body` inside its `http {}` block (where `{addr}` is where it listens).
pub fn start_nginx(http_body: &dyn Fn(&str) -> String) -> Service {
    let bin = find_program(
        &["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"],
        "nginx",
        "nginx-light",
    );
    // Temp-path directives exist only for the modules built in.
    let built = Command::new(&bin)
        .arg("-V")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} -V: {e}", bin.display()));
    let built = String::from_utf8_lossy(&built.stderr).into_owned();
    Service::start("nginx", vec!["error.log", "access.log"], &|dir, addr| {
        let at = |name: &str| toml_str(&path_str(&dir.join(name)));
        let mut temp_paths = format!(
            "    client_body_temp_path {};\n    proxy_temp_path {};\n",
            at("client_body"),
            at("proxy")
        );
        for module in ["fastcgi", "uwsgi", "scgi"] {
            if !built.contains(&format!("--without-http_{module}_module")) {
                temp_paths.push_str(&format!("    {module}_temp_path {};\n", at(module)));
            }
        }
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {pid};\n\
             error_log {error_log} info;\nevents {{\n    worker_connections 256;\n}}\n\
             http {{\n{temp_paths}{body}\n}}\n",
            pid = at("nginx.pid"),
            error_log = at("error.log"),
            body = http_body(addr),
        );
        let conf_path = dir.join("nginx.conf");
        write_file(&conf_path, conf);
        let mut command = Command::new(&bin);
        command
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(&conf_path);
        command
    })
}

/// The CNCF distribution registry, storing in its directory; with `htpasswd` (a line
/// `user:bcrypt-hash`), every request needs HTTP basic authentication.
pub fn start_registry(htpasswd: Option<&str>) -> Service {
    let bin = find_program(
        &["/usr/bin/docker-registry"],
        "docker-registry",
        "docker-registry",
    );
    Service::start("docker-registry", vec![], &|dir, addr| {
        let auth = match htpasswd {
            Some(line) => {
                write_file(dir.join("htpasswd"), format!("{line}\n"));
                format!(
                    "auth:\n  htpasswd:\n    realm: palisade-tests\n    path: {}\n",
                    dir.join("htpasswd").display()
                )
            }
            None => String::new(),
        };
        let conf = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
             {auth}http:\n  addr: {addr}\n",
            dir.join("data").display()
        );
        write_file(dir.join("config.yml"), conf);
        let mut command = Command::new(&bin);
        command.arg("serve").arg(dir.join("config.yml"));
        command
    })
}

/// A one-connection-at-a-time HTTP server on loopback answering every request with `body`;
/// returns its port. It lives as long as the test process.
pub fn local_http_server(body: &'static str) -> u16 {
    use std::io::{BufRead as _, BufReader, Write as _};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}
