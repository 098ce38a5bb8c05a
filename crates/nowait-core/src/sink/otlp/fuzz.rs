//! The `otlp_exchange` fuzz target: the OTLP client's whole exchange as a
//! sink runs it ([`Otlp::open_with`], then [`Client::write`] until it
//! settles: the request out, TLS both ways, the answer read and judged),
//! against a receiver in memory ([`Receiver`], a [`Wire`]) whose bytes the
//! input gives.
//!
//! The input's first byte says how the receiver behaves:
//!
//! | bits | meaning |
//! | --- | --- |
//! | 0–1 | `0`: plain HTTP, the rest of the input is its bytes. `1`: `https://`, the rest is its TLS bytes from the first (a handshake the input makes up). `2`: a real TLS 1.3 server (rustls, in memory) finishes the handshake, then sends the rest as records it seals with its traffic keys, each `type len:u16 payload` (`type % 5`: application data, handshake, alert, change cipher spec, or the payload as it is, unsealed). `3`: a real TLS 1.2 server finishes the handshake, then sends the rest as application data. |
//! | 2–4 | the largest piece the receiver's bytes arrive in: 1, 2, 5, 16, 100, 1000, 4096 or 65536 bytes |
//! | 5 | the client's writes go 7 bytes at a time, every other one "would block" |
//! | 6–7 | `0`, `1`: the connection ends after the bytes. `2`: it ends after a `close_notify` (modes 2 and 3). `3`: the bytes come again and again, without end |
//!
//! Every exchange must settle (written, refused or failed), and:
//!
//! 1. With an end to the connection, the client never waits for bytes
//!    once it has read that end, and never waits while the receiver has
//!    nothing more to send (both sides waiting is a hang).
//! 2. Without an end, by the request's timeout (short here) and a slack
//!    for a slow machine: bytes that keep coming hold the writer thread
//!    no longer than that.
//! 3. Within one call, the connection itself checks that the client
//!    stops: no read or write past that timeout and slack, no more than a
//!    few reads past the end, no more than 64 reads that find nothing. So
//!    a loop that would never return fails as well.
//! 4. The reader holds at most its bound; over plain HTTP, the client
//!    reads at most the bound and one read more.
//! 5. An answer written or refused covers the request's records; no error
//!    is a broken invariant's ("nowait bug") or holds a control
//!    character; a `Retry-After` is kept within its cap.

use std::collections::VecDeque;
use std::io;
// rustls takes std's Arc; the harness never runs under loom.
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustls::crypto::cipher::{MessageEncrypter, OutboundChunks, OutboundPlainMessage};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ContentType, ProtocolVersion, ServerConfig, ServerConnection};

use super::client::Client;
use super::http::MAX_RESPONSE;
use super::wire::Wire;
use super::{MakeOtlp, Otlp};
use crate::accounting::outcome::WriteOutcome;
use crate::format::{MakeFormat, SinkInfo};
use crate::level::Level;
use crate::record::{kind, Record};
use crate::sys::Sent;

/// The request's timeout when the receiver's bytes never end.
const ENDLESS_TIMEOUT: Duration = Duration::from_millis(10);
/// The timeout otherwise: never reached (the connection ends first).
const TIMEOUT: Duration = Duration::from_secs(600);
/// What a slow machine may add to a timeout before the check fails.
const SLACK: Duration = Duration::from_secs(5);
/// How many bytes a write takes when the writes trickle.
const TRICKLE: usize = 7;
/// The client's read size (`Client::read_answer`).
const CLIENT_READ: usize = 4096;

/// A TLS alert's level: warning.
const ALERT_WARNING: u8 = 1;
/// A TLS alert's description: `close_notify`.
const ALERT_CLOSE_NOTIFY: u8 = 0;

/// What the harness makes once per certificate set: the client settings
/// (which make their rustls configuration once) and the two servers.
struct Fixture {
    ca: String,
    plain: Otlp,
    tls: Otlp,
    tls13: Arc<ServerConfig>,
    tls12: Arc<ServerConfig>,
}

fn server_config(
    chain: &str,
    key: &str,
    version: &'static rustls::SupportedProtocolVersion,
) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = CertificateDer::pem_slice_iter(chain.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .expect("the fixture's chain");
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).expect("the fixture's key");
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[version])
        .expect("the version")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("the fixture's certificate");
    // The records after the handshake are the input's, sealed here.
    config.enable_secret_extraction = true;
    config.send_tls13_tickets = 0;
    Arc::new(config)
}

/// The fixture for these certificates, made on the first call and again
/// only when they change.
fn fixture(ca: &str, chain: &str, key: &str) -> Arc<Fixture> {
    static MADE: OnceLock<Mutex<Option<Arc<Fixture>>>> = OnceLock::new();
    let mut made = MADE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(f) = made.as_ref().filter(|f| f.ca == ca) {
        return Arc::clone(f);
    }
    let f = Arc::new(Fixture {
        ca: ca.to_owned(),
        plain: Otlp::new("http://127.0.0.1:4318"),
        tls: Otlp::new("https://127.0.0.1:4318").ca_certificate_pem(ca),
        tls13: server_config(chain, key, &rustls::version::TLS13),
        tls12: server_config(chain, key, &rustls::version::TLS12),
    });
    *made = Some(Arc::clone(&f));
    f
}

/// The receiver's side of the connection.
enum Server {
    /// The input as it is: plain HTTP, or TLS bytes made up.
    Raw,
    /// A rustls server in its handshake; `sealing`: TLS 1.3, the input
    /// goes sealed after it (else TLS 1.2, as application data).
    Handshake {
        conn: Box<ServerConnection>,
        sealing: bool,
    },
    /// After a TLS 1.3 handshake: the input's records, sealed with the
    /// server's traffic key from sequence number `seq` on.
    Sealing {
        sealer: Box<dyn MessageEncrypter>,
        seq: u64,
    },
    /// After a TLS 1.2 handshake: the server sends the input as
    /// application data.
    Talking(Box<ServerConnection>),
    /// The server failed (it sent its alert): nothing more.
    Gone,
}

/// A receiver in memory (see the module docs).
struct Receiver {
    server: Server,
    /// The input after the control byte.
    body: Vec<u8>,
    /// What the client may read now.
    ready: VecDeque<u8>,
    /// What the receiver has yet to send, released `piece` at a time.
    queue: VecDeque<u8>,
    piece: usize,
    /// The connection ends once everything went, after a `close_notify`
    /// if `notify`.
    notify: bool,
    /// The body comes again and again.
    endless: bool,
    /// The client's writes take [`TRICKLE`] bytes, every other one
    /// refused.
    trickle: bool,
    refuse: bool,
    /// What happened on the wire since the harness last looked.
    activity: bool,
    /// The client read the end of the connection.
    saw_end: bool,
    /// Reads since the client read the end, and reads in one call that
    /// found nothing: a loop that goes on reading past them spins.
    after_end: u32,
    empty: u32,
    /// Bytes the client read.
    read: usize,
    disconnected: bool,
    /// Past this instant (the request's timeout and [`SLACK`], when the
    /// bytes never end), the client must not touch the connection again:
    /// checked here, so that a loop that would go on forever fails.
    give_up_by: Option<Instant>,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("ready", &self.ready.len())
            .field("queue", &self.queue.len())
            .field("read", &self.read)
            .finish_non_exhaustive()
    }
}

impl Receiver {
    /// Sends the body (again): its bytes, sealed records, or application
    /// data, as the server is; nothing before a handshake is done.
    fn send_body(&mut self) {
        let body = std::mem::take(&mut self.body);
        match &mut self.server {
            Server::Raw => self.queue.extend(&body),
            Server::Sealing { sealer, seq } => {
                if seal_frames(&body, &mut **sealer, seq, &mut self.queue).is_err() {
                    self.server = Server::Gone;
                }
            }
            Server::Talking(conn) => {
                // One write per piece: records of every size.
                for part in body.chunks(self.piece) {
                    if io::Write::write_all(&mut conn.writer(), part).is_err() {
                        break;
                    }
                    drain(conn, &mut self.queue);
                }
            }
            Server::Handshake { .. } | Server::Gone => {}
        }
        self.body = body;
    }

    /// The `close_notify` before the end, if asked.
    fn send_close(&mut self) {
        if !self.notify {
            return;
        }
        match &mut self.server {
            Server::Sealing { sealer, seq } => {
                let alert = [ALERT_WARNING, ALERT_CLOSE_NOTIFY];
                if seal(
                    &alert,
                    ContentType::Alert,
                    &mut **sealer,
                    seq,
                    &mut self.queue,
                )
                .is_err()
                {
                    self.server = Server::Gone;
                }
            }
            Server::Talking(conn) => {
                conn.send_close_notify();
                drain(conn, &mut self.queue);
            }
            _ => {}
        }
    }

    /// The client wrote `bytes`: the server takes them.
    fn take(&mut self, bytes: &[u8]) {
        let Server::Handshake { conn, sealing } = &mut self.server else {
            // Plain HTTP, made-up TLS, or the request after a handshake:
            // nothing answers it but the input.
            return;
        };
        let sealing = *sealing;
        let mut rest = bytes;
        let mut failed = false;
        while !rest.is_empty() && !failed {
            match conn.read_tls(&mut rest) {
                Ok(0) | Err(_) => failed = true,
                Ok(_) => failed = conn.process_new_packets().is_err(),
            }
        }
        drain(conn, &mut self.queue);
        if failed {
            self.server = Server::Gone;
            return;
        }
        if conn.is_handshaking() {
            return;
        }
        let Server::Handshake { conn, .. } = std::mem::replace(&mut self.server, Server::Gone)
        else {
            return;
        };
        self.server = if sealing {
            sealing_after(*conn).map_or(Server::Gone, |(sealer, seq)| Server::Sealing {
                sealer,
                seq,
            })
        } else {
            let mut conn = conn;
            conn.set_buffer_limit(None);
            Server::Talking(conn)
        };
        self.send_body();
        if !self.endless {
            self.send_close();
        }
    }

    /// Moves the next piece to what the client may read (sending the body
    /// again first if it never ends); whether there was one.
    fn release(&mut self) -> bool {
        if self.queue.is_empty() && self.endless {
            self.send_body();
        }
        let n = self.piece.min(self.queue.len());
        self.ready.extend(self.queue.drain(..n));
        if n > 0 {
            self.empty = 0;
        }
        n > 0
    }

    /// Whether the receiver waits for the client (a handshake under way):
    /// the connection does not end then.
    fn waits(&self) -> bool {
        matches!(self.server, Server::Handshake { .. })
    }

    /// What happened since the last call.
    fn active(&mut self) -> bool {
        std::mem::take(&mut self.activity)
    }
}

/// What rustls has to send, into `queue`.
fn drain(conn: &mut ServerConnection, queue: &mut VecDeque<u8>) {
    let mut out = Vec::new();
    while conn.wants_write() {
        match conn.write_tls(&mut out) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    queue.extend(out);
}

/// The TLS 1.3 server's sealer and next sequence number, once its
/// handshake is done.
fn sealing_after(conn: ServerConnection) -> Option<(Box<dyn MessageEncrypter>, u64)> {
    let Some(rustls::SupportedCipherSuite::Tls13(suite)) = conn.negotiated_cipher_suite() else {
        return None;
    };
    let (seq, secrets) = conn.dangerous_extract_secrets().ok()?.tx;
    let (key, iv) = match secrets {
        rustls::ConnectionTrafficSecrets::Aes128Gcm { key, iv }
        | rustls::ConnectionTrafficSecrets::Aes256Gcm { key, iv }
        | rustls::ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => (key, iv),
        _ => return None,
    };
    Some((suite.aead_alg.encrypter(key, iv), seq))
}

/// Seals one record of `typ` holding `payload` into `queue`.
fn seal(
    payload: &[u8],
    typ: ContentType,
    sealer: &mut dyn MessageEncrypter,
    seq: &mut u64,
    queue: &mut VecDeque<u8>,
) -> Result<(), rustls::Error> {
    let plain = OutboundPlainMessage {
        typ,
        version: ProtocolVersion::TLSv1_3,
        payload: OutboundChunks::Single(payload),
    };
    queue.extend(sealer.encrypt(plain, *seq)?.encode());
    *seq += 1;
    Ok(())
}

/// The body's frames (`type len:u16 payload`; a frame cut short takes
/// what there is), sealed or as they are, into `queue`.
fn seal_frames(
    body: &[u8],
    sealer: &mut dyn MessageEncrypter,
    seq: &mut u64,
    queue: &mut VecDeque<u8>,
) -> Result<(), rustls::Error> {
    let mut rest = body;
    while let Some((&typ, tail)) = rest.split_first() {
        let (len, tail) = match tail {
            [hi, lo, tail @ ..] => (usize::from(u16::from_be_bytes([*hi, *lo])), tail),
            _ => (tail.len(), &[][..]),
        };
        let (payload, after) = tail.split_at(len.min(tail.len()));
        let typ = match typ % 5 {
            0 => ContentType::ApplicationData,
            1 => ContentType::Handshake,
            2 => ContentType::Alert,
            3 => ContentType::ChangeCipherSpec,
            _ => {
                queue.extend(payload);
                rest = after;
                continue;
            }
        };
        seal(payload, typ, sealer, seq, queue)?;
        rest = after;
    }
    Ok(())
}

impl Receiver {
    fn check_time(&self) {
        if let Some(by) = self.give_up_by {
            assert!(
                Instant::now() < by,
                "bytes without end held the exchange past its timeout"
            );
        }
    }
}

impl Wire for Receiver {
    fn send(&mut self, buf: &[u8]) -> Sent {
        self.check_time();
        if self.disconnected {
            return Sent::Failed(io::ErrorKind::NotConnected.into());
        }
        self.activity = true;
        let n = if self.trickle {
            self.refuse = !self.refuse;
            if self.refuse {
                return Sent::WouldBlock;
            }
            buf.len().min(TRICKLE)
        } else {
            buf.len()
        };
        self.take(&buf[..n]);
        Sent::Wrote(n)
    }

    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        self.check_time();
        if self.disconnected {
            return Err(io::ErrorKind::NotConnected.into());
        }
        if self.ready.is_empty() && self.endless {
            self.release();
        }
        if self.ready.is_empty() {
            if self.queue.is_empty() && !self.endless && !self.waits() {
                self.saw_end = true;
                self.activity = true;
                self.after_end += 1;
                assert!(
                    self.after_end <= 4,
                    "reads on past the end of the connection"
                );
                return Ok(Some(0));
            }
            self.empty += 1;
            assert!(
                self.empty <= 64,
                "spins on a connection with nothing to read"
            );
            return Ok(None);
        }
        self.empty = 0;
        let n = buf.len().min(self.ready.len());
        for (to, from) in buf.iter_mut().zip(self.ready.drain(..n)) {
            *to = from;
        }
        self.read += n;
        self.activity = true;
        Ok(Some(n))
    }

    fn disconnect(&mut self) {
        self.disconnected = true;
    }
}

/// The request's records: one record, as the sink's format writes it.
fn records() -> &'static [u8] {
    static RECORDS: OnceLock<Vec<u8>> = OnceLock::new();
    RECORDS.get_or_init(|| {
        let mut out = Vec::new();
        let record = Record::new(Level::Info, kind::TEXT, b"fuzz");
        MakeOtlp
            .make_format(&SinkInfo::new("fuzz", false))
            .format(&record, &mut out);
        out
    })
}

/// Checks an error the exchange ended with. (A broken invariant's
/// message starts with "nowait bug"; the receiver's words, a reason
/// phrase or a status message, may say it anywhere after its own start.)
fn check_error(e: &io::Error) {
    let text = e.to_string();
    assert!(!text.starts_with("nowait bug"), "{text:?}");
    assert!(!text.chars().any(char::is_control), "{text:?}");
}

/// See the [module docs](self). `ca`, `chain` and `key` (PEM): the CA the
/// client trusts, and the server's certificate chain (for `127.0.0.1`)
/// and key.
pub(crate) fn fuzz_exchange(data: &[u8], ca: &str, chain: &str, key: &str) {
    const PIECES: [usize; 8] = [1, 2, 5, 16, 100, 1000, 4096, 65536];
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let fixture = fixture(ca, chain, key);
    let mode = control & 3;
    let endless = control >> 6 == 3;
    let server = match mode {
        0 | 1 => Server::Raw,
        _ => {
            let config = if mode == 2 {
                &fixture.tls13
            } else {
                &fixture.tls12
            };
            let Ok(conn) = ServerConnection::new(Arc::clone(config)) else {
                return;
            };
            Server::Handshake {
                conn: Box::new(conn),
                sealing: mode == 2,
            }
        }
    };
    let mut receiver = Receiver {
        server,
        body: body.to_vec(),
        ready: VecDeque::new(),
        queue: VecDeque::new(),
        piece: PIECES[usize::from(control >> 2 & 7)],
        notify: control >> 6 == 2,
        endless,
        trickle: control & 0x20 != 0,
        refuse: false,
        activity: false,
        saw_end: false,
        after_end: 0,
        empty: 0,
        read: 0,
        disconnected: false,
        give_up_by: endless.then(|| Instant::now() + ENDLESS_TIMEOUT + SLACK),
    };
    if mode < 2 {
        receiver.send_body();
    }
    let otlp = if mode == 0 {
        &fixture.plain
    } else {
        &fixture.tls
    };
    let timeout = if endless { ENDLESS_TIMEOUT } else { TIMEOUT };
    let otlp = otlp.clone().timeout(timeout);
    let mut client: Client<Receiver> = match otlp.open_with(|_| Ok(receiver)) {
        Ok(client) => client,
        Err(e) => panic!("the fixture's client does not open: {e}"),
    };
    let records = records();
    let mut idle = 0;
    let outcome = loop {
        // Reads that find nothing are counted per call.
        client.wire_mut().empty = 0;
        let outcome = client.write(records);
        let (held, body) = client.held();
        assert!(held <= MAX_RESPONSE, "the reader holds {held} bytes");
        assert!(body <= held, "a body of {body} bytes out of {held}");
        if mode == 0 {
            assert!(
                client.wire().read <= MAX_RESPONSE + CLIENT_READ,
                "read {} bytes of a plain answer",
                client.wire().read
            );
        }
        if !matches!(outcome, WriteOutcome::WouldBlock) {
            break outcome;
        }
        let wire = client.wire_mut();
        assert!(!wire.saw_end, "waits on after the end of the connection");
        if endless {
            wire.check_time();
            continue;
        }
        let active = wire.active();
        let released = wire.release();
        idle = if active || released { 0 } else { idle + 1 };
        assert!(
            idle < 2,
            "the client waits while the receiver has nothing to send: {wire:?}"
        );
    };
    match outcome {
        WriteOutcome::Wrote(n) => assert_eq!(n, records.len()),
        WriteOutcome::Refused { bytes, error, .. } => {
            assert_eq!(bytes, records.len());
            check_error(&error);
        }
        WriteOutcome::Failed(e) | WriteOutcome::Rejected(e) => check_error(&e),
        WriteOutcome::WouldBlock => unreachable!("the loop ends on an outcome"),
    }
    if let Some(after) = client.take_retry_after() {
        assert!(after <= Duration::from_secs(30), "{after:?}");
    }
}
