//! The clients under test ([`Contender`]), the lists each section measures, and the order in which
//! rounds run them.

use aws_smithy_runtime_api::client::http::SharedHttpClient;
use smithy_default_tls::{SmithyTlsClient, TlsProvider};

use crate::Loopback;

/// Builds upstream's aws-smithy-http-client with `provider` (`rustls-aws-lc`, `rustls-ring` or
/// `s2n-tls`), trusting `ca_pem`; with `loopback`, every host name resolves to 127.0.0.1. The
/// benchmark target supplies it: upstream's crate is a dev-dependency, so only it links there.
pub type BuildUpstream = fn(provider: &'static str, ca_pem: &str, loopback: bool) -> SharedHttpClient;

/// A client under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Contender {
    /// smithy-default-tls with this provider.
    Ours(&'static str),
    /// smithy-default-tls with this provider, session resumption off.
    OursNoResumption(&'static str),
    /// Upstream's aws-smithy-http-client with this provider.
    Upstream(&'static str),
    /// smithy-default-tls (rustls-aws-lc) over plain HTTP: the ceiling no TLS client can beat.
    Plain,
}

impl Contender {
    /// How the reports name this client, and how a child process is told which to build.
    pub(crate) fn label(self) -> String {
        match self {
            Contender::Ours(p) => format!("ours {p}"),
            Contender::OursNoResumption(p) => format!("ours {p} (no resumption)"),
            Contender::Upstream(p) => format!("upstream {p}"),
            Contender::Plain => "plain HTTP (ours)".to_owned(),
        }
    }

    /// The contender whose [`label`](Self::label) is `text`; panics when there is none.
    pub(crate) fn parse(text: &str) -> Contender {
        let mut all = throughput_contenders().into_iter().chain(connection_contenders());
        all.find(|c| c.label() == text).unwrap_or_else(|| panic!("unknown contender {text}"))
    }

    /// The client, trusting `ca_pem`.
    pub(crate) fn build(self, ca_pem: &str, upstream: BuildUpstream) -> SharedHttpClient {
        self.build_resolving(ca_pem, false, upstream)
    }

    /// The client; with `loopback`, every host name resolves to 127.0.0.1 (each client's own DNS
    /// resolver override).
    pub(crate) fn build_resolving(self, ca_pem: &str, loopback: bool, upstream: BuildUpstream) -> SharedHttpClient {
        let ours = |p: &str, resumption: bool| {
            let provider = TlsProvider::ALL.iter().copied().find(|t| t.name() == p).expect("provider compiled in");
            let builder = SmithyTlsClient::builder()
                .provider(provider)
                .extra_root_pem(ca_pem)
                .expect("CA")
                .session_resumption(resumption);
            let builder = if loopback { builder.dns_resolver(Loopback) } else { builder };
            builder.build().expect("client").into_shared()
        };
        match self {
            Contender::Ours(p) => ours(p, true),
            Contender::OursNoResumption(p) => ours(p, false),
            Contender::Plain => ours("rustls-aws-lc", true),
            Contender::Upstream(p) => upstream(p, ca_pem, loopback),
        }
    }
}

/// The providers both ours and upstream offer, in the order every table lists them.
pub(crate) const PROVIDERS: [&str; 3] = ["rustls-aws-lc", "rustls-ring", "s2n-tls"];

/// Our providers upstream has no counterpart of (the system's OpenSSL): measured beside ours on
/// rustls-aws-lc (and so beside upstream's rustls-aws-lc), in the throughput, new-connection,
/// cold-start and idle-connection sections.
pub(crate) const OURS_ONLY: [&str; 1] = ["openssl"];

/// Ours and upstream with each provider, side by side per provider.
pub(crate) fn ours_and_upstream() -> impl Iterator<Item = Contender> {
    PROVIDERS.iter().flat_map(|p| [Contender::Ours(p), Contender::Upstream(p)])
}

/// Those of [`ours_and_upstream`] whose label contains BENCH_ONLY (comma-separated substrings).
pub(crate) fn selected_ours_and_upstream() -> Vec<Contender> {
    ours_and_upstream().filter(|c| env_selects("BENCH_ONLY", &c.label())).collect()
}

/// [`ours_and_upstream`], then ours alone with each of [`OURS_ONLY`].
pub(crate) fn every_provider() -> impl Iterator<Item = Contender> {
    ours_and_upstream().chain(OURS_ONLY.map(Contender::Ours))
}

/// Those of [`every_provider`] whose label contains BENCH_ONLY (comma-separated substrings).
pub(crate) fn selected_every_provider() -> Vec<Contender> {
    every_provider().filter(|c| env_selects("BENCH_ONLY", &c.label())).collect()
}

/// Every client the throughput and small-call sections can measure: ours and upstream per
/// provider, ours alone with [`OURS_ONLY`], and plain HTTP.
pub(crate) fn throughput_contenders() -> Vec<Contender> {
    every_provider().chain([Contender::Plain]).collect()
}

/// The contenders the throughput section measures: all, or those whose label contains
/// BENCH_ONLY (comma-separated substrings).
pub(crate) fn selected_throughput_contenders() -> Vec<Contender> {
    throughput_contenders().into_iter().filter(|c| env_selects("BENCH_ONLY", &c.label())).collect()
}

/// `items` in order starting at the `round`-th (wrapping): rounds that interleave the clients
/// start one client further on each time, so that no client always runs first or right after
/// the same other one (a place in the order can carry an effect of its own: the state the
/// previous client left in the server, or a periodic stall of the machine).
pub(crate) fn rotated<T>(items: &[T], round: usize) -> impl Iterator<Item = &T> {
    items.iter().cycle().skip(round % items.len().max(1)).take(items.len())
}

/// Whether the comma-separated substrings in environment variable `var` select `name`: unset or
/// empty selects everything, else `name` must contain one of them.
pub(crate) fn env_selects(var: &str, name: &str) -> bool {
    let list = std::env::var(var).unwrap_or_default();
    list.is_empty() || list.split(',').any(|w| name.contains(w.trim()))
}

/// Every client the new-connections section measures: ours with and without session resumption
/// and upstream, per provider, then ours alone with [`OURS_ONLY`].
pub(crate) fn connection_contenders() -> Vec<Contender> {
    let mut all = Vec::new();
    for p in PROVIDERS {
        all.push(Contender::Ours(p));
        all.push(Contender::OursNoResumption(p));
        all.push(Contender::Upstream(p));
    }
    for p in OURS_ONLY {
        all.push(Contender::Ours(p));
        all.push(Contender::OursNoResumption(p));
    }
    all
}
