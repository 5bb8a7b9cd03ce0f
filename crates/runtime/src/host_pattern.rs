//! Network grants: the hosts a plugin may reach over `wasi:http`.
//!
//! An entry is `[http://]HOST[:PORT]`. HOST is an exact name, a `*.domain` wildcard (any name
//! ending in `.domain`, not `domain` itself), an IPv4 address or a bracketed IPv6 address. Without
//! a port only the scheme's default port is allowed; without `http://` only HTTPS is.

use std::net::IpAddr;

/// One granted host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: HostMatch,
    /// `None`: the default port of the request's scheme.
    port: Option<u16>,
    /// Plain HTTP allowed as well as HTTPS.
    pub allow_http: bool,
    /// As the operator wrote it, for messages.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostMatch {
    Exact(String),
    /// The suffix, starting with the dot: `.example.com`.
    Subdomains(String),
    Ip(IpAddr),
}

/// Why an entry of `network` is not a host grant; each names the entry as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidHostPattern {
    /// A path, query, user or nothing where the host should be.
    #[error("`{0}` is not a host: give HOST, HOST:PORT or *.DOMAIN, optionally after http://")]
    NotAHost(String),
    /// A port that is not 1 to 65535.
    #[error("`{0}`: the port must be a number from 1 to 65535")]
    BadPort(String),
    /// A name with characters DNS does not allow, or a wildcard anywhere but in front.
    #[error(
        "`{0}` is not a host name (letters, digits, `-` and dots; a wildcard only as `*.domain`)"
    )]
    BadName(String),
}

impl HostPattern {
    /// Parses an entry of `network`; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<HostPattern, InvalidHostPattern> {
        let (allow_http, rest) = if let Some(rest) = text.strip_prefix("http://") {
            (true, rest)
        } else {
            (false, text.strip_prefix("https://").unwrap_or(text))
        };
        if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
            return Err(InvalidHostPattern::NotAHost(text.to_string()));
        }
        let (host, port) =
            split_port(rest).ok_or_else(|| InvalidHostPattern::BadPort(text.to_string()))?;
        let host = host.to_ascii_lowercase();
        let host = if let Some(ip) = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .or(Some(host.as_str()))
            .and_then(|h| h.parse::<IpAddr>().ok())
        {
            HostMatch::Ip(ip)
        } else if let Some(domain) = host.strip_prefix("*.") {
            check_dns_name(domain, text)?;
            HostMatch::Subdomains(format!(".{domain}"))
        } else {
            check_dns_name(&host, text)?;
            HostMatch::Exact(host)
        };
        Ok(HostPattern {
            host,
            port,
            allow_http,
            text: text.to_string(),
        })
    }

    /// Whether a request with `https` (or not), to `host` and `port`, is covered.
    pub fn allows(&self, https: bool, host: &str, port: u16) -> bool {
        if !https && !self.allow_http {
            return false;
        }
        let default_port = if https { 443 } else { 80 };
        if self.port.unwrap_or(default_port) != port {
            return false;
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match &self.host {
            HostMatch::Exact(name) => *name == host,
            HostMatch::Subdomains(suffix) => host.len() > suffix.len() && host.ends_with(suffix),
            HostMatch::Ip(ip) => host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_ok_and(|h| h == *ip),
        }
    }

    /// Whether the operator named a loopback or private address on purpose: an IP literal or
    /// `localhost`. Names granted any other way must resolve to public addresses.
    pub fn names_local_address(&self) -> bool {
        match &self.host {
            HostMatch::Ip(_) => true,
            HostMatch::Exact(name) => name == "localhost",
            HostMatch::Subdomains(_) => false,
        }
    }
}

/// `host[:port]`, with `[v6]:port` understood.
fn split_port(text: &str) -> Option<(&str, Option<u16>)> {
    let colon = if text.starts_with('[') {
        text.find(']')
            .map(|end| end + 1)
            .filter(|&i| i < text.len())
    } else if text.matches(':').count() == 1 {
        text.find(':')
    } else {
        None
    };
    match colon {
        Some(i) if text[i..].starts_with(':') => {
            let port: u16 = text[i + 1..].parse().ok().filter(|&p| p != 0)?;
            Some((&text[..i], Some(port)))
        }
        _ => Some((text, None)),
    }
}

fn check_dns_name(name: &str, text: &str) -> Result<(), InvalidHostPattern> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if ok {
        Ok(())
    } else {
        Err(InvalidHostPattern::BadName(text.to_string()))
    }
}

/// Loopback, private, link-local and other addresses that are not on the public internet: a
/// granted name resolving to one of these is refused (it would reach the operator's own network).
pub fn is_local_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                // 100.64.0.0/10, shared address space (carrier-grade NAT).
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_local_address(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                // fc00::/7 unique local, fe80::/10 link-local.
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_match_only_themselves_on_the_default_https_port() {
        let p = HostPattern::parse("api.example.com").unwrap();
        assert!(p.allows(true, "api.example.com", 443));
        assert!(p.allows(true, "API.Example.com.", 443));
        assert!(!p.allows(false, "api.example.com", 80), "http not granted");
        assert!(!p.allows(true, "api.example.com", 8443), "other port");
        assert!(!p.allows(true, "evil-api.example.com", 443));
        assert!(!p.allows(true, "api.example.com.evil.net", 443));
    }

    #[test]
    fn wildcards_match_subdomains_only() {
        let p = HostPattern::parse("*.example.org:8443").unwrap();
        assert!(p.allows(true, "a.example.org", 8443));
        assert!(p.allows(true, "a.b.example.org", 8443));
        assert!(!p.allows(true, "example.org", 8443));
        assert!(!p.allows(true, "badexample.org", 8443));
        assert!(!p.allows(true, "a.example.org", 443));
        assert!(!p.names_local_address());
    }

    #[test]
    fn http_must_be_granted_per_host() {
        let p = HostPattern::parse("http://127.0.0.1:8080").unwrap();
        assert!(p.allows(false, "127.0.0.1", 8080));
        assert!(p.allows(true, "127.0.0.1", 8080));
        assert!(p.names_local_address());
        let v6 = HostPattern::parse("http://[::1]:9000").unwrap();
        assert!(v6.allows(false, "[::1]", 9000));
    }

    #[test]
    fn bad_entries_are_refused() {
        for bad in [
            "",
            "https://",
            "a.com/path",
            "*.*.com",
            "a..com",
            "a.com:0",
            "a.com:x",
            "user@a.com",
            "*",
        ] {
            assert!(HostPattern::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn local_addresses_are_recognised() {
        for local in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "100.64.0.1",
        ] {
            assert!(is_local_address(local.parse().unwrap()), "{local}");
        }
        for public in ["93.184.216.34", "2606:2800:220:1::1", "8.8.8.8"] {
            assert!(!is_local_address(public.parse().unwrap()), "{public}");
        }
    }
}
