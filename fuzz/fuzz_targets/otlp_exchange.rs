//! The OTLP sink's whole exchange with a receiver in memory, plain or
//! over TLS (see `nowait_core::__private::fuzz::otlp_exchange`). The
//! receiver's certificate is made once per process by the tests' CA.
#![no_main]

use std::sync::OnceLock;

use nowait_core::__private::fuzz::{otlp_exchange, ExchangeCerts};

fn certs() -> &'static ExchangeCerts {
    static CERTS: OnceLock<ExchangeCerts> = OnceLock::new();
    CERTS.get_or_init(|| {
        let ca = nowait_testkit::ca::Ca::new("nowait fuzz CA");
        let (chain, key) = ca.leaf(&["127.0.0.1"], false);
        ExchangeCerts {
            ca: ca.pem(),
            chain,
            key,
        }
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| otlp_exchange(data, certs()));
