//! Test support for smithy-tls, one crate shared by the runtime's tests and example, the
//! end-to-end harness (`tests/`), the benchmarks (`bench/`) and the generator's tests:
//!
//! - [`pki`]: a private certificate authority and server identities (rcgen);
//! - [`pattern`]: deterministic bodies of any size and their digests;
//! - [`https`]: one rustls HTTPS server on 127.0.0.1 for any hyper service, recording what it saw;
//! - [`test_server`]: the conformance suite's servers built on it;
//! - [`faulty`]: servers that fail on the wire in one chosen way (bodies cut short or reset,
//!   stalls, idle connections closed, h2 RST_STREAM and GOAWAY);
//! - [`openssl`]: `openssl s_server` as an outside TLS peer, for what rustls cannot serve;
//! - [`openssl_fips_module`]: OpenSSL 3.0.8's FIPS provider built from source where the system
//!   has none;
//! - [`proxy`]: an HTTP proxy (CONNECT tunnels, forwarding) that can demand credentials or refuse;
//! - [`raw_peer`]: peers that break TLS below any TLS library (garbage, closing mid-handshake)
//!   and read the client's ClientHello;
//! - [`drive`]: calling a client the way the Smithy orchestrator does;
//! - [`cargo_tree`]: `cargo tree` output read as packages;
//! - [`fs`]: copying fixture trees, [`text`]: comparing a patched text with its input, and
//!   [`regenerate`](mod@regenerate): the one switch that rewrites checked-in expected output, and
//!   [`skip`]: skipped checks recorded for `scripts/test`'s summary, and [`toolchains`]: the
//!   pinned stable, nightly and minimum toolchains (the modules without the `net` feature).
//!
//! It does not depend on the runtime crate (the runtime's tests depend on it), so it speaks to
//! clients only through aws-smithy-runtime-api's `HttpClient`.
#![warn(missing_docs)]

pub mod cargo_tree;
pub mod fs;
pub mod openssl_fips_module;
pub mod regenerate;
pub mod skip;
pub mod text;
pub mod toolchains;
pub use fs::copy_tree;
pub use regenerate::regenerate;

#[cfg(feature = "net")]
pub mod drive;
#[cfg(feature = "net")]
pub mod faulty;
#[cfg(feature = "net")]
pub mod https;
#[cfg(feature = "net")]
pub mod logs;
#[cfg(feature = "net")]
pub mod openssl;
#[cfg(feature = "net")]
pub mod pattern;
#[cfg(feature = "net")]
pub mod pki;
#[cfg(feature = "net")]
pub mod proxy;
#[cfg(feature = "net")]
pub mod raw_peer;
#[cfg(feature = "net")]
pub mod test_server;

#[cfg(feature = "net")]
pub use self::{
    drive::{
        call, components, components_sleeping_with, digest_body, error_chain, find_in_chain, get, sdk_retries,
        settings, try_digest_body,
    },
    https::{
        http_builder, ring_crypto, server_config, server_config_requiring_client_auth,
        server_config_requiring_client_auth_with_schemes, Alpn, ClientHelloSeen, HttpsServer, Negotiated, ServerStats,
    },
    pattern::{pattern_byte, Digest, PatternBody},
    pki::{ClientPem, ServerIdentity, TestCa},
    proxy::{ConnectProxy, ProxiedRequest, ProxyMode},
    test_server::{SilentServer, TestServer},
};
/// The rustls the servers are built with (for their protocol versions in tests).
#[cfg(feature = "net")]
pub use rustls;
