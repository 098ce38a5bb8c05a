//! Certificates made in the test (feature `tls`): a CA, and the leaves it
//! signs for a TLS receiver or client.

use rcgen::{
    date_time_ymd, BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair,
};

/// A self-signed certificate authority, made anew for each test.
///
/// # Examples
///
/// ```
/// let ca = nowait_testkit::ca::Ca::new("test CA");
/// let (cert, key) = ca.leaf(&["127.0.0.1"], false);
/// assert!(ca.pem().starts_with("-----BEGIN CERTIFICATE-----"));
/// assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
/// assert!(key.contains("PRIVATE KEY"));
/// ```
pub struct Ca {
    cert: Certificate,
    key: KeyPair,
}

impl std::fmt::Debug for Ca {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ca").finish_non_exhaustive()
    }
}

impl Ca {
    /// A CA whose common name is `name`.
    ///
    /// # Panics
    ///
    /// If rcgen cannot make a key or sign (it always can for these
    /// parameters).
    pub fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// A leaf certificate for `names` (host names or IP addresses), signed
    /// by this CA, valid now unless `expired` (then in 2020 only): the
    /// certificate's PEM and its key's.
    ///
    /// # Panics
    ///
    /// If a name is not a valid subject alternative name.
    pub fn leaf(&self, names: &[&str], expired: bool) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, "leaf");
        if expired {
            params.not_before = date_time_ymd(2020, 1, 1);
            params.not_after = date_time_ymd(2021, 1, 1);
        }
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// The CA's certificate, PEM: what a client is told to trust.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }
}
