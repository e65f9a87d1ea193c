//! smithy-default-tls against the upstream aws-smithy-http-client, side by side in one run.
//!
//! ```text
//! cargo bench -p smithy-tls-bench --bench compare            # everything, default sizes
//! BENCH_RUNS=3 BENCH_MIB=256 cargo bench -p smithy-tls-bench --bench compare -- throughput
//! ```
//!
//! `throughput`, `uploads` and `small-calls` run against every server `BENCH_SERVERS` names
//! (comma-separated; default all: `ours,hyper-default,go,nginx`, each in a process of its own on
//! 127.0.0.1; a server that cannot start is reported as skipped).
//!
//! Sections (pass names as arguments to run a subset): `throughput`, `cold-start`,
//! `new-connections`, `mutual-tls`, `rss`, `proxy`, `negotiated`, `small-calls` (the server in a process of
//! its own), `idle` (many pooled connections), `syscalls` (needs strace). Results are printed; a full
//! run (no section names, no `BENCH_ONLY` / `BENCH_SCENARIOS`) also writes `docs/benchmarks/`
//! (markdown tables and an SVG chart).
//!
//! The benchmark lives in `smithy_tls_bench::compare`; this target adds the one thing only it
//! can: upstream's client, a dev-dependency.

use aws_smithy_http_client::tls;
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use smithy_tls_bench::Loopback;

fn main() {
    smithy_tls_bench::compare::main(upstream);
}

/// Upstream's client with `provider`, trusting only `ca_pem`; with `loopback`, every host name
/// resolves to 127.0.0.1 (its DNS resolver override).
fn upstream(provider: &'static str, ca_pem: &str, loopback: bool) -> SharedHttpClient {
    let provider = match provider {
        "rustls-aws-lc" => tls::Provider::Rustls(tls::rustls_provider::CryptoMode::AwsLc),
        "rustls-ring" => tls::Provider::Rustls(tls::rustls_provider::CryptoMode::Ring),
        _ => tls::Provider::S2nTls,
    };
    let context = tls::TlsContext::builder()
        .with_trust_store(tls::TrustStore::empty().with_pem_certificate(ca_pem.as_bytes().to_vec()))
        .build()
        .expect("upstream TLS context");
    let builder = aws_smithy_http_client::Builder::new().tls_provider(provider).tls_context(context);
    if loopback {
        builder.build_with_resolver(Loopback)
    } else {
        builder.build_https()
    }
}
