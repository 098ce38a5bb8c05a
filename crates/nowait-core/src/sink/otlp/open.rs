//! Opening the OTLP sink ([`Sink::otlp`]): an OpenTelemetry receiver over
//! OTLP/HTTP, whose client (`client.rs`) the writer polls with its
//! other descriptors. Its records are OTLP's `LogRecord`s whatever format
//! or syslog framing the sink was given.
//!
//! [`Sink::otlp`]: crate::sink::Sink::otlp

use std::io;
use std::sync::Arc;

use super::{MakeOtlp, Otlp};
use crate::format::MakeFormat;
use crate::format::Syslog;
use crate::sink::{Opened, Output};

/// Gives the sink OTLP's format, whatever else was asked, and checks the
/// receiver's settings.
pub(in crate::sink) fn settle(
    otlp: &Otlp,
    format: &mut Option<Arc<dyn MakeFormat>>,
    syslog: &mut Option<Syslog>,
) -> Result<(), String> {
    *format = Some(Arc::new(MakeOtlp));
    *syslog = None;
    otlp.check()
}

/// Opens the client, the same way at build and in a forked child; the
/// warning of credentials in clear to loopback goes with it (written at
/// build only).
pub(in crate::sink) fn open(otlp: &Otlp) -> io::Result<Opened> {
    let client = otlp.open()?;
    let mut opened = Opened::new(Output::Otlp(Box::new(client)), false);
    opened.warning = otlp.plaintext_warning();
    Ok(opened)
}
