//! JSON lines, in two schemas: `tracing-subscriber`'s (`fmt_schema`, the
//! default) and nowait's own (`nowait_schema`). This file holds the
//! builder the user configures, the JSON string escaping both schemas
//! use, and the `"backtrace":true` mark both add to released records.

mod fmt_schema;
mod nowait_schema;
mod platform;

use std::sync::Arc;

use fmt_schema::FmtJson;
use nowait_schema::NowaitJson;
use platform::{Platform, PlatformJson};

use super::fixed::FixedFields;
use super::{is_bidi_control, plain_len, Format, MakeFormat, Options, SinkInfo};

/// One JSON object per line, for log shippers (Vector, Fluent Bit, the
/// OpenTelemetry Collector's filelog receiver parse it as is).
///
/// Four layouts ([`JsonSchema`]): by default the bytes that
/// `tracing_subscriber::fmt().json()` prints for the same options and
/// events, so that parsers written for it keep working; nowait's own
/// schema ([`Json::nowait_schema`]), in which every line has all keys; and
/// the layouts two log platforms ingest as is, Elastic Common Schema
/// logging ([`Json::ecs`]) and Google Cloud Logging's structured logging
/// ([`Json::cloud_logging`]). Every layout but nowait's can add fixed
/// fields to each line ([`field`](Json::field),
/// [`fields_from_env`](Json::fields_from_env)).
///
/// # Default schema (`tracing-subscriber`'s)
///
/// ```json
/// {"timestamp":"2026-11-22T12:00:01.123456Z","level":"INFO",
///  "fields":{"message":"GET /","status":200},"target":"app::http",
///  "span":{"id":42,"name":"request"},
///  "spans":[{"peer":"10.0.0.7","name":"conn"},{"id":42,"name":"request"}]}
/// ```
///
/// (one line in the output), keys in this order, each only when it applies:
///
/// * `timestamp`: as the [`Timer`](crate::format::Timer) prints it;
///   absent with [`without_time`](Json::without_time).
/// * `level`: `TRACE`, `DEBUG`, `INFO`, `WARN` or `ERROR`
///   ([`with_level`](Json::with_level)).
/// * `fields`: the event's fields in order, the message as field `message`
///   (absent if the event has none). With
///   [`flatten_event`](Json::flatten_event) they are keys of the line
///   itself instead.
/// * `target` ([`with_target`](Json::with_target)); `filename` and
///   `line_number`, from the call site
///   ([`with_file`](Json::with_file),
///   [`with_line_number`](Json::with_line_number)).
/// * `span`: the innermost span ([`with_current_span`](Json::with_current_span)),
///   and `spans`: all enclosing spans, outermost first
///   ([`with_span_list`](Json::with_span_list)); both absent outside spans.
///   A span is an object of its fields in key order, a field recorded again
///   with `Span::record` keeping its last value, followed by `name`.
/// * `threadName` and `threadId` (`ThreadId(7)`)
///   ([`with_thread_names`](Json::with_thread_names),
///   [`with_thread_ids`](Json::with_thread_ids)).
///
/// Integers are numbers, floats numbers (as `serde_json` writes them) or
/// `null` if not finite, booleans booleans, everything else strings.
/// nowait's own notices are lines of target `nowait` with the text in
/// `fields.message`; plain text records ([`kind::TEXT`](crate::record::kind::TEXT)) have target `""`.
///
/// # nowait schema
///
/// ```json
/// {"timestamp":"2026-11-22T12:00:01.123456Z","level":"INFO","target":"app::http",
///  "message":"GET /","fields":{"status":200,"path":"/"},
///  "spans":[{"name":"request","id":42}]}
/// ```
///
/// Every line has all six keys, in this order, whatever the options (which
/// apply to the default schema only):
///
/// * `timestamp`: RFC 3339, UTC, microseconds.
/// * `level`: `TRACE`, `DEBUG`, `INFO`, `WARN` or `ERROR`.
/// * `target`: the event's target; `nowait` for nowait's own notices
///   (drops, sink errors); `""` for plain text records.
/// * `message`: the message (`""` if the event has none).
/// * `fields`: the event's other fields. Integers and finite floats are
///   numbers, booleans are booleans, non-finite floats and everything else
///   are strings.
/// * `spans`: the enclosing spans, outermost first, each an object with
///   `name` and the span's fields. A span field set again with
///   `Span::record` appears twice, in order; JSON parsers keep the last.
///
/// Two more keys follow on the lines of events logged in an OpenTelemetry
/// span whose front end recorded it (see
/// [`TraceContext`](crate::event::TraceContext)): `trace_id` (32 hex
/// digits) and `span_id` (16), in lowercase. In the default schema they
/// are there unless [`with_trace_ids(false)`](Json::with_trace_ids);
/// flattened beside them, a field named `trace_id` or `span_id` is written
/// as `fields.trace_id` (`fields.span_id`), so that the line's ids are
/// always the span's:
///
/// ```
/// use nowait_core::event::TraceContext;
/// use nowait_core::{Builder, Level, Sink};
/// use nowait_core::format::Json;
/// use nowait_core::record::kind;
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.json");
/// let json = Json::new().without_time().with_target(false);
/// let (logger, guard) = Builder::new().sink(Sink::file(&path).format(json)).build()?;
/// let mut buf = nowait_core::__private::event::EventBuf::new();
/// buf.begin_inline(0, "app");
/// buf.trace_context(TraceContext::new([0xab; 16], [0xcd; 8], 1));
/// nowait_core::__private::logger::push(&logger, Level::Info, kind::EVENT, &[buf.as_bytes()])?;
/// drop(guard);
/// let line = std::fs::read_to_string(&path)?;
/// assert_eq!(
///     line,
///     format!(
///         "{{\"level\":\"INFO\",\"fields\":{{}},\"trace_id\":\"{}\",\"span_id\":\"{}\"}}\n",
///         "ab".repeat(16),
///         "cd".repeat(8)
///     )
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Fixed and flattened fields
///
/// With fixed fields ([`field`](Json::field),
/// [`fields_from_env`](Json::fields_from_env)) or flattened spans
/// ([`flatten_spans`](Json::flatten_spans)), the default schema writes the
/// fixed fields after `level`, and the spans' fields after the event's
/// (then neither `span` nor `spans`):
///
/// ```json
/// {"timestamp":"2026-11-22T12:00:01.123456Z","level":"INFO","service":"api",
///  "message":"GET /","status":200,"peer":"10.0.0.7","id":42,"target":"app::http"}
/// ```
///
/// and every top-level key is written once, by one rule (the same in
/// [`Logfmt`](crate::format::Logfmt) and the platform layouts):
///
/// 1. The line's own keys (those the options turn on: `timestamp`,
///    `level`, `fields` unless flattened, `target`, `filename`,
///    `line_number`, `span` and `spans` unless spans are flattened,
///    `threadName`, `threadId`; `trace_id` and `span_id` on a line with a
///    trace context; `backtrace` on a released record) are taken first.
/// 2. Then the fixed fields, in the order given; then, flattened, the
///    event's fields in order (the message among them, as `message`);
///    then the spans' fields, innermost span first (a field a span
///    recorded again counts once, with its last value).
/// 3. A field whose key is taken is written as `fields.<key>` (a span's
///    field as `<span name>.<key>`); if that is taken too, with `_2`,
///    `_3`, … after its first part (`fields_2.level`). No field is dropped.
///
/// Fixed fields are strings; an event's own fields inside an unflattened
/// `fields` object are written as `tracing-subscriber` writes them. With
/// [`flatten_event`](Json::flatten_event) alone (no fixed fields, spans
/// not flattened), the line stays `tracing-subscriber`'s: only `trace_id`
/// and `span_id` are renamed.
///
/// # ECS ([`Json::ecs`])
///
/// Elastic Common Schema logging, as the `ecs-logging` libraries write it
/// and Filebeat and Elastic Agent ingest it:
///
/// ```json
/// {"@timestamp":"2026-11-22T12:00:01.123456Z","log.level":"info","message":"GET /",
///  "ecs.version":"1.6.0","service.name":"api","log.logger":"app::http",
///  "log.origin.file.name":"src/http.rs","log.origin.file.line":42,
///  "process.thread.name":"worker-1","process.thread.id":7,
///  "trace.id":"4bf92f3577b34da6a3ce929d0e0e4736","span.id":"00f067aa0ba902b7",
///  "status":200,"request.id":42}
/// ```
///
/// * `@timestamp` (RFC 3339, UTC, microseconds, whatever the timer),
///   `log.level` (`trace`, `debug`, `info`, `warn`, `error`) and
///   `message` (if the event has one) first, in that order, then
///   `ecs.version`, as the ecs-logging specification asks.
/// * The fixed fields: name them as ECS does (`service.name`,
///   `service.version`, `service.environment`, `host.name`,
///   `event.dataset`).
/// * `log.logger`: the target ([`with_target`](Json::with_target));
///   `log.origin.file.name` and `log.origin.file.line` (a number)
///   ([`with_file`](Json::with_file),
///   [`with_line_number`](Json::with_line_number));
///   `process.thread.name` and `process.thread.id` (the number in
///   `ThreadId(7)`; left out if there is none) ([`with_thread_names`](Json::with_thread_names),
///   [`with_thread_ids`](Json::with_thread_ids)); `trace.id` and `span.id`
///   ([`with_trace_ids`](Json::with_trace_ids)).
/// * The event's fields, then its spans' fields, at the top level, by the
///   rule above, where Elasticsearch's reading of dotted keys adds two
///   clashes: a key clashes with another that is its dotted prefix or
///   extends it (`message.x` with `message`), and a field named like an
///   ECS field set (`error`, `host`, `log`, `service`, `user`, …: objects
///   in ECS) is written as `fields.error`: a field `error = "timeout"`
///   would otherwise make Elasticsearch reject the document. A field named
///   like an ECS field (`error.message`, `http.response.status_code`)
///   keeps its name, so a program can log ECS fields.
/// * Notices: `log.logger` `nowait`; a notice about suppressed calls adds
///   `nowait.suppressed`, `nowait.site`, `nowait.reason` and
///   `nowait.rule`. Text records have no `log.logger`.
///
/// The timer and level options are ignored (ECS needs both), as are
/// `flatten_event`, `flatten_spans`, `with_current_span` and
/// `with_span_list` (fields and spans are always flat: ECS's `span` is an
/// object with `span.id`). A test checks every line against the ECS field
/// list (ECS 9.4, every field written here has been in ECS since 1.6) and
/// the ecs-logging specification's key order.
///
/// # Cloud Logging ([`Json::cloud_logging`])
///
/// The special JSON fields Cloud Logging's agents (Cloud Run, GKE, App
/// Engine, the Ops Agent) take from a line into the log entry, the other
/// keys becoming its `jsonPayload`:
///
/// ```json
/// {"time":"2026-11-22T12:00:01.123456Z","severity":"INFO","message":"GET /",
///  "service":"api","target":"app::http",
///  "logging.googleapis.com/sourceLocation":{"file":"src/http.rs","line":"42"},
///  "threadName":"worker-1","threadId":"ThreadId(7)",
///  "logging.googleapis.com/trace":"projects/my-project/traces/4bf92f3577b34da6a3ce929d0e0e4736",
///  "logging.googleapis.com/spanId":"00f067aa0ba902b7",
///  "logging.googleapis.com/trace_sampled":true,"status":200,"request.id":42}
/// ```
///
/// * `time` (RFC 3339, UTC, microseconds, whatever the timer), `severity`
///   (`DEBUG` for TRACE and DEBUG, `INFO`, `WARNING`, `ERROR`) and
///   `message` (if the event has one).
/// * The fixed fields; `target` ([`with_target`](Json::with_target));
///   `logging.googleapis.com/sourceLocation` with `file` and `line` (a
///   string, as protobuf's JSON mapping writes an int64)
///   ([`with_file`](Json::with_file),
///   [`with_line_number`](Json::with_line_number)); `threadName` and
///   `threadId`.
/// * On events with a trace context ([`with_trace_ids`](Json::with_trace_ids)):
///   `logging.googleapis.com/trace` (`projects/PROJECT/traces/ID` with
///   [`with_cloud_project`](Json::with_cloud_project), the form that links
///   the entry to its trace; the id alone without),
///   `logging.googleapis.com/spanId` and
///   `logging.googleapis.com/trace_sampled`.
/// * The event's fields, then its spans' fields, by the rule above; every
///   special field's key (`severity`, `message`, `time`, `timestamp`,
///   `httpRequest`, `logging.googleapis.com/…`) is the line's own, so no
///   field can set the entry's severity or trace.
/// * Notices: `target` `nowait`, and for suppressed calls the four
///   `nowait.*` keys as in ECS.
///
/// The timer, level, flattening and span-list options are ignored, as for
/// ECS. A
/// test moves the special fields into a `LogEntry` as the agents do and
/// parses it with `google-cloud-logging`'s `LogEntry` type.
///
/// # Records a backtrace released (every schema)
///
/// A record that a sink's `BacktraceBuffer` kept and a
/// trigger released is its usual line with one more key, last:
/// `"backtrace":true`. No prose line marks the block, so every line stays
/// one JSON object of the schema.
///
/// In nowait's schema, field names are written as given: an event field named `message` other
/// than the first goes to `fields`, and nothing stops a field from being
/// named like a top-level key (it stays inside `fields`).
///
/// # Escaping (every schema)
///
/// Strings are escaped per RFC 8259; in addition DEL, the C1 controls,
/// U+2028/U+2029 and the bidirectional formatting characters
/// (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) are written as
/// `\u` escapes and invalid UTF-8 as U+FFFD, so a line is always valid
/// JSON, safe to print on a terminal, and reads in the order of its
/// bytes. (Where `serde_json` leaves those characters as they are, this is
/// the one difference from `tracing-subscriber`'s bytes.)
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Level, Sink};
/// use nowait_core::format::Json;
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("app.json");
/// let (logger, guard) = Builder::new()
///     .sink(Sink::file(&path).format(Json::new().without_time()))
///     .build()?;
/// logger.log(Level::Info, "plain line")?;
/// drop(guard);
/// let line = std::fs::read_to_string(&path)?;
/// assert_eq!(line, "{\"level\":\"INFO\",\"fields\":{\"message\":\"plain line\"},\"target\":\"\"}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Json {
    schema: JsonSchema,
    options: Options,
    flatten: bool,
    flatten_spans: bool,
    current_span: bool,
    span_list: bool,
    fixed: FixedFields,
    /// The Google Cloud project of `logging.googleapis.com/trace`.
    project: Option<Arc<str>>,
}

/// The layout a [`Json`] format writes.
///
/// # Examples
///
/// ```
/// use nowait_core::format::{Json, JsonSchema};
///
/// let _ours = Json::new().with_schema(JsonSchema::Nowait);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonSchema {
    /// `tracing_subscriber::fmt().json()`'s layout (the default).
    #[default]
    TracingSubscriber,
    /// nowait's own: all six keys on every line, the message apart from
    /// the fields (see [`Json`]).
    Nowait,
    /// Elastic Common Schema logging, as Elastic's `ecs-logging` libraries
    /// write it (see [`Json::ecs`]).
    Ecs,
    /// Google Cloud Logging's structured logging: the special JSON fields
    /// its agents read from a line (see [`Json::cloud_logging`]).
    CloudLogging,
}

impl Default for Json {
    fn default() -> Json {
        Json {
            schema: JsonSchema::TracingSubscriber,
            options: Options::default().with_trace_ids(true),
            flatten: false,
            flatten_spans: false,
            current_span: true,
            span_list: true,
            fixed: FixedFields::default(),
            project: None,
        }
    }
}

impl Json {
    /// The JSON format in `tracing-subscriber`'s layout.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::format::Json::new();
    /// ```
    pub fn new() -> Json {
        Json::default()
    }

    /// The JSON format in nowait's own schema (see [`Json`]): all keys on
    /// every line, the message apart.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::format::Json::nowait_schema();
    /// ```
    pub fn nowait_schema() -> Json {
        Json::new().with_schema(JsonSchema::Nowait)
    }

    /// Chooses the layout.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::format::Json::new().with_schema(nowait_core::format::JsonSchema::Nowait);
    /// ```
    pub fn with_schema(mut self, schema: JsonSchema) -> Json {
        self.schema = schema;
        self
    }

    /// Puts the event's fields at the top level instead of under `fields`
    /// (default `false`). On a line that carries the trace context's
    /// `trace_id` and `span_id` ([`with_trace_ids`](Json::with_trace_ids)),
    /// a field named `trace_id` or `span_id` is written as
    /// `fields.trace_id` (`fields.span_id`), the path it has unflattened:
    /// the context's keys are written once, with the real ids, and no
    /// field (a request header logged under that name) can stand for them.
    /// Without a trace context the field keeps its name.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::format::Json::new().flatten_event(true);
    /// ```
    pub fn flatten_event(mut self, on: bool) -> Json {
        self.flatten = on;
        self
    }

    /// Puts the fields of the event's spans at the top level of the line
    /// (default `false`), innermost span first, instead of `span` and
    /// `spans` (which are then not written). Keys are resolved as for
    /// fixed fields (see [`Json`]): a span field whose key the line has
    /// already is written as `<span name>.<key>`.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::format::Json::new().flatten_spans(true);
    /// ```
    pub fn flatten_spans(mut self, on: bool) -> Json {
        self.flatten_spans = on;
        self
    }

    /// Adds a field with this key and value to every line of the sink
    /// (setting a key again replaces its value). Keys and values are
    /// escaped as any; where the key is taken, see [`Json`]'s *Fixed and
    /// flattened fields*.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::format::Json::new()
    ///     .field("service", "api")
    ///     .field("version", env!("CARGO_PKG_VERSION"));
    /// ```
    pub fn field(mut self, key: impl AsRef<str>, value: impl AsRef<str>) -> Json {
        self.fixed.set(key.as_ref(), value.as_ref());
        self
    }

    /// Adds fixed fields (see [`field`](Json::field)) from environment
    /// variables, read now: for each `(key, variable)`, the variable's
    /// value under `key`, if it is set and not empty (else nothing). No
    /// variable is read unless named here. A value is untrusted text:
    /// bytes that are not UTF-8 become U+FFFD, a value longer than 1024
    /// bytes is cut at a character boundary and ends in `… [truncated]`,
    /// and it is escaped as any value when written.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::Json;
    ///
    /// let _json = Json::new().field("service", "api").fields_from_env([
    ///     ("host", "HOSTNAME"),
    ///     ("environment", "APP_ENV"),
    ///     ("version", "APP_VERSION"),
    /// ]);
    /// ```
    pub fn fields_from_env<K, V>(mut self, pairs: impl IntoIterator<Item = (K, V)>) -> Json
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        self.fixed
            .set_from_env(pairs, |name| std::env::var_os(name));
        self
    }

    /// Elastic Common Schema logging (see [`Json`]'s *ECS*): the layout of
    /// Elastic's `ecs-logging` libraries, which Filebeat and Elastic
    /// Agent ingest as is.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    /// use nowait_core::format::Json;
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.json");
    /// let ecs = Json::ecs().field("service.name", "api").field("service.version", "1.2.3");
    /// let (logger, guard) = Builder::new().sink(Sink::file(&path).format(ecs)).build()?;
    /// logger.log(Level::Warn, "disk at 91%")?;
    /// drop(guard);
    /// let line = std::fs::read_to_string(&path)?;
    /// assert!(line.starts_with("{\"@timestamp\":\"20"));
    /// assert!(line.ends_with(
    ///     "\"log.level\":\"warn\",\"message\":\"disk at 91%\",\"ecs.version\":\"1.6.0\",\
    ///      \"service.name\":\"api\",\"service.version\":\"1.2.3\"}\n"
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ecs() -> Json {
        Json::new().with_schema(JsonSchema::Ecs)
    }

    /// Google Cloud Logging's structured logging (see [`Json`]'s *Cloud
    /// Logging*): the special fields that Cloud Run, GKE, App Engine and
    /// the Ops Agent read from a line written to stdout or a file.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    /// use nowait_core::format::Json;
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.json");
    /// let gcp = Json::cloud_logging().with_cloud_project("my-project").field("service", "api");
    /// let (logger, guard) = Builder::new().sink(Sink::file(&path).format(gcp)).build()?;
    /// logger.log(Level::Warn, "disk at 91%")?;
    /// drop(guard);
    /// let line = std::fs::read_to_string(&path)?;
    /// assert!(line.starts_with("{\"time\":\"20"));
    /// assert!(line.ends_with("\"severity\":\"WARNING\",\"message\":\"disk at 91%\",\"service\":\"api\"}\n"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cloud_logging() -> Json {
        Json::new().with_schema(JsonSchema::CloudLogging)
    }

    /// The Google Cloud project the traces are in: with it, Cloud
    /// Logging's `logging.googleapis.com/trace` is
    /// `projects/PROJECT/traces/TRACE_ID`, the form that links a log entry
    /// to its trace; without it, the trace id alone. Other schemas ignore
    /// it.
    ///
    /// # Examples
    ///
    /// ```
    /// let _gcp = nowait_core::format::Json::cloud_logging().with_cloud_project("my-project");
    /// ```
    pub fn with_cloud_project(mut self, project: impl AsRef<str>) -> Json {
        self.project = Some(project.as_ref().into());
        self
    }

    /// Whether to write the innermost span as `span` (default `true`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::format::Json::new().with_current_span(false);
    /// ```
    pub fn with_current_span(mut self, on: bool) -> Json {
        self.current_span = on;
        self
    }

    /// Whether to write all enclosing spans as `spans` (default `true`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::format::Json::new().with_span_list(false);
    /// ```
    pub fn with_span_list(mut self, on: bool) -> Json {
        self.span_list = on;
        self
    }
}

super::options::shared_options!(Json);

impl MakeFormat for Json {
    fn make_format(&self, _sink: &SinkInfo) -> Box<dyn Format> {
        match self.schema {
            JsonSchema::Nowait => Box::<NowaitJson>::default(),
            JsonSchema::TracingSubscriber => Box::new(FmtJson::new(self.clone())),
            JsonSchema::Ecs => Box::new(PlatformJson::new(self.clone(), Platform::Ecs)),
            JsonSchema::CloudLogging => {
                Box::new(PlatformJson::new(self.clone(), Platform::CloudLogging))
            }
        }
    }

    fn needs_thread(&self) -> bool {
        self.schema != JsonSchema::Nowait && self.options.needs_thread()
    }

    fn needs_location(&self) -> bool {
        self.schema != JsonSchema::Nowait && self.options.needs_location()
    }
}

/// The fields of a notice about suppressed calls: `"suppressed":N,
/// "site":"FILE:LINE","reason":"rate_limit","rule":"100 per 1s"`.
pub(crate) fn suppressed_fields(s: &crate::record::Suppressed<'_>, out: &mut Vec<u8>) {
    suppressed_fields_in("", s, out);
}

/// [`suppressed_fields`] with `prefix` before each key (`nowait.`).
pub(crate) fn suppressed_fields_in(
    prefix: &str,
    s: &crate::record::Suppressed<'_>,
    out: &mut Vec<u8>,
) {
    let key = |name: &str, out: &mut Vec<u8>| {
        out.push(b'"');
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
    };
    key("suppressed", out);
    out.extend_from_slice(itoa::Buffer::new().format(s.count()).as_bytes());
    out.push(b',');
    key("site", out);
    json_str(s.site().as_bytes(), out);
    out.push(b',');
    key("reason", out);
    json_str(s.reason().as_str().as_bytes(), out);
    out.push(b',');
    key("rule", out);
    json_str(s.rule().as_bytes(), out);
}

/// Appends `bytes` as a JSON string (RFC 8259), with DEL, C1 controls,
/// U+2028/U+2029 and bidi controls escaped too and invalid UTF-8 replaced
/// by U+FFFD.
///
/// Runs of printable ASCII other than `"` and `\\` (nearly every byte of a
/// log line) are found by `plain_len` and copied whole; the rest goes one
/// ASCII byte, or one run of non-ASCII bytes, at a time. A run of
/// non-ASCII bytes is decoded on its own: an ASCII byte never belongs to a
/// UTF-8 sequence or to the maximal invalid subpart that becomes one
/// U+FFFD, so cutting there changes nothing.
pub(crate) fn json_str(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut rest = bytes;
    loop {
        let plain = plain_len(rest, true);
        out.extend_from_slice(&rest[..plain]);
        rest = &rest[plain..];
        let Some(&b) = rest.first() else { break };
        if b < 0x80 {
            match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                _ => u_escape(u32::from(b), out),
            }
            rest = &rest[1..];
        } else {
            let end = rest.iter().position(|&b| b < 0x80).unwrap_or(rest.len());
            non_ascii(&rest[..end], out);
            rest = &rest[end..];
        }
    }
    out.push(b'"');
}

/// `\\u` and four hex digits.
fn u_escape(code: u32, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[(code >> shift & 0xf) as usize]);
    }
}

/// A run of non-ASCII bytes: C1 controls, U+2028/U+2029 and bidi controls
/// escaped, other characters copied, invalid sequences replaced by U+FFFD.
#[cold]
fn non_ascii(bytes: &[u8], out: &mut Vec<u8>) {
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\u{80}'..='\u{9f}' | '\u{2028}' | '\u{2029}' => u_escape(c as u32, out),
                c if is_bidi_control(c) => u_escape(c as u32, out),
                c => {
                    let mut b = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                }
            }
        }
        if !chunk.invalid().is_empty() {
            out.extend_from_slice("\u{fffd}".as_bytes());
        }
    }
}

/// Adds the key `"backtrace":true` last to the line appended to `out`
/// since `start` (a record a backtrace released; see
/// `BacktraceBuffer`).
pub(super) fn mark_kept(out: &mut Vec<u8>, start: usize) {
    if out.len() < start + 3 || !out.ends_with(b"}\n") {
        return;
    }
    out.truncate(out.len() - 2);
    if out.last() != Some(&b'{') {
        out.push(b',');
    }
    out.extend_from_slice(b"\"backtrace\":true}\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    /// The character-by-character version that `json_str` replaced.
    fn json_str_reference(bytes: &[u8], out: &mut Vec<u8>) {
        out.push(b'"');
        for chunk in bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '"' => out.extend_from_slice(b"\\\""),
                    '\\' => out.extend_from_slice(b"\\\\"),
                    '\n' => out.extend_from_slice(b"\\n"),
                    '\r' => out.extend_from_slice(b"\\r"),
                    '\t' => out.extend_from_slice(b"\\t"),
                    '\u{8}' => out.extend_from_slice(b"\\b"),
                    '\u{c}' => out.extend_from_slice(b"\\f"),
                    '\0'..='\u{1f}'
                    | '\u{7f}'..='\u{9f}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{61c}'
                    | '\u{200e}'
                    | '\u{200f}'
                    | '\u{202a}'..='\u{202e}'
                    | '\u{2066}'..='\u{2069}' => {
                        let _ = write!(out, "\\u{:04x}", c as u32);
                    }
                    c => {
                        let mut b = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                    }
                }
            }
            if !chunk.invalid().is_empty() {
                out.extend_from_slice("\u{fffd}".as_bytes());
            }
        }
        out.push(b'"');
    }

    /// The fast `json_str` gives the bytes of the one it replaced, on
    /// strings mixing plain ASCII, JSON specials, controls, DEL, C1
    /// controls, U+2028/U+2029, bidi controls and their neighbours, other
    /// UTF-8 and invalid sequences (cut
    /// ones included), at every length around the eight-byte steps.
    #[test]
    fn json_str_matches_reference() {
        let pieces: &[&[u8]] = &[
            b"a",
            b"plain text ",
            b"\"",
            b"\\",
            b"\n",
            b"\r",
            b"\t",
            b"\x08",
            b"\x0c",
            b"\x00",
            b"\x1b[31m",
            b"\x1f",
            b"\x7f",
            b" ",
            b"~",
            "é".as_bytes(),
            "\u{85}".as_bytes(),
            "\u{9f}".as_bytes(),
            "\u{a0}".as_bytes(),
            "\u{2028}".as_bytes(),
            "\u{2029}".as_bytes(),
            "\u{61b}\u{61c}\u{61d}".as_bytes(),
            "\u{200d}\u{200e}\u{200f}\u{2010}".as_bytes(),
            "\u{2029}\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}\u{202f}".as_bytes(),
            "\u{2065}\u{2066}\u{2067}\u{2068}\u{2069}\u{206a}".as_bytes(),
            "€".as_bytes(),
            "😀".as_bytes(),
            b"\xff",
            b"\xc3",
            b"\xe2\x82",
            b"\xf0\x9f\x98",
            b"\xed\xa0\x80",
            b"\x80\x80",
            b"\xc0\xaf",
            b"\xf4\x90\x80\x80",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut got, mut want) = (Vec::new(), Vec::new());
        for round in 0..20_000 {
            let mut input = Vec::new();
            for _ in 0..(round % 12) {
                input.extend_from_slice(pieces[next() as usize % pieces.len()]);
            }
            for len in [input.len(), input.len() / 2, input.len().saturating_sub(1)] {
                let s = &input[..len];
                got.clear();
                want.clear();
                json_str(s, &mut got);
                json_str_reference(s, &mut want);
                assert_eq!(got, want, "input {s:?}");
            }
        }
    }
}
