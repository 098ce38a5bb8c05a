//! [`Otlp::from_env`]: the OpenTelemetry specification's OTLP exporter
//! variables (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SDK_DISABLED`).
//!
//! # Reading the environment
//!
//! The environment is untrusted input, read by one total parser:
//!
//! 1. Each variable is read once through the caller's source; an empty
//!    value is unset (as the specification says), a value longer than
//!    [`MAX_VALUE`] bytes is an error.
//! 2. A signal-specific variable (`..._LOGS_...`) wins over the generic
//!    one; they are never merged.
//! 3. Lists (`k=v,k2=v2`, headers and resource attributes) are split on
//!    commas, each member trimmed of blanks and split at its first `=`,
//!    keys and values percent-decoded ([`percent_decode`]: a `%` takes
//!    exactly two hex digits, the result must be UTF-8). At most
//!    [`MAX_ITEMS`] members. No recursion, no arithmetic on input.
//! 4. Every error is a [`BuildError`] that names the variable and, for a
//!    header, the header's name, never its value.

use std::time::Duration;

use super::Otlp;
use crate::error::BuildError;

/// The longest value read from one variable.
pub(crate) const MAX_VALUE: usize = 16 << 10;
/// The most members of one list variable.
pub(crate) const MAX_ITEMS: usize = 128;
/// The longest timeout the environment may ask for.
const MAX_TIMEOUT_MS: u64 = 3_600_000;

/// Percent-decodes `s` (`%XX` only; `+` is kept).
pub(crate) fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |b: u8| (b as char).to_digit(16);
            let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) else {
                return Err("a % not followed by two hex digits".into());
            };
            // Both digits are below 16: the byte cannot overflow.
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "percent-decodes to bytes that are not UTF-8".into())
}

/// Parses a `k=v,k2=v2` list (see the [module docs](self)). An error
/// names the member by position, never by its value.
pub(crate) fn parse_list(value: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (n, member) in value.split(',').enumerate() {
        let member = member.trim_matches([' ', '\t']);
        if member.is_empty() {
            continue;
        }
        if out.len() == MAX_ITEMS {
            return Err(format!("more than {MAX_ITEMS} entries"));
        }
        let Some((k, v)) = member.split_once('=') else {
            return Err(format!("entry {} is not key=value", n + 1));
        };
        let key = percent_decode(k.trim_matches([' ', '\t']))
            .map_err(|e| format!("entry {}: its key: {e}", n + 1))?;
        if key.is_empty() {
            return Err(format!("entry {} has an empty key", n + 1));
        }
        let value = percent_decode(v.trim_matches([' ', '\t']))
            .map_err(|e| format!("entry {} ({key}): its value: {e}", n + 1))?;
        out.push((key, value));
    }
    Ok(out)
}

/// Fuzzing: `data[0]` picks the variable the rest (lossy UTF-8) is the
/// value of, beside a fixed endpoint (an address: no name is resolved).
/// The list parser keeps its bounds, [`from_env_with`] returns, and an
/// error never shows a header's value (a canary value added after the
/// input's entries, valid and not).
#[cfg(fuzzing)]
pub(crate) fn fuzz_env(data: &[u8]) {
    const VARS: [&str; 8] = [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_EXPORTER_OTLP_COMPRESSION",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_SERVICE_NAME",
        "OTEL_SDK_DISABLED",
    ];
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if let Ok(list) = parse_list(&text) {
        assert!(list.len() <= MAX_ITEMS);
        assert!(list.iter().all(|(k, v)| k.len() + v.len() <= text.len()));
    }
    let var = VARS[usize::from(pick) % VARS.len()];
    let run = |value: &str| {
        from_env_with(|name| match name {
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT" => Some("http://127.0.0.1:4318".into()),
            _ if name == var => Some(value.to_owned()),
            _ => None,
        })
    };
    let _ = run(&text);
    // A header value never shows in an error, valid or not: a canary
    // value after the input's entries (a value the input cannot name).
    if var.ends_with("HEADERS") && !text.contains("CANARY") {
        for canary in [
            "zz=NOWAITCANARY",
            "zz=NOWAITCANARY%0d%0a",
            "z z=NOWAITCANARY",
            "host=NOWAITCANARY",
            "zz=NOWAITCANARY%ff",
        ] {
            if let Err(e) = run(&format!("{text},{canary}")) {
                let e = e.to_string();
                assert!(!e.contains("NOWAITCANARY"), "{e}");
            }
        }
    }
}

/// The variables, read through the caller's source.
struct Env<F> {
    get: F,
}

impl<F: FnMut(&str) -> Option<String>> Env<F> {
    /// A variable's value: `None` if unset or empty.
    fn var(&mut self, name: &str) -> Result<Option<String>, BuildError> {
        match (self.get)(name) {
            Some(v) if v.len() > MAX_VALUE => Err(BuildError::config(format!(
                "{name}: longer than {MAX_VALUE} bytes"
            ))),
            Some(v) if v.trim().is_empty() => Ok(None),
            v => Ok(v),
        }
    }

    /// The logs variable `OTEL_EXPORTER_OTLP_LOGS_{what}` if set, else the
    /// generic `OTEL_EXPORTER_OTLP_{what}`: `(name, value)`.
    fn signal(&mut self, what: &str) -> Result<Option<(String, String)>, BuildError> {
        for name in [
            format!("OTEL_EXPORTER_OTLP_LOGS_{what}"),
            format!("OTEL_EXPORTER_OTLP_{what}"),
        ] {
            if let Some(v) = self.var(&name)? {
                return Ok(Some((name, v)));
            }
        }
        Ok(None)
    }
}

fn bad(name: &str, why: impl std::fmt::Display) -> BuildError {
    BuildError::config(format!("{name}: {why}"))
}

/// See [`Otlp::from_env_with`].
pub(crate) fn from_env_with(
    get: impl FnMut(&str) -> Option<String>,
) -> Result<Option<Otlp>, BuildError> {
    let mut env = Env { get };
    // OTEL_SDK_DISABLED: a boolean, true only if "true" without case; any
    // other value is false, as the specification says.
    if env
        .var("OTEL_SDK_DISABLED")?
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    {
        return Ok(None);
    }
    if let Some((name, protocol)) = env.signal("PROTOCOL")? {
        if protocol.trim() != "http/protobuf" {
            return Err(bad(
                &name,
                format!(
                    "{:?}: only http/protobuf is supported",
                    protocol.escape_debug().to_string()
                ),
            ));
        }
    }
    // The endpoint: the logs one as is; the generic one with /v1/logs.
    let mut otlp = if let Some(url) = env.var("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")? {
        let otlp = Otlp::with_endpoint(super::parse_as_is(url.trim()));
        otlp.endpoint
            .as_ref()
            .map_err(|e| bad("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", e))?;
        otlp
    } else if let Some(url) = env.var("OTEL_EXPORTER_OTLP_ENDPOINT")? {
        let url = url.trim();
        let sep = if url.ends_with('/') { "" } else { "/" };
        let otlp = Otlp::with_endpoint(super::parse_as_is(&format!("{url}{sep}v1/logs")));
        otlp.endpoint
            .as_ref()
            .map_err(|e| bad("OTEL_EXPORTER_OTLP_ENDPOINT", e))?;
        otlp
    } else {
        Otlp::new("http://localhost:4318/v1/logs")
    };
    if let Some((name, value)) = env.signal("HEADERS")? {
        for (k, v) in parse_list(&value).map_err(|e| bad(&name, e))? {
            super::check_header(&k, &v).map_err(|e| bad(&name, e))?;
            otlp = otlp.header(k, v);
        }
    }
    if let Some((name, value)) = env.signal("TIMEOUT")? {
        let value = value.trim();
        let ms =
            (!value.is_empty() && value.len() <= 10 && value.bytes().all(|b| b.is_ascii_digit()))
                .then(|| value.parse::<u64>().ok())
                .flatten()
                .filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms))
                .ok_or_else(|| {
                    bad(
                        &name,
                        format!("expected milliseconds from 1 to {MAX_TIMEOUT_MS}"),
                    )
                })?;
        otlp = otlp.timeout(Duration::from_millis(ms));
    }
    if let Some((name, value)) = env.signal("COMPRESSION")? {
        otlp = match value.trim() {
            "gzip" => otlp.gzip(true),
            "none" => otlp.gzip(false),
            _ => return Err(bad(&name, "expected gzip or none")),
        };
    }
    for what in ["CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"] {
        if let Some((name, path)) = env.signal(what)? {
            otlp = certificate(otlp, what, &name, path)?;
        }
    }
    if let Some(value) = env.var("OTEL_RESOURCE_ATTRIBUTES")? {
        for (k, v) in parse_list(&value).map_err(|e| bad("OTEL_RESOURCE_ATTRIBUTES", e))? {
            otlp = if k == "service.name" {
                otlp.service_name(v)
            } else {
                otlp.resource_attribute(k, v)
            };
        }
    }
    // OTEL_SERVICE_NAME wins over a service.name in the attributes.
    if let Some(name) = env.var("OTEL_SERVICE_NAME")? {
        otlp = otlp.service_name(name.trim());
    }
    Ok(Some(otlp))
}

#[cfg(feature = "otlp-tls")]
fn certificate(otlp: Otlp, what: &str, _name: &str, path: String) -> Result<Otlp, BuildError> {
    let path = std::path::PathBuf::from(path.trim());
    Ok(match what {
        "CERTIFICATE" => otlp.ca_certificate(path),
        "CLIENT_CERTIFICATE" => {
            let mut otlp = otlp;
            otlp.tls.changed().client_cert = Some(super::tls::Source::Path(path));
            otlp
        }
        _ => {
            let mut otlp = otlp;
            otlp.tls.changed().client_key = Some(super::tls::Source::Path(path));
            otlp
        }
    })
}

#[cfg(not(feature = "otlp-tls"))]
fn certificate(_: Otlp, _: &str, name: &str, _: String) -> Result<Otlp, BuildError> {
    Err(bad(
        name,
        "certificates need nowait-core's otlp-tls feature (TLS is not built in)",
    ))
}

#[cfg(test)]
mod tests;
