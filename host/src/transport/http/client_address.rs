//! Who a request comes from: its TCP peer, or, when that peer is a proxy the operator trusts
//! (`[server.http] trusted_proxies`), the client the proxy names in `Forwarded` (RFC 7239) or
//! `X-Forwarded-For`. Those headers are believed from trusted proxies only: anyone else could
//! name any address, and so pick the rate limit and session cap it counts against.

use std::net::IpAddr;
use std::sync::Arc;

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The address a request is counted under: anonymous clients' identity, rate limits and
/// session caps. A request extension, set when the connection hands the request over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

/// The proxies whose forwarding headers are believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Arc<[IpNet]>);

impl TrustedProxies {
    /// Proxies at `nets` (a single address is a /32 or /128).
    pub fn new(nets: Vec<IpNet>) -> TrustedProxies {
        TrustedProxies(nets.into())
    }

    /// Whether `ip` is one of them (an IPv4 address mapped into IPv6 counts as itself).
    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request from `peer` with `headers`: `peer` unless it is trusted; else
    /// the nearest address in the forwarding chain that is not a trusted proxy, read from the
    /// right (the entries nearer the client are the client's own word). An entry that is no
    /// address (`unknown`, an obfuscated name) stops the walk at the proxy that wrote it.
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let hops = forwarded_hops(headers);
        let mut nearest = peer;
        for hop in hops.iter().rev() {
            match parse_hop(hop) {
                Some(ip) if self.trusts(ip) => nearest = ip,
                Some(ip) => return ip,
                None => return nearest,
            }
        }
        nearest
    }
}

/// The chain of addresses a request passed, client first: `Forwarded`'s `for=` when present,
/// else `X-Forwarded-For`; every header line, in order.
fn forwarded_hops(headers: &HeaderMap) -> Vec<String> {
    let forwarded: Vec<String> = headers
        .get_all("forwarded")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|line| line.split(','))
        .map(|element| {
            element
                .split(';')
                .find_map(|pair| {
                    let (key, value) = pair.split_once('=')?;
                    key.trim()
                        .eq_ignore_ascii_case("for")
                        .then(|| value.trim().trim_matches('"').to_string())
                })
                .unwrap_or_default()
        })
        .collect();
    if !forwarded.is_empty() {
        return forwarded;
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|line| line.split(','))
        .map(|hop| hop.trim().to_string())
        .collect()
}

/// An address as a forwarding header writes it: `1.2.3.4`, `1.2.3.4:80`, `[::1]`, `[::1]:80`,
/// `::1`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    if let Some(rest) = hop.strip_prefix('[') {
        return rest.split(']').next()?.parse::<IpAddr>().ok();
    }
    let (host, port) = hop.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxies(nets: &[&str]) -> TrustedProxies {
        TrustedProxies::new(nets.iter().map(|n| n.parse().unwrap()).collect())
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn forwarding_headers_are_believed_from_trusted_proxies_only() {
        let trusted = proxies(&["10.0.0.0/8", "127.0.0.1/32"]);
        let spoofed = headers(&[("x-forwarded-for", "6.6.6.6")]);
        assert_eq!(
            trusted.client_of(ip("203.0.113.9"), &spoofed),
            ip("203.0.113.9")
        );
        assert_eq!(
            TrustedProxies::default().client_of(ip("127.0.0.1"), &spoofed),
            ip("127.0.0.1")
        );
        // Through two proxies: the nearest untrusted entry, whatever the client wrote first.
        let chain = headers(&[("x-forwarded-for", "6.6.6.6, 198.51.100.7, 10.1.2.3")]);
        assert_eq!(
            trusted.client_of(ip("127.0.0.1"), &chain),
            ip("198.51.100.7")
        );
        // No header: the proxy itself.
        assert_eq!(
            trusted.client_of(ip("10.0.0.5"), &HeaderMap::new()),
            ip("10.0.0.5")
        );
        // IPv4 peers seen through an IPv6 listener.
        assert!(trusted.trusts(ip("::ffff:127.0.0.1")));
    }

    #[test]
    fn forwarded_is_read_before_x_forwarded_for_and_unknown_stops_the_walk() {
        let trusted = proxies(&["10.0.0.0/8"]);
        let both = headers(&[
            (
                "forwarded",
                "for=192.0.2.60;proto=http, for=\"[2001:db8::1]:4711\"",
            ),
            ("x-forwarded-for", "6.6.6.6"),
        ]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &both), ip("2001:db8::1"));
        let ported = headers(&[("x-forwarded-for", "192.0.2.61:5000")]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &ported), ip("192.0.2.61"));
        let unknown = headers(&[("x-forwarded-for", "192.0.2.9, unknown, 10.0.0.7")]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &unknown), ip("10.0.0.7"));
    }
}
