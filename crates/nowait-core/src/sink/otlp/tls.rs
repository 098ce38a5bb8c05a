//! `https://` for the OTLP sink (feature `otlp-tls`): rustls driven by the
//! writer thread over the sink's non-blocking socket, no async runtime.
//!
//! # Design
//!
//! rustls is sans-I/O: a [`ClientConnection`] takes the bytes read from
//! the socket (`read_tls`, then `process_new_packets`) and gives the bytes
//! to write (`write_tls`); it never touches the socket itself. The client
//! ([`super::client`]) keeps its one-request-at-a-time exchange and asks
//! this module to move bytes instead of the socket:
//!
//! 1. A new connection gets a new session (the socket's connect and the
//!    handshake start together: the ClientHello is the first write).
//! 2. Sending: the whole request is handed to rustls as plaintext (held
//!    until the handshake is done; no buffer limit, the request is already
//!    bounded), then TLS bytes are written while rustls has some and read
//!    while the handshake waits for the server. A socket that would block
//!    ends the turn: the client reports "would block" and the writer polls
//!    the socket for room (something to write) or for bytes (the
//!    handshake waits for the server) — [`Session::wants_write`].
//! 3. Waiting: TLS bytes read from the socket are decrypted and the
//!    plaintext goes to the HTTP reader, as a plain socket's bytes would.
//! 4. Any TLS error (a certificate that does not verify, an alert from
//!    the receiver) fails the request with rustls's reason; the client
//!    drops the connection and the writer retries with back-off, counting
//!    and reporting as for any failure.
//! 5. Both loops check the request's deadline (its start plus
//!    [`Otlp::timeout`]) before every turn, the handshake's included: a
//!    receiver that keeps bytes coming which never become plaintext
//!    (session tickets, key updates, handshake fragments) holds the
//!    writer thread no longer than the timeout, as the HTTP reader's own
//!    check bounds one that keeps sending an answer.
//!
//! # Choices
//!
//! * Crypto provider: *ring*. It builds in seconds with a C compiler only
//!   (aws-lc-rs needs CMake, and often NASM on Windows, and takes minutes),
//!   and covers every target nowait supports. FIPS would need aws-lc-rs:
//!   not offered.
//! * Trust: the platform's store through `rustls-native-certs` (Linux and
//!   BSD files, the macOS keychain, the Windows store), read once when the
//!   sink opens, then verified by rustls's own WebPKI verifier, the same
//!   code path as a custom CA. `rustls-platform-verifier` would ask the OS
//!   verifier per connection (revocation, enterprise policies), but on
//!   Linux it reads the same files, and it cannot take an added CA on
//!   every platform in the same way.
//! * Certificates and keys are read as PEM by `rustls-pki-types`' parser,
//!   from files of at most [`MAX_PEM`] bytes.

use std::fmt;
use std::io::{self, Read as _, Write as _};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
// rustls takes std's Arc (never loom's: this is not shared state of the
// ring or the writer).
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};

use super::wire::Wire;
use super::Otlp;
use crate::sys::Sent;

/// The largest PEM file read (a CA bundle is a few hundred KiB).
pub(crate) const MAX_PEM: u64 = 4 << 20;

/// Where a PEM comes from.
#[derive(Clone)]
pub(crate) enum Source {
    Path(PathBuf),
    Pem(Vec<u8>),
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Path(p) => p.fmt(f),
            Source::Pem(pem) => write!(f, "PEM ({} bytes)", pem.len()),
        }
    }
}

/// What the user set for TLS.
#[derive(Default)]
pub(crate) struct TlsSettings {
    /// CA certificates to trust instead of the platform's.
    pub(crate) ca: Option<Source>,
    pub(crate) client_cert: Option<Source>,
    /// Secret: shown as its path only.
    pub(crate) client_key: Option<Source>,
    /// Where the settings above came from, each once: the methods called
    /// (`Otlp::ca_certificate`...) and the variables read
    /// (`OTEL_EXPORTER_OTLP_CERTIFICATE`...), for an error that names
    /// one.
    pub(crate) set_by: Vec<String>,
    /// The client configuration the first open made, shared with every
    /// clone of these settings: a forked child's open (on its first
    /// logging call) reads no trust store or file again. A new setting
    /// starts a new one ([`TlsSettings::changed`]). Unwind-safe as asserted:
    /// the cell is set once with a finished configuration or not at all,
    /// so a panic cannot leave it half made (and `Otlp` keeps the auto
    /// traits it has without this feature).
    made: AssertUnwindSafe<Arc<OnceLock<Arc<ClientConfig>>>>,
}

impl Clone for TlsSettings {
    fn clone(&self) -> TlsSettings {
        TlsSettings {
            ca: self.ca.clone(),
            client_cert: self.client_cert.clone(),
            client_key: self.client_key.clone(),
            set_by: self.set_by.clone(),
            made: AssertUnwindSafe(Arc::clone(&self.made)),
        }
    }
}

impl fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls")
            .field("ca", &self.ca)
            .field("client_cert", &self.client_cert)
            .field(
                "client_key",
                &self.client_key.as_ref().map(|k| match k {
                    Source::Path(p) => p.display().to_string(),
                    Source::Pem(_) => "PEM".into(),
                }),
            )
            .finish()
    }
}

impl TlsSettings {
    /// Forgets the configuration made from the old settings.
    pub(crate) fn changed(&mut self) -> &mut TlsSettings {
        self.made = AssertUnwindSafe(Arc::default());
        self
    }

    /// Notes that a setting came from `by` (a method or a variable).
    pub(crate) fn set_by(&mut self, by: &str) {
        if !self.set_by.iter().any(|b| b == by) {
            self.set_by.push(by.to_owned());
        }
    }

    /// The client configuration, made on the first call.
    fn config(&self) -> io::Result<Arc<ClientConfig>> {
        if let Some(made) = self.made.get() {
            return Ok(Arc::clone(made));
        }
        let made = Arc::new(config(self)?);
        Ok(Arc::clone(self.made.get_or_init(|| made)))
    }

    pub(crate) fn check(&self) -> Result<(), String> {
        match (&self.client_cert, &self.client_key) {
            (Some(_), None) => Err("a client certificate without its key".into()),
            (None, Some(_)) => Err("a client key without its certificate".into()),
            _ => Ok(()),
        }
    }
}

// === impl Otlp ===

impl Otlp {
    /// Trusts the CA certificates of this PEM file (a bundle may hold
    /// several) for an `https://` receiver, instead of the platform's
    /// store. The file is read when the sink opens (at
    /// `Builder::build`, and again in a forked
    /// child); one that cannot be read, is not a regular file (a FIFO, a
    /// device), is larger than 4 MiB or holds no certificate makes the
    /// build fail. Also set by `OTEL_EXPORTER_OTLP_CERTIFICATE`
    /// ([`Otlp::from_env`]). With an `http://` endpoint, any TLS setting
    /// is a [`BuildError`](crate::error::BuildError) naming it: nothing
    /// would be encrypted.
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::sink::Otlp::new("https://collector.internal:4318")
    ///     .ca_certificate("/etc/otel/ca.pem");
    /// # let _ = otlp;
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp-tls")))]
    pub fn ca_certificate(mut self, pem_file: impl Into<PathBuf>) -> Otlp {
        self.tls.changed().ca = Some(Source::Path(pem_file.into()));
        self.tls.set_by("Otlp::ca_certificate");
        self
    }

    /// As [`Otlp::ca_certificate`], with the PEM text itself.
    ///
    /// # Examples
    ///
    /// ```
    /// # let ca_pem = String::new();
    /// let otlp = nowait_core::sink::Otlp::new("https://collector.internal:4318")
    ///     .ca_certificate_pem(ca_pem);
    /// # let _ = otlp;
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp-tls")))]
    pub fn ca_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Otlp {
        self.tls.changed().ca = Some(Source::Pem(pem.into()));
        self.tls.set_by("Otlp::ca_certificate_pem");
        self
    }

    /// Presents this client certificate (PEM chain, leaf first) and key
    /// (PEM, PKCS#8, PKCS#1 or SEC1) to a receiver that asks for one
    /// (mutual TLS). Read when the sink opens, like
    /// [`Otlp::ca_certificate`]; the key's path may show in `Debug`
    /// output, never its content. Also set by
    /// `OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE` and `..._CLIENT_KEY`.
    ///
    /// # Examples
    ///
    /// ```
    /// let otlp = nowait_core::sink::Otlp::new("https://collector.internal:4318")
    ///     .client_certificate("/etc/otel/client.pem", "/etc/otel/client.key");
    /// # let _ = otlp;
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp-tls")))]
    pub fn client_certificate(
        mut self,
        cert_file: impl Into<PathBuf>,
        key_file: impl Into<PathBuf>,
    ) -> Otlp {
        self.tls.changed().client_cert = Some(Source::Path(cert_file.into()));
        self.tls.client_key = Some(Source::Path(key_file.into()));
        self.tls.set_by("Otlp::client_certificate");
        self
    }

    /// As [`Otlp::client_certificate`], with the PEM texts themselves.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (cert_pem, key_pem) = (String::new(), String::new());
    /// let otlp = nowait_core::sink::Otlp::new("https://collector.internal:4318")
    ///     .client_certificate_pem(cert_pem, key_pem);
    /// # let _ = otlp;
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp-tls")))]
    pub fn client_certificate_pem(
        mut self,
        cert_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Otlp {
        self.tls.changed().client_cert = Some(Source::Pem(cert_pem.into()));
        self.tls.client_key = Some(Source::Pem(key_pem.into()));
        self.tls.set_by("Otlp::client_certificate_pem");
        self
    }
}

// === impl Session ===

fn invalid(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why)
}

/// The PEM's bytes, bounded: a file is opened without waiting (a FIFO is
/// refused at once, as is anything but a regular file: `sys`'s
/// `open_readable`) and read up to [`MAX_PEM`] bytes. Errors show the
/// path escaped: it may come from the environment.
fn load(source: &Source, what: &str) -> io::Result<Vec<u8>> {
    match source {
        Source::Pem(pem) => Ok(pem.clone()),
        Source::Path(path) => {
            let shown = super::shown(&path.to_string_lossy());
            let fail = |e: io::Error| io::Error::new(e.kind(), format!("{what} {shown}: {e}"));
            let file = crate::sys::open_readable(path).map_err(fail)?;
            let mut bytes = Vec::new();
            file.take(MAX_PEM + 1)
                .read_to_end(&mut bytes)
                .map_err(fail)?;
            if bytes.len() as u64 > MAX_PEM {
                return Err(invalid(format!(
                    "{what} {shown}: larger than {MAX_PEM} bytes"
                )));
            }
            Ok(bytes)
        }
    }
}

fn certificates(source: &Source, what: &str) -> io::Result<Vec<CertificateDer<'static>>> {
    let pem = load(source, what)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("{what} {source:?}: not PEM: {e}")))?;
    if certs.is_empty() {
        return Err(invalid(format!("{what} {source:?}: no certificate in it")));
    }
    Ok(certs)
}

/// The client configuration the settings ask for.
fn config(settings: &TlsSettings) -> io::Result<ClientConfig> {
    let mut roots = RootCertStore::empty();
    match &settings.ca {
        Some(ca) => {
            let (_, bad) = roots.add_parsable_certificates(certificates(ca, "CA certificate")?);
            if roots.is_empty() {
                return Err(invalid(format!(
                    "CA certificate {ca:?}: none of its {bad} certificates is usable"
                )));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err(invalid(format!(
                    "no trusted CA certificate found on this system{}; give one with \
                     Otlp::ca_certificate or OTEL_EXPORTER_OTLP_CERTIFICATE",
                    found
                        .errors
                        .first()
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default()
                )));
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(format!("TLS: {e}")))?
        .with_root_certificates(roots);
    match (&settings.client_cert, &settings.client_key) {
        (Some(cert), Some(key)) => {
            let chain = certificates(cert, "client certificate")?;
            let key_pem = load(key, "client key")?;
            // The key's content never goes into an error.
            let key = PrivateKeyDer::from_pem_slice(&key_pem)
                .map_err(|_| invalid(format!("client key {key:?}: no PEM private key in it")))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| invalid(format!("client certificate {cert:?}: {e}")))
        }
        _ => Ok(builder.with_no_client_auth()),
    }
}

/// The TLS side of the OTLP client's connection.
pub(crate) struct Session {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    /// The current connection's session; `None` until the next request
    /// starts one (after every disconnect).
    conn: Option<ClientConnection>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("name", &self.name)
            .field("connected", &self.conn.is_some())
            .finish_non_exhaustive()
    }
}

/// The connection as rustls's reader and writer: a socket that would
/// block is `WouldBlock`.
struct Io<'a, W>(&'a mut W);

impl<W: Wire> io::Write for Io<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.send(buf) {
            Sent::Wrote(n) => Ok(n),
            Sent::WouldBlock => Err(io::ErrorKind::WouldBlock.into()),
            Sent::Failed(e) | Sent::Rejected(e) => Err(e),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Wire> io::Read for Io<'_, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.recv(buf)? {
            Some(n) => Ok(n),
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

/// A TLS failure as the sink reports it, with what to do where rustls's
/// reason is terse.
fn tls_error(e: rustls::Error) -> io::Error {
    let hint = match &e {
        rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer) => {
            " (no trusted CA signed the receiver's certificate: trust its CA with \
             Otlp::ca_certificate or OTEL_EXPORTER_OTLP_CERTIFICATE)"
        }
        rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired) => {
            " (the receiver wants a client certificate: Otlp::client_certificate)"
        }
        _ => "",
    };
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("TLS with the OTLP receiver failed: {e}{hint}"),
    )
}

/// A request's deadline: its start and how long it may take (compared as
/// elapsed time: a timeout too large to add to an `Instant` is never past).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    pub(crate) started: Instant,
    pub(crate) timeout: Duration,
}

impl Deadline {
    fn passed(self) -> bool {
        self.started.elapsed() >= self.timeout
    }
}

/// The request's deadline passed inside a loop.
fn past_deadline() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the OTLP receiver did not finish the TLS exchange within the timeout",
    )
}

impl Session {
    /// Reads the trust store and certificates at build; a forked child's
    /// open reuses what the build read.
    pub(crate) fn new(settings: &TlsSettings, host: &str) -> io::Result<Session> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| invalid(format!("{host}: not a host name for TLS: {e}")))?;
        Ok(Session {
            config: settings.config()?,
            name,
            conn: None,
        })
    }

    /// The connection was dropped: the next one needs a new session.
    pub(crate) fn reset(&mut self) {
        self.conn = None;
    }

    /// Whether the next step writes (else it waits for the server's bytes).
    pub(crate) fn wants_write(&self) -> bool {
        self.conn.as_ref().map_or(true, |c| c.wants_write())
    }

    /// Hands the request to rustls (once) and moves TLS bytes both ways
    /// until all of it went out (`Ok(true)`) or the socket would block
    /// (`Ok(false)`); never waits, and fails with `TimedOut` once
    /// `deadline` has passed.
    pub(crate) fn send<W: Wire>(
        &mut self,
        stream: &mut W,
        req: &[u8],
        sent: &mut usize,
        deadline: Deadline,
    ) -> io::Result<bool> {
        let conn = match &mut self.conn {
            Some(conn) => conn,
            None => {
                let mut conn = ClientConnection::new(Arc::clone(&self.config), self.name.clone())
                    .map_err(tls_error)?;
                // The request is bounded already (the batch bound).
                conn.set_buffer_limit(None);
                self.conn.insert(conn)
            }
        };
        if *sent < req.len() {
            conn.writer().write_all(&req[*sent..])?;
            *sent = req.len();
        }
        loop {
            if deadline.passed() {
                return Err(past_deadline());
            }
            if conn.wants_write() {
                match conn.write_tls(&mut Io(stream)) {
                    Ok(_) => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                    Err(e) => return Err(e),
                }
            }
            if !conn.is_handshaking() {
                return Ok(true);
            }
            match conn.read_tls(&mut Io(stream)) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "the OTLP receiver closed the connection during the TLS handshake",
                    ))
                }
                Ok(_) => {
                    if let Err(e) = conn.process_new_packets() {
                        return Err(alerted(conn, stream, e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads the answer's plaintext, as [`Wire::recv`] does bytes:
    /// `Ok(Some(0))` at the end, `Ok(None)` if nothing came yet; fails
    /// with `TimedOut` once `deadline` has passed.
    pub(crate) fn recv<W: Wire>(
        &mut self,
        stream: &mut W,
        buf: &mut [u8],
        deadline: Deadline,
    ) -> io::Result<Option<usize>> {
        let Some(conn) = &mut self.conn else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        loop {
            if deadline.passed() {
                return Err(past_deadline());
            }
            match conn.reader().read(buf) {
                Ok(n) => return Ok(Some(n)),
                // The receiver closed without close_notify: an end all
                // the same (the HTTP reader judges what it got).
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(Some(0)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match conn.read_tls(&mut Io(stream)) {
                Ok(_) => {
                    if let Err(e) = conn.process_new_packets() {
                        return Err(alerted(conn, stream, e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) => return Err(e),
            }
        }
    }
}

/// A TLS error from the receiver's bytes (a certificate that does not
/// verify...): the alert rustls queued for it goes out first, once,
/// without waiting (a socket with no room drops it), so that the
/// receiver learns why the connection ends.
fn alerted<W: Wire>(conn: &mut ClientConnection, stream: &mut W, e: rustls::Error) -> io::Error {
    while conn.wants_write() {
        if conn.write_tls(&mut Io(stream)).map_or(true, |n| n == 0) {
            break;
        }
    }
    tls_error(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The feature leaves `Otlp`'s auto traits as they are without it.
    #[test]
    fn otlp_keeps_its_auto_traits() {
        fn traits<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
        traits::<Otlp>();
    }

    /// A second open (a forked child's) reuses the configuration the
    /// first made; a changed setting makes a new one.
    #[test]
    fn the_configuration_is_made_once_per_settings() {
        let ca = nowait_testkit::ca::Ca::new("test CA").pem();
        let otlp = Otlp::new("https://127.0.0.1:1").ca_certificate_pem(ca.clone());
        let a = Session::new(&otlp.tls, "127.0.0.1").unwrap();
        let b = Session::new(&otlp.clone().tls, "127.0.0.1").unwrap();
        assert!(Arc::ptr_eq(&a.config, &b.config));
        let other = otlp.ca_certificate_pem(ca);
        let c = Session::new(&other.tls, "127.0.0.1").unwrap();
        assert!(!Arc::ptr_eq(&a.config, &c.config));
    }

    /// The handshake's loop checks the deadline too: past it, `send` fails
    /// with `TimedOut` instead of going on with the exchange.
    #[cfg(not(miri))]
    #[test]
    fn a_handshake_past_the_deadline_fails() {
        use crate::sys::{Peer, Stream};
        use std::time::Duration;

        // A listener that never answers (the kernel accepts the connect).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let otlp = Otlp::new(&format!("https://{addr}"))
            .ca_certificate_pem(nowait_testkit::ca::Ca::new("test CA").pem());
        let mut session = Session::new(&otlp.tls, "127.0.0.1").unwrap();
        let mut stream = Stream::exchanging(Peer::Tcp(addr)).unwrap();
        let past = Deadline {
            started: Instant::now(),
            timeout: Duration::ZERO,
        };
        let e = session.send(&mut stream, b"x", &mut 0, past).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
    }

    /// A receiver that, once the handshake is done, sends TLS records
    /// without end that never become plaintext (TLS 1.3 session tickets,
    /// which rustls takes in any number): `recv` gives up by itself at the
    /// request's deadline. Before, it read and processed them for as long
    /// as they kept coming, and the writer thread with it.
    #[cfg(not(miri))]
    #[test]
    fn endless_records_without_plaintext_stop_at_the_deadline() {
        use crate::sys::{Peer, Stream};
        use rustls::crypto::cipher::{OutboundChunks, OutboundPlainMessage};
        use rustls::{ContentType, ProtocolVersion, ServerConnection};
        use std::io::Write as _;
        use std::net::TcpListener;
        use std::time::Duration;

        let ca = nowait_testkit::ca::Ca::new("test CA");
        let (cert, key) = ca.leaf(&["127.0.0.1"], false);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut server = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                CertificateDer::pem_slice_iter(cert.as_bytes())
                    .collect::<Result<_, _>>()
                    .unwrap(),
                PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
            )
            .unwrap();
        server.enable_secret_extraction = true;
        server.send_tls13_tickets = 0;
        let server = Arc::new(server);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let flood = std::thread::spawn(move || {
            let (mut sock, _) = listener.accept().unwrap();
            let mut conn = ServerConnection::new(server).unwrap();
            while conn.is_handshaking() {
                conn.complete_io(&mut sock).unwrap();
            }
            let Some(rustls::SupportedCipherSuite::Tls13(suite)) = conn.negotiated_cipher_suite()
            else {
                panic!("TLS 1.3 was asked for");
            };
            let (mut seq, secrets) = conn.dangerous_extract_secrets().unwrap().tx;
            let (key, iv) = match secrets {
                rustls::ConnectionTrafficSecrets::Aes128Gcm { key, iv }
                | rustls::ConnectionTrafficSecrets::Aes256Gcm { key, iv }
                | rustls::ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => (key, iv),
                _ => panic!("an AEAD this test does not know"),
            };
            let mut sealer = suite.aead_alg.encrypter(key, iv);
            // NewSessionTicket (lifetime, age_add, nonce, a 16-byte ticket,
            // no extensions), encrypted as the session's next records,
            // until the client goes (or 30 s).
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(30) {
                let mut batch = Vec::new();
                for _ in 0..256 {
                    let mut ticket = vec![4, 0, 0, 30, 0, 0, 0x0e, 0x10, 0, 0, 0, 0, 1];
                    ticket.push(seq as u8);
                    ticket.extend_from_slice(&[0, 16]);
                    ticket.extend_from_slice(&seq.to_be_bytes());
                    ticket.extend_from_slice(&seq.to_le_bytes());
                    ticket.extend_from_slice(&[0, 0]);
                    let plain = OutboundPlainMessage {
                        typ: ContentType::Handshake,
                        version: ProtocolVersion::TLSv1_3,
                        payload: OutboundChunks::Single(&ticket),
                    };
                    batch.extend(sealer.encrypt(plain, seq).unwrap().encode());
                    seq += 1;
                }
                if sock.write_all(&batch).is_err() {
                    return;
                }
            }
        });

        let otlp = Otlp::new(&format!("https://{addr}")).ca_certificate_pem(ca.pem());
        let mut session = Session::new(&otlp.tls, "127.0.0.1").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut stream = Stream::exchanging(Peer::Tcp(addr)).unwrap();
            // The handshake and the request, however long they take.
            let relaxed = Deadline {
                started: Instant::now(),
                timeout: Duration::from_secs(3600),
            };
            let req = b"POST /v1/logs HTTP/1.1\r\ncontent-length: 0\r\n\r\n";
            let mut sent = 0;
            while !session.send(&mut stream, req, &mut sent, relaxed).unwrap() {
                std::thread::sleep(Duration::from_millis(1));
            }
            // The answer: tickets only, until the deadline. No deadline
            // check here: `recv` must stop by itself.
            let deadline = Deadline {
                started: Instant::now(),
                timeout: Duration::from_millis(300),
            };
            let mut buf = [0u8; 4096];
            let outcome = loop {
                match session.recv(&mut stream, &mut buf, deadline) {
                    Ok(None) => std::thread::sleep(Duration::from_millis(1)),
                    other => break other.map(|_| ()),
                }
            };
            let _ = tx.send((outcome, deadline.started.elapsed()));
        });
        let (outcome, took) = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("recv never gave up at the deadline");
        let e = outcome.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        flood.join().unwrap();
    }
}
