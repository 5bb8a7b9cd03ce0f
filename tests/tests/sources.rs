//! Plugins from registries and URLs, end to end: `palisade publish`, `add`, `update` and `serve`
//! against the real CNCF distribution registry (Debian's `docker-registry`) and nginx on
//! 127.0.0.1, with skopeo as an independent OCI client. `./dev test` installs all three.

use std::path::Path;
use std::process::Command;

use palisade_tests::*;
use serde_json::{Value, json};
use sha2::Digest as _;

/// A directory with `palisade.toml` (its store inside), where the commands run.
struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        let dir = tempdir();
        write_file(
            dir.path().join("palisade.toml"),
            "# my plugins\n[sources]\nstore_dir = \"store\"\n",
        );
        Workspace { dir }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    /// `palisade ARGS` here, with `stdin` as the operator's answers.
    fn run(&self, args: &[&str], stdin: &str) -> RunOutput {
        self.run_env(args, stdin, &[])
    }

    fn run_env(&self, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> RunOutput {
        let cache = path_str(&shared_cache_dir());
        let mut full: Vec<&str> = args.to_vec();
        if matches!(args[0], "add" | "update" | "publish") {
            full.extend(["--cache-dir", &cache]);
        }
        run_palisade_with(&full, self.dir.path(), env, stdin, secs(180))
    }

    fn ok(&self, args: &[&str], stdin: &str) -> RunOutput {
        let out = self.run(args, stdin);
        assert!(out.success(), "palisade {args:?} failed:\n{out}");
        out
    }

    fn lock(&self) -> toml::Table {
        toml::from_str(&self.read("palisade.lock")).unwrap_or_default()
    }

    fn locked(&self, plugin: &str, field: &str) -> String {
        self.lock()["plugins"][plugin][field]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn serve(&self) -> Server {
        Server::builder()
            .args(["--config", &path_str(&self.path("palisade.toml"))])
            .start()
    }

    fn serve_refused(&self, needle: &str) -> RunOutput {
        assert_serve_refused(
            &["--config", &path_str(&self.path("palisade.toml"))],
            needle,
        )
    }
}

/// hello.wasm with its `greet` description changed (same length, so still a valid component):
/// what a rug pull pushes under the same tag.
fn hello_with_new_description(dir: &Path) -> String {
    let mut wasm = std::fs::read(plugin_path("hello")).unwrap();
    let (old, new) = (b"Say hello to someone", b"Say HOLA! to someone");
    let at = wasm
        .windows(old.len())
        .position(|w| w == old)
        .expect("hello.wasm describes greet");
    wasm[at..at + old.len()].copy_from_slice(new);
    let path = dir.join("hello-v2.wasm");
    write_file(&path, wasm);
    path_str(&path)
}

fn skopeo(args: &[&str]) -> String {
    run_checked(
        Command::new("skopeo").args(args),
        &format!("skopeo {args:?} (./dev test installs it)"),
    )
}

fn greet(server: &mut Server) -> String {
    server.initialize(LATEST_VERSION);
    tool_text(&server.call_tool("hello_greet", json!({"name": "registry"})))
}

#[test]
fn publish_add_serve_then_a_moved_tag_is_refused_until_update_is_accepted() {
    let registry = start_registry(None);
    let ws = Workspace::new();
    let reference = format!("oci://{}/tools/hello:1.0", registry.addr);
    let out = ws.ok(&["publish", &plugin_arg("hello"), &reference], "");
    assert!(out.stdout.contains("@sha256:"), "{out}");

    // skopeo, an independent client, sees a CNCF Wasm artifact.
    let raw = skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{}/tools/hello:1.0", registry.addr),
    ]);
    let manifest: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(
        manifest["layers"].as_array().unwrap().len(),
        1,
        "{manifest}"
    );
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    let digest = format!("sha256:{:x}", sha2::Sha256::digest(raw.as_bytes()));

    // Saying no writes nothing.
    let out = ws.ok(&["add", &reference], "n\n");
    assert!(out.stdout.contains("Nothing written"), "{out}");
    assert!(!ws.read("palisade.toml").contains("[plugins.hello]"));
    assert!(!ws.path("palisade.lock").exists());

    // Saying yes, after seeing what it exports and imports.
    let out = ws.ok(&["add", &reference], "y\n");
    for needle in [
        "greet: Say hello to someone",
        "imports (and what the sandbox gives for each)",
        "It is granted nothing",
        "[plugins.hello]",
    ] {
        assert!(out.stdout.contains(needle), "{needle}:\n{out}");
    }
    let config = ws.read("palisade.toml");
    assert!(config.starts_with("# my plugins"), "{config}");
    assert!(
        config.contains(&format!("source = \"{reference}\"")),
        "{config}"
    );
    assert_eq!(ws.locked("hello", "source"), reference);
    assert_eq!(ws.locked("hello", "digest"), digest);
    let sha = ws.locked("hello", "sha256");
    let wasm = std::fs::read(plugin_path("hello")).unwrap();
    assert_eq!(sha, format!("{:x}", sha2::Sha256::digest(&wasm)));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(ws.path("store"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "the store is private");
    }

    let mut server = ws.serve();
    assert!(greet(&mut server).contains("registry"));
    drop(server);
    let out = ws.ok(&["inspect", "hello", "--config", "palisade.toml"], "");
    assert!(out.stdout.contains("(matches the pinned sha256)"), "{out}");

    // Someone pushes another component under the same tag.
    let v2 = hello_with_new_description(ws.dir.path());
    ws.ok(&["publish", &v2, &reference], "");
    let refused = ws.serve_refused("the tag was moved");
    assert!(
        refused.stderr.contains("palisade update hello"),
        "{refused}"
    );

    // `update` shows the difference; no keeps the lock as it was.
    let out = ws.ok(&["update", "hello"], "n\n");
    assert!(
        out.stdout.contains("tool greet: definition changed"),
        "{out}"
    );
    assert!(out.stdout.contains("Say HOLA! to someone"), "{out}");
    assert_eq!(ws.locked("hello", "digest"), digest);
    ws.serve_refused("the tag was moved");

    ws.ok(&["update", "hello"], "y\n");
    assert_ne!(ws.locked("hello", "digest"), digest);
    let mut server = ws.serve();
    server.initialize(LATEST_VERSION);
    let (tools, _) = server.list_all_tools();
    let greet = tools.iter().find(|t| t["name"] == "hello_greet").unwrap();
    assert_eq!(greet["description"], "Say HOLA! to someone");

    let out = ws.ok(&["update"], "");
    assert!(out.stdout.contains("hello: up to date"), "{out}");
    ws.ok(&["remove", "hello"], "");
    assert!(!ws.read("palisade.toml").contains("[plugins.hello]"));
    assert!(ws.lock()["plugins"].as_table().is_none_or(|t| t.is_empty()));
}

/// Writes an OCI image layout (what skopeo copies from) with one manifest tagged `tag`.
fn oci_layout(dir: &Path, config: (&str, &[u8]), layers: &[(&str, &[u8])], tag: &str) {
    let blob = |bytes: &[u8]| {
        let digest = format!("{:x}", sha2::Sha256::digest(bytes));
        write_file(dir.join("blobs/sha256").join(&digest), bytes);
        json!({"digest": format!("sha256:{digest}"), "size": bytes.len()})
    };
    let descriptor = |media: &str, bytes: &[u8]| {
        let mut d = blob(bytes);
        d["mediaType"] = json!(media);
        d
    };
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": descriptor(config.0, config.1),
        "layers": layers.iter().map(|(m, b)| descriptor(m, b)).collect::<Vec<_>>(),
    }))
    .unwrap();
    let mut entry = descriptor("application/vnd.oci.image.manifest.v1+json", &manifest);
    entry["annotations"] = json!({"org.opencontainers.image.ref.name": tag});
    write_file(
        dir.join("index.json"),
        serde_json::to_vec(&json!({"schemaVersion": 2, "manifests": [entry]})).unwrap(),
    );
    write_file(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#);
}

fn tar_gz(files: &[(&str, &[u8])]) -> (Vec<u8>, Vec<u8>) {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, data) in files {
        let mut header = tar::Header::new_ustar();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, name, *data).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar).unwrap();
    (tar, gz.finish().unwrap())
}

/// An image config for layers whose uncompressed tars are `tars`.
fn image_config(tars: &[&[u8]]) -> Vec<u8> {
    let diff_ids: Vec<String> = tars
        .iter()
        .map(|t| format!("sha256:{:x}", sha2::Sha256::digest(t)))
        .collect();
    serde_json::to_vec(&json!({
        "architecture": "amd64",
        "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
    }))
    .unwrap()
}

#[test]
fn skopeo_pushed_artifacts_and_single_layer_images_are_served_and_odd_ones_refused() {
    let registry = start_registry(None);
    let ws = Workspace::new();
    let wasm = std::fs::read(plugin_path("hello")).unwrap();
    let push = |name: &str, config: (&str, &[u8]), layers: &[(&str, &[u8])]| {
        let layout = ws.path(&format!("layout-{name}"));
        oci_layout(&layout, config, layers, "1");
        skopeo(&[
            "copy",
            "--dest-tls-verify=false",
            &format!("oci:{}:1", path_str(&layout)),
            &format!("docker://{}/x/{name}:1", registry.addr),
        ]);
        format!("oci://{}/x/{name}:1", registry.addr)
    };

    // The CNCF layout, pushed by skopeo.
    let artifact = push(
        "artifact",
        ("application/vnd.wasm.config.v0+json", b"{}"),
        &[("application/wasm", &wasm)],
    );
    ws.ok(&["add", &artifact, "--yes"], "");
    // An image built FROM scratch with the component copied in: one gzipped tar layer.
    let (tar, gz) = tar_gz(&[("plugin.wasm", &wasm)]);
    let image = push(
        "image",
        (
            "application/vnd.oci.image.config.v1+json",
            &image_config(&[&tar]),
        ),
        &[("application/vnd.oci.image.layer.v1.tar+gzip", &gz)],
    );
    ws.ok(&["add", &image, "--name", "hello", "--yes"], "");
    let mut server = ws.serve();
    assert!(greet(&mut server).contains("registry"));
    drop(server);

    // Three layers and none of them the component: refused, naming why.
    let (t1, g1) = tar_gz(&[("a.txt", b"a")]);
    let (t2, g2) = tar_gz(&[("b.txt", b"b")]);
    let (t3, g3) = tar_gz(&[("c.txt", b"c")]);
    let layered = push(
        "layered",
        (
            "application/vnd.oci.image.config.v1+json",
            &image_config(&[&t1, &t2, &t3]),
        ),
        &[
            ("application/vnd.oci.image.layer.v1.tar+gzip", &g1),
            ("application/vnd.oci.image.layer.v1.tar+gzip", &g2),
            ("application/vnd.oci.image.layer.v1.tar+gzip", &g3),
        ],
    );
    let out = ws.run(&["add", &layered, "--yes"], "");
    assert!(!out.success() && out.stderr.contains("3 layers"), "{out}");

    // A manifest that declares a 2 GiB layer: refused before a byte of it is fetched.
    let raw = skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{}/x/artifact:1", registry.addr),
    ]);
    let mut manifest: Value = serde_json::from_str(&raw).unwrap();
    manifest["layers"][0]["size"] = json!(2u64 << 30);
    let put = ureq::put(&format!(
        "http://{}/v2/x/artifact/manifests/huge",
        registry.addr
    ))
    .header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
    .send(serde_json::to_vec(&manifest).unwrap());
    assert!(put.is_ok(), "the registry takes the manifest: {put:?}");
    let huge = format!("oci://{}/x/artifact:huge", registry.addr);
    let out = ws.run(&["add", &huge, "--name", "huge", "--yes"], "");
    assert!(
        !out.success() && out.stderr.contains("over the 256 MiB limit"),
        "{out}"
    );
    assert!(!ws.read("palisade.toml").contains("[plugins.huge]"));
}

#[test]
fn the_store_is_checked_at_every_load_and_a_down_registry_still_serves_the_lock() {
    let mut registry = start_registry(None);
    let ws = Workspace::new();
    let reference = format!("oci://{}/tools/hello:1.0", registry.addr);
    ws.ok(&["publish", &plugin_arg("hello"), &reference], "");
    ws.ok(&["add", &reference, "--yes"], "");
    let stored = ws
        .path("store")
        .join(format!("sha256-{}.wasm", ws.locked("hello", "sha256")));
    let genuine = std::fs::read(&stored).unwrap();

    // A changed file in the store is fetched again at the locked digest, never run.
    write_file(&stored, hello_with_new_description_bytes());
    let mut server = ws.serve();
    assert!(greet(&mut server).contains("registry"));
    drop(server);
    assert_eq!(std::fs::read(&stored).unwrap(), genuine);

    // The registry is down: the store serves what the lock pins.
    registry.stop();
    let mut server = ws.serve();
    assert!(greet(&mut server).contains("registry"));
    assert!(
        server.wait_for_stderr("serving the digest the lock pins", secs(10)),
        "{}",
        server.stderr()
    );
    drop(server);

    // Down, and the store changed: nothing to serve it from, so it is refused.
    write_file(&stored, hello_with_new_description_bytes());
    ws.serve_refused("cannot fetch the manifest");
}

fn hello_with_new_description_bytes() -> Vec<u8> {
    let dir = tempdir();
    std::fs::read(hello_with_new_description(dir.path())).unwrap()
}

#[test]
fn a_registry_with_basic_auth_takes_docker_login_or_configured_credentials() {
    let hash = bcrypt::hash("s3cret-pw", 4).unwrap();
    let registry = start_registry(Some(&format!("palisade:{hash}")));
    let ws = Workspace::new();
    let reference = format!("oci://{}/private/hello:1", registry.addr);

    let out = ws.run(&["publish", &plugin_arg("hello"), &reference], "");
    assert!(!out.success(), "an anonymous push is refused:\n{out}");

    // What `docker login` leaves in ~/.docker/config.json.
    let docker = ws.path("docker");
    let auth = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        "palisade:s3cret-pw",
    );
    write_file(
        docker.join("config.json"),
        json!({"auths": {&registry.addr: {"auth": auth}}}).to_string(),
    );
    let docker_env = [("DOCKER_CONFIG", docker.to_str().unwrap())];
    let out = ws.run_env(
        &["publish", &plugin_arg("hello"), &reference],
        "",
        &docker_env,
    );
    assert!(out.success(), "{out}");
    let out = ws.run(&["add", &reference, "--yes"], "");
    assert!(!out.success(), "no credentials, no pull:\n{out}");
    let out = ws.run_env(&["add", &reference, "--yes"], "", &docker_env);
    assert!(out.success(), "{out}");

    // Or named in [sources], the password in an environment variable.
    std::fs::remove_file(ws.path("palisade.lock")).unwrap();
    write_file(
        ws.path("palisade.toml"),
        format!(
            "[sources]\nstore_dir = \"store\"\n[sources.registries.\"{}\"]\nusername = \
             \"palisade\"\npassword_env = \"REGISTRY_PASSWORD\"\n",
            registry.addr
        ),
    );
    let out = ws.run_env(
        &["add", &reference, "--yes"],
        "",
        &[("REGISTRY_PASSWORD", "s3cret-pw")],
    );
    assert!(out.success(), "{out}");
    let out = ws.run(&["update"], "");
    assert!(
        !out.success() && out.stderr.contains("REGISTRY_PASSWORD, which is not set"),
        "{out}"
    );
}

#[test]
fn url_sources_are_locked_by_sha256_and_redirects_to_another_host_refused() {
    let files = tempdir();
    std::fs::copy(plugin_path("hello"), files.path().join("hello.wasm")).unwrap();
    let root = path_str(files.path());
    let nginx = start_nginx(&|addr| {
        let port = addr.rsplit(':').next().unwrap();
        format!(
            "    access_log access.log;\n    server {{\n        listen {addr};\n        \
             root {root};\n        location = /moved.wasm {{ return 302 /hello.wasm; }}\n        \
             location = /elsewhere.wasm {{ return 302 http://localhost:{port}/hello.wasm; }}\n    }}"
        )
    });
    let ws = Workspace::new();
    let url = format!("http://{}/moved.wasm", nginx.addr);
    ws.ok(&["add", &url, "--name", "hello", "--yes"], "");
    let wasm = std::fs::read(plugin_path("hello")).unwrap();
    assert_eq!(
        ws.locked("hello", "sha256"),
        format!("{:x}", sha2::Sha256::digest(&wasm))
    );
    let mut server = ws.serve();
    assert!(greet(&mut server).contains("registry"));
    drop(server);

    let elsewhere = format!("http://{}/elsewhere.wasm", nginx.addr);
    let out = ws.run(&["add", &elsewhere, "--name", "other", "--yes"], "");
    assert!(
        !out.success() && out.stderr.contains("another host"),
        "{out}"
    );
    let missing = format!("http://{}/missing.wasm", nginx.addr);
    let out = ws.run(&["add", &missing, "--name", "other", "--yes"], "");
    assert!(!out.success() && out.stderr.contains("404"), "{out}");
}

/// An ECDSA P-256 key pair made by openssl: (private PKCS#8 PEM, public PEM) file names.
fn key_pair(ws: &Workspace, name: &str) -> (String, String) {
    let private = ws.path(&format!("{name}.key"));
    let public = ws.path(&format!("{name}.pub"));
    for args in [
        vec![
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
            private.to_str().unwrap(),
        ],
        vec![
            "pkey",
            "-in",
            private.to_str().unwrap(),
            "-pubout",
            "-out",
            public.to_str().unwrap(),
        ],
    ] {
        openssl_in(Path::new("."), &args);
    }
    (path_str(&private), format!("{name}.pub"))
}

#[test]
fn signed_plugins_verify_at_add_and_at_every_load_and_forgeries_are_refused() {
    let registry = start_registry(None);
    let ws = Workspace::new();
    let (publisher_key, publisher_pub) = key_pair(&ws, "publisher");
    let (_, stranger_pub) = key_pair(&ws, "stranger");
    let signed = format!("oci://{}/tools/hello:signed", registry.addr);
    let out = ws.ok(
        &[
            "publish",
            &plugin_arg("hello"),
            &signed,
            "--sign-key",
            &publisher_key,
        ],
        "",
    );
    assert!(out.stderr.contains("signed sha256:"), "{out}");

    // The wrong key is refused; the publisher's is accepted, written to the config and locked.
    let out = ws.run(&["add", &signed, "--key", &stranger_pub, "--yes"], "");
    assert!(
        !out.success() && out.stderr.contains("does not verify with the key"),
        "{out}"
    );
    let out = ws.ok(&["add", &signed, "--key", &publisher_pub, "--yes"], "");
    assert!(out.stdout.contains("signature verified"), "{out}");
    assert!(
        ws.read("palisade.toml")
            .contains("verify = { key = \"publisher.pub\" }")
    );
    assert!(
        ws.locked("hello", "signed_by").starts_with("key "),
        "{}",
        ws.read("palisade.lock")
    );
    let mut server = ws.serve();
    assert!(greet(&mut server).contains("registry"));
    drop(server);

    // A genuine signature moved onto another artifact: valid, but for another digest.
    let other = format!("oci://{}/tools/hello:other", registry.addr);
    let v2 = hello_with_new_description(ws.dir.path());
    ws.ok(&["publish", &v2, &other], "");
    let digest_of = |tag: &str| {
        let raw = skopeo(&[
            "inspect",
            "--raw",
            "--tls-verify=false",
            &format!("docker://{}/tools/hello:{tag}", registry.addr),
        ]);
        format!("sha256-{:x}", sha2::Sha256::digest(raw.as_bytes()))
    };
    let (signed_tag, other_tag) = (digest_of("signed"), digest_of("other"));
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        "--dest-tls-verify=false",
        &format!("docker://{}/tools/hello:{signed_tag}.sig", registry.addr),
        &format!("docker://{}/tools/hello:{other_tag}.sig", registry.addr),
    ]);
    let out = ws.run(
        &[
            "add",
            &other,
            "--name",
            "other",
            "--key",
            &publisher_pub,
            "--yes",
        ],
        "",
    );
    assert!(
        !out.success() && out.stderr.contains("for another digest"),
        "{out}"
    );

    // require_signatures: an unsigned plugin, or one nothing says who signed, is refused.
    let config = ws
        .read("palisade.toml")
        .replace("[sources]\n", "[sources]\nrequire_signatures = true\n");
    write_file(ws.path("palisade.toml"), config);
    let out = ws.run(&["add", &other, "--name", "other", "--yes"], "");
    assert!(
        !out.success() && out.stderr.contains("require_signatures"),
        "{out}"
    );
    let mut server = ws.serve();
    assert!(
        greet(&mut server).contains("registry"),
        "the signed plugin still serves"
    );
}

#[test]
fn http_proxies_from_the_environment_carry_registry_and_url_fetches() {
    let registry = start_registry(None);
    let files = tempdir();
    std::fs::copy(plugin_path("hello"), files.path().join("hello.wasm")).unwrap();
    let root = path_str(files.path());
    let upstream = registry.addr.clone();
    // A forward proxy: registry requests go on to the registry, anything else is a file here.
    let proxy = start_nginx(&|addr| {
        format!(
            "    access_log access.log;\n    server {{\n        listen {addr};\n        \
             root {root};\n        location /v2/ {{ proxy_pass http://{upstream}; }}\n    }}"
        )
    });
    let ws = Workspace::new();
    ws.ok(
        &[
            "publish",
            &plugin_arg("hello"),
            &format!("oci://{}/tools/hello:1", registry.addr),
        ],
        "",
    );
    // Nothing listens on port 9 of 127.0.0.2: only through the proxy can these be fetched.
    let via_proxy = [
        ("HTTP_PROXY", format!("http://{}", proxy.addr)),
        ("NO_PROXY", String::new()),
    ];
    let env: Vec<(&str, &str)> = via_proxy.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = ws.run_env(
        &["add", "oci://127.0.0.2:9/tools/hello:1", "--yes"],
        "",
        &env,
    );
    assert!(out.success(), "{out}");
    let out = ws.run_env(
        &[
            "add",
            "http://127.0.0.2:9/hello.wasm",
            "--name",
            "file",
            "--yes",
        ],
        "",
        &env,
    );
    assert!(out.success(), "{out}");
    let log = std::fs::read_to_string(proxy.dir.path().join("access.log")).unwrap();
    assert!(log.contains("/v2/tools/hello/manifests/1"), "{log}");
    assert!(log.contains("GET http://127.0.0.2:9/hello.wasm"), "{log}");
    let out = ws.run(
        &[
            "add",
            "http://127.0.0.2:9/hello.wasm",
            "--name",
            "direct",
            "--yes",
        ],
        "",
    );
    assert!(!out.success(), "without the proxy nothing answers:\n{out}");
}

#[test]
fn a_registry_that_never_answers_delays_the_start_only_by_the_tag_check_timeout() {
    let registry = start_registry(None);
    let ws = Workspace::new();
    let reference = format!("oci://{}/tools/hello:1.0", registry.addr);
    ws.ok(&["publish", &plugin_arg("hello"), &reference], "");
    ws.ok(&["add", &reference, "--yes"], "");
    // A peer that accepts connections and never says a word, where the registry was.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_addr = silent.local_addr().unwrap().to_string();
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for stream in silent.incoming().take(8).flatten() {
            open.push(stream);
        }
    });
    for file in ["palisade.toml", "palisade.lock"] {
        let text = ws.read(file).replace(&registry.addr, &silent_addr);
        write_file(ws.path(file), text);
    }
    let config = ws
        .read("palisade.toml")
        .replace("[sources]\n", "[sources]\ntag_check_timeout_s = 1\n");
    write_file(ws.path("palisade.toml"), config);
    let started = std::time::Instant::now();
    let mut server = ws.serve();
    assert!(greet(&mut server).contains("registry"));
    assert!(
        started.elapsed() < secs(30),
        "the start waited {:?}",
        started.elapsed()
    );
    assert!(
        server.wait_for_stderr("did not answer in 1 s", secs(10)),
        "{}",
        server.stderr()
    );
    drop(server);
    drop(held);
}
