//! Outgoing HTTP for plugins (`wasi:http`), only to the hosts their configuration lists.
//!
//! Raw sockets and name lookup stay denied (see `sandbox::wasi_context`); this is the only way out.

use std::net::IpAddr;
use std::sync::Arc;

use http::{Request, Response, uri::Scheme};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::grant_ask::{CallAsks, Capability, NOT_GRANTED};
use crate::host_pattern::is_local_address;
use crate::{CallStats, HostPattern, Redactor};

/// Decides, for one call of one plugin, whether a request may leave the sandbox.
pub struct NetworkPolicy {
    plugin: Arc<str>,
    allowed: Arc<[HostPattern]>,
    /// For hosts outside `allowed`: remembered grants, and the user when the plugin may ask.
    asks: Arc<CallAsks>,
    stats: Arc<CallStats>,
    /// Hides the plugin's secrets in what is said about its requests.
    redactor: Redactor,
}

/// Why a request has no configured grant.
struct NoGrant {
    why: String,
    /// The grant that would allow it, when one could.
    wanted: Option<Capability>,
}

impl NetworkPolicy {
    pub(crate) fn new(
        plugin: Arc<str>,
        allowed: Arc<[HostPattern]>,
        asks: Arc<CallAsks>,
        stats: Arc<CallStats>,
        redactor: Redactor,
    ) -> NetworkPolicy {
        NetworkPolicy {
            plugin,
            allowed,
            asks,
            stats,
            redactor,
        }
    }

    /// The configured grant covering a request to `uri`, or why there is none.
    fn grant_for(&self, uri: &http::Uri) -> Result<&HostPattern, NoGrant> {
        let shown = self.shown(uri);
        let https = match uri.scheme() {
            Some(s) if *s == Scheme::HTTPS => true,
            Some(s) if *s == Scheme::HTTP => false,
            _ => {
                return Err(NoGrant {
                    why: format!("{shown}: only http and https are supported"),
                    wanted: None,
                });
            }
        };
        let host = uri.host().unwrap_or_default();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        self.allowed
            .iter()
            .find(|p| p.allows(https, host, port))
            .ok_or_else(|| {
                let plain = if !https && self.allowed.iter().any(|p| p.allows(true, host, port)) {
                    " (HTTPS is granted; plain HTTP needs an entry starting with http://)"
                } else {
                    ""
                };
                NoGrant {
                    why: format!("{shown}: host not granted{plain}"),
                    wanted: Capability::host(https, host, port),
                }
            })
    }

    /// `uri` as logs and errors show it: without its query, where API keys often travel, and
    /// with the plugin's secrets hidden in the rest.
    fn shown(&self, uri: &http::Uri) -> String {
        let scheme = uri.scheme_str().unwrap_or("?");
        let authority = uri.authority().map_or("", |a| a.as_str());
        let query = if uri.query().is_some() { "?…" } else { "" };
        let text = format!("{scheme}://{authority}{}{query}", uri.path());
        self.redactor.redact(&text).into_owned()
    }
}

/// The grant for a request without a configured one: remembered, or given by the user now.
async fn asked_grant(
    asks: &CallAsks,
    stats: &CallStats,
    plugin: &str,
    missing: NoGrant,
) -> Result<HostPattern, Error> {
    let refuse = |why: String| {
        tracing::warn!(plugin, "network request denied: {why}");
        Error::HttpRequestDenied
    };
    let Some(wanted) = missing.wanted else {
        return Err(refuse(missing.why));
    };
    let Capability::Host(text) = &wanted else {
        return Err(refuse(missing.why));
    };
    let grant = HostPattern::parse(text).map_err(|e| refuse(format!("{}: {e}", missing.why)))?;
    match asks.allow(wanted.clone()).await {
        Ok(()) => Ok(grant),
        Err(why) => {
            let why = if why == NOT_GRANTED {
                missing.why
            } else {
                format!("{}: {why}", missing.why)
            };
            stats.note_denied(format!(
                "{} (grant it with network = [\"{text}\"] in the plugin's section)",
                why
            ));
            Err(refuse(why))
        }
    }
}

impl WasiHttpHooks for NetworkPolicy {
    fn send_request(
        &mut self,
        request: Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<
        dyn Future<
                Output = Result<
                    (
                        Response<WasiBody>,
                        Box<dyn Future<Output = Result<(), Error>> + Send>,
                    ),
                    Error,
                >,
            > + Send,
    > {
        let grant = self.grant_for(request.uri()).cloned();
        let plugin = self.plugin.clone();
        let (asks, stats) = (self.asks.clone(), self.stats.clone());
        Box::new(async move {
            let grant = match grant {
                Ok(grant) => grant,
                Err(missing) => asked_grant(&asks, &stats, &plugin, missing).await?,
            };
            let mut request = request;
            if !grant.names_local_address() {
                let checked = public_address(request.uri(), &plugin).await?;
                pin_address(&mut request, checked)?;
            }
            let plain_hooks: &mut dyn WasiHttpHooks = Default::default();
            Box::into_pin(plain_hooks.send_request(request, options, fut)).await
        })
    }
}

/// Makes a plain-HTTP request connect to the address that was checked, not to whatever a second
/// DNS lookup returns (DNS rebinding); the `Host` header keeps the name. HTTPS is left to resolve
/// again: its certificate must match the granted name, which a server on the operator's network
/// rebound to cannot present.
fn pin_address<B>(request: &mut Request<B>, ip: IpAddr) -> Result<(), Error> {
    if request.uri().scheme() != Some(&Scheme::HTTP) {
        return Ok(());
    }
    let port = request.uri().port_u16().unwrap_or(80);
    let authority = match ip {
        IpAddr::V4(v4) => format!("{v4}:{port}"),
        IpAddr::V6(v6) => format!("[{v6}]:{port}"),
    };
    let mut parts = request.uri().clone().into_parts();
    parts.authority = Some(
        authority
            .parse()
            .map_err(|_| Error::HttpRequestUriInvalid)?,
    );
    *request.uri_mut() = http::Uri::from_parts(parts).map_err(|_| Error::HttpRequestUriInvalid)?;
    Ok(())
}

/// The address to connect to for a granted name, refusing it when any address it resolves to is a
/// loopback or private one, so a wildcard grant or a hostile DNS answer cannot reach the
/// operator's own network.
async fn public_address(uri: &http::Uri, plugin: &str) -> Result<IpAddr, Error> {
    let host = uri.host().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(443);
    let addresses: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| Error::DnsError {
                rcode: Some(e.to_string()),
                info_code: None,
            })?
            .map(|a| a.ip())
            .collect(),
    };
    if let Some(local) = addresses.iter().find(|ip| is_local_address(**ip)) {
        tracing::warn!(
            plugin,
            "network request denied: {host} resolves to {local}, a local address; grant the \
             address itself to allow it"
        );
        return Err(Error::DestinationIpProhibited);
    }
    addresses.first().copied().ok_or(Error::DestinationNotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_connects_to_the_checked_address_and_keeps_the_name() {
        let mut request = Request::builder()
            .uri("http://api.example.com:8080/v1?q=1")
            .header("host", "api.example.com:8080")
            .body(())
            .unwrap();
        pin_address(&mut request, "93.184.216.34".parse().unwrap()).unwrap();
        assert_eq!(request.uri(), "http://93.184.216.34:8080/v1?q=1");
        assert_eq!(request.headers()["host"], "api.example.com:8080");
        let mut v6 = Request::builder()
            .uri("http://api.example.com/")
            .body(())
            .unwrap();
        pin_address(&mut v6, "2606:2800:220:1::1".parse().unwrap()).unwrap();
        assert_eq!(v6.uri(), "http://[2606:2800:220:1::1]:80/");
    }

    #[test]
    fn https_keeps_its_name_for_the_certificate_check() {
        let mut request = Request::builder()
            .uri("https://api.example.com/")
            .body(())
            .unwrap();
        pin_address(&mut request, "93.184.216.34".parse().unwrap()).unwrap();
        assert_eq!(request.uri(), "https://api.example.com/");
    }
}
