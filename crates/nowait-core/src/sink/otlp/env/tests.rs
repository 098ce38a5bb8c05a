//! The specification's variables and their precedence, table-driven,
//! through an injected environment (the process's is never touched).

use super::*;

fn run(vars: &[(&str, &str)]) -> Result<Option<Otlp>, BuildError> {
    from_env_with(|name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    })
}

fn ok(vars: &[(&str, &str)]) -> Otlp {
    run(vars).unwrap().expect("not disabled")
}

fn err(vars: &[(&str, &str)]) -> String {
    run(vars).unwrap_err().to_string()
}

#[test]
fn endpoints_follow_the_specification() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[], "http://localhost:4318/v1/logs"),
        (
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")],
            "http://127.0.0.1:4318/v1/logs",
        ),
        (
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/")],
            "http://127.0.0.1:4318/v1/logs",
        ),
        (
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9/base")],
            "http://127.0.0.1:9/base/v1/logs",
        ),
        // The logs endpoint is used as is, and wins.
        (
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1"),
                (
                    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                    "http://127.0.0.1:2/custom",
                ),
            ],
            "http://127.0.0.1:2/custom",
        ),
        (
            &[("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://127.0.0.1:2")],
            "http://127.0.0.1:2/",
        ),
        // An empty setting of another kind is unset.
        (
            &[
                ("OTEL_EXPORTER_OTLP_TIMEOUT", ""),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:3"),
            ],
            "http://127.0.0.1:3/v1/logs",
        ),
    ];
    for (vars, url) in cases {
        let otlp = ok(vars);
        assert_eq!(otlp.url(), *url, "{vars:?}");
        assert_eq!(otlp.default_endpoint, vars.is_empty(), "{vars:?}");
    }
}

/// The default endpoint is used only when neither endpoint variable is
/// set at all: one set but empty or blank (a template or shell variable
/// that did not expand) is an error naming it, even beside a valid
/// generic one, never a fall back to `http://localhost:4318`.
#[test]
fn an_endpoint_variable_set_but_empty_is_an_error_not_the_default() {
    let cases: &[&[(&str, &str)]] = &[
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "")],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", " \t")],
        &[("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "")],
        &[
            ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", ""),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:3"),
        ],
    ];
    for vars in cases {
        let e = err(vars);
        let name = vars[0].0;
        assert!(e.contains(name) && e.contains("empty"), "{vars:?}: {e}");
    }
}

/// Credentials from the environment with no endpoint variable (its name
/// misspelt, say) are refused at build rather than sent in clear to the
/// default, a port any local user can bind; the opt-in allows them.
#[test]
fn credentials_never_go_to_the_default_endpoint_unasked() {
    for vars in [
        &[("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer s3cr3t")][..],
        &[
            (
                "OTEL_EXPORTER_OTLP_ENDPIONT",
                "https://collector.example:4318",
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cr3t"),
        ],
    ] {
        let otlp = ok(vars);
        assert!(otlp.default_endpoint);
        let e = otlp.check().unwrap_err();
        assert!(
            e.contains("OTEL_EXPORTER_OTLP_ENDPOINT") && e.contains("misspelt"),
            "{e}"
        );
        assert!(!e.contains("s3cr3t"), "{e}");
        let allowed = otlp.allow_plaintext_credentials(true);
        assert_eq!(allowed.check(), Ok(()));
        assert_eq!(allowed.plaintext_warning(), None);
    }
    // Headers that are no credentials go to the default as before.
    let otlp = ok(&[("OTEL_EXPORTER_OTLP_HEADERS", "X-Scope-OrgID=tenant")]);
    assert_eq!(otlp.check(), Ok(()));
    assert_eq!(otlp.plaintext_warning(), None);
}

/// An error that quotes the environment (a header's name, an endpoint, a
/// protocol) escapes it: no terminal escape, line break or bidi control
/// from a variable reaches whoever prints the error.
#[test]
fn errors_quote_the_environment_escaped() {
    let cases: &[(&str, &str)] = &[
        // A decoded key, its value bad.
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "%1b[2J%0aforged%e2%80%ae=s3cr3t%zz",
        ),
        // A decoded key that is no header name.
        ("OTEL_EXPORTER_OTLP_HEADERS", "%1b]0;title%07%0a=s3cr3t"),
        ("OTEL_RESOURCE_ATTRIBUTES", "%1b[31m%0d=%"),
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://\x1b[2J\nforged:99999",
        ),
        ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "ftp://\u{202e}\x1b[31m"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc\x1b[2J\r\n"),
    ];
    for (name, value) in cases {
        let e = err(&[(name, value)]);
        assert!(e.contains(name), "{e}");
        assert!(!e.contains("s3cr3t"), "{e}");
        assert_eq!(
            crate::format::unescaped_at(e.as_bytes(), &[]),
            None,
            "{name}={value:?}: {e:?}"
        );
    }
}

#[test]
fn settings_and_their_precedence() {
    let o = ok(&[
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "a=1, Authorization = Bearer%20x%2Cy ,,",
        ),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "service.name=attr,deployment.environment=prod%2Ceu",
        ),
    ]);
    assert_eq!(
        o.headers,
        [
            ("a".to_owned(), "1".to_owned()),
            ("Authorization".to_owned(), "Bearer x,y".to_owned())
        ]
    );
    assert_eq!(o.timeout, Duration::from_millis(2500));
    assert!(o.gzip);
    assert_eq!(o.service_name.as_deref(), Some("attr"));
    assert_eq!(
        o.resource,
        [("deployment.environment".into(), "prod,eu".into())]
    );
    // Logs variables win over generic ones, never merged; the service
    // name wins over the attribute.
    let o = ok(&[
        ("OTEL_EXPORTER_OTLP_HEADERS", "a=1"),
        ("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "b=2"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "1"),
        ("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "7"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
        ("OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "none"),
        ("OTEL_RESOURCE_ATTRIBUTES", "service.name=attr"),
        ("OTEL_SERVICE_NAME", "svc"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
    ]);
    assert_eq!(o.headers, [("b".to_owned(), "2".to_owned())]);
    assert_eq!(o.timeout, Duration::from_millis(7));
    assert!(!o.gzip);
    assert_eq!(o.service_name.as_deref(), Some("svc"));
    // Code after the environment wins.
    let o = ok(&[
        ("OTEL_EXPORTER_OTLP_HEADERS", "authorization=env"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "1000"),
        ("OTEL_SERVICE_NAME", "env"),
        ("OTEL_RESOURCE_ATTRIBUTES", "k=env"),
    ])
    .header("Authorization", "code")
    .timeout(Duration::from_secs(3))
    .service_name("code")
    .resource_attribute("k", "code");
    assert_eq!(o.headers, [("Authorization".to_owned(), "code".to_owned())]);
    assert_eq!(o.timeout, Duration::from_secs(3));
    assert_eq!(o.service_name.as_deref(), Some("code"));
    assert_eq!(o.resource, [("k".into(), "code".into())]);
}

#[test]
fn disabled_means_no_sink() {
    for v in ["true", "TRUE", " True "] {
        assert!(run(&[("OTEL_SDK_DISABLED", v)]).unwrap().is_none(), "{v}");
    }
    // Any other value is false (the specification's boolean), even with
    // an invalid setting beside a disabled SDK nothing else is read.
    for v in ["false", "1", "yes", ""] {
        assert!(run(&[("OTEL_SDK_DISABLED", v)]).unwrap().is_some(), "{v}");
    }
    assert!(run(&[
        ("OTEL_SDK_DISABLED", "true"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "x")
    ])
    .unwrap()
    .is_none());
}

#[test]
fn bad_values_name_their_variable_never_a_secret() {
    let long = "a".repeat(MAX_VALUE + 1);
    let many = vec!["k=v"; MAX_ITEMS + 1].join(",");
    let cases: &[(&str, &str)] = &[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://x"),
        ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://127.0.0.1:99999"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/json"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "novalue"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "=v"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "k=s3cr3t%zz"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "k=s3cr3t%ff"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "k=s3cr3t%0d%0aHost: x"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "bad name=s3cr3t"),
        ("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "content-length=s3cr3t"),
        ("OTEL_EXPORTER_OTLP_HEADERS", &long),
        ("OTEL_EXPORTER_OTLP_HEADERS", &many),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "0"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "-1"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "1.5"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "99999999999999999999"),
        ("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "3600001"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"),
        ("OTEL_RESOURCE_ATTRIBUTES", "a=%"),
    ];
    for (name, value) in cases {
        let e = err(&[(name, value)]);
        assert!(e.contains(name), "{name}={value}: {e}");
        assert!(!e.contains("s3cr3t"), "{name}={value}: {e}");
    }
}

#[cfg(not(feature = "otlp-tls"))]
#[test]
fn certificates_need_the_tls_feature() {
    let e = err(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", "/ca.pem")]);
    assert!(
        e.contains("OTEL_EXPORTER_OTLP_CERTIFICATE") && e.contains("otlp-tls"),
        "{e}"
    );
}

#[cfg(feature = "otlp-tls")]
#[test]
fn certificates_are_paths() {
    let o = ok(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://localhost:4318"),
        ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/generic.pem"),
        ("OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", "/logs.pem"),
        ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "/c.pem"),
        ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/c.key"),
    ]);
    let debug = format!("{o:?}");
    assert!(
        debug.contains("/logs.pem") && !debug.contains("generic"),
        "{debug}"
    );
    assert!(o.check().is_ok());
    let o = ok(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://localhost:4318"),
        ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/c.key"),
    ]);
    assert!(o.check().unwrap_err().contains("without its certificate"));
}

/// A certificate or key variable with a plain `http://` endpoint (the
/// default one included) is an error naming the variable, whether or not
/// the file exists: before, it was ignored and everything went in clear.
#[cfg(feature = "otlp-tls")]
#[test]
fn tls_variables_with_an_http_endpoint_are_an_error_naming_them() {
    for (var, endpoint) in [
        ("OTEL_EXPORTER_OTLP_CERTIFICATE", None),
        (
            "OTEL_EXPORTER_OTLP_CERTIFICATE",
            Some("http://127.0.0.1:4318"),
        ),
        (
            "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE",
            Some("http://127.0.0.1:4318"),
        ),
        (
            "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
            Some("http://127.0.0.1:1"),
        ),
        (
            "OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY",
            Some("http://127.0.0.1:1"),
        ),
    ] {
        let mut vars = vec![(var, "/no/such/file.pem")];
        vars.extend(endpoint.map(|e| ("OTEL_EXPORTER_OTLP_ENDPOINT", e)));
        let e = err(&vars);
        assert!(e.contains(var) && e.contains("https://"), "{vars:?}: {e}");
    }
}

#[test]
fn percent_decoding_and_lists_are_total() {
    assert_eq!(percent_decode("a%20b%2c+"), Ok("a b,+".into()));
    assert!(percent_decode("%").is_err());
    assert!(percent_decode("%2").is_err());
    assert!(percent_decode("%c3").is_err());
    assert_eq!(percent_decode("%c3%a9"), Ok("é".into()));
    assert_eq!(parse_list(" , ,"), Ok(vec![]));
    assert_eq!(
        parse_list("k==v"),
        Ok(vec![("k".to_owned(), "=v".to_owned())])
    );
}
