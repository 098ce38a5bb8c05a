//! The least of HTTP/1.1 an OTLP exporter needs: a `POST` with a
//! `Content-Length`, and a response read incrementally as its bytes come
//! (status line, headers, a body by `Content-Length`, chunked, or up to
//! the end of the connection), bounded in size.

use std::time::Duration;

/// Responses larger than this (head and body) are refused: an OTLP
/// response is a few bytes, an error's a few hundred.
pub(crate) const MAX_RESPONSE: usize = 64 << 10;

/// The head of a `POST` of `body_len` bytes of protobuf.
pub(crate) fn request_head(path: &str, host: &str, body_len: usize, gzip: bool, out: &mut Vec<u8>) {
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

/// Where the body ends.
#[derive(Debug, Clone, Copy)]
enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
}

/// A response being read.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    buf: Vec<u8>,
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

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

impl Reader {
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
    }

    /// Adds bytes read from the connection; `eof`: the connection ended.
    pub(crate) fn feed(&mut self, bytes: &[u8], eof: bool) -> Parsed {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() > MAX_RESPONSE {
            return Parsed::Invalid(format!("response larger than {MAX_RESPONSE} bytes"));
        }
        loop {
            let Some(head_end) = find(&self.buf, b"\r\n\r\n") else {
                return if eof {
                    Parsed::Invalid("connection closed before the response".into())
                } else {
                    Parsed::Partial
                };
            };
            let head = match std::str::from_utf8(&self.buf[..head_end]) {
                Ok(h) => h,
                Err(_) => return Parsed::Invalid("response head is not text".into()),
            };
            let mut lines = head.split("\r\n");
            let status_line = lines.next().unwrap_or("");
            let mut parts = status_line.splitn(3, ' ');
            let version = parts.next().unwrap_or("");
            let Some(status) = parts.next().and_then(|s| s.parse::<u16>().ok()) else {
                return Parsed::Invalid("not an HTTP response".into());
            };
            if !version.starts_with("HTTP/1.") {
                return Parsed::Invalid("not an HTTP/1 response".into());
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
                    "content-length" => length = value.parse::<usize>().ok(),
                    "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
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
            let body_start = head_end + 4;
            if (100..200).contains(&status) {
                // An interim response: the real one follows.
                self.buf.drain(..body_start);
                continue;
            }
            let framing = if status == 204 || status == 304 {
                Framing::Length(0)
            } else if chunked {
                Framing::Chunked
            } else if let Some(n) = length {
                Framing::Length(n)
            } else {
                Framing::UntilClose
            };
            let rest = &self.buf[body_start..];
            let body = match framing {
                Framing::Length(n) if rest.len() >= n => rest[..n].to_vec(),
                Framing::Length(_) => {
                    return if eof {
                        Parsed::Invalid("connection closed in the response body".into())
                    } else {
                        Parsed::Partial
                    };
                }
                Framing::Chunked => match dechunk(rest) {
                    Some(Ok(body)) => body,
                    Some(Err(e)) => return Parsed::Invalid(e),
                    None if eof => {
                        return Parsed::Invalid("connection closed in the response body".into())
                    }
                    None => return Parsed::Partial,
                },
                Framing::UntilClose if eof => {
                    keep_alive = false;
                    rest.to_vec()
                }
                Framing::UntilClose => return Parsed::Partial,
            };
            return Parsed::Done(Response {
                status,
                reason,
                retry_after,
                keep_alive,
                body,
            });
        }
    }
}

/// A chunked body: `None` while incomplete.
fn dechunk(mut rest: &[u8]) -> Option<Result<Vec<u8>, String>> {
    let mut body = Vec::new();
    loop {
        let line_end = find(rest, b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).ok();
        let size = size_text
            .map(|t| t.split(';').next().unwrap_or("").trim())
            .and_then(|t| usize::from_str_radix(t, 16).ok());
        let Some(size) = size else {
            return Some(Err("bad chunk size in the response".into()));
        };
        rest = &rest[line_end + 2..];
        if size == 0 {
            // Trailers (none expected) end with an empty line.
            return find(rest, b"\r\n").map(|_| Ok(body));
        }
        if rest.len() < size + 2 {
            return None;
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
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

    #[test]
    fn the_request_head() {
        let mut out = Vec::new();
        request_head("/v1/logs", "127.0.0.1:4318", 12, true, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("POST /v1/logs HTTP/1.1\r\nHost: 127.0.0.1:4318\r\n"),
            "{text}"
        );
        assert!(
            text.ends_with("Content-Encoding: gzip\r\nContent-Length: 12\r\n\r\n"),
            "{text}"
        );
    }
}
