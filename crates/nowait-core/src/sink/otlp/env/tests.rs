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
        // Empty is unset.
        (
            &[
                ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", ""),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:3"),
            ],
            "http://127.0.0.1:3/v1/logs",
        ),
    ];
    for (vars, url) in cases {
        assert_eq!(ok(vars).url(), *url, "{vars:?}");
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
    let o = ok(&[("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/c.key")]);
    assert!(o.check().unwrap_err().contains("without its certificate"));
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
