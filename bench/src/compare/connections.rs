//! New connections: how many requests per second each client makes when every request opens a
//! connection (the `new-connections` section), and what each negotiates with the server
//! (`negotiated`), and what a client certificate costs them (`mutual-tls`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use aws_smithy_runtime_api::client::http::SharedHttpClient;
use smithy_default_tls::{ClientIdentity, SmithyTlsClient, TlsProvider};

use super::contenders::{
    connection_contenders, ours_and_upstream, rotated, BuildUpstream, Contender, OURS_ONLY, PROVIDERS,
};
use super::report::Report;
use super::servers::{CountedPort, ServerProcess};
use crate::{env_number, fetch, median, min_max, BenchServer, Usage};

/// Sequential requests, each on a new connection, every client in this process in interleaved
/// rounds: requests/s, the client's CPU per request, and how many handshakes resumed.
pub(crate) async fn new_connections(server: &ServerProcess, report: &mut Report, upstream: BuildUpstream) {
    let count = env_number("BENCH_CONNECTIONS", 200);
    let url = format!("https://localhost:{}/obj/1", server.h1.port());
    // Rounds interleave the clients so that drift hits all alike, and each round starts one
    // client further on, so that no client always runs first (or right after the same one);
    // the median round is reported. The client's CPU per request (this process's, while only
    // that client runs) is steadier than requests/s on two shared cores.
    let rounds = env_number("BENCH_CONNECTION_ROUNDS", 5).max(1) as usize;
    let mut md = format!(
        "\n## New-connection requests/s ({count} sequential requests per round, `connection: close`, HTTP/1.1; median (min–max) of {rounds} rounds, clients interleaved, each round starting one client further on)\n\n| client | requests/s | client CPU per request (µs) | resumed handshakes |\n|---|---|---|---|\n"
    );
    let contenders = connection_contenders();
    let clients: Vec<_> = contenders
        .iter()
        .map(|c| Measured {
            label: c.label(),
            client: c.build(&server.ca_pem, upstream),
            url: url.clone(),
            port: CountedPort::H1,
        })
        .collect();
    let Rounds { samples, cpu, resumed_counts } = measure(server, &clients, count, rounds).await;
    let mut rates = BTreeMap::new();
    let mut cpus = BTreeMap::new();
    for c in &contenders {
        let rate = median(&samples[&c.label()]);
        let (low, high) = min_max(&samples[&c.label()]);
        let per_request = median(&cpu[&c.label()]);
        let (cpu_low, cpu_high) = min_max(&cpu[&c.label()]);
        let _ = writeln!(
            md,
            "| {} | {rate:.0} ({low:.0}–{high:.0}) | {per_request:.0} ({cpu_low:.0}–{cpu_high:.0}) | {}/{} |",
            c.label(),
            resumed_counts[&c.label()],
            count as usize * rounds
        );
        rates.insert(c.label(), rate);
        cpus.insert(c.label(), per_request);
    }
    md.push_str(
        "\n| provider | ours / upstream, requests/s | ours / upstream, client CPU per request |\n|---|---|---|\n",
    );
    for p in PROVIDERS {
        let (ours, theirs) = (Contender::Ours(p).label(), Contender::Upstream(p).label());
        let _ = writeln!(md, "| {p} | {:.2} | {:.2} |", rates[&ours] / rates[&theirs], cpus[&ours] / cpus[&theirs]);
    }
    md.push_str(
        "\n| provider | / ours rustls-aws-lc, requests/s | / upstream rustls-aws-lc, requests/s |\n|---|---|---|\n",
    );
    for p in OURS_ONLY {
        let ours = rates[&Contender::Ours(p).label()];
        let (base, upstream) =
            (rates[&Contender::Ours("rustls-aws-lc").label()], rates[&Contender::Upstream("rustls-aws-lc").label()]);
        let _ = writeln!(md, "| {p} | {:.2} | {:.2} |", ours / base, ours / upstream);
    }
    report.target("new connections/s", 1.0, |p| {
        rates[&Contender::Ours(p).label()] / rates[&Contender::Upstream(p).label()]
    });
    report.publish(&md);
}

/// Per client label: requests/s and client CPU µs per request, one per round, and the resumed
/// handshakes over all rounds.
struct Rounds {
    samples: BTreeMap<String, Vec<f64>>,
    cpu: BTreeMap<String, Vec<f64>>,
    resumed_counts: BTreeMap<String, usize>,
}

/// A client measured on new connections: its label, where it sends its requests, and the
/// server port whose handshakes count as its own.
struct Measured {
    label: String,
    client: SharedHttpClient,
    url: String,
    port: CountedPort,
}

/// One warm-up request per client, then `rounds` rounds of `count` requests per client, each on
/// a new connection.
async fn measure(server: &ServerProcess, clients: &[Measured], count: u64, rounds: usize) -> Rounds {
    let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut cpu: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut resumed_counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut sink = Vec::new();
    for m in clients {
        fetch(&m.client, &m.url, None, &mut sink, true).await; // warm: first full handshake
    }
    for round in 0..rounds {
        for m in rotated(clients, round) {
            let (_, resumed_before) = server.handshakes(m.port);
            let usage = Usage::now();
            let started = Instant::now();
            for _ in 0..count {
                fetch(&m.client, &m.url, None, &mut sink, true).await;
            }
            samples.entry(m.label.clone()).or_default().push(count as f64 / started.elapsed().as_secs_f64());
            cpu.entry(m.label.clone()).or_default().push(Usage::now().since(usage).cpu_seconds * 1e6 / count as f64);
            let (_, resumed_after) = server.handshakes(m.port);
            *resumed_counts.entry(m.label.clone()).or_default() += resumed_after - resumed_before;
        }
    }
    Rounds { samples, cpu, resumed_counts }
}

/// Mutual TLS on new connections: ours per provider, presenting a client certificate to the
/// server's mutual-TLS port against presenting none to its plain HTTP/1.1 port (both HTTP/1.1,
/// `connection: close`), with session resumption on (what a client does) and off (every
/// handshake a full one, where the certificate and its signature cost most), clients
/// interleaved. Goal: requests/s with mutual TLS at least 0.9 times without.
pub(crate) async fn mutual_tls(server: &ServerProcess, report: &mut Report) {
    const GOAL: f64 = 0.9;
    let count = env_number("BENCH_CONNECTIONS", 200);
    let rounds = env_number("BENCH_CONNECTION_ROUNDS", 5).max(1) as usize;
    let identity = ClientIdentity::from_pem(&server.client_pem.cert, &server.client_pem.key).expect("bench identity");
    let providers: Vec<&'static str> = PROVIDERS.iter().chain(OURS_ONLY.iter()).copied().collect();
    let label = |p: &str, mutual: bool, resumption: bool| {
        format!("ours {p}{}{}", if mutual { " mTLS" } else { "" }, if resumption { "" } else { " (no resumption)" })
    };
    let mut clients = Vec::new();
    for &p in &providers {
        for resumption in [true, false] {
            for mutual in [false, true] {
                let provider = TlsProvider::ALL.iter().copied().find(|t| t.name() == p).expect("provider compiled in");
                let builder = SmithyTlsClient::builder()
                    .provider(provider)
                    .extra_root_pem(&server.ca_pem)
                    .expect("CA")
                    .session_resumption(resumption);
                let builder = if mutual { builder.client_identity(identity.clone()) } else { builder };
                let (port, addr) =
                    if mutual { (CountedPort::MutualTls, server.mtls) } else { (CountedPort::H1, server.h1) };
                clients.push(Measured {
                    label: label(p, mutual, resumption),
                    client: builder.build().expect("client").into_shared(),
                    url: format!("https://localhost:{}/obj/1", addr.port()),
                    port,
                });
            }
        }
    }
    let Rounds { samples, cpu, resumed_counts } = measure(server, &clients, count, rounds).await;
    let mut md = format!(
        "\n## Mutual TLS on new connections ({count} sequential requests per round and client, `connection: close`, HTTP/1.1, an ECDSA P-256 client certificate; median (min–max) of {rounds} rounds, clients interleaved)\n\n| client | requests/s | client CPU per request (µs) | resumed handshakes |\n|---|---|---|---|\n"
    );
    for m in &clients {
        let (rate, (low, high)) = (median(&samples[&m.label]), min_max(&samples[&m.label]));
        let (per_request, (cpu_low, cpu_high)) = (median(&cpu[&m.label]), min_max(&cpu[&m.label]));
        let _ = writeln!(
            md,
            "| {} | {rate:.0} ({low:.0}–{high:.0}) | {per_request:.0} ({cpu_low:.0}–{cpu_high:.0}) | {}/{} |",
            m.label,
            resumed_counts[&m.label],
            count as usize * rounds
        );
    }
    let _ = writeln!(
        md,
        "\n| provider | with / without mTLS, requests/s, resumption on | same, resumption off (full handshakes) | goal ≥ {GOAL} |\n|---|---|---|---|"
    );
    for &p in &providers {
        // The ratio per round (clients interleaved within it), then their median and spread.
        let ratios = |resumption: bool| -> Vec<f64> {
            let (with, without) = (&samples[&label(p, true, resumption)], &samples[&label(p, false, resumption)]);
            with.iter().zip(without).map(|(w, wo)| w / wo).collect()
        };
        let (on, off) = (ratios(true), ratios(false));
        let (on_low, on_high) = min_max(&on);
        let (off_low, off_high) = min_max(&off);
        let met = median(&on) >= GOAL && median(&off) >= GOAL;
        let _ = writeln!(
            md,
            "| {p} | {:.2} ({on_low:.2}–{on_high:.2}) | {:.2} ({off_low:.2}–{off_high:.2}) | {} |",
            median(&on),
            median(&off),
            if met { "met" } else { "missed" }
        );
    }
    report.publish(&md);
}

/// The version, cipher, group and ALPN each client's first handshake per port settled on, and
/// whether its second connection resumed, as `server` (in this process) recorded them.
pub(crate) async fn negotiated(server: &BenchServer, report: &mut Report, upstream: BuildUpstream) {
    let mut md = String::from("\n## What each client negotiated (seen by the server)\n\nThe first handshake of a new client per port; on the HTTP/1.1 port a second request on a new connection (`connection: close`) shows whether the client resumes its session.\n\n| client | port | version | cipher | group | ALPN | second connection resumed |\n|---|---|---|---|---|---|---|\n");
    for c in ours_and_upstream() {
        for (port_name, addr) in [("h1", server.h1), ("h2", server.h2)] {
            let client = c.build(&server.ca_pem, upstream);
            let before = server.handshakes(addr).len();
            let mut sink = Vec::new();
            let url = format!("https://localhost:{}/obj/16", addr.port());
            // `connection: close` means nothing in h2 (the pool keeps the connection), so the
            // resumption check runs on the HTTP/1.1 port.
            let h1 = port_name == "h1";
            fetch(&client, &url, None, &mut sink, h1).await;
            if h1 {
                fetch(&client, &url, None, &mut sink, true).await;
            }
            let handshakes = server.handshakes(addr)[before..].to_vec();
            let resumed = match handshakes.get(1) {
                Some(second) if second.resumed => "yes",
                Some(_) => "no",
                None => "see h1",
            };
            if let Some(first) = handshakes.first() {
                let _ = writeln!(
                    md,
                    "| {} | {port_name} | {} | {} | {} | {} | {resumed} |",
                    c.label(),
                    first.version,
                    first.cipher,
                    first.group,
                    first.alpn
                );
            }
        }
    }
    report.publish(&md);
}
