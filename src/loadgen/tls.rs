//! TLS set-up of both ends, rustls with the ring provider: the load generator's client
//! configuration (built-in and system roots, `--ca-cert`, or `--insecure`; ALPN `h2` or
//! `http/1.1`) and the mock server's acceptor (`--tls-cert`/`--tls-key`; ALPN `h2` and
//! `http/1.1`). Both read PEM files the same way, and a file that cannot be used is a
//! [`TlsError`] naming the option and the file, with the reason as its
//! [`source`](std::error::Error::source) (not repeated in the message, so a printed chain reads
//! `invalid --ca-cert: ca.pem: No such file or directory`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_rustls::rustls;
use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::pki_types::pem::{self, PemObject};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::{TlsAcceptor, TlsConnector};

/// A TLS set-up that cannot be made: a PEM file that cannot be read or used, or a host that is
/// no TLS server name. Messages name the command-line option and the file.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or parsed.
    #[error("invalid --{option}: {}", path.display())]
    Pem {
        /// The option that named the file (`ca-cert`, `tls-cert`, `tls-key`).
        option: &'static str,
        /// The file.
        path: PathBuf,
        /// The reader's reason.
        #[source]
        source: pem::Error,
    },
    /// A certificate file held no certificate.
    #[error("invalid --{option}: {}: no PEM certificate in the file", path.display())]
    NoCertificate {
        /// The option that named the file (`ca-cert`, `tls-cert`).
        option: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// A `--ca-cert` certificate that rustls cannot use as a trust anchor.
    #[error("invalid --ca-cert: {}: not a usable CA certificate", path.display())]
    CaCertificate {
        /// The file.
        path: PathBuf,
        /// rustls's reason.
        #[source]
        source: rustls::Error,
    },
    /// The mock's certificate and key do not make a server configuration (e.g. they do not
    /// match).
    #[error("invalid --tls-key: {}", path.display())]
    ServerKey {
        /// The key file.
        path: PathBuf,
        /// rustls's reason.
        #[source]
        source: rustls::Error,
    },
    /// The crypto provider offers no protocol version rustls accepts.
    #[error("invalid --base-url: TLS set-up")]
    Provider(#[source] rustls::Error),
    /// The `--base-url` host cannot be checked against a certificate.
    #[error("invalid --base-url: {name}: not a TLS server name")]
    ServerName {
        /// The host.
        name: String,
        /// Why it is not a server name.
        #[source]
        source: rustls::pki_types::InvalidDnsNameError,
    },
}

/// The crypto provider of both ends.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Every certificate in a PEM file; none is an error.
fn read_certificates(
    option: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = |source| TlsError::Pem {
        option,
        path: path.to_path_buf(),
        source,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(pem)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem)?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            option,
            path: path.to_path_buf(),
        });
    }
    Ok(certs)
}

/// Whom the load generator trusts, and which protocol it asks for.
#[derive(Clone, Copy, Debug)]
pub struct ClientTrust<'a> {
    /// Accept any server certificate (`--insecure`).
    pub insecure: bool,
    /// Trust only the CA certificates in this PEM file (`--ca-cert`).
    pub ca_cert: Option<&'a Path>,
    /// Ask for HTTP/2 (ALPN `h2`) rather than HTTP/1.1.
    pub http2: bool,
}

/// The rustls client configuration of the load generator.
pub fn client_config(trust: ClientTrust<'_>) -> Result<rustls::ClientConfig, TlsError> {
    let provider = provider();
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Provider)?;
    let mut config = if trust.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
            .with_no_client_auth()
    } else {
        let mut roots = rustls::RootCertStore::empty();
        match trust.ca_cert {
            Some(path) => {
                for cert in read_certificates("ca-cert", path)? {
                    roots.add(cert).map_err(|source| TlsError::CaCertificate {
                        path: path.to_path_buf(),
                        source,
                    })?;
                }
            }
            None => {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                // The system store too (a company CA installed on the machine); unreadable
                // entries are skipped, the built-in roots remain.
                let native = rustls_native_certs::load_native_certs();
                let _ = roots.add_parsable_certificates(native.certs);
            }
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    config.alpn_protocols = vec![if trust.http2 {
        b"h2".to_vec()
    } else {
        b"http/1.1".to_vec()
    }];
    Ok(config)
}

/// A connector for one server, with the name its certificate is checked against.
pub fn connector(
    trust: ClientTrust<'_>,
    server_name: &str,
) -> Result<(TlsConnector, ServerName<'static>), TlsError> {
    let config = client_config(trust)?;
    let name =
        ServerName::try_from(server_name.to_string()).map_err(|source| TlsError::ServerName {
            name: server_name.to_string(),
            source,
        })?;
    Ok((TlsConnector::from(Arc::new(config)), name))
}

/// The mock server's side of `--tls-cert`/`--tls-key` (key: PEM PKCS#8, PKCS#1 or SEC1).
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsError> {
    let certs = read_certificates("tls-cert", cert)?;
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|source| TlsError::Pem {
        option: "tls-key",
        path: key.to_path_buf(),
        source,
    })?;
    let server_key = |source| TlsError::ServerKey {
        path: key.to_path_buf(),
        source,
    };
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(server_key)?
        .with_no_client_auth()
        .with_single_cert(certs, key_der)
        .map_err(server_key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// `--insecure`: every certificate is accepted; handshake signatures are still checked (they
/// prove nothing without a trusted certificate, but keep the handshake well-formed).
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("benchlens-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn unusable_pem_files_name_their_option_and_file() {
        let missing = Path::new("/nonexistent/benchlens/ca.pem");
        let trust = |ca_cert| ClientTrust {
            insecure: false,
            ca_cert,
            http2: false,
        };
        let e = client_config(trust(Some(missing))).unwrap_err();
        assert!(
            matches!(
                e,
                TlsError::Pem {
                    option: "ca-cert",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(
            e.to_string().split(": ").take(2).collect::<Vec<_>>(),
            ["invalid --ca-cert", "/nonexistent/benchlens/ca.pem"]
        );
        let empty = temp_file("empty.pem", "no certificate here\n");
        let e = client_config(trust(Some(&empty))).unwrap_err();
        assert!(
            matches!(
                e,
                TlsError::NoCertificate {
                    option: "ca-cert",
                    ..
                }
            ),
            "{e:?}"
        );
        let Err(e) = acceptor(&empty, &empty) else {
            panic!("a certificate file without a certificate was accepted")
        };
        assert!(
            matches!(
                e,
                TlsError::NoCertificate {
                    option: "tls-cert",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "invalid --tls-cert: {}: no PEM certificate in the file",
                empty.display()
            )
        );
    }

    #[test]
    fn client_configs_ask_for_the_chosen_protocol() {
        let h2 = client_config(ClientTrust {
            insecure: true,
            ca_cert: None,
            http2: true,
        })
        .unwrap();
        assert_eq!(h2.alpn_protocols, [b"h2".to_vec()]);
        let (_, name) = connector(
            ClientTrust {
                insecure: false,
                ca_cert: None,
                http2: false,
            },
            "::1",
        )
        .unwrap();
        assert_eq!(name.to_str(), "::1");
    }
}
