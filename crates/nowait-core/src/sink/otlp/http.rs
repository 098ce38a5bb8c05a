//! The least of HTTP/1.1 an OTLP exporter needs: a `POST` with a
//! `Content-Length`, and a response read incrementally as its bytes come
//! (status line, headers, a body by `Content-Length`, chunked, or up to
//! the end of the connection), bounded in size.
//!
//! # Reading a response
//!
//! The answer is untrusted input: [`Reader`] parses it totally.
//!
//! 1. Every byte read for one request's answer, interim (`1xx`) responses
//!    included, is kept in one buffer of at most [`MAX_RESPONSE`] bytes:
//!    more is an invalid answer, however it is framed.
//! 2. A cursor moves through the buffer, one step of the grammar at a
//!    time (head, then the body by length, chunk by chunk, or to the end
//!    of the connection). A step that needs more bytes remembers how far
//!    it looked, so each byte is looked at a bounded number of times
//!    however the answer is cut.
//! 3. Every length the receiver gives (`Content-Length`, a chunk size) is
//!    read digit by digit with checked arithmetic and refused as soon as
//!    it passes what the bound leaves: no length from the wire is ever
//!    added to or allocated before it is known to fit.

use std::time::Duration;

/// Responses larger than this (head and body) are refused: an OTLP
/// response is a few bytes, an error's a few hundred.
pub(crate) const MAX_RESPONSE: usize = 64 << 10;

/// The head of a `POST` of `body_len` bytes of protobuf.
/// `extra`: the user's headers, each `Name: value\r\n`.
pub(crate) fn request_head(
    path: &str,
    host: &str,
    extra: &[u8],
    body_len: usize,
    gzip: bool,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"POST ");
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(host.as_bytes());
    out.extend_from_slice(
        concat!(
            "\r\nUser-Agent: nowait/",
            env!("CARGO_PKG_VERSION"),
            "\r\nContent-Type: application/x-protobuf\r\n"
        )
        .as_bytes(),
    );
    out.extend_from_slice(extra);
    if gzip {
        out.extend_from_slice(b"Content-Encoding: gzip\r\n");
    }
    out.extend_from_slice(b"Content-Length: ");
    out.extend_from_slice(itoa::Buffer::new().format(body_len).as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
}

/// A complete response.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Response {
    pub(crate) status: u16,
    /// The reason phrase, printable ASCII only.
    pub(crate) reason: String,
    /// `Retry-After` in seconds (the HTTP-date form is not read).
    pub(crate) retry_after: Option<Duration>,
    /// The connection stays open for the next request.
    pub(crate) keep_alive: bool,
    pub(crate) body: Vec<u8>,
}

/// What the bytes read so far make.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// More bytes are needed.
    Partial,
    Done(Response),
    /// Not HTTP, or too large.
    Invalid(String),
}

/// A response's head, as far as the exporter needs it.
#[derive(Debug)]
struct Head {
    status: u16,
    reason: String,
    retry_after: Option<Duration>,
    keep_alive: bool,
    framing: Framing,
}

/// Where the body ends.
#[derive(Debug, Clone, Copy)]
enum Framing {
    /// An interim response (`1xx`): no body, the real one follows.
    Interim,
    Length(usize),
    Chunked,
    UntilClose,
}

/// The step of the grammar the cursor is at.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A response head (interim or final) up to its empty line.
    #[default]
    Head,
    /// A body of this many bytes.
    Length(usize),
    /// A chunk-size line, with its extensions.
    ChunkSize,
    /// This many more bytes of a chunk's data.
    ChunkData(usize),
    /// The CRLF after a chunk's data.
    ChunkEnd,
    /// Trailer fields (ignored), up to the empty line.
    Trailers,
    /// A body up to the end of the connection.
    UntilClose,
    /// The answer was given (done or invalid).
    Over,
}

/// What one step did.
enum Turn {
    /// It moved on: take the next step.
    Next,
    /// It needs more bytes.
    Wait,
    /// The answer.
    End(Parsed),
}

/// A response being read (see the [module docs](self)).
#[derive(Debug, Default)]
pub(crate) struct Reader {
    /// Every byte read for this answer, interim responses included; at
    /// most [`MAX_RESPONSE`].
    buf: Vec<u8>,
    /// Where the current step starts in `buf`.
    pos: usize,
    /// The end of what a step waiting for a line end (or the head's end)
    /// already looked through; `pos <= scanned <= buf.len()`.
    scanned: usize,
    step: Step,
    /// The final response's head, once read.
    head: Option<Head>,
    /// A chunked body, chunk by chunk; never longer than `buf`.
    body: Vec<u8>,
}

fn invalid(why: impl Into<String>) -> Turn {
    Turn::End(Parsed::Invalid(why.into()))
}

/// Whether an end offset computed with checked arithmetic is within
/// [`MAX_RESPONSE`] (`None`: it overflowed).
fn within_bound(end: Option<usize>) -> bool {
    end.is_some_and(|e| e <= MAX_RESPONSE)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A length in decimal digits only (no sign, no space): `Err(true)` if
/// not that, `Err(false)` if larger than [`MAX_RESPONSE`].
fn decimal(text: &str) -> Result<usize, bool> {
    if text.is_empty() {
        return Err(true);
    }
    let mut n = 0usize;
    for b in text.bytes() {
        if !b.is_ascii_digit() {
            return Err(true);
        }
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(usize::from(b - b'0')))
            .filter(|&n| n <= MAX_RESPONSE)
            .ok_or(false)?;
    }
    Ok(n)
}

/// `chunk-size [ chunk-ext ]` (RFC 9112, 7.1): hex digits, then nothing or
/// extensions (after optional blanks, from a `;`; ignored).
fn chunk_size(line: &[u8]) -> Result<usize, String> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 {
        return Err("bad chunk size in the response".into());
    }
    let mut size = 0usize;
    for &b in &line[..digits] {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => b - b'A' + 10,
        };
        size = size
            .checked_mul(16)
            .and_then(|s| s.checked_add(usize::from(d)))
            .filter(|&s| s <= MAX_RESPONSE)
            .ok_or_else(|| {
                format!("a chunk larger than the response bound ({MAX_RESPONSE} bytes)")
            })?;
    }
    let rest = &line[digits..];
    let blanks = rest
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    match rest.get(blanks) {
        None | Some(b';') => Ok(size),
        Some(_) => Err("bad chunk size in the response".into()),
    }
}

/// A response head (without its empty line).
fn parse_head(head: &[u8]) -> Result<Head, String> {
    let Ok(head) = std::str::from_utf8(head) else {
        return Err("response head is not text".into());
    };
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    let status = parts
        .next()
        .filter(|s| s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse::<u16>().ok());
    let Some(status) = status else {
        return Err("not an HTTP response".into());
    };
    if !version.starts_with("HTTP/1.") {
        return Err("not an HTTP/1 response".into());
    }
    let reason: String = parts
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(64)
        .collect();
    let mut keep_alive = version != "HTTP/1.0";
    let (mut length, mut chunked, mut retry_after) = (None, false, None);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                let n = decimal(value).map_err(|bad| {
                    if bad {
                        format!(
                            "bad Content-Length in the response: {:.20}",
                            value.escape_debug()
                        )
                    } else {
                        format!("a body larger than the response bound ({MAX_RESPONSE} bytes)")
                    }
                })?;
                if length.is_some_and(|m| m != n) {
                    return Err("two different Content-Lengths in the response".into());
                }
                length = Some(n);
            }
            "transfer-encoding" => chunked |= value.to_ascii_lowercase().contains("chunked"),
            "connection" => {
                let v = value.to_ascii_lowercase();
                if v.contains("close") {
                    keep_alive = false;
                } else if v.contains("keep-alive") {
                    keep_alive = true;
                }
            }
            "retry-after" => {
                retry_after = value.parse::<u64>().ok().map(Duration::from_secs);
            }
            _ => {}
        }
    }
    let framing = if (100..200).contains(&status) {
        Framing::Interim
    } else if status == 204 || status == 304 {
        Framing::Length(0)
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    Ok(Head {
        status,
        reason,
        retry_after,
        keep_alive,
        framing,
    })
}

impl Reader {
    /// Gets ready for the next answer (keeps the buffer's allocation).
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.body.clear();
        self.pos = 0;
        self.scanned = 0;
        self.step = Step::Head;
        self.head = None;
    }

    /// What it holds: the bytes read, and the chunked body copied out
    /// of them.
    #[cfg(all(fuzzing, feature = "otlp-tls"))]
    pub(crate) fn held(&self) -> (usize, usize) {
        (self.buf.len(), self.body.len())
    }

    /// Adds bytes read from the connection; `eof`: the connection ended.
    /// Never `Partial` at the end of the connection; after an answer
    /// (done or invalid), every call is invalid until [`Reader::clear`].
    pub(crate) fn feed(&mut self, bytes: &[u8], eof: bool) -> Parsed {
        let parsed = self.read(bytes, eof);
        if parsed != Parsed::Partial {
            self.step = Step::Over;
        }
        parsed
    }

    fn read(&mut self, bytes: &[u8], eof: bool) -> Parsed {
        if self.step == Step::Over {
            return Parsed::Invalid("the response was already read".into());
        }
        if !within_bound(self.buf.len().checked_add(bytes.len())) {
            return Parsed::Invalid(format!("response larger than {MAX_RESPONSE} bytes"));
        }
        self.buf.extend_from_slice(bytes);
        loop {
            let turn = match self.step {
                Step::Head => self.read_head(),
                Step::Length(n) => self.read_length(n),
                Step::ChunkSize => self.read_chunk_size(),
                Step::ChunkData(n) => self.read_chunk_data(n),
                Step::ChunkEnd => self.read_chunk_end(),
                Step::Trailers => self.read_trailer(),
                Step::UntilClose if eof => {
                    let body = self.buf[self.pos..].to_vec();
                    return self.done(body, false);
                }
                Step::UntilClose => Turn::Wait,
                Step::Over => invalid("the response was already read"),
            };
            match turn {
                Turn::Next => {}
                Turn::Wait if !eof => return Parsed::Partial,
                Turn::Wait if self.step == Step::Head => {
                    return Parsed::Invalid("connection closed before the response".into())
                }
                Turn::Wait => {
                    return Parsed::Invalid("connection closed in the response body".into())
                }
                Turn::End(parsed) => return parsed,
            }
        }
    }

    /// The offset of the next `needle` from the cursor on, looking only
    /// at bytes not looked at before.
    fn next(&mut self, needle: &[u8]) -> Option<usize> {
        let from = self.scanned.max(self.pos);
        match find(&self.buf[from..], needle) {
            Some(i) => Some(from + i),
            None => {
                // A needle may start in the last bytes and end in the next.
                let keep = needle.len() - 1;
                self.scanned = self.buf.len().saturating_sub(keep).max(self.pos);
                None
            }
        }
    }

    /// Moves the cursor to `to`, a step's end.
    fn advance(&mut self, to: usize, step: Step) -> Turn {
        self.pos = to;
        self.scanned = to;
        self.step = step;
        Turn::Next
    }

    fn read_head(&mut self) -> Turn {
        let Some(end) = self.next(b"\r\n\r\n") else {
            return Turn::Wait;
        };
        let head = match parse_head(&self.buf[self.pos..end]) {
            Ok(head) => head,
            Err(why) => return invalid(why),
        };
        let body_start = end + 4;
        let step = match head.framing {
            // The real response follows, within the same bound.
            Framing::Interim => return self.advance(body_start, Step::Head),
            Framing::Length(n) if !within_bound(body_start.checked_add(n)) => {
                return invalid(format!(
                    "a body of {n} bytes passes the response bound ({MAX_RESPONSE} bytes)"
                ));
            }
            Framing::Length(n) => Step::Length(n),
            Framing::Chunked => Step::ChunkSize,
            Framing::UntilClose => Step::UntilClose,
        };
        self.head = Some(head);
        self.advance(body_start, step)
    }

    fn read_length(&mut self, n: usize) -> Turn {
        if self.buf.len() - self.pos < n {
            return Turn::Wait;
        }
        let body = self.buf[self.pos..self.pos + n].to_vec();
        Turn::End(self.done(body, true))
    }

    fn read_chunk_size(&mut self) -> Turn {
        let Some(end) = self.next(b"\r\n") else {
            return Turn::Wait;
        };
        let size = match chunk_size(&self.buf[self.pos..end]) {
            Ok(size) => size,
            Err(why) => return invalid(why),
        };
        let data = end + 2;
        if size == 0 {
            return self.advance(data, Step::Trailers);
        }
        // The data and its CRLF must fit in what the bound leaves.
        if !within_bound(data.checked_add(size).and_then(|e| e.checked_add(2))) {
            return invalid(format!(
                "a chunk of {size} bytes passes the response bound ({MAX_RESPONSE} bytes)"
            ));
        }
        self.advance(data, Step::ChunkData(size))
    }

    fn read_chunk_data(&mut self, left: usize) -> Turn {
        let take = left.min(self.buf.len() - self.pos);
        if take == 0 {
            return Turn::Wait;
        }
        let to = self.pos + take;
        self.body.extend_from_slice(&self.buf[self.pos..to]);
        let step = match left - take {
            0 => Step::ChunkEnd,
            rest => Step::ChunkData(rest),
        };
        self.advance(to, step)
    }

    fn read_chunk_end(&mut self) -> Turn {
        match self.buf.get(self.pos..self.pos + 2) {
            None => Turn::Wait,
            Some(b"\r\n") => self.advance(self.pos + 2, Step::ChunkSize),
            Some(_) => invalid("a chunk's data does not end with CRLF"),
        }
    }

    fn read_trailer(&mut self) -> Turn {
        let Some(end) = self.next(b"\r\n") else {
            return Turn::Wait;
        };
        if end > self.pos {
            // A trailer field: nothing the exporter reads.
            return self.advance(end + 2, Step::Trailers);
        }
        let body = std::mem::take(&mut self.body);
        Turn::End(self.done(body, true))
    }

    /// The answer, with `body`; `reusable`: the body's end is known, so
    /// the connection can carry the next request if the head allows.
    fn done(&mut self, body: Vec<u8>, reusable: bool) -> Parsed {
        let Some(head) = self.head.take() else {
            return Parsed::Invalid("nowait bug: a response body without a head".into());
        };
        Parsed::Done(Response {
            status: head.status,
            reason: head.reason,
            retry_after: head.retry_after,
            keep_alive: head.keep_alive && reusable,
            body,
        })
    }
}

/// Fuzzing: `data[0]` picks how the rest is cut into reads (and whether
/// it is sent again and again past the bound), the reader takes the
/// pieces, then the end of the connection. Never panics; the reader never
/// holds more than [`MAX_RESPONSE`] bytes.
#[cfg(fuzzing)]
pub(crate) fn fuzz_response(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    const MAX_PIECE: [usize; 8] = [1, 2, 3, 7, 16, 100, 1024, 4096];
    let max_piece = MAX_PIECE[usize::from(pick & 7)];
    // One input in four is sent again and again, just past the bound.
    let rounds = if pick & 0xc0 == 0xc0 && !rest.is_empty() {
        MAX_RESPONSE / rest.len() + 2
    } else {
        1
    };
    let mut stream = rest.iter().copied().cycle().take(rest.len() * rounds);
    let total = rest.len() * rounds;
    let mut seed = u32::from(pick) | 0x9e37_7900;
    let mut reader = Reader::default();
    let mut piece = Vec::with_capacity(max_piece);
    let mut fed = 0;
    loop {
        // xorshift32: the piece sizes.
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let len = 1 + seed as usize % max_piece;
        piece.clear();
        piece.extend(stream.by_ref().take(len));
        fed += piece.len();
        let eof = fed == total;
        let parsed = reader.feed(&piece, eof);
        assert!(
            reader.buf.len() <= MAX_RESPONSE,
            "the reader holds too much"
        );
        assert!(
            reader.body.len() <= reader.buf.len(),
            "a body beyond its bytes"
        );
        match parsed {
            Parsed::Partial => assert!(!eof, "partial at the end of the connection"),
            Parsed::Done(r) => {
                assert!(r.body.len() <= MAX_RESPONSE);
                assert!(matches!(reader.feed(b"x", false), Parsed::Invalid(_)));
                return;
            }
            Parsed::Invalid(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]], eof: bool) -> Parsed {
        let mut r = Reader::default();
        let mut last = Parsed::Partial;
        for (i, c) in chunks.iter().enumerate() {
            last = r.feed(c, eof && i == chunks.len() - 1);
        }
        last
    }

    #[test]
    fn a_response_read_in_pieces() {
        let full: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 3\r\n\r\nabc";
        for cut in 1..full.len() {
            let mut r = Reader::default();
            assert_eq!(r.feed(&full[..cut], false), Parsed::Partial, "{cut}");
            let Parsed::Done(resp) = r.feed(&full[cut..], false) else {
                panic!("{cut}")
            };
            assert_eq!(
                (resp.status, &resp.body[..], resp.keep_alive),
                (200, &b"abc"[..], true)
            );
        }
    }

    #[test]
    fn chunked_close_retry_after_and_interim() {
        let Parsed::Done(r) = parse(
            &[b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1;x=y\r\nc\r\n0\r\n\r\n"],
            false,
        ) else {
            panic!()
        };
        assert_eq!(r.status, 503);
        assert_eq!(r.reason, "Service Unavailable");
        assert_eq!(r.retry_after, Some(Duration::from_secs(2)));
        assert!(!r.keep_alive);
        assert_eq!(r.body, b"abc");
        // A body up to the end of the connection.
        assert_eq!(
            parse(&[b"HTTP/1.0 200 OK\r\n\r\nxy"], false),
            Parsed::Partial
        );
        let Parsed::Done(r) = parse(&[b"HTTP/1.0 200 OK\r\n\r\nxy"], true) else {
            panic!()
        };
        assert_eq!((r.body.as_slice(), r.keep_alive), (&b"xy"[..], false));
        assert!(matches!(
            parse(&[b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab"], true),
            Parsed::Invalid(_)
        ));
        assert!(matches!(
            parse(&[b"SSH-2.0-OpenSSH\r\n\r\n"], false),
            Parsed::Invalid(_)
        ));
    }

    /// A chunk size no response could hold is refused as soon as its
    /// line is read, however wide: no arithmetic on it can overflow.
    #[test]
    fn a_chunk_size_past_the_bound_is_invalid_not_an_overflow() {
        for size in [
            "ffffffffffffffff",
            "fffffffffffffffe",
            "fffffffffffffffd",
            "7fffffffffffffff",
            "10000000000000000",
            "00000000000000000000000000000000000000010001",
            "10001",
        ] {
            let resp =
                format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{size}\r\nabc");
            for eof in [false, true] {
                assert!(
                    matches!(parse(&[resp.as_bytes()], eof), Parsed::Invalid(_)),
                    "{size} eof={eof}"
                );
            }
        }
        // Leading zeros are only zeros.
        let Parsed::Done(r) = parse(
            &[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0000000000000000000000003\r\nabc\r\n0\r\n\r\n"],
            false,
        ) else {
            panic!()
        };
        assert_eq!(r.body, b"abc");
    }

    /// A `Content-Length` that is not a number, or one no response could
    /// hold, is refused at once, not waited for until the timeout.
    #[test]
    fn a_content_length_past_the_bound_or_not_a_number_is_invalid() {
        for len in [
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999999",
            "65537",
            "+2",
            "-1",
            "2 2",
            "0x2",
            "",
        ] {
            let resp = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\nab");
            assert!(
                matches!(parse(&[resp.as_bytes()], false), Parsed::Invalid(_)),
                "{len:?}"
            );
        }
        // Two lengths that disagree.
        assert!(matches!(
            parse(
                &[b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 1\r\n\r\nab"],
                false
            ),
            Parsed::Invalid(_)
        ));
        // A status that is not three digits.
        for status in ["+20", "2000", "20", "-200"] {
            let resp = format!("HTTP/1.1 {status} OK\r\nContent-Length: 0\r\n\r\n");
            assert!(
                matches!(parse(&[resp.as_bytes()], false), Parsed::Invalid(_)),
                "{status}"
            );
        }
    }

    /// A receiver streaming `100 Continue` forever meets the same bound as
    /// one long response: interim responses are part of the answer.
    #[test]
    fn interim_responses_count_against_the_response_bound() {
        let interim = b"HTTP/1.1 100 Continue\r\n\r\n";
        for per_feed in [1, 3, interim.len(), 4096] {
            let stream: Vec<u8> = interim
                .iter()
                .copied()
                .cycle()
                .take(MAX_RESPONSE + 4096)
                .collect();
            let mut r = Reader::default();
            let mut fed = 0;
            let outcome = loop {
                let piece = &stream[fed..(fed + per_feed).min(stream.len())];
                fed += piece.len();
                match r.feed(piece, false) {
                    Parsed::Partial if fed < stream.len() => {}
                    other => break other,
                }
            };
            assert!(
                matches!(outcome, Parsed::Invalid(_)),
                "{per_feed}: {outcome:?}"
            );
            assert!(fed <= MAX_RESPONSE + per_feed, "{per_feed}: read {fed}");
        }
    }

    /// Chunk data must end with CRLF; extensions and trailers are read
    /// and ignored, within the bound.
    #[test]
    fn chunk_framing_extensions_and_trailers() {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        let Parsed::Done(r) = parse(
            &[
                format!("{head}3 ;a=b;c=\"d\"\r\nabc\r\n0;z\r\nX-T: 1\r\nX-U: 2\r\n\r\n")
                    .as_bytes(),
            ],
            false,
        ) else {
            panic!()
        };
        assert_eq!(r.body, b"abc");
        for bad in [
            "3\r\nabcXY0\r\n\r\n",
            "3x\r\nabc\r\n0\r\n\r\n",
            "\r\nabc\r\n",
            ";\r\n",
        ] {
            assert!(
                matches!(
                    parse(&[format!("{head}{bad}").as_bytes()], false),
                    Parsed::Invalid(_)
                ),
                "{bad:?}"
            );
        }
        // An extension that never ends meets the bound.
        let long = format!("{head}1;{}", "x".repeat(MAX_RESPONSE));
        assert!(matches!(
            parse(&[long.as_bytes()], false),
            Parsed::Invalid(_)
        ));
    }

    /// Every response reads the same whatever the cuts, byte at a time
    /// included, and a connection that ends early is an invalid answer.
    #[test]
    fn every_split_parses_the_same() {
        // Each response, and how much of it a connection may end within
        // without making it invalid (none, or the body up to the end).
        let responses: [(&[u8], usize); 3] = [
            (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", 0),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x\r\nab\r\n1\r\nc\r\n0\r\nT: 1\r\n\r\n", 0),
            (b"HTTP/1.0 200 OK\r\n\r\nabc", 3),
        ];
        for (full, open_end) in responses {
            let mut r = Reader::default();
            let mut last = Parsed::Partial;
            for (i, b) in full.iter().enumerate() {
                last = r.feed(std::slice::from_ref(b), i == full.len() - 1);
                if i + 1 < full.len() {
                    assert_eq!(last, Parsed::Partial, "{i}");
                }
            }
            let Parsed::Done(resp) = last else {
                panic!("{last:?}")
            };
            assert_eq!(resp.body, b"abc");
            for cut in 0..full.len() - open_end {
                assert!(
                    matches!(parse(&[&full[..cut]], true), Parsed::Invalid(_)),
                    "{cut}"
                );
            }
        }
    }

    #[test]
    fn the_request_head() {
        let mut out = Vec::new();
        request_head(
            "/v1/logs",
            "127.0.0.1:4318",
            b"X-K: v\r\n",
            12,
            true,
            &mut out,
        );
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("POST /v1/logs HTTP/1.1\r\nHost: 127.0.0.1:4318\r\n"),
            "{text}"
        );
        assert!(
            text.ends_with("X-K: v\r\nContent-Encoding: gzip\r\nContent-Length: 12\r\n\r\n"),
            "{text}"
        );
    }
}
