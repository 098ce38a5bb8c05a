//! The layouts log platforms ingest as is: Elastic Common Schema logging
//! ([`JsonSchema::Ecs`](super::JsonSchema::Ecs)) and Google Cloud
//! Logging's structured logging
//! ([`JsonSchema::CloudLogging`](super::JsonSchema::CloudLogging)). Both
//! put the event's and its spans' fields at the top level beside the
//! platform's own keys, resolved as `flat` says.

use super::fmt_schema::fmt_value;
use super::{json_str, mark_kept, suppressed_fields_in, Json};
use crate::event::{Event, SiteCache, ThreadCache};
use crate::format::flat::{each_field, message_of, TopKeys, ECS_OBJECTS};
use crate::format::{
    copy_into, message_with, system_nanos, Clock, Format, Location, Resolved, Timer,
};
use crate::level::Level;
use crate::record::{kind, Notice, Record};

/// Which platform's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Platform {
    Ecs,
    CloudLogging,
}

/// The ECS version whose field names the ECS layout uses (`ecs.version`):
/// every field it writes has been in ECS, with this meaning and type,
/// since 1.6.
pub(super) const ECS_VERSION: &str = "1.6.0";

/// Cloud Logging's special keys: the agent takes each out of the line
/// into the log entry, so no field may have one of them.
const GCP_SPECIAL: [&str; 14] = [
    "severity",
    "message",
    "time",
    "timestamp",
    "timestampSeconds",
    "timestampNanos",
    "httpRequest",
    "logging.googleapis.com/insertId",
    "logging.googleapis.com/labels",
    "logging.googleapis.com/operation",
    "logging.googleapis.com/sourceLocation",
    "logging.googleapis.com/spanId",
    "logging.googleapis.com/trace",
    "logging.googleapis.com/trace_sampled",
];

/// The keys of a notice about suppressed calls, prefixed.
const SUPPRESSED: [&str; 4] = [
    "nowait.suppressed",
    "nowait.site",
    "nowait.reason",
    "nowait.rule",
];

/// The per-sink state of the platform layouts.
#[derive(Debug)]
pub(super) struct PlatformJson {
    json: Json,
    platform: Platform,
    clock: Clock,
    sites: SiteCache,
    threads: ThreadCache,
    scratch: (String, String),
    raw: Vec<u8>,
    keys: TopKeys,
    /// The fixed fields and the event's and spans' fields, rendered
    /// before the line's head is written.
    fixed: Vec<u8>,
    fields: Vec<u8>,
    kept: bool,
}

impl PlatformJson {
    pub(super) fn new(json: Json, platform: Platform) -> PlatformJson {
        PlatformJson {
            json,
            platform,
            clock: Clock::new(Timer::Utc),
            sites: SiteCache::default(),
            threads: ThreadCache::default(),
            scratch: Default::default(),
            raw: Vec::new(),
            keys: TopKeys::default(),
            fixed: Vec::new(),
            fields: Vec::new(),
            kept: false,
        }
    }

    /// Takes the keys every line of the layout may have, and `extra`.
    fn take_own_keys(&mut self, extra: &[&str]) {
        let o = self.json.options;
        let keys = &mut self.keys;
        match self.platform {
            Platform::Ecs => {
                keys.clear(true, &ECS_OBJECTS);
                for key in ["@timestamp", "log.level", "message", "ecs.version"] {
                    keys.take(key);
                }
                for (on, key) in [
                    (o.target, "log.logger"),
                    (o.file, "log.origin.file.name"),
                    (o.line, "log.origin.file.line"),
                    (o.thread_names, "process.thread.name"),
                    (o.thread_ids, "process.thread.id"),
                    (o.trace_ids, "trace.id"),
                    (o.trace_ids, "span.id"),
                ] {
                    if on {
                        keys.take(key);
                    }
                }
            }
            Platform::CloudLogging => {
                keys.clear(false, &[]);
                for key in GCP_SPECIAL {
                    keys.take(key);
                }
                for (on, key) in [
                    (o.target, "target"),
                    (o.thread_names, "threadName"),
                    (o.thread_ids, "threadId"),
                ] {
                    if on {
                        keys.take(key);
                    }
                }
            }
        }
        if self.kept {
            keys.take("backtrace");
        }
        extra.iter().for_each(|k| keys.take(k));
        // The fixed fields claim their keys next.
        self.fixed.clear();
        for (name, value) in self.json.fixed.iter() {
            self.fixed.push(b',');
            json_str(self.keys.claim(name, "fields."), &mut self.fixed);
            self.fixed.push(b':');
            json_str(value.as_bytes(), &mut self.fixed);
        }
    }

    /// `{`, the time, the level and the message (if any), and for ECS
    /// `ecs.version`: the keys in the order the platform asks for.
    fn head(&mut self, nanos: u64, level: Level, message: Option<&[u8]>, out: &mut Vec<u8>) {
        let (time, level_key, level_name) = match self.platform {
            Platform::Ecs => (
                "{\"@timestamp\":\"",
                "\",\"log.level\":\"",
                ecs_level(level),
            ),
            Platform::CloudLogging => ("{\"time\":\"", "\",\"severity\":\"", gcp_severity(level)),
        };
        out.extend_from_slice(time.as_bytes());
        out.extend_from_slice(&self.clock.utc(nanos));
        out.extend_from_slice(level_key.as_bytes());
        out.extend_from_slice(level_name.as_bytes());
        out.push(b'"');
        if let Some(message) = message {
            out.extend_from_slice(b",\"message\":");
            json_str(message, out);
        }
        if self.platform == Platform::Ecs {
            out.extend_from_slice(b",\"ecs.version\":\"");
            out.extend_from_slice(ECS_VERSION.as_bytes());
            out.push(b'"');
        }
        out.extend_from_slice(&self.fixed);
    }

    /// The logger (`log.logger`, `target`), if the line shows targets.
    fn target(&self, target: &[u8], out: &mut Vec<u8>) {
        if !self.json.options.target {
            return;
        }
        out.extend_from_slice(match self.platform {
            Platform::Ecs => b",\"log.logger\":".as_slice(),
            Platform::CloudLogging => b",\"target\":",
        });
        json_str(target, out);
    }

    /// A line for something that is not an event: a notice, a text record.
    fn line(
        &mut self,
        nanos: u64,
        level: Level,
        target: Option<&[u8]>,
        message: &[u8],
        out: &mut Vec<u8>,
    ) {
        self.take_own_keys(&[]);
        self.head(nanos, level, Some(message), out);
        if let Some(target) = target {
            self.target(target, out);
        }
        out.extend_from_slice(b"}\n");
    }

    fn event(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let Some(event) = Event::parse(record.payload()) else {
            let now = system_nanos(std::time::SystemTime::now());
            self.line(
                now,
                record.level(),
                Some(b"nowait"),
                b"<malformed event>",
                out,
            );
            return;
        };
        let site = event.site().and_then(|k| self.sites.get(k.get()));
        let ev = Resolved { site, event };
        let o = self.json.options;
        let trace = event.trace_context().filter(|_| o.trace_ids);
        self.take_own_keys(&[]);

        // The fields first (they may hold the location), claimed after the
        // line's own keys and the fixed fields.
        let mut at = Location::default();
        let PlatformJson {
            sites,
            keys,
            scratch,
            raw,
            fields,
            ..
        } = self;
        fields.clear();
        each_field(&ev, sites, &mut at, true, |name, value, site, origin| {
            fields.push(b',');
            json_str(keys.claim(name, origin.prefix()), fields);
            fields.push(b':');
            fmt_value(value, site, scratch, raw, fields);
        });
        let message = message_of(&ev).map(|value| {
            self.raw.clear();
            message_with(
                value,
                ev.site.as_ref(),
                &mut self.raw,
                &mut self.scratch,
                copy_into,
            );
            std::mem::take(&mut self.raw)
        });
        self.head(event.time_nanos(), record.level(), message.as_deref(), out);
        if let Some(raw) = message {
            self.raw = raw;
        }
        self.target(ev.target(), out);
        let at = at.of(ev.site.as_deref());
        let (file, line) = (at.file.filter(|_| o.file), at.line.filter(|_| o.line));
        match self.platform {
            Platform::Ecs => {
                if let Some(file) = file {
                    out.extend_from_slice(b",\"log.origin.file.name\":");
                    json_str(file, out);
                }
                if let Some(line) = line {
                    out.extend_from_slice(b",\"log.origin.file.line\":");
                    out.extend_from_slice(itoa::Buffer::new().format(line).as_bytes());
                }
            }
            Platform::CloudLogging if file.is_some() || line.is_some() => {
                out.extend_from_slice(b",\"logging.googleapis.com/sourceLocation\":{");
                if let Some(file) = file {
                    out.extend_from_slice(b"\"file\":");
                    json_str(file, out);
                }
                if let Some(line) = line {
                    if file.is_some() {
                        out.push(b',');
                    }
                    // An int64 in protobuf's JSON mapping: a string.
                    out.extend_from_slice(b"\"line\":\"");
                    out.extend_from_slice(itoa::Buffer::new().format(line).as_bytes());
                    out.push(b'"');
                }
                out.push(b'}');
            }
            Platform::CloudLogging => {}
        }
        if o.needs_thread() {
            self.thread(event.thread(), out);
        }
        if let Some(cx) = trace {
            match self.platform {
                Platform::Ecs => {
                    out.extend_from_slice(b",\"trace.id\":\"");
                    cx.write_trace_id_hex(out);
                    out.extend_from_slice(b"\",\"span.id\":\"");
                    cx.write_span_id_hex(out);
                    out.push(b'"');
                }
                Platform::CloudLogging => {
                    out.extend_from_slice(b",\"logging.googleapis.com/trace\":");
                    let mut trace = Vec::with_capacity(64);
                    if let Some(project) = &self.json.project {
                        trace.extend_from_slice(b"projects/");
                        trace.extend_from_slice(project.as_bytes());
                        trace.extend_from_slice(b"/traces/");
                    }
                    cx.write_trace_id_hex(&mut trace);
                    json_str(&trace, out);
                    out.extend_from_slice(b",\"logging.googleapis.com/spanId\":\"");
                    cx.write_span_id_hex(out);
                    out.extend_from_slice(b"\",\"logging.googleapis.com/trace_sampled\":");
                    out.extend_from_slice(if cx.is_sampled() { b"true" } else { b"false" });
                }
            }
        }
        out.extend_from_slice(&self.fields);
        out.extend_from_slice(b"}\n");
    }

    #[cold]
    fn thread(&mut self, thread: Option<u32>, out: &mut Vec<u8>) {
        let o = self.json.options;
        let Some(info) = thread.and_then(|n| self.threads.get(n)) else {
            return;
        };
        let (name_key, id_key) = match self.platform {
            Platform::Ecs => ("process.thread.name", "process.thread.id"),
            Platform::CloudLogging => ("threadName", "threadId"),
        };
        let key = |k: &str, out: &mut Vec<u8>| {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b"\":");
        };
        let name = info
            .name
            .as_deref()
            .or(if o.thread_ids { None } else { Some(&*info.id) });
        if let Some(name) = name.filter(|_| o.thread_names) {
            key(name_key, out);
            json_str(name.as_bytes(), out);
        }
        if o.thread_ids {
            match self.platform {
                // ECS's `process.thread.id` is a number: the one in
                // `ThreadId(7)`.
                Platform::Ecs => {
                    let digits = info
                        .id
                        .strip_prefix("ThreadId(")
                        .and_then(|s| s.strip_suffix(')'))
                        .and_then(|s| s.parse::<u64>().ok());
                    if let Some(n) = digits {
                        key(id_key, out);
                        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
                    }
                }
                Platform::CloudLogging => {
                    key(id_key, out);
                    json_str(info.id.as_bytes(), out);
                }
            }
        }
    }
}

/// ECS `log.level`: the level in lowercase, as the `ecs-logging` libraries
/// write it.
fn ecs_level(level: Level) -> &'static str {
    match level {
        Level::Trace => "trace",
        Level::Debug => "debug",
        Level::Info => "info",
        Level::Warn => "warn",
        Level::Error => "error",
    }
}

/// Cloud Logging's `LogSeverity` for a level (it has no TRACE).
fn gcp_severity(level: Level) -> &'static str {
    match level {
        Level::Trace | Level::Debug => "DEBUG",
        Level::Info => "INFO",
        Level::Warn => "WARNING",
        Level::Error => "ERROR",
    }
}

impl Format for PlatformJson {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        match record.kind() {
            kind::EVENT => self.event(record, out),
            k => {
                let now = system_nanos(std::time::SystemTime::now());
                if k == kind::TEXT {
                    self.line(now, record.level(), None, record.payload(), out);
                } else {
                    let msg = format!("<kind {k} record>");
                    self.line(now, record.level(), Some(b"nowait"), msg.as_bytes(), out);
                }
            }
        }
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        let time = system_nanos(notice.time());
        let suppressed = notice.suppressed();
        self.take_own_keys(if suppressed.is_some() {
            &SUPPRESSED
        } else {
            &[]
        });
        self.head(time, notice.level(), Some(notice.message().as_bytes()), out);
        self.target(b"nowait", out);
        if let Some(s) = suppressed {
            out.push(b',');
            suppressed_fields_in("nowait.", &s, out);
        }
        out.extend_from_slice(b"}\n");
    }

    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        self.kept = true;
        self.format(record, out);
        self.kept = false;
        mark_kept(out, start);
    }

    fn kept_notice(&mut self, _notice: &Notice<'_>, _out: &mut Vec<u8>) {}
}
