//! Keyless verification against a real Sigstore bundle, made by the public Sigstore
//! infrastructure and shipped as test data in the `sigstore` crate (a dependency, so cargo has
//! it): the provenance bundle of the npm package `sigstore@5.0.0`, whose tarball `npm pack`
//! fetches from the npm registry. Verified offline against the public-good trusted root.

use std::path::{Path, PathBuf};
use std::process::Command;

use palisade::sources::verify::{Policy, Signatures, verify};

const IDENTITY: &str =
    "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main";
const ISSUER: &str = "https://token.actions.githubusercontent.com";

/// `tests/data` of the `sigstore` crate cargo resolved for this workspace.
fn sigstore_test_data() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let manifest = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "sigstore")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("sigstore is a dependency");
    Path::new(manifest).parent().unwrap().join("tests/data")
}

/// The npm tarball the bundle signs, from the npm registry.
fn signed_tarball(dir: &Path) -> Vec<u8> {
    let out = Command::new("npm")
        .args(["pack", "sigstore@5.0.0", "--silent", "--pack-destination"])
        .arg(dir)
        .output()
        .expect("npm runs (./dev test needs it for the JavaScript SDK too)");
    assert!(
        out.status.success(),
        "npm pack: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(dir.join("sigstore-5.0.0.tgz")).unwrap()
}

struct Case {
    bundle: String,
    root: PathBuf,
    tarball: Vec<u8>,
    dir: PathBuf,
}

impl Case {
    fn new(name: &str) -> Case {
        let dir =
            std::env::temp_dir().join(format!("palisade-sigstore-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = sigstore_test_data();
        Case {
            bundle: std::fs::read_to_string(data.join("npm_slsa_bundle_v03.json")).unwrap(),
            root: data.join("sigstore_trusted_root.json"),
            tarball: signed_tarball(&dir),
            dir,
        }
    }

    fn keyless(&self, identity: &str, root: &Path) -> Policy {
        Policy::Keyless {
            identity: identity.into(),
            issuer: ISSUER.into(),
            trusted_root: Some(root.to_path_buf()),
        }
    }

    async fn check(&self, policy: &Policy, artifact: &[u8]) -> Result<(), String> {
        let found = Signatures {
            simple: vec![],
            bundles: vec![self.bundle.clone()],
        };
        verify(policy, &found, None, artifact)
            .await
            .map_err(|e| format!("{e:#}"))
    }

    /// The trusted root with `edit` applied to its JSON.
    fn root_with(&self, name: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
        let mut root: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&self.root).unwrap()).unwrap();
        edit(&mut root);
        let path = self.dir.join(name);
        std::fs::write(&path, root.to_string()).unwrap();
        path
    }
}

#[tokio::test]
async fn a_genuine_bundle_verifies_and_every_kind_of_forgery_is_refused() {
    let case = Case::new("all");
    let genuine = case.keyless(IDENTITY, &case.root);
    case.check(&genuine, &case.tarball)
        .await
        .expect("the genuine artifact verifies");

    // One byte changed.
    let mut changed = case.tarball.clone();
    changed[100] ^= 1;
    let err = case.check(&genuine, &changed).await.unwrap_err();
    assert!(err.contains("does not verify"), "{err}");

    // Another identity (the same repository, another workflow).
    let other = IDENTITY.replace("release.yml", "ci.yml");
    let err = case
        .check(&case.keyless(&other, &case.root), &case.tarball)
        .await
        .unwrap_err();
    assert!(err.contains("does not verify"), "{err}");

    // A root whose certificate authorities expired before the bundle was signed.
    let expired = case.root_with("expired.json", |root| {
        for ca in root["certificateAuthorities"].as_array_mut().unwrap() {
            ca["validFor"]["end"] = "2023-01-01T00:00:00Z".into();
        }
    });
    let err = case
        .check(&case.keyless(IDENTITY, &expired), &case.tarball)
        .await
        .unwrap_err();
    assert!(
        err.contains("no certificate authority in it was valid"),
        "{err}"
    );

    // A foreign root: its own authorities, none of which issued the certificate.
    let foreign = case.root_with("foreign.json", |root| {
        let cas = root["certificateAuthorities"].as_array_mut().unwrap();
        cas.retain(|ca| ca["validFor"]["end"].is_string());
        cas[0]["validFor"] = serde_json::json!({"start": "2020-01-01T00:00:00Z"});
    });
    let err = case
        .check(&case.keyless(IDENTITY, &foreign), &case.tarball)
        .await
        .unwrap_err();
    assert!(err.contains("does not verify"), "{err}");

    // A key policy finds no key signature in a keyless bundle.
    let key = Policy::Key {
        file: "cosign.pub".into(),
        pem: "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEbfwR+RJudXscgRBRpKX1XFDy3PyudDxz/SfnRi1fT8ekpfBd2O1uoz7jr3Z8nKzxA69EUQ+eFCFI3zeubPWU7w==\n-----END PUBLIC KEY-----\n".into(),
    };
    let err = case.check(&key, &case.tarball).await.unwrap_err();
    assert!(err.contains("no key signature"), "{err}");
}
