//! Sending one granted `wasi:http` request: TCP to the address the policy checked, TLS with the
//! plugin's trust roots, HTTP/1.1; every wait bounded by the request's own options and by the
//! call's deadline, whichever comes first.
//!
//! `network.rs` decides whether a request may leave; this file only carries it.

use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt as _;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};
use tokio_util::either::Either;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

use crate::tls::TlsTrust;

/// What the guest waits on for the connection to finish its work after the response came.
pub(crate) type Io = Box<dyn Future<Output = Result<(), Error>> + Send>;

/// Where a request goes: the name it addresses (for TLS, the name its certificate must carry)
/// and the addresses to connect to.
pub(crate) struct Destination {
    /// The host as the URI names it, without brackets.
    pub host: String,
    pub port: u16,
    pub tls: bool,
    /// The checked addresses; empty to resolve `host` when connecting (a granted local name).
    pub addresses: Vec<std::net::IpAddr>,
}

/// Why a request failed, for the plugin (an error code) and for the user (a sentence naming the
/// host and the reason, when the code alone would not say it).
pub(crate) struct Failure {
    pub error: Error,
    pub why: Option<String>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure { error, why: None }
    }
}

/// Sends `request` to `to`; nothing waits past `deadline`.
pub(crate) async fn send(
    mut request: Request<WasiBody>,
    to: Destination,
    options: Option<RequestOptions>,
    trust: &TlsTrust,
    deadline: Instant,
) -> Result<(Response<WasiBody>, Io), Failure> {
    let shown = format!(
        "{}://{}",
        if to.tls { "https" } else { "http" },
        authority(&to.host, to.port)
    );
    let options = options.unwrap_or_default();
    let until = |wait: Option<Duration>| wait_until(wait, deadline);
    // A step of setting up the connection, given up when its time runs out.
    let step = |what: &'static str| {
        let shown = shown.clone();
        move |_| Failure {
            error: Error::ConnectionTimeout,
            why: Some(format!("{shown}: no {what} before the call's time ran out")),
        }
    };

    let tcp = tokio::time::timeout_at(until(options.connect_timeout), connect(&to))
        .await
        .map_err(step("connection"))?
        .map_err(|e| Failure {
            why: Some(format!("{shown}: cannot connect: {e}")),
            error: Error::ConnectionRefused,
        })?;
    let _ = tcp.set_nodelay(true);
    let stream = if to.tls {
        let name = server_name(&to.host).map_err(|e| Failure {
            why: Some(format!("{shown}: {e}")),
            error: Error::TlsProtocolError,
        })?;
        let connector = tokio_rustls::TlsConnector::from(trust.client_config());
        let tls =
            tokio::time::timeout_at(until(options.connect_timeout), connector.connect(name, tcp))
                .await
                .map_err(step("TLS handshake"))?
                .map_err(|e| tls_failure(&shown, &e))?;
        Either::Right(tls)
    } else {
        Either::Left(tcp)
    };

    let (mut sender, connection) = tokio::time::timeout_at(
        until(options.connect_timeout),
        hyper::client::conn::http1::handshake(TokioIo::new(stream)),
    )
    .await
    .map_err(|_| Error::ConnectionTimeout)?
    .map_err(Error::Hyper)?;
    // On the wire the request names only its path: the authority is for a proxy.
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .parse()
        .map_err(|_| Error::HttpRequestUriInvalid)?;
    *request.uri_mut() = path;

    // The connection is driven while the response is awaited, then handed back as `Io`.
    let mut connection = Box::pin(connection);
    let mut connection_done = false;
    let response = {
        let mut response = std::pin::pin!(sender.send_request(request));
        let first_byte = until(options.first_byte_timeout);
        loop {
            tokio::select! {
                biased;
                answer = &mut response => break answer.map_err(Error::Hyper)?,
                ended = &mut connection, if !connection_done => {
                    connection_done = true;
                    ended.map_err(Error::Hyper)?;
                }
                () = tokio::time::sleep_until(first_byte) => {
                    return Err(Failure {
                        error: Error::ConnectionReadTimeout,
                        why: Some(format!("{shown}: no answer before the call's time ran out")),
                    });
                }
            }
        }
    };
    let io: Io = if connection_done {
        Box::new(std::future::ready(Ok(())))
    } else {
        Box::new(async move { connection.await.map_err(Error::Hyper) })
    };
    let between_bytes = options.between_bytes_timeout;
    let response = response.map(|incoming| {
        TimedBody {
            incoming,
            between_bytes,
            deadline,
            timer: Box::pin(tokio::time::sleep_until(wait_until(
                between_bytes,
                deadline,
            ))),
        }
        .boxed_unsync()
    });
    Ok((response, io))
}

/// A TCP connection to the first of `to`'s addresses that answers.
async fn connect(to: &Destination) -> std::io::Result<TcpStream> {
    if to.addresses.is_empty() {
        return TcpStream::connect((to.host.as_str(), to.port)).await;
    }
    let mut last = None;
    for ip in &to.addresses {
        match TcpStream::connect(SocketAddr::new(*ip, to.port)).await {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no address")))
}

fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The name a certificate must carry: an address for an IP literal, else the DNS name.
fn server_name(
    host: &str,
) -> Result<rustls::pki_types::ServerName<'static>, rustls::pki_types::InvalidDnsNameError> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(ip.into());
    }
    rustls::pki_types::ServerName::try_from(host.to_string())
}

/// A failed TLS handshake as the plugin's error code and the user's sentence.
fn tls_failure(shown: &str, error: &std::io::Error) -> Failure {
    let rustls_error = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>());
    match rustls_error {
        Some(rustls::Error::InvalidCertificate(why)) => Failure {
            error: Error::TlsCertificateError,
            why: Some(format!(
                "{shown}: its certificate is not trusted ({}); if an authority of your own \
                 issued it, name that authority's certificate in `ca_file` ([server] or the \
                 plugin's section)",
                certificate_reason(why)
            )),
        },
        Some(rustls::Error::AlertReceived(alert)) => Failure {
            error: Error::TlsAlertReceived {
                alert_id: Some(u8::from(*alert)),
                alert_message: Some(format!("{alert:?}")),
            },
            why: Some(format!(
                "{shown}: the server ended the TLS handshake ({alert:?})"
            )),
        },
        Some(other) => Failure {
            error: Error::TlsProtocolError,
            why: Some(format!("{shown}: TLS failed: {other}")),
        },
        None => Failure {
            error: Error::TlsProtocolError,
            why: Some(format!("{shown}: TLS failed: {error}")),
        },
    }
}

fn certificate_reason(why: &rustls::CertificateError) -> String {
    use rustls::CertificateError as E;
    match why {
        E::UnknownIssuer => "issued by an authority this plugin does not trust".into(),
        E::Expired | E::ExpiredContext { .. } => "it has expired".into(),
        E::NotValidYet | E::NotValidYetContext { .. } => "it is not valid yet".into(),
        E::NotValidForName | E::NotValidForNameContext { .. } => {
            "it was issued for another name".into()
        }
        E::Revoked => "it was revoked".into(),
        E::BadSignature => "its signature does not verify".into(),
        other => format!("{other:?}"),
    }
}

/// When a wait gives up: after `wait` (a request option), and never past the call's deadline.
fn wait_until(wait: Option<Duration>, deadline: Instant) -> Instant {
    match wait {
        Some(wait) => deadline.min(Instant::now() + wait),
        None => deadline,
    }
}

/// A response body whose every wait for a frame is bounded.
struct TimedBody {
    incoming: hyper::body::Incoming,
    between_bytes: Option<Duration>,
    deadline: Instant,
    timer: Pin<Box<Sleep>>,
}

impl http_body::Body for TimedBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Error>>> {
        match Pin::new(&mut self.incoming).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let next = wait_until(self.between_bytes, self.deadline);
                self.timer.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Error::Hyper(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match self.timer.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Error::ConnectionReadTimeout))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.incoming.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_are_checked_against_addresses_and_names() {
        assert_eq!(
            server_name("127.0.0.1").unwrap(),
            rustls::pki_types::ServerName::from(std::net::Ipv4Addr::LOCALHOST)
        );
        assert_eq!(
            server_name("::1").unwrap(),
            rustls::pki_types::ServerName::from(std::net::Ipv6Addr::LOCALHOST)
        );
        assert!(server_name("api.example.com").is_ok());
        assert!(server_name("bad name").is_err());
        assert_eq!(authority("::1", 443), "[::1]:443");
        assert_eq!(authority("example.com", 80), "example.com:80");
    }
}
