//! Outgoing HTTP for plugins (`wasi:http`), only to the hosts their configuration lists.
//!
//! Raw sockets and name lookup stay denied (see `sandbox::wasi_context`); this is the only way out.
//! A request let out is carried by `outbound.rs`.

use std::net::IpAddr;
use std::sync::Arc;

use http::{Request, Response, uri::Scheme};
use tokio::time::Instant;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::grant_ask::{CallAsks, Capability, NOT_GRANTED};
use crate::host_pattern::is_local_address;
use crate::outbound::{self, Destination, Failure};
use crate::tls::TlsTrust;
use crate::usage::GrantUsage;
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
    /// Whom its HTTPS trusts.
    trust: TlsTrust,
    /// Where the hosts it reaches are counted.
    usage: Arc<GrantUsage>,
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
        trust: TlsTrust,
        usage: Arc<GrantUsage>,
    ) -> NetworkPolicy {
        NetworkPolicy {
            plugin,
            allowed,
            asks,
            stats,
            redactor,
            trust,
            usage,
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
        // Only the guest's own request body reports through `fut`; nothing here waits on it.
        drop(fut);
        let grant = self.grant_for(request.uri()).cloned();
        let plugin = self.plugin.clone();
        let (asks, stats) = (self.asks.clone(), self.stats.clone());
        let (trust, redactor) = (self.trust.clone(), self.redactor.clone());
        let usage = self.usage.clone();
        Box::new(async move {
            let grant = match grant {
                Ok(grant) => grant,
                Err(missing) => asked_grant(&asks, &stats, &plugin, missing).await?,
            };
            usage.note("network", &grant.text);
            // Read after any question about the grant: the time it took is not the call's.
            let deadline = Instant::from_std(asks.clock().deadline());
            let uri = request.uri();
            let tls = uri.scheme() == Some(&Scheme::HTTPS);
            let host = uri.host().unwrap_or_default();
            let host = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
            let sent = async {
                let addresses = if grant.names_local_address() {
                    Vec::new()
                } else {
                    public_addresses(&host, port, &plugin, deadline).await?
                };
                let to = Destination {
                    host,
                    port,
                    tls,
                    addresses,
                };
                outbound::send(request, to, options, &trust, deadline).await
            };
            sent.await.map_err(|Failure { error, why }| {
                if let Some(why) = why {
                    let why = redactor.redact(&why).into_owned();
                    tracing::warn!(plugin = &*plugin, "network request failed: {why}");
                    stats.note_unreachable(why);
                }
                error
            })
        })
    }
}

/// The addresses to connect to for a granted name (connections go to these, not to whatever a
/// second lookup returns: DNS rebinding), refusing the name when any address it resolves to is
/// a loopback or private one, so a wildcard grant or a hostile DNS answer cannot reach the
/// operator's own network. HTTPS still checks the certificate against the name.
async fn public_addresses(
    host: &str,
    port: u16,
    plugin: &str,
    deadline: Instant,
) -> Result<Vec<IpAddr>, Failure> {
    let unresolved = |why: String, error: Error| Failure {
        error,
        why: Some(format!("{host}: {why}")),
    };
    let addresses: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => tokio::time::timeout_at(deadline, tokio::net::lookup_host((host, port)))
            .await
            .map_err(|_| {
                unresolved(
                    "the name did not resolve before the call's time ran out".into(),
                    Error::DnsTimeout,
                )
            })?
            .map_err(|e| {
                unresolved(
                    format!("the name does not resolve ({e})"),
                    Error::DnsError {
                        rcode: Some(e.to_string()),
                        info_code: None,
                    },
                )
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
        return Err(Error::DestinationIpProhibited.into());
    }
    if addresses.is_empty() {
        return Err(unresolved(
            "the name has no address".into(),
            Error::DestinationNotFound,
        ));
    }
    Ok(addresses)
}
