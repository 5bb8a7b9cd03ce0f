//! Checks every HTTP request passes before it reaches a session: `Host` and `Origin` against an
//! allow-list (DNS rebinding protection for a server on loopback), and the protocol version header.

use axum::http::HeaderMap;

use crate::mcp::version::ProtocolVersion;

/// Who may reach the server.
#[derive(Debug, Clone, Default)]
pub struct AllowList {
    /// Host names (or IP addresses) the `Host` header may name, besides loopback.
    pub hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) a browser page may call from, besides loopback pages.
    pub origins: Vec<String>,
}

/// Why a request is refused, for the response.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub String);

impl AllowList {
    /// `Host` must name this server: loopback, or a listed host. A page that rebinds its own DNS
    /// name to 127.0.0.1 sends its name here and is refused.
    pub fn check_host(&self, headers: &HeaderMap) -> Result<(), Refused> {
        let Some(host) = headers.get("host") else {
            return Err(Refused("a Host header is required".into()));
        };
        let host = host
            .to_str()
            .map_err(|_| Refused("the Host header is not text".into()))?;
        let name = strip_port(host);
        if is_loopback(name) || self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name)) {
            Ok(())
        } else {
            Err(Refused(format!(
                "Host `{host}` is not allowed (add it to [server.http] allowed_hosts)"
            )))
        }
    }

    /// A browser's `Origin` must be a loopback page or a listed origin; requests without one (not
    /// from a browser page) pass.
    pub fn check_origin(&self, headers: &HeaderMap) -> Result<(), Refused> {
        let Some(origin) = headers.get("origin") else {
            return Ok(());
        };
        let origin = origin
            .to_str()
            .map_err(|_| Refused("the Origin header is not text".into()))?;
        if self
            .origins
            .iter()
            .any(|o| o.trim_end_matches('/') == origin)
        {
            return Ok(());
        }
        let loopback = url::Url::parse(origin)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .and_then(|u| {
                u.host_str()
                    .map(|h| is_loopback(h.trim_matches(['[', ']'])))
            })
            .unwrap_or(false);
        if loopback {
            Ok(())
        } else {
            Err(Refused(format!(
                "Origin `{origin}` is not allowed (add it to [server.http] allowed_origins)"
            )))
        }
    }
}

/// The `MCP-Protocol-Version` header, when given, must name a revision this server speaks.
pub fn check_protocol_version(headers: &HeaderMap) -> Result<(), Refused> {
    let Some(value) = headers.get("mcp-protocol-version") else {
        return Ok(());
    };
    let value = value.to_str().unwrap_or("");
    match ProtocolVersion::parse_with_sessions(value) {
        Some(_) => Ok(()),
        None => Err(Refused(format!(
            "unsupported MCP-Protocol-Version `{value}`; this server speaks {}",
            ProtocolVersion::WITH_SESSIONS
                .map(|v| v.as_str())
                .join(", ")
        ))),
    }
}

fn strip_port(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        // [::1] or [::1]:8080 (RFC 3986: the port is any digits, none included); anything else
        // after the bracket is neither port nor name.
        return match rest.split_once(']') {
            Some((name, "")) => name,
            Some((name, port))
                if port
                    .strip_prefix(':')
                    .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit())) =>
            {
                name
            }
            _ => host,
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

fn is_loopback(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, v.parse().unwrap());
        }
        map
    }

    #[test]
    fn loopback_and_listed_hosts_pass_others_are_refused() {
        let allow = AllowList {
            hosts: vec!["mcp.internal".into()],
            origins: vec!["https://app.example.com".into()],
        };
        for ok in [
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:8080",
            "mcp.internal",
            "LOCALHOST",
        ] {
            assert_eq!(allow.check_host(&headers(&[("host", ok)])), Ok(()), "{ok}");
        }
        for bad in ["evil.example:8080", "127.0.0.1.evil.example"] {
            assert!(
                allow.check_host(&headers(&[("host", bad)])).is_err(),
                "{bad}"
            );
        }
        assert!(allow.check_host(&HeaderMap::new()).is_err());
        for ok in [
            "http://localhost:3000",
            "https://app.example.com",
            "http://[::1]:5173",
        ] {
            assert_eq!(
                allow.check_origin(&headers(&[("origin", ok)])),
                Ok(()),
                "{ok}"
            );
        }
        for bad in [
            "https://evil.example",
            "null",
            "http://localhost.evil.example",
        ] {
            assert!(
                allow.check_origin(&headers(&[("origin", bad)])).is_err(),
                "{bad}"
            );
        }
        assert_eq!(allow.check_origin(&HeaderMap::new()), Ok(()));
    }

    #[test]
    fn protocol_version_header_must_be_known() {
        assert!(
            check_protocol_version(&headers(&[("mcp-protocol-version", "2025-06-18")])).is_ok()
        );
        assert!(
            check_protocol_version(&headers(&[("mcp-protocol-version", "2099-01-01")])).is_err()
        );
        assert!(check_protocol_version(&HeaderMap::new()).is_ok());
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use axum::http::HeaderValue;
    use axum::http::header::{HOST, ORIGIN};
    use proptest::prelude::*;

    const NAMES: [(&str, bool); 8] = [
        ("localhost", true),
        ("127.0.0.1", true),
        ("[::1]", true),
        ("mcp.example.com", true),
        ("evil.example", false),
        ("127.0.0.1.evil.example", false),
        ("localhost.evil.example", false),
        ("mcp.example.com.evil.example", false),
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

        /// A known name with any suffix passes exactly when the name is loopback or listed and
        /// the suffix is a port; any bytes at all in `Host`, `Origin` or
        /// `MCP-Protocol-Version` get an answer, never a panic.
        #[test]
        fn host_headers_pass_only_for_this_server(
            which in 0..NAMES.len(),
            suffix in prop_oneof![Just(String::new()), ":[0-9]{1,5}", ":[a-z0-9:]{0,6}", "[a-z.]{1,6}"],
            raw in prop::collection::vec(any::<u8>(), 0..40),
            origin in prop::collection::vec(any::<u8>(), 0..40),
            version in prop::collection::vec(any::<u8>(), 0..20),
        ) {
            let allow = AllowList { hosts: vec!["mcp.example.com".into()], origins: Vec::new() };
            let (name, allowed) = NAMES[which];
            let host = format!("{name}{suffix}");
            let port_only = suffix.is_empty()
                || suffix
                    .strip_prefix(':')
                    .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()));
            let mut headers = HeaderMap::new();
            headers.insert(HOST, HeaderValue::from_str(&host).unwrap());
            prop_assert_eq!(allow.check_host(&headers).is_ok(), allowed && port_only, "{}", host);

            let mut headers = HeaderMap::new();
            for (name, bytes) in [("host", &raw), ("origin", &origin), ("mcp-protocol-version", &version)] {
                if let Ok(value) = HeaderValue::from_bytes(bytes) {
                    headers.insert(name, value);
                }
            }
            let _ = allow.check_host(&headers);
            let _ = allow.check_origin(&headers);
            let _ = check_protocol_version(&headers);
            let _ = (HOST, ORIGIN);
        }
    }
}
