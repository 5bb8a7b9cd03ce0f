//! Outgoing HTTP for plugins (`wasi:http`), only to the hosts their configuration lists.
//!
//! Raw sockets and name lookup stay denied (see `sandbox::wasi_context`); this is the only way out.

use std::net::IpAddr;
use std::sync::Arc;

use axum::http::{Request, Response, uri::Scheme};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::config::HostPattern;
use crate::config::network::is_local_address;

/// Decides, for one call of one plugin, whether a request may leave the sandbox.
pub struct NetworkPolicy {
    plugin: Arc<str>,
    allowed: Arc<[HostPattern]>,
}

impl NetworkPolicy {
    pub fn new(plugin: Arc<str>, allowed: Arc<[HostPattern]>) -> NetworkPolicy {
        NetworkPolicy { plugin, allowed }
    }

    /// The grant covering a request to `uri`, or why there is none.
    fn grant_for(&self, uri: &axum::http::Uri) -> Result<&HostPattern, String> {
        let https = match uri.scheme() {
            Some(s) if *s == Scheme::HTTPS => true,
            Some(s) if *s == Scheme::HTTP => false,
            _ => return Err(format!("{uri}: only http and https are supported")),
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
                format!("{uri}: host not granted{plain}")
            })
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
        Box::new(async move {
            let grant = grant.map_err(|why| {
                tracing::warn!(plugin = &*plugin, "network request denied: {why}");
                Error::HttpRequestDenied
            })?;
            if !grant.names_local_address() {
                check_public(request.uri(), &plugin).await?;
            }
            let plain_hooks: &mut dyn WasiHttpHooks = Default::default();
            Box::into_pin(plain_hooks.send_request(request, options, fut)).await
        })
    }
}

/// Refuses a granted name that resolves to a loopback or private address, so a wildcard grant or
/// a hostile DNS answer cannot reach the operator's own network. (The connection resolves the
/// name again; a DNS server that changes its answer in between is not caught.)
async fn check_public(uri: &axum::http::Uri, plugin: &str) -> Result<(), Error> {
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
    if let Some(local) = addresses.into_iter().find(|ip| is_local_address(*ip)) {
        tracing::warn!(
            plugin,
            "network request denied: {host} resolves to {local}, a local address; grant the \
             address itself to allow it"
        );
        return Err(Error::DestinationIpProhibited);
    }
    Ok(())
}
