//! The OTLP sink ([`Sink::otlp`](crate::Sink::otlp)): records as
//! OpenTelemetry `LogRecord`s, sent as OTLP/HTTP protobuf requests by the
//! writer thread itself, without ever waiting on the receiver.
//!
//! # Design
//!
//! 1. The sink's format ([`encode`]) writes each record as one
//!    `ScopeLogs.log_records` field. The sink's buffer is then a run of
//!    whole protobuf fields, one per record, and the writer keeps its usual
//!    per-record boundaries and counters.
//! 2. The output ([`client`]) takes a prefix of whole records (at most
//!    [`Otlp::max_batch_bytes`]), wraps it in the request's envelope
//!    (resource and scope, encoded once), gzips it if asked, and sends one
//!    `POST` over a keep-alive HTTP/1.1 connection. One request is in
//!    flight at a time. Connect, send and receive never wait: while the
//!    request goes out or the answer is awaited, the output reports "would
//!    block" and the writer polls the socket (for room, then for the
//!    answer) with its other descriptors.
//! 3. The records of a request stay in the sink's buffer, pending, until
//!    the receiver answers: a 2xx makes them written (less the
//!    `rejected_log_records` of a partial success, dropped as refused); a
//!    429, 502, 503 or 504, a lost connection or no answer within the
//!    timeout is a failure, retried with back-off (`Retry-After` honoured)
//!    with the same records first; any other status refuses them for good
//!    (dropped, counted as refused, never retried). While a receiver is
//!    slow or down the buffer fills and the sink sheds alone, as every
//!    other sink does.
//!
//! A request whose answer is lost (the receiver took it, then the
//! connection broke) is sent again: OTLP delivery is at least once.
//!
//! Values go as they are: every string is length-delimited, so no value
//! can forge an attribute or a record, and control characters are kept as
//! data (invalid UTF-8 becomes U+FFFD). Unlike the text formats, which
//! escape them because a terminal would act on them, a protobuf field is
//! not a line; whatever later prints it to a terminal escapes it there.

mod client;
pub(crate) mod encode;
mod http;

pub(crate) use client::Client;
pub(crate) use encode::MakeOtlp;
#[cfg(feature = "fuzzing")]
pub(crate) use http::fuzz_response;

use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Default bound on the records of one request.
const DEFAULT_MAX_BATCH: usize = 256 << 10;
/// Default wait for an answer.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// An OTLP/HTTP receiver and what to send it, for [`Sink::otlp`](crate::Sink::otlp).
///
/// Plain `http://` only: TLS is not supported (`https://` is a
/// [`BuildError`](crate::BuildError)); send to a collector or agent on
/// the same host or network, which forwards over TLS.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Otlp, Sink};
///
/// let sink = Sink::otlp(
///     Otlp::new("http://127.0.0.1:4318")
///         .service_name("checkout")
///         .resource_attribute("deployment.environment", "production")
///         .gzip(true),
/// );
/// # let _ = sink;
/// ```
#[derive(Clone)]
pub struct Otlp {
    pub(crate) endpoint: Result<Endpoint, String>,
    pub(crate) service_name: Option<String>,
    pub(crate) resource: Vec<(String, String)>,
    pub(crate) gzip: bool,
    pub(crate) max_batch_bytes: usize,
    pub(crate) timeout: Duration,
}

/// A parsed and resolved endpoint.
#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    pub(crate) addr: SocketAddr,
    /// `host:port` as given, for the `Host` header.
    pub(crate) host: String,
    pub(crate) path: String,
}

impl fmt::Debug for Otlp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Otlp")
            .field("endpoint", &self.url())
            .field("service_name", &self.service_name)
            .field("gzip", &self.gzip)
            .field("max_batch_bytes", &self.max_batch_bytes)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Parses `http://host[:port][/path]` and resolves the host (once, here).
fn parse(endpoint: &str) -> Result<Endpoint, String> {
    let rest = if let Some(rest) = endpoint.strip_prefix("http://") {
        rest
    } else if endpoint.starts_with("https://") {
        return Err(format!(
            "{endpoint}: https is not supported by nowait's OTLP sink; send plain http to a \
             collector or agent nearby, which can forward over TLS"
        ));
    } else {
        return Err(format!("{endpoint}: expected http://host:port"));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains('@') {
        return Err(format!("{endpoint}: expected http://host:port"));
    }
    // The port: after the last colon, unless that is inside [v6].
    let (host, port) = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => {
            let port = authority[i + 1..]
                .parse::<u16>()
                .map_err(|_| format!("{endpoint}: bad port"))?;
            (&authority[..i], port)
        }
        _ => (authority, 4318),
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addr = (bare, port)
        .to_socket_addrs()
        .map_err(|e| format!("{endpoint}: cannot resolve {bare}: {e}"))?
        .next()
        .ok_or_else(|| format!("{endpoint}: {bare} resolves to no address"))?;
    let path = if path.is_empty() || path == "/" {
        "/v1/logs".to_owned()
    } else {
        path.to_owned()
    };
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(format!("{endpoint}: the path has spaces or controls"));
    }
    Ok(Endpoint {
        addr,
        host: format!("{host}:{port}"),
        path,
    })
}

impl Otlp {
    /// A receiver at `endpoint`: `http://host:port` (the path defaults to
    /// `/v1/logs`, OTLP's; give another after the port if the receiver
    /// wants one; the port defaults to 4318). The host is resolved here,
    /// once, on the calling thread; the writer thread never resolves names.
    /// A bad or `https://` endpoint, or one that does not resolve, is a
    /// [`BuildError`](crate::BuildError) from
    /// [`Builder::build`](crate::Builder::build).
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::Otlp::new("http://localhost:4318");
    /// # let _ = otlp;
    /// ```
    pub fn new(endpoint: &str) -> Otlp {
        Otlp {
            endpoint: parse(endpoint),
            service_name: None,
            resource: Vec::new(),
            gzip: false,
            max_batch_bytes: DEFAULT_MAX_BATCH,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The resource's `service.name` (default `unknown_service:` and the
    /// executable's name, as OpenTelemetry's SDKs do).
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::Otlp::new("http://127.0.0.1:4318").service_name("checkout");
    /// # let _ = otlp;
    /// ```
    pub fn service_name(mut self, name: impl Into<String>) -> Otlp {
        self.service_name = Some(name.into());
        self
    }

    /// Adds a string attribute to the resource (`service.version`,
    /// `deployment.environment`, `host.name`...), sent with every request.
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::Otlp::new("http://127.0.0.1:4318")
    ///     .resource_attribute("service.version", "1.4.2");
    /// # let _ = otlp;
    /// ```
    pub fn resource_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Otlp {
        self.resource.push((key.into(), value.into()));
        self
    }

    /// Gzips each request (`Content-Encoding: gzip`; default off). Costs
    /// the writer thread the compression (flate2's fastest level), saves
    /// the network 5 to 10 times the bytes on typical records.
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::Otlp::new("http://127.0.0.1:4318").gzip(true);
    /// # let _ = otlp;
    /// ```
    pub fn gzip(mut self, on: bool) -> Otlp {
        self.gzip = on;
        self
    }

    /// Bounds the encoded records of one request (default 256 KiB, at least
    /// 1 KiB, else [`Builder::build`](crate::Builder::build) fails); a
    /// single record larger than that goes alone. Keep it well below the
    /// sink's [`buffer_size`](crate::Sink::buffer_size), which must also
    /// hold what comes while a request is in flight.
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::Otlp::new("http://127.0.0.1:4318").max_batch_bytes(64 << 10);
    /// # let _ = otlp;
    /// ```
    pub fn max_batch_bytes(mut self, bytes: usize) -> Otlp {
        self.max_batch_bytes = bytes;
        self
    }

    /// How long a request may take, from its start to the whole answer
    /// (default 10 s). Past it the connection is dropped and the request
    /// is a failure, retried with back-off. Flushes and the shutdown wait
    /// for a request in flight up to this, within their own timeouts.
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::Otlp::new("http://127.0.0.1:4318")
    ///     .timeout(std::time::Duration::from_secs(2));
    /// # let _ = otlp;
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Otlp {
        self.timeout = timeout;
        self
    }

    /// `http://host:port/path` as given (for the sink's name).
    pub(crate) fn url(&self) -> String {
        match &self.endpoint {
            Ok(e) => format!("http://{}{}", e.host, e.path),
            Err(_) => "?".into(),
        }
    }

    /// The resource's attributes, `service.name` first.
    fn resource(&self) -> Vec<(String, String)> {
        let service = self.service_name.clone().unwrap_or_else(|| {
            let exe = std::env::current_exe().ok();
            let name = exe
                .as_ref()
                .and_then(|p| p.file_stem())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("unknown_service:{name}")
        });
        let mut attrs = vec![("service.name".to_owned(), service)];
        attrs.extend(
            self.resource
                .iter()
                .filter(|(k, _)| k != "service.name")
                .cloned(),
        );
        attrs
    }

    /// What is wrong with the configuration, if anything.
    pub(crate) fn check(&self) -> Result<(), String> {
        self.endpoint.as_ref().map_err(Clone::clone)?;
        if self.max_batch_bytes < 1024 {
            return Err("max_batch_bytes must be at least 1 KiB".into());
        }
        if self.timeout.is_zero() {
            return Err("the timeout must not be zero".into());
        }
        Ok(())
    }

    /// The output: a connection started without waiting.
    pub(crate) fn open(&self) -> io::Result<Client> {
        let endpoint = self
            .endpoint
            .clone()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Client::new(endpoint, encode::Envelope::new(&self.resource()), self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let e = parse("http://127.0.0.1:4318").unwrap();
        assert_eq!(
            (e.addr.port(), e.host.as_str(), e.path.as_str()),
            (4318, "127.0.0.1:4318", "/v1/logs")
        );
        let e = parse("http://[::1]:9/otlp/v1/logs").unwrap();
        assert_eq!(
            (e.addr.port(), e.host.as_str(), e.path.as_str()),
            (9, "[::1]:9", "/otlp/v1/logs")
        );
        let e = parse("http://127.0.0.1/").unwrap();
        assert_eq!((e.addr.port(), e.path.as_str()), (4318, "/v1/logs"));
        assert!(parse("https://127.0.0.1:4318")
            .unwrap_err()
            .contains("https is not supported"));
        assert!(parse("127.0.0.1:4318").is_err());
        assert!(parse("http://127.0.0.1:99999").is_err());
        assert!(parse("http://127.0.0.1:1/a b").is_err());
    }
}
