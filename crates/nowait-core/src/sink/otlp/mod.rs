//! The OTLP sink ([`Sink::otlp`](crate::sink::Sink::otlp)): records as
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
mod env;
#[cfg(all(fuzzing, feature = "otlp-tls"))]
mod fuzz;
mod http;
mod open;
#[cfg(feature = "otlp-tls")]
mod tls;
mod wire;

pub(crate) use client::Client;
pub(crate) use encode::MakeOtlp;
#[cfg(fuzzing)]
pub(crate) use env::fuzz_env;
#[cfg(all(fuzzing, feature = "otlp-tls"))]
pub(crate) use fuzz::fuzz_exchange;
#[cfg(fuzzing)]
pub(crate) use http::fuzz_response;
pub(super) use open::{open, settle};

use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Default bound on the records of one request.
const DEFAULT_MAX_BATCH: usize = 256 << 10;
/// Default wait for an answer.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// An OTLP/HTTP receiver and what to send it, for [`Sink::otlp`](crate::sink::Sink::otlp).
///
/// `http://`, or `https://` with the `otlp-tls` feature (TLS through
/// rustls on the writer thread, never waiting; without the feature an
/// `https://` endpoint is a [`BuildError`](crate::error::BuildError): send to a
/// collector or agent nearby, which forwards over TLS). Settings can also
/// come from the OpenTelemetry environment variables
/// ([`Otlp::from_env`]).
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Sink};
/// use nowait_core::sink::Otlp;
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
    /// Extra request headers, `(name, value)`; values are secrets (never
    /// in `Debug` output or a notice).
    pub(crate) headers: Vec<(String, String)>,
    /// [`Otlp::allow_plaintext_credentials`].
    pub(crate) plaintext_credentials: bool,
    /// The endpoint is [`Otlp::from_env`]'s default: no endpoint variable
    /// was set at all.
    pub(crate) default_endpoint: bool,
    /// Trust and client certificate for `https://`.
    #[cfg(feature = "otlp-tls")]
    pub(crate) tls: tls::TlsSettings,
}

/// A parsed and resolved endpoint.
#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    pub(crate) addr: SocketAddr,
    /// `host:port` as given, for the `Host` header.
    pub(crate) host: String,
    pub(crate) path: String,
    /// `https://`: the host name (or address) the certificate must name.
    pub(crate) tls: Option<String>,
}

impl fmt::Debug for Otlp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Otlp");
        d.field("endpoint", &self.url())
            .field("service_name", &self.service_name)
            .field("gzip", &self.gzip)
            .field("max_batch_bytes", &self.max_batch_bytes)
            .field("timeout", &self.timeout)
            // Names only: values are often credentials.
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("allow_plaintext_credentials", &self.plaintext_credentials);
        #[cfg(feature = "otlp-tls")]
        d.field("tls", &self.tls);
        d.finish_non_exhaustive()
    }
}

/// Headers the request writes itself: one given again would contradict it.
const OWN_HEADERS: [&str; 6] = [
    "host",
    "content-length",
    "content-type",
    "content-encoding",
    "transfer-encoding",
    "connection",
];

/// Whether `name: value` can go in a request as given; the error names
/// the header, never its value.
fn check_header(name: &str, value: &str) -> Result<(), String> {
    // RFC 9110 5.6.2: token = 1*tchar.
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(tchar) {
        return Err(format!(
            "header \"{}\": not a valid header name",
            shown(name)
        ));
    }
    if OWN_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name)) {
        return Err(format!("header {name}: set by the sink itself"));
    }
    // RFC 9110 5.5: field-vchar and obs-text, with blanks inside.
    if value.bytes().any(|b| (b < b' ' && b != b'\t') || b == 0x7f) {
        return Err(format!(
            "header {name}: the value has control characters (CR, LF...)"
        ));
    }
    Ok(())
}

/// `Name: value\r\n` for each extra header, once, for every request.
pub(crate) fn header_block(headers: &[(String, String)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.trim_matches([' ', '\t']).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Whether a header carries a credential: `Authorization`,
/// `Proxy-Authorization`, `Cookie`, or a name holding `auth`, `key`,
/// `token`, `secret`, `passw` or `credential` (any case: `X-Api-Key`,
/// `X-Auth-Token`, `DD-API-KEY`, `lightstep-access-token`). A secret sent
/// under another name is not recognised: send it over `https://`.
pub(crate) fn is_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "cookie"
        || ["auth", "key", "token", "secret", "passw", "credential"]
            .iter()
            .any(|part| name.contains(part))
}

/// `text` with every control, line-breaking and bidirectional formatting
/// character escaped ([`escape_into`](crate::format::escape_into)), for an
/// error that quotes what the environment or a caller gave: it cannot
/// move the cursor or forge a line of the terminal that prints it.
pub(crate) fn shown(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    crate::format::escape_into(text.as_bytes(), &mut out);
    // Escaping keeps UTF-8 valid (invalid bytes become `\xNN`).
    String::from_utf8_lossy(&out).into_owned()
}

/// Resolves `host` (no brackets) and `port` to the address the sink
/// connects to; fuzzing passes one that never asks the network.
pub(crate) type Resolve<'a> = &'a dyn Fn(&str, u16) -> io::Result<SocketAddr>;

/// The system's resolver: the first address `host` has.
pub(crate) fn resolve(host: &str, port: u16) -> io::Result<SocketAddr> {
    (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "it has no address"))
}

/// Parses `http[s]://host[:port][/path]` and resolves the host (once,
/// here); no path is OTLP's `/v1/logs`.
fn parse(endpoint: &str) -> Result<Endpoint, String> {
    parse_url(endpoint, true, &resolve)
}

/// As [`parse`], but the path is used as given (`/` if none), as the
/// specification wants for `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`.
fn parse_as_is(endpoint: &str, resolve: Resolve<'_>) -> Result<Endpoint, String> {
    parse_url(endpoint, false, resolve)
}

/// Errors quote the endpoint escaped ([`shown`]): it may come from the
/// environment.
fn parse_url(raw: &str, default_path: bool, resolve: Resolve<'_>) -> Result<Endpoint, String> {
    let endpoint = &shown(raw);
    let (rest, tls) = if let Some(rest) = raw.strip_prefix("http://") {
        (rest, false)
    } else if let Some(rest) = raw.strip_prefix("https://") {
        if cfg!(not(feature = "otlp-tls")) {
            return Err(format!(
                "{endpoint}: https needs nowait-core's otlp-tls feature; without it, send \
                 plain http to a collector or agent nearby, which can forward over TLS"
            ));
        }
        (rest, true)
    } else {
        return Err(format!(
            "{endpoint}: expected http://host:port or https://host:port"
        ));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains('@') {
        return Err(format!("{endpoint}: expected http[s]://host:port"));
    }
    // Printable ASCII only, none of the characters a URL never holds
    // there: the host goes into the `Host` header, the sink's name and
    // every message about it as given.
    let unfit = |b: u8| !b.is_ascii_graphic() || b"\"<>\\^`{|}".contains(&b);
    if authority.bytes().any(unfit) {
        return Err(format!(
            "{endpoint}: the host has characters a URL cannot hold (spaces, controls, \
             non-ASCII: percent-encode or punycode it)"
        ));
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
    if bare.is_empty() {
        return Err(format!("{endpoint}: expected http[s]://host:port"));
    }
    let addr = resolve(bare, port)
        .map_err(|e| format!("{endpoint}: cannot resolve {}: {e}", shown(bare)))?;
    let path = match path {
        "" | "/" if default_path => "/v1/logs".to_owned(),
        "" => "/".to_owned(),
        path => path.to_owned(),
    };
    // The request line's target: printable ASCII (RFC 9112 3.2).
    if path.bytes().any(|b| !b.is_ascii_graphic()) {
        return Err(format!(
            "{endpoint}: the path has spaces, controls or non-ASCII (percent-encode them)"
        ));
    }
    Ok(Endpoint {
        addr,
        host: format!("{host}:{port}"),
        path,
        tls: tls.then(|| bare.to_owned()),
    })
}

impl Otlp {
    /// A receiver at `endpoint`: `http://host:port` (the path defaults to
    /// `/v1/logs`, OTLP's; give another after the port if the receiver
    /// wants one; the port defaults to 4318). The host is resolved here,
    /// once, on the calling thread; the writer thread never resolves names.
    /// A bad or `https://` endpoint, or one that does not resolve, is a
    /// [`BuildError`](crate::error::BuildError) from
    /// `Builder::build`.
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::sink::Otlp::new("http://localhost:4318");
    /// # let _ = otlp;
    /// ```
    pub fn new(endpoint: &str) -> Otlp {
        Otlp::with_endpoint(parse(endpoint))
    }

    fn with_endpoint(endpoint: Result<Endpoint, String>) -> Otlp {
        Otlp {
            endpoint,
            service_name: None,
            resource: Vec::new(),
            gzip: false,
            max_batch_bytes: DEFAULT_MAX_BATCH,
            timeout: DEFAULT_TIMEOUT,
            headers: Vec::new(),
            plaintext_credentials: false,
            default_endpoint: false,
            #[cfg(feature = "otlp-tls")]
            tls: tls::TlsSettings::default(),
        }
    }

    /// The receiver and settings the OpenTelemetry specification's
    /// environment variables give, read from the process environment;
    /// `Ok(None)` if `OTEL_SDK_DISABLED` is `true` (add no sink then). See
    /// [`Otlp::from_env_with`] for the variables and the precedence.
    ///
    /// # Errors
    ///
    /// A [`BuildError`](crate::error::BuildError) naming the variable that is not
    /// valid (or not UTF-8), whose endpoint does not resolve, that is an
    /// endpoint set but empty, or that is a TLS setting beside an
    /// `http://` endpoint.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Sink};
    /// use nowait_core::sink::Otlp;
    ///
    /// let mut builder = Builder::new();
    /// if let Some(otlp) = Otlp::from_env()? {
    ///     // Code comes after the environment, so it wins.
    ///     builder = builder.sink(Sink::otlp(otlp.max_batch_bytes(64 << 10)));
    /// }
    /// # let _ = builder;
    /// # Ok::<(), nowait_core::BuildError>(())
    /// ```
    pub fn from_env() -> Result<Option<Otlp>, crate::error::BuildError> {
        let mut not_text = None;
        let otlp = env::from_env_with(|name| match std::env::var(name) {
            Ok(v) => Some(v),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(_)) => {
                not_text.get_or_insert_with(|| name.to_owned());
                None
            }
        });
        match not_text {
            Some(name) => Err(crate::error::BuildError::config(format!(
                "{name}: not UTF-8"
            ))),
            None => otlp,
        }
    }

    /// [`Otlp::from_env`] with the variables read through `get` (a
    /// variable's value, or `None` if unset), for tests and for settings
    /// kept elsewhere than the process environment.
    ///
    /// The variables, as the OpenTelemetry specification defines them
    /// (OTLP exporter, SDK configuration); an empty value is unset (an
    /// endpoint variable excepted: set but empty is an error), and a
    /// `..._LOGS_...` variable wins over its generic one (never merged):
    ///
    /// | variable | meaning |
    /// | --- | --- |
    /// | `OTEL_SDK_DISABLED` | `true` (any case): `Ok(None)`; any other value is false |
    /// | `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` | the URL, used as is |
    /// | `OTEL_EXPORTER_OTLP_ENDPOINT` | a base URL, `/v1/logs` appended; `http://localhost:4318` only if neither endpoint variable is set |
    /// | `OTEL_EXPORTER_OTLP_[LOGS_]PROTOCOL` | `http/protobuf` only, else an error |
    /// | `OTEL_EXPORTER_OTLP_[LOGS_]HEADERS` | `k=v,k2=v2`, percent-decoded ([`Otlp::header`]) |
    /// | `OTEL_EXPORTER_OTLP_[LOGS_]TIMEOUT` | milliseconds, 1 to 3 600 000 ([`Otlp::timeout`]) |
    /// | `OTEL_EXPORTER_OTLP_[LOGS_]COMPRESSION` | `gzip` or `none` ([`Otlp::gzip`]) |
    /// | `OTEL_EXPORTER_OTLP_[LOGS_]CERTIFICATE` | a PEM file of CA certificates to trust (feature `otlp-tls`; an `https://` endpoint) |
    /// | `OTEL_EXPORTER_OTLP_[LOGS_]CLIENT_CERTIFICATE`, `..._CLIENT_KEY` | PEM files for mTLS (feature `otlp-tls`; an `https://` endpoint) |
    /// | `OTEL_RESOURCE_ATTRIBUTES` | `k=v,k2=v2`, percent-decoded ([`Otlp::resource_attribute`]) |
    /// | `OTEL_SERVICE_NAME` | `service.name`, over one in `OTEL_RESOURCE_ATTRIBUTES` |
    ///
    /// Precedence: the environment gives the starting point and code comes
    /// after it, so a setting made by calling a method on the result wins
    /// (a header or resource attribute of the same name is replaced);
    /// what the environment leaves unset keeps [`Otlp::new`]'s defaults.
    /// Values are untrusted: each is at most 16 KiB, a list at most 128
    /// entries, and anything malformed is an error naming its variable
    /// (and a header's name, never its value), what it quotes escaped. A
    /// certificate variable with an `http://` endpoint is an error naming
    /// it. Credential headers over plain HTTP are judged at build, where
    /// code may have opted in: see
    /// [`Otlp::allow_plaintext_credentials`].
    ///
    /// # Errors
    ///
    /// As [`Otlp::from_env`].
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::sink::Otlp;
    ///
    /// let vars = [
    ///     ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
    ///     ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%3Dcret"),
    ///     ("OTEL_SERVICE_NAME", "checkout"),
    /// ];
    /// let get = |name: &str| {
    ///     vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    /// };
    /// let otlp = Otlp::from_env_with(get)?.expect("not disabled");
    /// assert!(format!("{otlp:?}").contains("http://127.0.0.1:4318/v1/logs"));
    ///
    /// let bad = |name: &str| (name == "OTEL_EXPORTER_OTLP_TIMEOUT").then(|| "soon".to_string());
    /// let err = Otlp::from_env_with(bad).unwrap_err();
    /// assert!(err.to_string().contains("OTEL_EXPORTER_OTLP_TIMEOUT"));
    /// # Ok::<(), nowait_core::BuildError>(())
    /// ```
    pub fn from_env_with(
        get: impl FnMut(&str) -> Option<String>,
    ) -> Result<Option<Otlp>, crate::error::BuildError> {
        env::from_env_with(get)
    }

    /// Adds a header to every request, e.g. the `Authorization` or API key
    /// a hosted backend asks for; a second call with the same name
    /// (compared without case) replaces the first.
    ///
    /// The value is treated as a secret: it is never written to a notice,
    /// an error or `Debug` output, which show the name only. A name that
    /// is not an HTTP token, a value with control characters (CR, LF...),
    /// or a header the sink writes itself (`Host`, `Content-Length`,
    /// `Content-Type`, `Content-Encoding`, `Transfer-Encoding`,
    /// `Connection`) is a [`BuildError`](crate::error::BuildError) from
    /// `Builder::build`. So is a credential (`Authorization`, an API key,
    /// a token...) to a plain `http://` endpoint that is not loopback:
    /// see [`Otlp::allow_plaintext_credentials`].
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::sink::Otlp::new("http://127.0.0.1:4318")
    ///     .header("Authorization", "Bearer s3cr3t");
    /// assert!(!format!("{otlp:?}").contains("s3cr3t"));
    /// ```
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Otlp {
        let (name, value) = (name.into(), value.into());
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
        self.headers.push((name, value));
        self
    }

    /// Lets credentials go over plain `http://` to a host that is not
    /// loopback (default `false`).
    ///
    /// A header counts as a credential if it is `Authorization`,
    /// `Proxy-Authorization` or `Cookie`, or if its name holds `auth`,
    /// `key`, `token`, `secret`, `passw` or `credential` (any case), from
    /// code or from `OTEL_EXPORTER_OTLP_[LOGS_]HEADERS` alike. Over plain
    /// HTTP anyone on the path reads it, so without this opt-in
    /// `Builder::build` refuses such a header with an `http://` endpoint
    /// whose address is not loopback. To a loopback address it is
    /// allowed, with one warning notice in every sink's output at build
    /// (any local user who binds the port first gets the header). To
    /// [`from_env`](Otlp::from_env)'s default endpoint (no endpoint
    /// variable set at all: a misspelt name is the usual reason) it is a
    /// build error as well. With this opt-in all three are allowed and no
    /// notice is written: for a receiver reached through a tunnel or a
    /// sidecar that encrypts. There is no environment variable for it.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::sink::Otlp;
    /// use nowait_core::{Builder, Sink};
    ///
    /// let refused = Builder::new()
    ///     .sink(Sink::otlp(
    ///         Otlp::new("http://192.0.2.1:4318").header("Authorization", "Bearer s3cr3t"),
    ///     ))
    ///     .build();
    /// assert!(refused.unwrap_err().to_string().contains("Authorization"));
    ///
    /// // The receiver is reached through an encrypting sidecar.
    /// let otlp = Otlp::new("http://192.0.2.1:4318")
    ///     .header("Authorization", "Bearer s3cr3t")
    ///     .allow_plaintext_credentials(true);
    /// # let _ = otlp;
    /// ```
    pub fn allow_plaintext_credentials(mut self, allow: bool) -> Otlp {
        self.plaintext_credentials = allow;
        self
    }

    /// The resource's `service.name` (default `unknown_service:` and the
    /// executable's name, as OpenTelemetry's SDKs do).
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::sink::Otlp::new("http://127.0.0.1:4318").service_name("checkout");
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
    /// let otlp = nowait_core::sink::Otlp::new("http://127.0.0.1:4318")
    ///     .resource_attribute("service.version", "1.4.2");
    /// # let _ = otlp;
    /// ```
    pub fn resource_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Otlp {
        let key = key.into();
        self.resource.retain(|(k, _)| *k != key);
        self.resource.push((key, value.into()));
        self
    }

    /// Gzips each request (`Content-Encoding: gzip`; default off). Costs
    /// the writer thread the compression (flate2's fastest level), saves
    /// the network 5 to 10 times the bytes on typical records.
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::sink::Otlp::new("http://127.0.0.1:4318").gzip(true);
    /// # let _ = otlp;
    /// ```
    pub fn gzip(mut self, on: bool) -> Otlp {
        self.gzip = on;
        self
    }

    /// Bounds the encoded records of one request (default 256 KiB, at least
    /// 1 KiB, else `Builder::build` fails); a
    /// single record larger than that goes alone. Keep it well below the
    /// sink's [`buffer_size`](crate::sink::Sink::buffer_size), which must also
    /// hold what comes while a request is in flight.
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::sink::Otlp::new("http://127.0.0.1:4318").max_batch_bytes(64 << 10);
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
    /// let otlp = nowait_core::sink::Otlp::new("http://127.0.0.1:4318")
    ///     .timeout(std::time::Duration::from_secs(2));
    /// # let _ = otlp;
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Otlp {
        self.timeout = timeout;
        self
    }

    /// `http[s]://host:port/path` as given (for the sink's name).
    pub(crate) fn url(&self) -> String {
        match &self.endpoint {
            Ok(e) => {
                let scheme = if e.tls.is_some() { "https" } else { "http" };
                format!("{scheme}://{}{}", e.host, e.path)
            }
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
        for (name, value) in &self.headers {
            check_header(name, value)?;
        }
        self.check_tls_scheme()?;
        #[cfg(feature = "otlp-tls")]
        self.tls.check()?;
        self.check_plaintext_credentials()?;
        Ok(())
    }

    /// TLS settings (a CA, a client certificate or key) with a plain
    /// `http://` endpoint: an error naming the setting, rather than TLS
    /// settings silently left unused while everything goes in clear.
    pub(crate) fn check_tls_scheme(&self) -> Result<(), String> {
        #[cfg(feature = "otlp-tls")]
        if let Ok(Endpoint { tls: None, .. }) = &self.endpoint {
            if let Some(set_by) = self.tls.set_by.first() {
                return Err(format!(
                    "{set_by} is set, but the endpoint {} is plain http: TLS settings need \
                     an https:// endpoint (nothing would be encrypted)",
                    self.url()
                ));
            }
        }
        Ok(())
    }

    /// The credential headers ([`is_credential`]) of a plain `http://`
    /// endpoint, by name, and whether its address is loopback; `None` over
    /// TLS, without such headers, or with the opt-in.
    fn plaintext_credentials(&self) -> Option<(Vec<&str>, bool)> {
        let Ok(endpoint) = &self.endpoint else {
            return None;
        };
        if endpoint.tls.is_some() || self.plaintext_credentials {
            return None;
        }
        let names: Vec<&str> = (self.headers.iter())
            .map(|(n, _)| n.as_str())
            .filter(|n| is_credential(n))
            .collect();
        (!names.is_empty()).then(|| (names, endpoint.addr.ip().is_loopback()))
    }

    /// Credentials in clear: an error to a host that is not loopback, or
    /// to the environment's default endpoint (see
    /// [`Otlp::allow_plaintext_credentials`]).
    fn check_plaintext_credentials(&self) -> Result<(), String> {
        let Some((names, loopback)) = self.plaintext_credentials() else {
            return Ok(());
        };
        let names = names.join(", ");
        if self.default_endpoint {
            return Err(format!(
                "the credential header(s) {names} would go in clear to the default endpoint {}, \
                 because neither OTEL_EXPORTER_OTLP_LOGS_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT \
                 is set (is the name misspelt?); any local user can listen there. Set the \
                 endpoint, or call Otlp::allow_plaintext_credentials(true)",
                self.url()
            ));
        }
        if !loopback {
            return Err(format!(
                "the credential header(s) {names} would go in clear to {}, readable by anyone \
                 on the path: use an https:// endpoint, or call \
                 Otlp::allow_plaintext_credentials(true) if the path is encrypted otherwise",
                self.url()
            ));
        }
        Ok(())
    }

    /// The warning to write once at build, if credentials go in clear to a
    /// loopback address.
    pub(crate) fn plaintext_warning(&self) -> Option<String> {
        let (names, _) = self.plaintext_credentials()?;
        Some(format!(
            "the credential header(s) {} go in clear to {} (loopback: any local user who \
             binds that port first receives them); use https://, or \
             Otlp::allow_plaintext_credentials(true) to silence this",
            names.join(", "),
            self.url()
        ))
    }

    /// The output: a connection started without waiting.
    pub(crate) fn open(&self) -> io::Result<Client> {
        self.open_with(|endpoint| {
            crate::sys::Stream::exchanging(crate::sys::Peer::Tcp(endpoint.addr))
        })
    }

    /// The output over the connection `connect` makes for the endpoint
    /// (the socket, or, fuzzed, a receiver in memory), once the settings
    /// have checked out.
    pub(crate) fn open_with<W: wire::Wire>(
        &self,
        connect: impl FnOnce(&Endpoint) -> io::Result<W>,
    ) -> io::Result<Client<W>> {
        let endpoint = self
            .endpoint
            .clone()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        #[cfg(feature = "otlp-tls")]
        let session = match &endpoint.tls {
            Some(name) => Some(tls::Session::new(&self.tls, name)?),
            None => None,
        };
        let conn = connect(&endpoint)?;
        let client = Client::new(
            conn,
            endpoint,
            encode::Envelope::new(&self.resource()),
            self,
        );
        #[cfg(feature = "otlp-tls")]
        let client = match session {
            Some(session) => client.with_tls(session),
            None => client,
        };
        Ok(client)
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
        #[cfg(not(feature = "otlp-tls"))]
        assert!(parse("https://127.0.0.1:4318")
            .unwrap_err()
            .contains("otlp-tls feature"));
        #[cfg(feature = "otlp-tls")]
        assert_eq!(
            parse("https://localhost/").unwrap().tls.as_deref(),
            Some("localhost")
        );
        assert_eq!(
            parse_as_is("http://127.0.0.1:4318", &resolve).unwrap().path,
            "/"
        );
        assert!(parse("127.0.0.1:4318").is_err());
        assert!(parse("http://127.0.0.1:99999").is_err());
        assert!(parse("http://127.0.0.1:1/a b").is_err());
    }

    /// An endpoint's host and path are printable ASCII: they go into the
    /// request, the sink's name and every message as given, so a bidi
    /// control or a non-ASCII byte there is refused (percent-encoded, it
    /// is fine).
    #[test]
    fn endpoints_hold_printable_ascii_only() {
        for bad in [
            "http://127.0.0.1:1/\u{202e}gol/",
            "http://127.0.0.1:1/caf\u{e9}",
            "http://127.0.0.1:1/a\u{85}b",
            "http://exa\u{202e}mple:1/",
            "http://a\x08b:1/",
            "http://a\r\nHost: b:1/",
            "http://[::1\u{2028}]:1/",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(
                crate::format::unescaped_at(e.as_bytes(), &[]),
                None,
                "{bad:?}: {e:?}"
            );
        }
        assert!(parse("http://127.0.0.1:1/caf%C3%A9").is_ok());
    }

    #[test]
    fn headers_are_checked_and_their_values_stay_secret() {
        let ok = Otlp::new("http://127.0.0.1:4318")
            .header("Authorization", "Basic c2VjcmV0")
            .header("authorization", "Bearer tok3n")
            .header("X-Api-Key", "k");
        assert_eq!(ok.check(), Ok(()));
        assert_eq!(ok.headers.len(), 2, "same name replaced");
        assert_eq!(
            header_block(&ok.headers),
            b"authorization: Bearer tok3n\r\nX-Api-Key: k\r\n"
        );
        assert!(!format!("{ok:?}").contains("tok3n"));
        for (name, value) in [
            ("Bad Name", "s3cr3t"),
            ("", "s3cr3t"),
            ("X-Injected", "s3cr3t\r\nHost: evil"),
            ("X-Nul", "s3cr3t\0"),
            ("content-length", "s3cr3t"),
            ("Host", "s3cr3t"),
        ] {
            let err = Otlp::new("http://127.0.0.1:4318")
                .header(name, value)
                .check()
                .unwrap_err();
            assert!(!err.contains("s3cr3t"), "{err}");
        }
    }

    /// Which headers count as credentials.
    #[test]
    fn credential_headers_by_name() {
        for name in [
            "Authorization",
            "proxy-authorization",
            "Cookie",
            "X-Api-Key",
            "DD-API-KEY",
            "X-Auth-Token",
            "lightstep-access-token",
            "X-Client-Secret",
            "X-Password",
            "X-Credentials",
        ] {
            assert!(is_credential(name), "{name}");
        }
        for name in ["X-Scope-OrgID", "X-Axiom-Dataset", "User-Agent", "X-Tenant"] {
            assert!(!is_credential(name), "{name}");
        }
    }

    /// Credentials over plain HTTP: refused to a host that is not
    /// loopback (the error names the header, never its value), allowed to
    /// loopback with a warning, allowed silently with the opt-in; a header
    /// that is no credential goes anywhere.
    #[test]
    fn credentials_in_clear_are_refused_unless_loopback_or_allowed() {
        let remote = || Otlp::new("http://192.0.2.1:4318");
        for (name, value) in [("Authorization", "Bearer s3cr3t"), ("X-Api-Key", "s3cr3t")] {
            let otlp = remote().header(name, value);
            let e = otlp.check().unwrap_err();
            assert!(e.contains(name) && e.contains("in clear"), "{e}");
            assert!(!e.contains("s3cr3t"), "{e}");
            let allowed = otlp.allow_plaintext_credentials(true);
            assert_eq!(allowed.check(), Ok(()));
            assert_eq!(allowed.plaintext_warning(), None);
        }
        assert_eq!(remote().header("X-Scope-OrgID", "t").check(), Ok(()));
        for local in ["http://127.0.0.1:4318", "http://[::1]:4318"] {
            let otlp = Otlp::new(local).header("Authorization", "Bearer s3cr3t");
            assert_eq!(otlp.check(), Ok(()));
            let warning = otlp.plaintext_warning().unwrap();
            assert!(warning.contains("Authorization"), "{warning}");
            assert!(!warning.contains("s3cr3t"), "{warning}");
        }
        #[cfg(feature = "otlp-tls")]
        {
            let otlp = Otlp::new("https://127.0.0.1:4318").header("Authorization", "s3cr3t");
            assert_eq!(otlp.check(), Ok(()));
            assert_eq!(otlp.plaintext_warning(), None);
        }
    }

    /// TLS settings made in code with an `http://` endpoint: an error
    /// naming the method, before any file is looked at.
    #[cfg(feature = "otlp-tls")]
    #[test]
    fn tls_settings_with_an_http_endpoint_are_an_error_naming_them() {
        let http = || Otlp::new("http://127.0.0.1:4318");
        for (otlp, method) in [
            (
                http().ca_certificate("/no/such.pem"),
                "Otlp::ca_certificate",
            ),
            (http().ca_certificate_pem("x"), "Otlp::ca_certificate_pem"),
            (
                http().client_certificate("/c.pem", "/c.key"),
                "Otlp::client_certificate",
            ),
            (
                http().client_certificate_pem("c", "k"),
                "Otlp::client_certificate_pem",
            ),
        ] {
            let e = otlp.check().unwrap_err();
            assert!(e.contains(method) && e.contains("https://"), "{e}");
        }
    }
}
