//! A [`tracing-subscriber`](tracing_subscriber) [`Layer`] that hands events to
//! [nowait](https://docs.rs/nowait)'s lock-free ring: the request thread
//! copies the event's raw values, the writer thread formats and writes them.
//!
//! # Quick start
//!
//! ```
//! use nowait_core::{Builder, Sink};
//! use tracing_subscriber::prelude::*;
//!
//! # let dir = tempfile::tempdir().unwrap();
//! let (layer, guard) = nowait_tracing::layer(Builder::new().sink(Sink::file(dir.path().join("app.log"))))?;
//! let subscriber = tracing_subscriber::registry().with(layer);
//! tracing::subscriber::with_default(subscriber, || {
//!     tracing::info!(status = 200, "GET /");
//! });
//! drop(guard); // drains and flushes
//! # Ok::<(), nowait_core::BuildError>(())
//! ```
//!
//! In a program, `tracing_subscriber::registry().with(layer).init()`
//! installs it for good; it composes with `EnvFilter`, per-layer filters
//! and other layers like any layer.
//!
//! # Filtering and per-sink levels
//!
//! Filter by target with `tracing_subscriber::EnvFilter` (it reads
//! `RUST_LOG`; `tracing_subscriber::reload` changes it at run time); the
//! directives of nowait's own [`Filter`](nowait_core::filter::Filter) are for
//! nowait's macros and the `log` front end. The sinks' levels
//! ([`Sink::level`](nowait_core::Sink::level)) still apply behind it:
//! each sink skips what is below its level, and the layer reports the
//! least severe level any sink takes ([`Logger::min_level`]) through
//! `enabled`, `register_callsite` and `max_level_hint`, so events below
//! every sink's level are never even built. Like any layer's, that answer
//! holds for the whole subscriber: to give another layer (a `fmt` layer
//! at DEBUG) more than the nowait sinks take, put the `NowaitLayer` behind
//! a per-layer filter (`layer.with_filter(LevelFilter::TRACE)`).
//!
//! ```
//! use nowait_core::{Builder, Level, Sink};
//! use tracing_subscriber::{prelude::*, EnvFilter};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! let (layer, _guard) = nowait_tracing::layer(
//!     Builder::new()
//!         .sink(Sink::stderr().level(Level::Warn))
//!         .sink(Sink::file(dir.path().join("app.log")).level(Level::Debug)),
//! )?;
//! let subscriber = tracing_subscriber::registry()
//!     .with(EnvFilter::new("info,my_app::db=debug"))
//!     .with(layer);
//! tracing::subscriber::with_default(subscriber, || {
//!     tracing::debug!(target: "my_app::db", "to the file only");
//!     tracing::warn!("to both");
//! });
//! # Ok::<(), nowait_core::BuildError>(())
//! ```
//!
//! # What runs on the calling thread
//!
//! For each event: one clock read, the call site's address, and the values
//! `tracing` hands over (`u64`, `i64`, `f64`, `bool` and `&str` are copied as
//! they are; the message and `Debug`-only values are rendered into the
//! thread's reusable buffer), plus the fields of the enclosing spans, which
//! were encoded when each span was created. No allocation once the buffer
//! has grown (a counting-allocator test checks it) and no system call in
//! steady state. Creating a span encodes its fields, after its parent's
//! encoded chain, in the thread's buffer and stores the whole chain inline
//! (up to 128 bytes) in the one box the registry's extensions make for
//! every value: one allocation per span, none per event. Inside an entered
//! span, the first event of each `enter` copies that chain (one registry
//! lookup and the uncontended read lock on the span's extensions) and keeps
//! it on the thread; further events in the same `enter` copy it from there.
//! A chain too long to keep with its span, or made stale by a
//! `Span::record` anywhere, is encoded again from a walk of the registry.
//! Names, targets and the text or JSON layout are the writer thread's
//! business (see [`nowait_core::format::Text`] and [`nowait_core::format::Json`]).
//!
//! # Panics and re-entrancy
//!
//! A `Debug` or `Display` implementation that panics while its event is
//! being encoded discards that event (counted in
//! [`Stats::discarded`](nowait_core::stats::Stats::discarded) and reported in the
//! output) instead of unwinding into the caller. In a span's field (at its
//! creation or in `Span::record`) it is counted the same way, and the span
//! keeps the fields encoded before it. One that logs from inside its own
//! formatting gets a fresh buffer: no deadlock.
//!
//! # Oversized events
//!
//! An event larger than the logger's
//! [`max_record_len`](nowait_core::Logger::max_record_len) (half the ring)
//! is not dropped: its longest string and `Debug` values are cut and end in
//! `… [truncated]` (the longest first), so it is written as one
//! shortened line.
//!
//! # Logs joined to traces (feature `opentelemetry`)
//!
//! With the `opentelemetry` feature and `tracing-opentelemetry`'s layer in
//! the same subscriber, each event records the OpenTelemetry span it is
//! logged in (its explicit parent, else the current span): trace id, span
//! id and trace flags, 26 bytes in the record. The OTLP sink sends them as
//! `LogRecord.trace_id`, `span_id` and `flags`; JSON writes `trace_id` and
//! `span_id` keys; text does with
//! [`Text::with_trace_ids`](nowait_core::format::Text::with_trace_ids). An event
//! outside any span, or in a span without a valid OpenTelemetry context,
//! carries none and costs nothing more than the lookup. The span's ids win
//! over fields a program logs under the names `trace_id` and `span_id`:
//! the OTLP sink keeps such fields as attributes, flattened JSON and text
//! write them as `fields.trace_id` and `fields.span_id`. On events without
//! a context they work as without the feature (the OTLP sink takes hex
//! ones as the record's ids).
//!
//! Reading the context goes through `tracing-opentelemetry`'s
//! `get_otel_context` (its span data is private to it): a registry
//! lookup, an uncontended lock, and starting the OpenTelemetry span if it
//! was not yet, as `tracing-opentelemetry`'s own `on_event` does. It is
//! read once per `enter` of a span and kept for the events after it.
//!
//! nowait's own macros (`nowait::info!`, ...) get the same context, inside
//! a span this layer tracks on the calling thread, when the layer pushes to
//! the global logger ([`set_global`](nowait_core::set_global) before the
//! layer joins its subscriber, as `nowait::init` does); the first such
//! layer answers them.
//!
//! Where no span this layer tracks has a context (outside any span, or a
//! span without OpenTelemetry data), events and macros take the context
//! attached to the thread with OpenTelemetry's own API
//! (`Context::attach`, `Tracer::in_span`), as `opentelemetry-appender-tracing`
//! does. That read is guarded for thread-local destructors: once the
//! thread has begun to end, a macro run by a destructor after
//! OpenTelemetry's own does not read the context (which would panic) and
//! logs without one. The guard is set by the first macro or event on the
//! thread; a thread whose very first is in such a destructor, after it
//! used OpenTelemetry's context, is not covered (OpenTelemetry's
//! `Context::current()` panics there too). Its cost, a thread-local read
//! and a borrow of OpenTelemetry's context stack, is about 50 instructions
//! per event of this layer and 26 per macro call, outside any span
//! (callgrind, with `tracing-opentelemetry`'s layer and an SDK tracer).
//!
#![cfg_attr(feature = "opentelemetry", doc = "```")]
#![cfg_attr(not(feature = "opentelemetry"), doc = "```ignore")]
//! use nowait_core::{Builder, Sink};
//! use nowait_core::format::Json;
//! use opentelemetry::trace::TracerProvider as _;
//! use tracing_subscriber::prelude::*;
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("app.json");
//! let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
//! let (layer, guard) = nowait_tracing::layer(
//!     Builder::new().sink(Sink::file(&path).format(Json::new().without_time())),
//! )?;
//! let subscriber = tracing_subscriber::registry()
//!     .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("app")))
//!     .with(layer);
//! tracing::subscriber::with_default(subscriber, || {
//!     tracing::info_span!("request").in_scope(|| tracing::info!("handled"));
//! });
//! drop(guard);
//! let line = std::fs::read_to_string(&path)?;
//! let line: serde_json::Value = serde_json::from_str(&line)?;
//! assert_eq!(line["trace_id"].as_str().map(str::len), Some(32));
//! assert_eq!(line["span_id"].as_str().map(str::len), Some(16));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Migrating from `tracing_appender::non_blocking`
//!
//! ```text
//! - let (writer, _guard) = tracing_appender::non_blocking(std::io::stdout());
//! - tracing_subscriber::fmt().with_writer(writer).init();
//! + let (layer, _guard) = nowait_tracing::layer(nowait_core::Builder::new().sink(nowait_core::Sink::stdout()))?;
//! + tracing_subscriber::registry().with(layer).init();
//! ```
//!
//! The default text layout is that of `tracing_subscriber::fmt()`.
//!
//! # Features
//!
//! * `opentelemetry`: each event records the OpenTelemetry span it is
//!   logged in (trace id, span id, flags), as `tracing-opentelemetry`'s
//!   layer keeps it in the same subscriber; see *Logs joined to traces*.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

use std::fmt;

mod limits;
#[cfg(feature = "opentelemetry")]
mod otel;
mod registered;
mod scope;

pub use limits::LimitsError;

use nowait_core::__private::event::{register_callsite, with_event_buf, EventBuf};
use nowait_core::event::{Callsite, FieldName, SiteKey};
use nowait_core::{BuildError, Builder, Guard, Level, Logger};
use smallvec::SmallVec;
use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id, Record};
use tracing_core::{Event, Interest, LevelFilter, Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// Builds a logger from `builder` and a layer feeding it.
///
/// # Errors
///
/// [`BuildError`] if the logger cannot be built (a file that cannot be
/// opened, an invalid setting).
///
/// # Examples
///
/// ```
/// use tracing_subscriber::prelude::*;
///
/// let (layer, _guard) = nowait_tracing::layer(nowait_core::Builder::new())?;
/// let _subscriber = tracing_subscriber::registry().with(layer);
/// # Ok::<(), nowait_core::BuildError>(())
/// ```
pub fn layer(builder: Builder) -> Result<(NowaitLayer, Guard), BuildError> {
    let (logger, guard) = builder.build()?;
    Ok((NowaitLayer::new(logger), guard))
}

/// The `tracing` layer: encodes each event into the logger's ring.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Sink};
/// use tracing_subscriber::{prelude::*, EnvFilter};
///
/// let (logger, _guard) = Builder::new().sink(Sink::writer(std::io::sink())).build()?;
/// let subscriber = tracing_subscriber::registry()
///     .with(EnvFilter::new("info"))
///     .with(nowait_tracing::NowaitLayer::new(logger));
/// tracing::subscriber::with_default(subscriber, || tracing::warn!(disk = "sda", "90% full"));
/// # Ok::<(), nowait_core::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct NowaitLayer {
    logger: Logger,
    /// This instance's identity in the per-thread span cache (`scope`):
    /// renewed when the layer is added to a subscriber.
    layer: u64,
    /// Rate limits and sampling per call site ([`NowaitLayer::with_limits`]).
    limits: Option<std::sync::Arc<limits::Limits>>,
    /// Where the spans' OpenTelemetry contexts are read.
    #[cfg(feature = "opentelemetry")]
    otel: otel::Otel,
}

impl NowaitLayer {
    /// A layer that pushes events to `logger`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// let layer = nowait_tracing::NowaitLayer::new(logger);
    /// # let _ = layer;
    /// ```
    pub fn new(logger: Logger) -> NowaitLayer {
        // A sink's filter reloaded changes what each call site's interest
        // should be (`register_callsite` asks `Logger::enabled_for`).
        nowait_core::__private::logger::on_sink_filter_change(
            &logger,
            tracing_core::callsite::rebuild_interest_cache,
        );
        NowaitLayer {
            logger,
            layer: scope::next_layer(),
            limits: None,
            #[cfg(feature = "opentelemetry")]
            otel: otel::Otel::default(),
        }
    }

    /// Limits how many events call sites log, by target and level:
    /// comma-separated `TARGET[@LEVEL]=RULE` directives, where `RULE` is
    /// `N/PERIOD` (at most N events per period and call site: `10/s`,
    /// `100/250ms`, `1/5m`, `1/1h`) or `1inN` (keep one event in N per call
    /// site, at random; [`nowait_core::filter::set_sample_seed`] seeds it). An empty
    /// `TARGET` means every target; a target covers its `::` children; a
    /// `LEVEL` restricts a directive to events of that level. Each call
    /// site follows the most specific matching directive (the longest
    /// target, then one with a level), and none if none matches.
    ///
    /// A suppressed event is not encoded and takes no ring space; it is
    /// counted ([`Stats::suppressed_rate_limit`],
    /// [`Stats::suppressed_sampled`]) and reported in every sink as a
    /// notice, at least once a second while it grows, on every flush and at
    /// shutdown: `suppressed 41230 records from src/db.rs:88 (limit 10 per
    /// 1s) between T1 and T2`. A kept event of a sampled call site carries
    /// a `sample_rate` field (N), for consumers that re-weight.
    ///
    /// [`Stats::suppressed_rate_limit`]: nowait_core::stats::Stats::suppressed_rate_limit
    /// [`Stats::suppressed_sampled`]: nowait_core::stats::Stats::suppressed_sampled
    ///
    /// # Errors
    ///
    /// [`LimitsError`] for a directive that cannot be read.
    ///
    /// # Examples
    ///
    /// ```
    /// use tracing_subscriber::prelude::*;
    ///
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// let layer = nowait_tracing::NowaitLayer::new(logger)
    ///     .with_limits("my_crate::db=10/s, my_crate::cache@debug=1in100")?;
    /// let _subscriber = tracing_subscriber::registry().with(layer);
    /// # Ok::<(), nowait_tracing::LimitsError>(())
    /// ```
    pub fn with_limits(mut self, directives: &str) -> Result<NowaitLayer, LimitsError> {
        let limits = limits::Limits::parse(directives, self.logger.clone())?;
        self.limits = Some(std::sync::Arc::new(limits));
        Ok(self)
    }

    /// The logger the layer feeds (for [`Logger::flush`] and
    /// [`Logger::stats`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// let layer = nowait_tracing::NowaitLayer::new(logger);
    /// layer.logger().flush().unwrap();
    /// ```
    pub fn logger(&self) -> &Logger {
        &self.logger
    }
}

#[cfg(feature = "opentelemetry")]
impl NowaitLayer {
    /// The trace context of the span `event` is logged in: for a
    /// contextual event inside a span entered through this layer, the one
    /// kept for this `enter` (read on its first event); else read through
    /// the registry. A contextual event whose span has none takes the
    /// context attached with OpenTelemetry's API ([`otel::current`]).
    fn trace_context<S>(
        &self,
        event: &Event<'_>,
        ctx: &Context<'_, S>,
    ) -> Option<nowait_core::event::TraceContext>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let of_span = |span: Option<tracing_subscriber::registry::SpanRef<'_, S>>| {
            span.and_then(|s| self.otel.context(&s.id()))
        };
        if !event.is_contextual() {
            return of_span(ctx.event_span(event));
        }
        let read = |id| self.otel.context(&Id::from_u64(id));
        scope::trace_context(self.layer, read)
            .unwrap_or_else(|| of_span(ctx.event_span(event)))
            .or_else(otel::current)
    }
}

/// A span's encoded chain: the items of its enclosing spans (outermost
/// first, as this layer sees them) and then its own item, whose fields
/// were encoded when it was created (and extended by `Span::record`). The
/// first event inside an `enter` copies the chain from here instead of
/// walking the registry's scope.
///
/// `bytes[own_at..]` are the span's own fields, always valid; the whole of
/// `bytes` is its chain while [`scope`]'s epoch is still `chain_epoch` (a
/// `Span::record` anywhere makes it stale, and a span created when its
/// parent's chain was stale has none). Up to [`INLINE_FIELDS`] bytes are
/// kept inline, so that a span's only allocation is the box the registry's
/// extensions put every value in.
struct SpanFields {
    bytes: SmallVec<[u8; INLINE_FIELDS]>,
    own_at: usize,
    chain_epoch: Option<u64>,
}

impl SpanFields {
    /// The span's own encoded fields.
    fn own(&self) -> &[u8] {
        &self.bytes[self.own_at..]
    }

    /// The span's encoded chain, if it was encoded at `epoch`.
    fn chain(&self, epoch: u64) -> Option<&[u8]> {
        (self.chain_epoch == Some(epoch)).then_some(&self.bytes[..])
    }
}

/// Encoded chains kept without an allocation of their own (a method, a
/// URI of ~60 bytes and a version take about 90 with the span's item).
const INLINE_FIELDS: usize = 128;

fn level_of(meta: &Metadata<'_>) -> Level {
    match *meta.level() {
        tracing_core::Level::TRACE => Level::Trace,
        tracing_core::Level::DEBUG => Level::Debug,
        tracing_core::Level::INFO => Level::Info,
        tracing_core::Level::WARN => Level::Warn,
        _ => Level::Error,
    }
}

fn register(meta: &'static Metadata<'static>) {
    let site = Callsite::new(level_of(meta), meta.target(), meta.name())
        .fields(meta.fields().iter().map(|f| f.name()).collect())
        .location(meta.module_path(), meta.file(), meta.line());
    let key = SiteKey::of(meta);
    register_callsite(key, site);
    registered::mark(key);
}

/// Registers `meta`'s call site unless it is known to be: `tracing-core`
/// may dispatch a call site's event on one thread before another thread's
/// `register_callsite` for it has run, and the writer needs the names.
#[inline]
fn ensure_registered(meta: &'static Metadata<'static>) {
    if !registered::contains(SiteKey::of(meta)) {
        register(meta);
    }
}

impl<S> Layer<S> for NowaitLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        register(meta);
        if let Some(limits) = &self.limits {
            // Decide the call site's limit now, off the event path.
            let _ = limits.get(meta);
        }
        if self.logger.enabled_for(meta.target(), level_of(meta)) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>, _: Context<'_, S>) -> bool {
        self.logger.enabled_for(meta.target(), level_of(meta))
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(match self.logger.min_level() {
            Level::Trace => LevelFilter::TRACE,
            Level::Debug => LevelFilter::DEBUG,
            Level::Info => LevelFilter::INFO,
            Level::Warn => LevelFilter::WARN,
            Level::Error => LevelFilter::ERROR,
        })
    }

    #[cfg(feature = "opentelemetry")]
    fn on_register_dispatch(&self, subscriber: &tracing_core::Dispatch) {
        let for_macros = nowait_core::__private::is_global(&self.logger);
        self.otel.register(subscriber, self.layer, for_macros);
    }

    fn on_layer(&mut self, _: &mut S) {
        // A clone added to a second subscriber must not share span ids.
        self.layer = scope::next_layer();
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        ensure_registered(span.metadata());
        let site = SiteKey::of(span.metadata());
        // The chain is the parent's (as this layer sees it: a parent a
        // per-layer filter hides is skipped), if current, then this span's
        // own item; a root's is its own item. Encoded in the thread's
        // reusable buffer, then copied once into the extension.
        let epoch = scope::epoch();
        with_event_buf(|buf| {
            buf.clear();
            let mut chain_epoch = match span.parent() {
                None => Some(epoch),
                Some(parent) => {
                    let ext = parent.extensions();
                    match ext.get::<SpanFields>().and_then(|f| f.chain(epoch)) {
                        Some(chain) => {
                            buf.spans(chain);
                            Some(epoch)
                        }
                        None => None,
                    }
                }
            };
            // The parent's extensions are released before the user's
            // `Debug` code runs.
            let item_at = buf.field_bytes().len();
            buf.begin_span(site);
            let mut own_at = buf.field_bytes().len();
            let mut visitor = Visitor::new(buf);
            attrs.record(&mut visitor);
            if visitor.failed {
                nowait_core::__private::logger::count_discarded(&self.logger);
            }
            buf.end_span();
            let mut bytes = buf.field_bytes();
            // A chain too long to keep inline is not kept: the span's own
            // item alone is (one allocation per span, not two).
            if bytes.len() > INLINE_FIELDS && item_at > 0 {
                (bytes, own_at, chain_epoch) = (&bytes[item_at..], own_at - item_at, None);
            }
            span.extensions_mut().insert(SpanFields {
                bytes: SmallVec::from_slice(bytes),
                own_at,
                chain_epoch,
            });
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let site = SiteKey::of(span.metadata());
        with_event_buf(|buf| {
            buf.clear();
            let mut visitor = Visitor::new(buf);
            values.record(&mut visitor);
            if visitor.failed {
                nowait_core::__private::logger::count_discarded(&self.logger);
            }
            let mut ext = span.extensions_mut();
            // The span's own item, its fields extended; no chain (the
            // epoch moves on below, so it would be stale anyway).
            let mut own = SmallVec::<[u8; INLINE_FIELDS]>::from_slice(
                ext.get_mut::<SpanFields>().map_or(&[][..], |f| f.own()),
            );
            own.extend_from_slice(buf.field_bytes());
            buf.clear();
            buf.span(site, &own);
            ext.replace(SpanFields {
                bytes: SmallVec::from_slice(buf.field_bytes()),
                own_at: buf.field_bytes().len() - own.len(),
                chain_epoch: None,
            });
        });
        // After the change: chains encoded before it are encoded again.
        scope::fields_changed();
    }

    fn on_enter(&self, id: &Id, _: Context<'_, S>) {
        scope::enter(self.layer, id.into_u64());
    }

    fn on_exit(&self, id: &Id, _: Context<'_, S>) {
        scope::exit(self.layer, id.into_u64());
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let meta = event.metadata();
        ensure_registered(meta);
        let limit = self.limits.as_ref().and_then(|l| l.get(meta));
        if limit.is_some_and(|l| !l.admit_watched()) {
            return;
        }
        let logger = &self.logger;
        // Read before the buffer is taken: it may start the OpenTelemetry
        // span, which runs the tracer's code.
        #[cfg(feature = "opentelemetry")]
        let trace = self.trace_context(event, &ctx);
        with_event_buf(|buf| {
            buf.begin(SiteKey::of(meta));
            if nowait_core::__private::logger::records_thread(logger) {
                buf.thread();
            }
            #[cfg(feature = "opentelemetry")]
            if let Some(cx) = trace {
                buf.trace_context(cx);
            }
            // Inside an entered span: its chain of spans, encoded on the
            // first event of this enter. No span entered on this thread:
            // nothing to look up. Otherwise a walk of the registry.
            let known = if event.is_contextual() {
                scope::with_chain(
                    self.layer,
                    |id, epoch, chain| {
                        let Some(span) = ctx.span(&Id::from_u64(id)) else {
                            return false;
                        };
                        // The chain the span keeps since its creation, if
                        // current; else a walk of its scope.
                        if let Some(kept) = span
                            .extensions()
                            .get::<SpanFields>()
                            .and_then(|f| f.chain(epoch))
                        {
                            chain.spans(kept);
                            return true;
                        }
                        for span in span.scope().from_root() {
                            let ext = span.extensions();
                            let fields = ext.get::<SpanFields>().map_or(&[][..], SpanFields::own);
                            chain.span(SiteKey::of(span.metadata()), fields);
                        }
                        true
                    },
                    |chain| buf.spans(chain),
                )
            } else {
                scope::Chain::Unknown
            };
            if known == scope::Chain::Unknown {
                if let Some(scope) = ctx.event_scope(event) {
                    for span in scope.from_root() {
                        let ext = span.extensions();
                        let fields = ext.get::<SpanFields>().map_or(&[][..], SpanFields::own);
                        buf.span(SiteKey::of(span.metadata()), fields);
                    }
                }
            }
            let mut visitor = Visitor::new(buf);
            event.record(&mut visitor);
            if visitor.failed {
                nowait_core::__private::logger::count_discarded(logger);
                return;
            }
            if let Some(n) = limit.and_then(|l| l.sample_rate()) {
                buf.u64(FieldName::Inline("sample_rate"), u64::from(n));
            }
            let _ = nowait_core::__private::push_event(logger, level_of(meta), buf);
        });
    }
}

/// Copies the values `tracing` hands over into an [`EventBuf`].
struct Visitor<'a> {
    buf: &'a mut EventBuf,
    failed: bool,
}

impl<'a> Visitor<'a> {
    fn new(buf: &'a mut EventBuf) -> Visitor<'a> {
        Visitor { buf, failed: false }
    }
}

fn name(field: &Field) -> FieldName<'static> {
    FieldName::Index(field.index())
}

impl Visit for Visitor<'_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.buf.f64(name(field), value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.buf.i64(name(field), value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.buf.u64(name(field), value);
    }

    fn record_i128(&mut self, field: &Field, value: i128) {
        match i64::try_from(value) {
            Ok(v) => self.buf.i64(name(field), v),
            Err(_) => self.record_debug(field, &value),
        }
    }

    fn record_u128(&mut self, field: &Field, value: u128) {
        match u64::try_from(value) {
            Ok(v) => self.buf.u64(name(field), v),
            Err(_) => self.record_debug(field, &value),
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.buf.bool(name(field), value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.buf.str(name(field), value);
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        if self
            .buf
            .rendered(name(field), format_args!("{value}"))
            .is_err()
        {
            self.failed = true;
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.buf.debug(name(field), value).is_err() {
            self.failed = true;
        }
    }
}
