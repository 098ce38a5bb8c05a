//! The OTLP sink's output: one HTTP request in flight, never a wait (see
//! the [module docs](super)).
//!
//! # The exchange, one `write` call at a time
//!
//! 1. Idle: the longest run of whole records at the start of the offered
//!    bytes that fits in the batch bound (at least one record) becomes a
//!    request: head, envelope, records, gzipped if asked.
//! 2. Sending: as much of the request as the socket takes (the connect
//!    finishes first, polled like [`Sink::tcp`](crate::sink::Sink::tcp)'s);
//!    "would block" until all of it went.
//! 3. Waiting: whatever the receiver sent is read and parsed; "would
//!    block" until the answer is whole or the timeout passed. An answer
//!    past the reader's bound (64 KiB, interim responses included) or
//!    not HTTP is a failure; the timeout is checked before every read, so
//!    a receiver that never stops sending cannot keep the writer here.
//! 4. The answer decides: written (2xx), partly refused (2xx with
//!    `partial_success`), refused (other 4xx and 5xx), or a failure to
//!    retry (429, 502, 503, 504, a broken connection, the timeout; the
//!    connection is dropped unless the answer came whole on a keep-alive
//!    connection). The writer's buffer kept the records meanwhile: a retry
//!    builds the request again from them.
//!
//! The offered bytes start with the request's records on every call
//! until the answer (the writer only appends while they are pending).

use std::io::{self, Write as _};
use std::time::{Duration, Instant};

use super::encode::{entry_len, fields, Envelope};
use super::http::{request_head, Parsed, Reader, Response};
use super::wire::Wire;
use super::{Endpoint, Otlp};
use crate::accounting::outcome::WriteOutcome;
use crate::sys::{Sent, Stream};

/// A `Retry-After` longer than this is cut to it: a receiver cannot keep
/// the sink shedding for an hour with one header.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Sending,
    Waiting,
}

/// The OTLP sink's output, over the sink's socket (or, fuzzed, over a
/// receiver in memory: [`Wire`]).
#[derive(Debug)]
pub(crate) struct Client<W = Stream> {
    conn: W,
    endpoint: Endpoint,
    envelope: Envelope,
    /// The user's headers, ready to copy into each request's head.
    headers: Vec<u8>,
    gzip: bool,
    max_batch: usize,
    timeout: Duration,
    phase: Phase,
    /// The request (head and body) and how much of it went.
    req: Vec<u8>,
    req_sent: usize,
    /// The offered bytes the request carries, and its records.
    covers: usize,
    records: u64,
    started: Instant,
    reader: Reader,
    /// The body before compression.
    body: Vec<u8>,
    /// The delay a 429/503 asked for, for the writer's next retry.
    retry_after: Option<Duration>,
    /// `https://`: the TLS session over `conn`.
    #[cfg(feature = "otlp-tls")]
    tls: Option<Box<super::tls::Session>>,
}

impl Client {
    /// The socket to poll for room (connecting, or sending).
    pub(crate) fn poll_fd(&self) -> Option<crate::sys::Waitable<'_>> {
        (self.phase == Phase::Sending && self.wants_write())
            .then(|| self.conn.poll_fd())
            .flatten()
    }

    /// The socket to poll for the answer (or a TLS handshake's bytes).
    pub(crate) fn poll_read_fd(&self) -> Option<crate::sys::Waitable<'_>> {
        let reading = match self.phase {
            Phase::Waiting => true,
            Phase::Sending => !self.wants_write(),
            Phase::Idle => false,
        };
        reading.then(|| self.conn.read_fd()).flatten()
    }
}

impl<W: Wire> Client<W> {
    /// The client of `endpoint` over `conn` (its connect started).
    pub(crate) fn new(conn: W, endpoint: Endpoint, envelope: Envelope, cfg: &Otlp) -> Client<W> {
        Client {
            conn,
            endpoint,
            envelope,
            headers: super::header_block(&cfg.headers),
            gzip: cfg.gzip,
            max_batch: cfg.max_batch_bytes,
            timeout: cfg.timeout,
            phase: Phase::Idle,
            req: Vec::new(),
            req_sent: 0,
            covers: 0,
            records: 0,
            started: Instant::now(),
            reader: Reader::default(),
            body: Vec::new(),
            retry_after: None,
            #[cfg(feature = "otlp-tls")]
            tls: None,
        }
    }

    /// Speaks TLS over the connection.
    #[cfg(feature = "otlp-tls")]
    pub(crate) fn with_tls(mut self, session: super::tls::Session) -> Client<W> {
        self.tls = Some(Box::new(session));
        self
    }

    /// Whether the exchange's next step writes (else it waits for the
    /// receiver's bytes: a TLS handshake).
    fn wants_write(&self) -> bool {
        #[cfg(feature = "otlp-tls")]
        if let Some(tls) = &self.tls {
            return tls.wants_write();
        }
        true
    }

    /// Drops the connection (and its TLS session): the next request makes
    /// a new one.
    fn drop_conn(&mut self) {
        self.conn.disconnect();
        #[cfg(feature = "otlp-tls")]
        if let Some(tls) = &mut self.tls {
            tls.reset();
        }
    }

    /// The request's deadline, for the TLS loops.
    #[cfg(feature = "otlp-tls")]
    fn deadline(&self) -> super::tls::Deadline {
        super::tls::Deadline {
            started: self.started,
            timeout: self.timeout,
        }
    }

    /// Sends what is left of the request: `Ok(true)` once all of it went,
    /// `Ok(false)` if the socket would block.
    fn push(&mut self) -> io::Result<bool> {
        #[cfg(feature = "otlp-tls")]
        {
            let deadline = self.deadline();
            if let Some(tls) = &mut self.tls {
                return tls.send(&mut self.conn, &self.req, &mut self.req_sent, deadline);
            }
        }
        while self.req_sent < self.req.len() {
            match self.conn.send(&self.req[self.req_sent..]) {
                Sent::Wrote(n) => self.req_sent += n,
                Sent::WouldBlock => return Ok(false),
                Sent::Failed(e) | Sent::Rejected(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Reads the answer's bytes: `Ok(Some(0))` at the end, `Ok(None)` if
    /// nothing came yet.
    fn pull(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        #[cfg(feature = "otlp-tls")]
        {
            let deadline = self.deadline();
            if let Some(tls) = &mut self.tls {
                return tls.recv(&mut self.conn, buf, deadline);
            }
        }
        self.conn.recv(buf)
    }

    /// The connection (fuzzing: the receiver in memory).
    #[cfg(all(fuzzing, feature = "otlp-tls"))]
    pub(crate) fn wire(&self) -> &W {
        &self.conn
    }

    /// The connection (fuzzing: the receiver in memory).
    #[cfg(all(fuzzing, feature = "otlp-tls"))]
    pub(crate) fn wire_mut(&mut self) -> &mut W {
        &mut self.conn
    }

    /// What the answer's reader holds (fuzzing: its bounds): the bytes
    /// read, and the chunked body copied out of them.
    #[cfg(all(fuzzing, feature = "otlp-tls"))]
    pub(crate) fn held(&self) -> (usize, usize) {
        self.reader.held()
    }

    /// The bytes of the sink's buffer the request in flight carries.
    pub(crate) fn in_flight(&self) -> usize {
        if self.phase == Phase::Idle {
            0
        } else {
            self.covers
        }
    }

    /// How long the writer may see this output take no bytes before it
    /// calls it stalled: a request can legitimately wait for its answer up
    /// to the timeout (after which it fails).
    pub(crate) fn stall_after(&self) -> Duration {
        self.timeout
    }

    /// The delay the receiver asked for before the next try, once.
    pub(crate) fn take_retry_after(&mut self) -> Option<Duration> {
        self.retry_after.take()
    }

    /// Drops the connection and the request; the failure to report.
    fn fail(&mut self, e: io::Error) -> WriteOutcome {
        self.drop_conn();
        self.phase = Phase::Idle;
        WriteOutcome::Failed(e)
    }

    /// Makes the request from the start of `buf`.
    fn start(&mut self, buf: &[u8]) -> Result<(), WriteOutcome> {
        let (mut covers, mut records) = (0, 0u64);
        while covers < buf.len() {
            let Some(len) = entry_len(&buf[covers..]) else {
                break;
            };
            if records > 0 && covers + len > self.max_batch {
                break;
            }
            covers += len;
            records += 1;
        }
        if records == 0 {
            // Not a record of the OTLP format: nothing a receiver could
            // take, and nothing a retry would mend.
            return Err(WriteOutcome::Refused {
                bytes: buf.len(),
                records: u64::MAX,
                error: io::Error::other("nowait bug: the OTLP sink's buffer is not records"),
            });
        }
        self.body.clear();
        self.envelope.wrap(&buf[..covers], &mut self.body);
        self.req.clear();
        if self.gzip {
            // Writes into a Vec cannot fail.
            let mut gz = flate2::write::GzEncoder::new(
                Vec::with_capacity(self.body.len() / 4),
                flate2::Compression::fast(),
            );
            let _ = gz.write_all(&self.body);
            let zipped = gz.finish().unwrap_or_default();
            let (path, host) = (&self.endpoint.path, &self.endpoint.host);
            request_head(path, host, &self.headers, zipped.len(), true, &mut self.req);
            self.req.extend_from_slice(&zipped);
        } else {
            request_head(
                &self.endpoint.path,
                &self.endpoint.host,
                &self.headers,
                self.body.len(),
                false,
                &mut self.req,
            );
            self.req.extend_from_slice(&self.body);
        }
        self.req_sent = 0;
        self.covers = covers;
        self.records = records;
        self.started = Instant::now();
        self.reader.clear();
        self.phase = Phase::Sending;
        Ok(())
    }

    /// One step of the exchange; never waits.
    pub(crate) fn write(&mut self, buf: &[u8]) -> WriteOutcome {
        loop {
            match self.phase {
                Phase::Idle => {
                    if buf.is_empty() {
                        return WriteOutcome::Wrote(0);
                    }
                    if let Err(outcome) = self.start(buf) {
                        return outcome;
                    }
                }
                Phase::Sending | Phase::Waiting if buf.len() < self.covers => {
                    // The writer gave up the bytes (it never does while a
                    // request is pending); start again from what it has.
                    self.drop_conn();
                    self.phase = Phase::Idle;
                }
                Phase::Sending => {
                    if self.started.elapsed() >= self.timeout {
                        return self.timed_out();
                    }
                    match self.push() {
                        Ok(true) => self.phase = Phase::Waiting,
                        Ok(false) => return WriteOutcome::WouldBlock,
                        Err(e) => return self.fail(e),
                    }
                }
                Phase::Waiting => return self.read_answer(),
            }
        }
    }

    fn timed_out(&mut self) -> WriteOutcome {
        let e = io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no answer from the OTLP receiver within {} ms",
                self.timeout.as_millis()
            ),
        );
        self.fail(e)
    }

    /// Reads what the receiver sent so far. Bounded twice: the reader
    /// refuses an answer (interim responses included) past its size, and
    /// the request's deadline is checked on every turn, so a receiver that
    /// keeps sending can hold the writer thread for neither more bytes nor
    /// more time than those.
    fn read_answer(&mut self) -> WriteOutcome {
        let mut chunk = [0u8; 4096];
        loop {
            if self.started.elapsed() >= self.timeout {
                return self.timed_out();
            }
            let (n, eof) = match self.pull(&mut chunk) {
                Ok(Some(0)) => (0, true),
                Ok(Some(n)) => (n, false),
                Ok(None) => return WriteOutcome::WouldBlock,
                Err(e) => return self.fail(e),
            };
            match self.reader.feed(&chunk[..n], eof) {
                Parsed::Partial if eof => {
                    let e = io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "the OTLP receiver closed the connection before answering",
                    );
                    return self.fail(e);
                }
                Parsed::Partial => {}
                Parsed::Invalid(why) => {
                    let e = io::Error::new(io::ErrorKind::InvalidData, why);
                    return self.fail(e);
                }
                Parsed::Done(response) => return self.answered(response),
            }
        }
    }

    /// What the answer means for the request's records.
    fn answered(&mut self, r: Response) -> WriteOutcome {
        self.phase = Phase::Idle;
        if !r.keep_alive {
            self.drop_conn();
        }
        let covers = self.covers;
        match r.status {
            200..=299 => match partial_success(&r.body) {
                Some((rejected, message)) if rejected > 0 => WriteOutcome::Refused {
                    bytes: covers,
                    records: rejected,
                    error: io::Error::other(format!(
                        "the OTLP receiver rejected {rejected} of {} records: {message}",
                        self.records
                    )),
                },
                _ => WriteOutcome::Wrote(covers),
            },
            429 | 502 | 503 | 504 => {
                self.retry_after = r.retry_after.map(|d| d.min(MAX_RETRY_AFTER));
                let e = io::Error::other(format!(
                    "the OTLP receiver answered {} {}{}",
                    r.status,
                    r.reason,
                    match r.retry_after {
                        Some(d) => format!(" (retry after {} s)", d.as_secs()),
                        None => String::new(),
                    }
                ));
                // The records stay pending: the writer retries.
                self.drop_conn();
                WriteOutcome::Failed(e)
            }
            status => WriteOutcome::Refused {
                bytes: covers,
                records: u64::MAX,
                error: io::Error::other(format!(
                    "the OTLP receiver refused a request of {} records: {status} {}{}",
                    self.records,
                    r.reason,
                    status_message(&r.body)
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                )),
            },
        }
    }
}

/// Printable text of a receiver's message, at most 200 characters.
fn printable(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect()
}

/// `ExportLogsServiceResponse { partial_success = 1: { rejected_log_records
/// = 1; error_message = 2 } }`: the count rejected and the message.
fn partial_success(body: &[u8]) -> Option<(u64, String)> {
    let ps = fields(body)
        .find_map(|f| f.filter(|f| f.0 == 1 && f.1 == 2))?
        .3;
    let (mut rejected, mut message) = (0, String::new());
    for (field, wire, value, bytes) in fields(ps).map_while(|f| f) {
        match (field, wire) {
            (1, 0) => rejected = value,
            (2, 2) => message = printable(bytes),
            _ => {}
        }
    }
    Some((rejected, message))
}

/// `google.rpc.Status { message = 2 }`, the body of an OTLP error answer.
fn status_message(body: &[u8]) -> Option<String> {
    fields(body)
        .map_while(|f| f)
        .find(|f| f.0 == 2 && f.1 == 2)
        .map(|f| printable(f.3))
        .filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_success_and_status_bodies() {
        // partial_success { rejected_log_records: 3, error_message: "bad\n" }
        let body = [0x0a, 0x08, 0x08, 0x03, 0x12, 0x04, b'b', b'a', b'd', b'\n'];
        assert_eq!(partial_success(&body), Some((3, "bad ".into())));
        assert_eq!(partial_success(&[]), None);
        // Status { code: 3, message: "no" }
        assert_eq!(
            status_message(&[0x08, 0x03, 0x12, 0x02, b'n', b'o']),
            Some("no".into())
        );
    }
}
