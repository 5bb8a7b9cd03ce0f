//! Tokens signed here with keys made here, checked by the verifier: every check has a token that
//! fails it. (The end-to-end tests use a real OpenID provider: tests/tests/oauth.rs.)

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode, get_current_timestamp};
use serde_json::{Value, json};

use super::*;

const ISSUER: &str = "https://id.example.com/realms/team";
const RESOURCE: &str = "https://mcp.example.com/mcp";

/// An Ed25519 key from a 32-byte seed (PKCS#8 DER is a fixed 16-byte header and the seed).
fn ed_key(seed: u8) -> EncodingKey {
    let mut der = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    der.extend([seed; 32]);
    EncodingKey::from_ed_der(&der)
}

fn jwk(seed: u8, kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(&ed_key(seed), Algorithm::EdDSA).unwrap();
    jwk.common.key_id = Some(kid.into());
    jwk
}

fn verifier(algorithms: Vec<Algorithm>) -> OAuth {
    let scope = |entries: &[&str]| {
        let entries: Vec<String> = entries.iter().map(|s| s.to_string()).collect();
        Arc::new(Scope::parse("hello-only", &entries).unwrap())
    };
    let settings = OAuthSettings {
        algorithms,
        scopes: BTreeMap::from([("tools:hello".to_string(), scope(&["hello"]))]),
        advertised: vec!["tools:hello".into()],
        ..OAuthSettings::for_tests(ISSUER)
    };
    let oauth = OAuth::new(settings, url::Url::parse(RESOURCE).unwrap()).unwrap();
    oauth.keys().set(&JwkSet {
        keys: vec![jwk(1, "k1"), jwk(2, "k2")],
    });
    oauth
}

fn claims() -> Value {
    let now = get_current_timestamp();
    json!({"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "exp": now + 300, "iat": now,
           "scope": "tools:hello", "client_id": "cli"})
}

fn token(seed: u8, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = kid.map(str::to_string);
    encode(&header, claims, &ed_key(seed)).unwrap()
}

fn with(changes: Value) -> Value {
    let mut c = claims();
    for (k, v) in changes.as_object().unwrap() {
        match v {
            Value::Null => c.as_object_mut().unwrap().remove(k),
            v => c.as_object_mut().unwrap().insert(k.clone(), v.clone()),
        };
    }
    c
}

fn invalid(oauth: &OAuth, token: &str) -> String {
    match oauth.verify(token) {
        Err(Rejected::Invalid(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_good_token_names_its_subject_and_grants_its_scopes() {
    let oauth = verifier(vec![Algorithm::EdDSA]);
    let v = oauth.verify(&token(1, Some("k1"), &claims())).unwrap();
    assert_eq!(v.subject.subject, "alice");
    assert_eq!(v.subject.client_id.as_deref(), Some("cli"));
    assert!(v.scope.allows_item("hello", "greet"));
    assert!(!v.scope.allows_item("files", "read_file"));
    // The audience may be a list holding this server.
    let many = with(json!({"aud": ["https://other.example.com", RESOURCE]}));
    assert!(oauth.verify(&token(2, Some("k2"), &many)).is_ok());
}

#[test]
fn audience_issuer_and_time_are_checked() {
    let oauth = verifier(vec![Algorithm::EdDSA]);
    let now = get_current_timestamp();
    let cases = [
        (json!({"aud": "https://mcp.example.com/other"}), "aud"),
        (json!({"aud": null}), "aud"),
        (json!({"iss": "https://id.example.com/realms/other"}), "iss"),
        (json!({"iss": null}), "iss"),
        (json!({"exp": now - 120}), "expired"),
        (json!({"exp": null}), "exp"),
        (json!({"nbf": now + 120}), "not valid yet"),
        (json!({"sub": null}), "sub"),
    ];
    for (change, says) in cases {
        let why = invalid(&oauth, &token(1, Some("k1"), &with(change.clone())));
        assert!(why.contains(says), "{change}: {why}");
    }
    // Within the clock skew.
    assert!(
        oauth
            .verify(&token(1, Some("k1"), &with(json!({"exp": now - 30}))))
            .is_ok()
    );
}

#[test]
fn signatures_keys_and_algorithms_are_checked() {
    let oauth = verifier(vec![Algorithm::EdDSA]);
    // Signed by another key under a known id.
    let why = invalid(&oauth, &token(9, Some("k1"), &claims()));
    assert!(why.contains("signature"), "{why}");
    // An id the server does not hold: fetch the keys again.
    assert_eq!(
        oauth.verify(&token(9, Some("k9"), &claims())).unwrap_err(),
        Rejected::UnknownKey
    );
    // No id, and two keys fit: which one is not guessed.
    assert_eq!(
        oauth.verify(&token(1, None, &claims())).unwrap_err(),
        Rejected::UnknownKey
    );
    // A payload changed after signing.
    let good = token(1, Some("k1"), &claims());
    let parts: Vec<&str> = good.split('.').collect();
    let forged = URL_SAFE_NO_PAD.encode(with(json!({"sub": "mallory"})).to_string());
    let why = invalid(&oauth, &format!("{}.{forged}.{}", parts[0], parts[2]));
    assert!(why.contains("signature"), "{why}");
    // `alg: none`, unsigned.
    let none_header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#);
    let body = URL_SAFE_NO_PAD.encode(claims().to_string());
    let why = invalid(&oauth, &format!("{none_header}.{body}."));
    assert!(why.contains("not a signed JWT"), "{why}");
    // HS256 with the public key as the secret (key confusion) is not accepted either.
    let hs = encode(
        &Header::new(Algorithm::HS256),
        &claims(),
        &EncodingKey::from_secret(b"k1"),
    )
    .unwrap();
    let why = invalid(&oauth, &hs);
    assert!(why.contains("does not accept"), "{why}");
    // An algorithm the configuration leaves out.
    let rs_only = verifier(vec![Algorithm::RS256]);
    let why = invalid(&rs_only, &token(1, Some("k1"), &claims()));
    assert!(why.contains("does not accept"), "{why}");
    for junk in ["", "abc", "a.b.c", &"x".repeat(MAX_TOKEN_BYTES + 1)] {
        assert!(
            matches!(oauth.verify(junk), Err(Rejected::Invalid(_))),
            "{junk:.20}"
        );
    }
}

#[test]
fn a_token_verified_once_is_remembered_until_it_expires_or_the_keys_change() {
    let oauth = verifier(vec![Algorithm::EdDSA]);
    let now = get_current_timestamp();
    let token = token(1, Some("k1"), &claims());
    assert!(oauth.verify(&token).is_ok());
    // The key is withdrawn: the remembered token still passes until the keys are fetched again
    // (which empties the cache; here the test swaps them and empties it as a fetch would).
    oauth.keys().set(&JwkSet {
        keys: vec![jwk(2, "k2")],
    });
    assert!(oauth.verify(&token).is_ok());
    oauth.verified.clear();
    assert_eq!(oauth.verify(&token).unwrap_err(), Rejected::UnknownKey);
    // Expiry is checked on every use, remembered or not.
    oauth.keys().set(&JwkSet {
        keys: vec![jwk(1, "k1")],
    });
    let short = token_expiring(now + 1);
    assert!(oauth.verify(&short).is_ok());
    let key = verified_cache::VerifiedCache::key(&short);
    assert!(
        oauth.verified.get(&key, now + 1 + 60).is_some(),
        "within the clock skew"
    );
    assert!(oauth.verified.get(&key, now + 1 + 61).is_none());
    // A changed byte is another token: checked in full.
    let mut forged = token.clone().into_bytes();
    let last = forged.len() - 1;
    forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
    assert!(oauth.verify(std::str::from_utf8(&forged).unwrap()).is_err());
}

fn token_expiring(exp: u64) -> String {
    token(1, Some("k1"), &with(json!({"exp": exp})))
}
