//! Syslog framing (RFC 5424 messages, RFC 6587 octet counting) around a
//! sink's format.

use std::time::SystemTime;

use super::{system_nanos, Clock, Format, Timer};
use crate::level::Level;
use crate::record::{Notice, Record};

/// A syslog facility (RFC 5424, section 6.2.1): which part of the system a
/// message comes from. The default is [`Facility::User`], as for `syslog(3)`
/// when `openlog` was not told otherwise.
///
/// # Examples
///
/// ```
/// use nowait_core::format::{Facility, Syslog};
///
/// let _syslog = Syslog::new().facility(Facility::Local0);
/// assert_eq!(Facility::Local0.code(), 16);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Facility {
    /// Kernel messages (0).
    Kern,
    /// User-level messages (1), the default.
    #[default]
    User,
    /// The mail system (2).
    Mail,
    /// System daemons (3).
    Daemon,
    /// Security and authorization (4).
    Auth,
    /// Messages of the syslog daemon itself (5).
    Syslog,
    /// The line printer subsystem (6).
    Lpr,
    /// Network news (7).
    News,
    /// UUCP (8).
    Uucp,
    /// The clock daemon (9).
    Cron,
    /// Private security and authorization messages (10).
    AuthPriv,
    /// The FTP daemon (11).
    Ftp,
    /// Local use 0 (16).
    Local0,
    /// Local use 1 (17).
    Local1,
    /// Local use 2 (18).
    Local2,
    /// Local use 3 (19).
    Local3,
    /// Local use 4 (20).
    Local4,
    /// Local use 5 (21).
    Local5,
    /// Local use 6 (22).
    Local6,
    /// Local use 7 (23).
    Local7,
}

impl Facility {
    /// The facility's number, as it goes into `PRI` (facility × 8 +
    /// severity).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::format::Facility::User.code(), 1);
    /// ```
    pub fn code(self) -> u8 {
        match self {
            Facility::Kern => 0,
            Facility::User => 1,
            Facility::Mail => 2,
            Facility::Daemon => 3,
            Facility::Auth => 4,
            Facility::Syslog => 5,
            Facility::Lpr => 6,
            Facility::News => 7,
            Facility::Uucp => 8,
            Facility::Cron => 9,
            Facility::AuthPriv => 10,
            Facility::Ftp => 11,
            Facility::Local0 => 16,
            Facility::Local1 => 17,
            Facility::Local2 => 18,
            Facility::Local3 => 19,
            Facility::Local4 => 20,
            Facility::Local5 => 21,
            Facility::Local6 => 22,
            Facility::Local7 => 23,
        }
    }
}

/// The syslog severity of a level: ERROR is 3 (err), WARN 4 (warning), INFO
/// 6 (info), DEBUG and TRACE 7 (debug).
fn severity(level: Level) -> u8 {
    match level {
        Level::Error => 3,
        Level::Warn => 4,
        Level::Info => 6,
        Level::Debug | Level::Trace => 7,
    }
}

/// Syslog framing for a sink (`Sink::syslog`): each
/// line the sink's format renders becomes the `MSG` of an RFC 5424 message,
///
/// ```text
/// <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - - MSG
/// <14>1 2026-11-22T12:00:01.123456Z web1 myapp 4242 - - 2026-11-22T12:00:01.123400Z  INFO app: GET / 200
/// ```
///
/// * `PRI` is facility × 8 + severity; the severity comes from the level:
///   ERROR → 3 (err), WARN → 4 (warning), INFO → 6 (info), DEBUG and TRACE
///   → 7 (debug). nowait's own notices get theirs the same way.
/// * `TIMESTAMP` is when the writer thread framed the record (UTC,
///   microseconds): within a few milliseconds of the event, whose own time
///   is in `MSG` for the [`Text`](crate::format::Text) and [`Json`](crate::format::Json)
///   formats.
/// * `HOSTNAME` is the host's name (`uname`), read once when the logger is
///   built; `APP-NAME` the program's name (the file name of `argv[0]`);
///   `PROCID` the process id (a forked child's writer uses its own).
///   Characters RFC 5424 does not allow there (spaces, controls, non-ASCII)
///   become `_`; names are cut to the RFC's lengths (255, 48).
/// * `MSGID` and `STRUCTURED-DATA` are `-`.
/// * `MSG` is the format's line without its newline, so any format works:
///   [`Text`](crate::format::Text) (without colours: sockets are not terminals) or
///   [`Json`](crate::format::Json) for receivers that parse it.
///
/// How messages are delimited depends on the sink: on a stream socket
/// (`Sink::tcp`, `Sink::unix`) by
/// octet counting (RFC 6587: `LENGTH SP MESSAGE`, no newline), as rsyslog,
/// syslog-ng, Vector and Fluent Bit read it; on a datagram socket one
/// message per datagram; elsewhere (a file, stdout) one message per line.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Sink};
/// use nowait_core::format::{Facility, Json, Syslog};
///
/// # let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// # let addr = listener.local_addr().unwrap();
/// let syslog = Syslog::new().facility(Facility::Local0).app_name("web");
/// let (logger, guard) = Builder::new()
///     .sink(Sink::tcp(addr).format(Json::new()).syslog(syslog))
///     .build()?;
/// # drop((logger, guard));
/// # Ok::<(), nowait_core::BuildError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Syslog {
    facility: Facility,
    app_name: Option<String>,
    hostname: Option<String>,
}

impl Syslog {
    /// Facility `user`, the program's name, the host's name.
    ///
    /// # Examples
    ///
    /// ```
    /// let _syslog = nowait_core::format::Syslog::new();
    /// ```
    pub fn new() -> Syslog {
        Syslog::default()
    }

    /// The facility (default [`Facility::User`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let _s = nowait_core::format::Syslog::new().facility(nowait_core::format::Facility::Daemon);
    /// ```
    pub fn facility(mut self, facility: Facility) -> Syslog {
        self.facility = facility;
        self
    }

    /// The `APP-NAME` field (default: the file name of `argv[0]`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _s = nowait_core::format::Syslog::new().app_name("billing");
    /// ```
    pub fn app_name(mut self, name: impl Into<String>) -> Syslog {
        self.app_name = Some(name.into());
        self
    }

    /// The `HOSTNAME` field (default: the host's name, from `uname`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _s = nowait_core::format::Syslog::new().hostname("web1.example.com");
    /// ```
    pub fn hostname(mut self, name: impl Into<String>) -> Syslog {
        self.hostname = Some(name.into());
        self
    }

    /// Wraps a sink's format; `pid` and the host name are read here (once
    /// per logger, and again in a forked child).
    pub(crate) fn wrap(&self, inner: Box<dyn Format>, framing: Framing) -> Box<dyn Format> {
        let hostname = match &self.hostname {
            Some(h) => h.clone(),
            None => crate::sys::hostname(),
        };
        let app = match &self.app_name {
            Some(a) => a.clone(),
            None => std::env::args_os()
                .next()
                .and_then(|a| {
                    std::path::Path::new(&a)
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                })
                .unwrap_or_default(),
        };
        let mut fields = Vec::with_capacity(64);
        fields.push(b' ');
        header_field(&hostname, 255, &mut fields);
        fields.push(b' ');
        header_field(&app, 48, &mut fields);
        fields.push(b' ');
        fields.extend_from_slice(itoa::Buffer::new().format(std::process::id()).as_bytes());
        fields.extend_from_slice(b" - - ");
        Box::new(SyslogFormat {
            inner,
            facility: self.facility.code(),
            fields,
            framing,
            scratch: Vec::with_capacity(512),
            time: Clock::new(Timer::Utc),
        })
    }
}

/// Appends a header field: printable ASCII except space, at most `max`
/// bytes, `-` (NILVALUE) if empty.
fn header_field(value: &str, max: usize, out: &mut Vec<u8>) {
    if value.is_empty() {
        out.push(b'-');
        return;
    }
    out.extend(
        value
            .bytes()
            .take(max)
            .map(|b| if (0x21..0x7f).contains(&b) { b } else { b'_' }),
    );
}

/// How syslog messages are delimited in a sink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// RFC 6587 octet counting, for streams.
    OctetCounted,
    /// Nothing: one message per datagram.
    Datagram,
    /// A newline after each message (files, stdout).
    Line,
}

/// A sink's format with syslog framing around it.
struct SyslogFormat {
    inner: Box<dyn Format>,
    facility: u8,
    /// ` HOSTNAME APP-NAME PROCID - - `.
    fields: Vec<u8>,
    framing: Framing,
    /// The inner format's line.
    scratch: Vec<u8>,
    time: Clock,
}

impl SyslogFormat {
    /// Frames the line in `scratch` as one message into `out`.
    fn frame(&mut self, level: Level, out: &mut Vec<u8>) {
        let mut msg: &[u8] = &self.scratch;
        while let [rest @ .., b'\n' | b'\r'] = msg {
            msg = rest;
        }
        let mut head = [0u8; 64];
        let head_len = {
            let mut w = &mut head[..];
            let pri = u32::from(self.facility) * 8 + u32::from(severity(level));
            let _ = std::io::Write::write_all(&mut w, b"<");
            let _ = std::io::Write::write_all(&mut w, itoa::Buffer::new().format(pri).as_bytes());
            let _ = std::io::Write::write_all(&mut w, b">1 ");
            64 - w.len()
        };
        let mut stamp = Vec::with_capacity(32);
        self.time.write(system_nanos(SystemTime::now()), &mut stamp);
        let len = head_len + stamp.len() + self.fields.len() + msg.len();
        if self.framing == Framing::OctetCounted {
            out.extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
            out.push(b' ');
        }
        out.extend_from_slice(&head[..head_len]);
        out.extend_from_slice(&stamp);
        out.extend_from_slice(&self.fields);
        out.extend_from_slice(msg);
        if self.framing == Framing::Line {
            out.push(b'\n');
        }
    }
}

impl Format for SyslogFormat {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        self.scratch.clear();
        self.inner.format(record, &mut self.scratch);
        self.frame(record.level(), out);
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        self.scratch.clear();
        self.inner.notice(notice, &mut self.scratch);
        self.frame(notice.level(), out);
    }

    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        self.scratch.clear();
        self.inner.format_kept(record, &mut self.scratch);
        self.frame(record.level(), out);
    }

    fn kept_notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        self.scratch.clear();
        self.inner.kept_notice(notice, &mut self.scratch);
        if !self.scratch.is_empty() {
            self.frame(notice.level(), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Plain;
    use crate::record::kind;

    fn framed(framing: Framing, level: Level, payload: &[u8]) -> String {
        let syslog = Syslog::new()
            .facility(Facility::Local0)
            .app_name("my app")
            .hostname("web1");
        let mut f = syslog.wrap(Box::new(Plain), framing);
        let mut out = Vec::new();
        f.format(&Record::new(level, kind::TEXT, payload), &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Replaces the timestamp (the one part that varies) with `TS`.
    fn without_time(s: &str) -> String {
        let start = s.find(">1 ").unwrap() + 3;
        let end = start + s[start..].find(' ').unwrap();
        let stamp = &s[start..end];
        assert_eq!(stamp.len(), 27, "{stamp}");
        assert!(
            stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T',
            "{stamp}"
        );
        format!("{}TS{}", &s[..start], &s[end..])
    }

    #[test]
    fn octet_counted_frame_is_exact() {
        let pid = std::process::id();
        let s = framed(Framing::OctetCounted, Level::Warn, b"disk 91% full\nforged");
        let (len, msg) = s.split_once(' ').unwrap();
        assert_eq!(len.parse::<usize>().unwrap(), msg.len(), "{s}");
        // local0 (16) * 8 + warning (4) = 132; the space in the app name
        // is not allowed there; the payload's newline stays escaped.
        assert_eq!(
            without_time(msg),
            format!("<132>1 TS web1 my_app {pid} - - disk 91% full\\nforged")
        );
    }

    #[test]
    fn severities_and_other_framings() {
        let pid = std::process::id();
        for (level, pri) in [
            (Level::Error, 131),
            (Level::Warn, 132),
            (Level::Info, 134),
            (Level::Debug, 135),
            (Level::Trace, 135),
        ] {
            let s = framed(Framing::Datagram, level, b"m");
            assert_eq!(
                without_time(&s),
                format!("<{pri}>1 TS web1 my_app {pid} - - m")
            );
        }
        let s = framed(Framing::Line, Level::Info, b"m");
        assert_eq!(
            without_time(&s),
            format!("<134>1 TS web1 my_app {pid} - - m\n")
        );
        // Notices are framed too, with their own level.
        let mut f = Syslog::new()
            .hostname("")
            .wrap(Box::new(Plain), Framing::Datagram);
        let mut out = Vec::new();
        f.notice(
            &Notice::new(Level::Error, SystemTime::UNIX_EPOCH, "3 records dropped"),
            &mut out,
        );
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("<11>1 "), "{s}");
        assert!(s.contains(" - "), "empty host name is NILVALUE: {s}");
        assert!(s.ends_with(" - - nowait: ERROR 3 records dropped"), "{s}");
    }
}
