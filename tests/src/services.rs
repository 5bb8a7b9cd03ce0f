//! Real services the tests start, each in its own temporary directory with a generated
//! configuration, stopped when dropped: nginx (a load balancer, a file server), the CNCF
//! distribution registry (Debian's `docker-registry`), Prometheus and Redis on 127.0.0.1, and a
//! D-Bus bus with GNOME Keyring on a socket. `./dev test` installs them.

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
            match spawn_listening(name, &logs, dir.path(), &addr, configure) {
                Ok(child) => {
                    return Service {
                        name,
                        child,
                        dir,
                        addr,
                        logs,
                    };
                }
                Err(why) => last_error = why,
            }
            if !last_error.contains("in use") {
                break;
            }
        }
        panic!("cannot start {name}: {last_error}");
    }

    /// Starts it again, configured by `configure`, in the same directory at the same address
    /// (a service that restarts).
    pub fn restart(&mut self, configure: &dyn Fn(&Path, &str) -> Command) {
        self.stop();
        self.child = spawn_listening(
            self.name,
            &self.logs,
            self.dir.path(),
            &self.addr,
            configure,
        )
        .unwrap_or_else(|why| panic!("cannot restart {}: {why}", self.name));
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

    /// Sends it `signal` (`STOP` freezes it: it accepts connections and never answers;
    /// `CONT` thaws it).
    pub fn signal(&self, signal: &str) {
        send_signal(self.child.id(), signal);
    }

    /// Stops it now (a registry that is down).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `configure`'s command and waits until it listens at `addr`: the child, or why not.
fn spawn_listening(
    name: &str,
    logs: &[&str],
    dir: &Path,
    addr: &str,
    configure: &dyn Fn(&Path, &str) -> Command,
) -> Result<Child, String> {
    let mut command = configure(dir, addr);
    let stderr = File::create(dir.join("stderr.txt")).unwrap();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
    let deadline = Instant::now() + secs(30);
    loop {
        if TcpStream::connect(addr).is_ok() {
            return Ok(child);
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut text = format!("{name} exited ({status}):\n");
            for log in logs.iter().chain(&["stderr.txt"]) {
                text.push_str(&std::fs::read_to_string(dir.join(log)).unwrap_or_default());
            }
            return Err(text);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{name} did not listen within 30 s"));
        }
        std::thread::sleep(Duration::from_millis(50));
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
             error_log {error_log} info;\nevents {{\n    worker_connections 4096;\n}}\n\
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

/// Prometheus (Debian's `prometheus`) scraping `target` (`127.0.0.1:PORT`, path `/metrics`)
/// every second; it scrapes first about 5 s after it starts.
pub fn start_prometheus(target: &str) -> Service {
    let bin = find_program(&["/usr/bin/prometheus"], "prometheus", "prometheus");
    Service::start("prometheus", vec![], &|dir, addr| {
        let config = dir.join("prometheus.yml");
        write_file(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: palisade\n    metrics_path: /metrics\n    \
                 static_configs:\n      - targets: [\"{target}\"]\n"
            ),
        );
        let mut command = Command::new(&bin);
        command
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"));
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

/// A private D-Bus session bus with GNOME Keyring's Secret Service on it, its login keyring
/// unlocked, all in a temporary directory (Debian's `dbus-daemon`, `gnome-keyring` and
/// `libsecret-tools`, which `./dev test` installs). Stopped when dropped.
pub struct Keyring {
    bus: Child,
    daemon: Option<Child>,
    dir: tempfile::TempDir,
    /// `DBUS_SESSION_BUS_ADDRESS` for the programs that use it.
    pub address: String,
}

impl Keyring {
    /// The bus and an unlocked keyring on it.
    pub fn start() -> Keyring {
        let mut keyring = Keyring::bus_only();
        let daemon = find_program(
            &["/usr/bin/gnome-keyring-daemon"],
            "gnome-keyring-daemon",
            "gnome-keyring",
        );
        let stderr = File::create(keyring.dir.path().join("keyring.txt")).unwrap();
        let mut child = keyring
            .command(&daemon)
            .args(["--unlock", "--components=secrets", "--foreground"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("starting gnome-keyring-daemon");
        // The login keyring's password, on stdin: it is created (or unlocked) with it.
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"palisade-tests").unwrap();
        drop(child.stdin.take());
        keyring.daemon = Some(child);
        // Ready once it owns the Secret Service name and stores an entry.
        let deadline = Instant::now() + secs(30);
        while !keyring.try_store("palisade-tests", "ready", "yes") {
            assert!(
                Instant::now() < deadline,
                "the keyring did not come up within 30 s:\n{}",
                keyring.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        keyring
    }

    /// A bus with no keyring on it: nothing answers for the Secret Service.
    pub fn bus_only() -> Keyring {
        let dir = tempdir();
        let socket = dir.path().join("bus");
        let config = dir.path().join("bus.conf");
        std::fs::write(
            &config,
            format!(
                r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
                socket.display()
            ),
        )
        .unwrap();
        let program = find_program(&["/usr/bin/dbus-daemon"], "dbus-daemon", "dbus-daemon");
        let stderr = File::create(dir.path().join("bus.txt")).unwrap();
        let bus = Command::new(program)
            .arg(format!("--config-file={}", config.display()))
            .arg("--nofork")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("starting dbus-daemon");
        let deadline = Instant::now() + secs(30);
        while !socket.exists() {
            assert!(Instant::now() < deadline, "dbus-daemon did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Keyring {
            bus,
            daemon: None,
            address: format!("unix:path={}", socket.display()),
            dir,
        }
    }

    /// `program` with this bus, and the keyring's files in the temporary directory rather than
    /// the user's own.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let at = |sub: &str| self.dir.path().join(sub);
        let mut command = Command::new(program);
        command
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .env("XDG_DATA_HOME", at("data"))
            .env("XDG_RUNTIME_DIR", at(""))
            .env("HOME", at(""));
        command
    }

    /// Stores `value` under `service` and `user`, as a person would with `secret-tool store`.
    pub fn store(&self, service: &str, user: &str, value: &str) {
        assert!(
            self.try_store(service, user, value),
            "secret-tool store failed:\n{}",
            self.logs()
        );
    }

    fn try_store(&self, service: &str, user: &str, value: &str) -> bool {
        let tool = find_program(&["/usr/bin/secret-tool"], "secret-tool", "libsecret-tools");
        let mut child = self
            .command(tool)
            .args(["store", "--label=palisade test", "service", service])
            .args(["username", user])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting secret-tool");
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), value.as_bytes()).unwrap();
        drop(child.stdin.take());
        child.wait().is_ok_and(|s| s.success())
    }

    /// The bus's and the keyring's logs, for a failure message.
    pub fn logs(&self) -> String {
        ["bus.txt", "keyring.txt"]
            .iter()
            .map(|f| {
                let body = std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
                format!("--- {f}\n{body}\n")
            })
            .collect()
    }
}

impl Drop for Keyring {
    fn drop(&mut self) {
        for child in self.daemon.iter_mut().chain(std::iter::once(&mut self.bus)) {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("{}", self.logs());
        }
    }
}

/// A private nginx balancing `/` over upstreams round robin, with no affinity; stopped when
/// dropped. Every answer carries `X-Upstream` (the server that gave it), and the access log
/// records it.
pub struct Nginx {
    service: Service,
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
}

impl Nginx {
    /// nginx in front of `upstreams` (`127.0.0.1:PORT` each).
    pub fn start(upstreams: &[&str]) -> Nginx {
        let servers: String = upstreams
            .iter()
            .map(|u| format!("        server {u};\n"))
            .collect();
        // Host stays the balancer's own loopback address, which Palisade's DNS-rebinding
        // check accepts; SSE passes through unbuffered.
        let service = start_nginx(&|addr| {
            format!(
                r#"    log_format upstreams '$request_method $status $upstream_addr';
    access_log access.log upstreams;
    upstream palisade {{
{servers}    }}
    server {{
        listen {addr};
        location / {{
            proxy_pass http://palisade;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 600s;
            add_header X-Upstream $upstream_addr always;
        }}
    }}"#
            )
        });
        Nginx {
            url: format!("http://{}/mcp", service.addr),
            service,
        }
    }

    /// The upstream address of each request logged so far (`-` when none was reached).
    pub fn access_log_upstreams(&self) -> Vec<String> {
        std::fs::read_to_string(self.service.dir.path().join("access.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.rsplit(' ').next().map(String::from))
            .collect()
    }

    /// Its logs, for a failure message.
    pub fn logs(&self) -> String {
        self.service.logs()
    }
}

/// How a test's Redis is set up.
#[derive(Debug, Clone, Default)]
pub struct RedisOptions {
    /// `requirepass`: clients must give this password.
    pub password: Option<String>,
    /// TLS only, with this certificate and key (PEM files), instead of plain TCP.
    pub tls: Option<(PathBuf, PathBuf)>,
}

/// Debian's `redis-server` on 127.0.0.1, keeping nothing on disk; stopped when dropped.
pub struct Redis {
    /// The running server.
    pub service: Service,
    options: RedisOptions,
}

impl Redis {
    /// A Redis set up as `options` says.
    pub fn start(options: RedisOptions) -> Redis {
        let service = Service::start("redis", vec![], &|dir, addr| {
            redis_command(dir, addr, &options)
        });
        Redis { service, options }
    }

    /// `redis://127.0.0.1:PORT/0`, or `rediss://` with TLS.
    pub fn url(&self) -> String {
        let scheme = if self.options.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://{}/0", self.service.addr)
    }

    /// Stops it (Redis is down).
    pub fn stop(&mut self) {
        self.service.stop();
    }

    /// Starts it again at the same address, empty (Redis restarted).
    pub fn restart(&mut self) {
        let options = self.options.clone();
        self.service
            .restart(&|dir, addr| redis_command(dir, addr, &options));
    }

    /// Runs `redis-cli` with `args` against it; its output.
    pub fn cli(&self, args: &[&str]) -> String {
        let (host, port) = self.service.addr.split_once(':').unwrap();
        let mut command = Command::new("redis-cli");
        command.args(["-h", host, "-p", port]);
        if let Some(password) = &self.options.password {
            command.env("REDISCLI_AUTH", password);
        }
        assert!(
            self.options.tls.is_none(),
            "redis-cli here speaks plain TCP"
        );
        let out = command
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run redis-cli: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

fn redis_command(dir: &Path, addr: &str, options: &RedisOptions) -> Command {
    let bin = find_program(&["/usr/bin/redis-server"], "redis-server", "redis-server");
    let (host, port) = addr.split_once(':').unwrap();
    let mut command = Command::new(bin);
    command
        .args(["--bind", host, "--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(dir)
        .args(["--logfile", "redis.log"]);
    match &options.tls {
        Some((cert, key)) => {
            command
                .args([
                    "--port",
                    "0",
                    "--tls-port",
                    port,
                    "--tls-auth-clients",
                    "no",
                ])
                .arg("--tls-cert-file")
                .arg(cert)
                .arg("--tls-key-file")
                .arg(key);
        }
        None => {
            command.args(["--port", port]);
        }
    }
    if let Some(password) = &options.password {
        command.args(["--requirepass", password]);
    }
    command
}

/// Runs `command` to its end and returns what it printed; fails the test, with `what` and
/// the command's stderr, if it cannot run or fails.
pub fn run_checked(command: &mut Command, what: &str) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `openssl` with `args` in `dir`; fails the test if it fails.
pub fn openssl_in(dir: &Path, args: &[&str]) {
    run_checked(
        Command::new("openssl").args(args).current_dir(dir),
        &format!("openssl {args:?}"),
    );
}

/// A certificate authority and a certificate it signed for 127.0.0.1, made by openssl in
/// `dir`: (CA certificate, server certificate, server key), PEM files.
pub fn loopback_tls_certificate(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let at = |name: &str| dir.join(name);
    let openssl = |args: &[&str]| openssl_in(dir, args);
    // A P-256 key and a request for `subject`, with `extra` arguments (-x509: self-signed).
    let new_key = |key: &str, out: &str, subject: &str, extra: &[&str]| {
        let mut args = vec!["req"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            key,
            "-out",
            out,
            "-subj",
            subject,
        ]);
        openssl(&args);
    };
    new_key(
        "ca.key",
        "ca.pem",
        "/CN=palisade test CA",
        &["-x509", "-days", "2"],
    );
    new_key("server.key", "server.csr", "/CN=127.0.0.1", &[]);
    write_file(
        at("server.ext"),
        "subjectAltName = IP:127.0.0.1\nbasicConstraints = CA:FALSE\n\
         keyUsage = digitalSignature\nextendedKeyUsage = serverAuth\n",
    );
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
    (at("ca.pem"), at("server.pem"), at("server.key"))
}
