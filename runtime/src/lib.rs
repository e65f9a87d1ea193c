//! The default HTTPS client for Smithy-generated Rust SDKs.
//!
//! `smithy-default-tls` implements [`HttpClient`](aws_smithy_runtime_api::client::http::HttpClient)
//! on hyper 1 and hyper-util's connection pool, with a choice of TLS provider and trust roots
//! made once per process:
//!
//! | cargo feature   | what it brings                                                          |
//! |-----------------|-------------------------------------------------------------------------|
//! | `rustls-aws-lc` | `TlsProvider::RustlsAwsLc`: rustls + aws-lc-rs, post-quantum hybrid key exchange first |
//! | `rustls-ring`   | `TlsProvider::RustlsRing`: rustls + ring                               |
//! | `rustls-aws-lc-fips` | `TlsProvider::RustlsAwsLcFips`: rustls + the FIPS build of aws-lc-rs, in FIPS mode ([`TlsInfo::fips`]); alone in a build, Linux x86_64/aarch64 |
//! | `s2n-tls-fips` | `TlsProvider::S2nTlsFips`: s2n-tls on the FIPS build of aws-lc, security policy `20251015` (FIPS 140-3 rules); only with the other FIPS provider, Linux x86_64/aarch64 |
//! | `s2n-tls`       | `TlsProvider::S2nTls`: s2n-tls + aws-lc, security policy `20251014`, Linux and macOS only |
//! | `openssl`       | `TlsProvider::OpenSsl`: the operating system's OpenSSL (libssl via pkg-config); the distro's crypto policy applies, tightened only below our floor; FIPS when the system's OpenSSL is |
//! | `rustls-custom` | `TlsProvider::RustlsCustom`: rustls with the application's own `CryptoProvider` (`set_custom_crypto_provider`, else rustls's process-wide default); no crypto crate of ours |
//! | `native`        | `TrustRoots::Native`: the OS store (honours `SSL_CERT_FILE` / `SSL_CERT_DIR`) |
//! | `webpki`        | `TrustRoots::Webpki`: bundled Mozilla roots, no filesystem access     |
//! | `platform-verifier` | `TrustRoots::PlatformVerifier`: the OS verifier (rustls providers); no store to load on Apple platforms and Windows |
//! | `native` + `webpki` | also `TrustRoots::NativeOrWebpki`: the OS store, or the bundled roots where it yields no certificate (a warning event says so) |
//! | `experimental-rustls-024` | experimental, off by default: `TlsProvider::RustlsAwsLc` on rustls 0.24's pre-release, which decrypts each record in place and copies received data once; `TrustRoots::PlatformVerifier` stays on rustls 0.23, whose verifier it is built on |
//!
//! **The application decides.** One line in the application's `.cargo/config.toml` (or its
//! RUSTFLAGS) replaces the provider every generated crate asked for, and only the chosen one is
//! compiled: `[build] rustflags = ["--cfg", "smithy_tls=\"rustls-ring\""]`. The values are the
//! provider features above and `none` (no TLS stack: the default client fails every request with
//! [`Error::TlsDisabled`]); `--cfg smithy_tls_roots="native"` (`webpki`, `platform-verifier`)
//! replaces the roots the same way. `s2n-tls`, `openssl` and the FIPS values (and `webpki` or
//! `platform-verifier` roots) also need their feature turned on from the application's
//! `Cargo.toml` where no crate asked for them on that target: their crates are in a lock only
//! where some crate does. [`TlsInfo::chosen_by`] says when the application chose, and
//! [`TlsInfo::library`] which library served. An unknown value, one that cannot build for the
//! target, or one whose feature is missing stops the build, saying what to set.
//!
//! Only TLS 1.2 and 1.3 are offered, and certificate chain and host name verification are always
//! on: there is no switch to turn them off. HTTP/2 and HTTP/1.1 are negotiated through ALPN.
//!
//! Generated SDK code calls [`default_client_plugin`] (or [`shared_client`]); applications can
//! build their own client with [`SmithyTlsClient::builder`].
//!
//! Start-up is cheap: building a client never loads trust roots or builds TLS state on the
//! caller's thread. When that work can be slow (aws-lc's first use, the OS trust store or
//! verifier) it starts on a background thread when the first client for a choice is built, and
//! the first connection waits for it only if it has not finished yet; when it is quick (ring with
//! bundled or given roots) the first connection does it inline. The outcome of preparing — roots
//! or the error loading them — is kept (native and webpki roots for the life of the process, the
//! platform verifier per client configuration), so a broken store is a clear error at every
//! connection, never a panic.
//!
//! Bulk downloads are cheap too: once data flows in bulk every TLS connection reads the socket
//! up to 64 KiB at a time (one record's worth at first) and serves the TLS library's
//! record-sized reads from that buffer (a quarter of the read calls), and s2n-tls
//! connections hand hyper every record s2n-tls already decrypted. Idle connections are cheap:
//! before bulk data a connection reads straight into the TLS library and allocates no such
//! buffer; after, the buffer is released whenever a read finds nothing to read, and s2n-tls's
//! own record buffers once a connection has had nothing to read for 100 ms, so a connection
//! waiting in the pool holds neither.
#![warn(missing_docs, unreachable_pub)]
// Short functions: clippy's count of code lines, threshold in the workspace's clippy.toml.
#![warn(clippy::too_many_lines)]
// Two modules have `unsafe` code (the s2n-tls backend's key_log.rs, the C callback s2n-tls needs
// for SSLKEYLOGFILE; the system libssl backend's ffi.rs, the calls its safe crate lacks); each
// opts in with `allow` and argues its safety, everything else is refused.
#![deny(unsafe_code)]
// With the application's `--cfg smithy_tls="none"` no provider is compiled, and the TLS half of
// the crate (settings, names, key log, buffer sizes) has no user; the client refuses every request.
#![cfg_attr(no_tls, allow(dead_code))]

// The builds this crate refuses (no provider, FIPS beside non-FIPS crypto, a provider on an
// operating system it does not build for) stop in build.rs, which reads the provider table.

mod client;
mod connect;
mod dns;
mod error;
mod identity;
mod limits;
mod pools;
mod provider;
mod proxy;
mod roots;
mod shared;
mod tls;

pub use client::{Builder, SmithyTlsClient, DEFAULT_POOL_IDLE_TIMEOUT, DEFAULT_TCP_KEEPALIVE};
pub use connect::ConnectionInfo;
pub use error::{
    CertificateProblem, ClientCertificateProblem, ConnectTimeout, Error, HandshakeFailure, KeyLogError, ProxyError,
    ProxyFailure, ProxyResponseError, ProxyUrlError, ReadTimeout, TlsConfigError, TlsHandshakeError, UriError,
};
pub use identity::{ClientIdentity, IdentityError, IdentityPart, KeyType, WatchedIdentity};
pub use provider::application::ChosenBy;
#[cfg(provider = "rustls-custom")]
pub use provider::custom::set_custom_crypto_provider;
pub use provider::{NotCompiled, TlsProvider, UnsupportedRoots};
pub use proxy::{ProxyBuilder, ProxyConfig};
pub use roots::{PemError, RootsError, StoreError, TrustRoots, AWS_CA_BUNDLE};
pub use shared::{
    configure_default, default_client_plugin, default_client_plugin_for, shared_client, shared_client_for,
    shared_tls_client, shared_tls_client_for, try_shared_client, try_shared_tls_client,
};
pub use tls::TlsInfo;

/// Selects items by the first of several cfg predicates that holds, as an `if` / `else if` /
/// `else` chain (the [`cfg-if`](https://docs.rs/cfg-if) crate's macro). The `default_http_client`
/// module smithy-tls generates picks its policy rule with it, in the policy's order.
///
/// ```
/// smithy_default_tls::cfg_if! {
///     if #[cfg(target_pointer_width = "64")] {
///         const WIDTH: u32 = 64;
///     } else {
///         const WIDTH: u32 = usize::BITS;
///     }
/// }
/// assert_eq!(WIDTH, usize::BITS);
/// ```
pub use cfg_if::cfg_if;

/// The s2n-tls security policy used by `TlsProvider::S2nTls` (TLS 1.2 minimum, TLS 1.3
/// preferred, forward secrecy, post-quantum hybrid key exchange offered first).
#[cfg(s2n_plain)]
pub const S2N_SECURITY_POLICY: &str = tls::backends::s2n::SECURITY_POLICY;

/// The s2n-tls security policy used by `TlsProvider::S2nTlsFips`: s2n-tls's FIPS default,
/// pinned (FIPS 140-3 approved ciphers, groups and signatures, TLS 1.2 minimum, forward secrecy).
#[cfg(s2n_fips)]
pub const S2N_FIPS_SECURITY_POLICY: &str = tls::backends::s2n::FIPS_SECURITY_POLICY;
