//! Small calls (the `small-calls` section): POST 1 KiB, 1 KiB back, as DynamoDB, SQS, STS or
//! Lambda invoke make them; calls/s, latency quantiles and CPU per call on both sides.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_smithy_runtime_api::client::http::SharedHttpClient;
use bytes::Bytes;

use super::contenders::{env_selects, rotated, selected_throughput_contenders, BuildUpstream, Contender, PROVIDERS};
use super::report::Report;
use super::servers::{call_scenarios, Server};
use crate::{env_number, median, min_max, post, quantile, Usage};

/// `n` POSTs of `body` to `url` through `client`, `concurrency` at a time: how long they took,
/// and each call's latency in µs. Bounded in count, and in time (a stuck client fails the run).
pub(crate) async fn run_calls(
    client: &SharedHttpClient,
    url: &str,
    body: &Bytes,
    n: usize,
    concurrency: usize,
) -> (Duration, Vec<f64>) {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (client, url, body, next) = (client.clone(), url.to_owned(), body.clone(), Arc::clone(&next));
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(n / concurrency + 1);
                while next.fetch_add(1, Ordering::Relaxed) < n {
                    let call = Instant::now();
                    let got = post(&client, &url, body.clone()).await;
                    latencies.push(call.elapsed().as_secs_f64() * 1e6);
                    assert_eq!(got, 1024, "a 1 KiB answer");
                }
                latencies
            })
        })
        .collect();
    let all = tokio::time::timeout(Duration::from_secs(600), async {
        let mut all = Vec::with_capacity(n);
        for worker in workers {
            all.extend(worker.await.expect("worker"));
        }
        all
    })
    .await
    .expect("the calls finish within 10 minutes");
    (started.elapsed(), all)
}

/// Per (scenario, contender label).
type PerScenario<T> = BTreeMap<(&'static str, String), Vec<T>>;

/// What the counted rounds measured.
#[derive(Default)]
struct CallSamples {
    /// Calls/s, one per round.
    rates: PerScenario<f64>,
    /// Every counted call's latency, µs.
    latencies: PerScenario<f64>,
    /// (client, server) CPU µs per call, one per round.
    cpu_per_call: PerScenario<(f64, f64)>,
}

impl CallSamples {
    /// The median round's calls/s.
    fn rate(&self, scenario: &str, c: Contender) -> f64 {
        self.rates.get(&(scenario, c.label())).map_or(f64::NAN, |v| median(v))
    }

    /// The 99th percentile over every counted call.
    fn p99(&self, scenario: &str, c: Contender) -> f64 {
        self.latencies.get(&(scenario, c.label())).map_or(f64::NAN, |v| quantile(v, 0.99))
    }
}

/// Small request/response calls, as DynamoDB, SQS, STS or Lambda invoke make them: POST 1 KiB,
/// 1 KiB back, over kept-alive connections, HTTP/1.1 and h2, one at a time and 64 at once, the
/// server in a process of its own. Clients interleaved; the first round warms up and is not
/// counted.
pub(crate) async fn small_calls(server: &dyn Server, report: &mut Report, upstream: BuildUpstream) {
    let calls = env_number("BENCH_CALLS", 20_000) as usize;
    let rounds = env_number("BENCH_CALL_ROUNDS", 3).max(1) as usize;
    // Plain HTTP (no TLS) over HTTP/1.1 as the ceiling: what a call costs without TLS.
    let contenders = selected_throughput_contenders();
    let clients: Vec<(Contender, SharedHttpClient)> =
        contenders.iter().map(|c| (*c, c.build(server.ca_pem(), upstream))).collect();
    let name = server.name();
    println!(
        "\n## Small calls, server {name}: POST 1 KiB → 1 KiB, {calls} calls per round, {rounds} rounds, server in its own process"
    );
    let samples = &measure(server, &clients, calls, rounds).await;
    record_ratios(report, name, samples);
    let mut md = format!(
        "\n## Small calls, server {name} (POST 1 KiB → 1 KiB, keep-alive, server in its own process; {calls} calls per round, median (min–max) of {rounds} rounds, clients interleaved; latency quantiles over every counted call)\n\n| client | scenario | calls/s | p50 µs | p99 µs | p99.9 µs | client CPU per call µs | server CPU per call µs |\n|---|---|---|---|---|---|---|---|\n"
    );
    per_client(&mut md, samples);
    ratios(&mut md, samples);
    let faster = |s: &'static str| {
        move |p: &'static str| samples.rate(s, Contender::Ours(p)) / samples.rate(s, Contender::Upstream(p))
    };
    let sooner = |s: &'static str| {
        move |p: &'static str| samples.p99(s, Contender::Upstream(p)) / samples.p99(s, Contender::Ours(p))
    };
    // The targets chart is drawn for our server (the one the history used).
    if name == "ours" {
        report.target("calls h1 64 at once", 1.15, faster("h1 c64"));
        report.target("calls h2 64 at once", 1.15, faster("h2 c64"));
        report.target("p99 h1 1 at a time", 1.0 / 0.9, sooner("h1 c1"));
        report.target("p99 h2 1 at a time", 1.0 / 0.9, sooner("h2 c1"));
    }
    ceiling(&mut md, samples);
    report.publish(&md);
}

/// Uncounted calls before a measured run, `concurrency` at a time: enough for every connection
/// of the pool to be open and warm.
pub(crate) fn warmup_calls(concurrency: usize) -> usize {
    (concurrency * 20).max(500)
}

/// Every scenario BENCH_SCENARIOS selects: a warm-up round, then `rounds` rounds of `calls`
/// calls per client, interleaved; each counted round printed as it ends.
async fn measure(
    server: &dyn Server,
    clients: &[(Contender, SharedHttpClient)],
    calls: usize,
    rounds: usize,
) -> CallSamples {
    let body = Bytes::from(vec![b'x'; 1024]);
    let mut samples = CallSamples::default();
    for (scenario, addr, concurrency) in call_scenarios(server) {
        if !env_selects("BENCH_SCENARIOS", scenario) {
            continue;
        }
        let url = format!("https://localhost:{}/obj/1024", addr.port());
        let plain_url = format!("http://{}/obj/1024", server.plain());
        for round in 0..=rounds {
            for (contender, client) in rotated(clients, round) {
                let url = match contender {
                    Contender::Plain if addr == server.h2() => continue, // h1 only
                    Contender::Plain => &plain_url,
                    _ => &url,
                };
                let n = if round == 0 { warmup_calls(concurrency) } else { calls };
                let (before, server_before) = (Usage::now(), server.cpu_seconds());
                let (elapsed, sample) = run_calls(client, url, &body, n, concurrency).await;
                let (used, server_used) = (Usage::now().since(before), server.cpu_seconds() - server_before);
                let rate = n as f64 / elapsed.as_secs_f64();
                if round == 0 {
                    continue;
                }
                let (client_us, server_us) = (used.cpu_seconds * 1e6 / n as f64, server_used * 1e6 / n as f64);
                println!(
                    "{:<20} {scenario} round {round}: {rate:.0} calls/s, CPU per call: client {client_us:.1} µs, server {server_us:.1} µs",
                    contender.label()
                );
                let key = (scenario, contender.label());
                samples.cpu_per_call.entry(key.clone()).or_default().push((client_us, server_us));
                samples.rates.entry(key.clone()).or_default().push(rate);
                samples.latencies.entry(key).or_default().extend(sample);
            }
        }
    }
    samples
}

/// Calls/s ours / upstream per provider and scenario, round by round (clients interleave within
/// a round), into the report's per-server summaries. (What each preset gives Linux against
/// upstream's default is the everyday section's.)
fn record_ratios(report: &mut Report, server: &str, samples: &CallSamples) {
    for scenario in ["h1 c1", "h1 c64", "h2 c1", "h2 c64"] {
        let row = format!("calls/s {scenario}");
        let get = |c: Contender| samples.rates.get(&(scenario, c.label())).cloned().unwrap_or_default();
        let per_round = |ours: Vec<f64>, theirs: Vec<f64>| ours.iter().zip(&theirs).map(|(a, b)| a / b).collect();
        report.record_ratios(server, &row, |p| per_round(get(Contender::Ours(p)), get(Contender::Upstream(p))));
    }
}

/// One row per scenario and client: calls/s, latency quantiles, CPU per call on both sides.
fn per_client(md: &mut String, samples: &CallSamples) {
    let cpu = &samples.cpu_per_call;
    for ((scenario, label), rates) in &samples.rates {
        let lat = &samples.latencies[&(*scenario, label.clone())];
        let (low, high) = min_max(rates);
        let _ = writeln!(
            md,
            "| {label} | {scenario} | {:.0} ({low:.0}–{high:.0}) | {:.0} | {:.0} | {:.0} | {:.1} | {:.1} |",
            median(rates),
            quantile(lat, 0.5),
            quantile(lat, 0.99),
            quantile(lat, 0.999),
            median(&cpu[&(*scenario, label.clone())].iter().map(|c| c.0).collect::<Vec<_>>()),
            median(&cpu[&(*scenario, label.clone())].iter().map(|c| c.1).collect::<Vec<_>>())
        );
    }
}

/// Ours / upstream per provider: calls/s 64 at a time, p99 one at a time.
fn ratios(md: &mut String, samples: &CallSamples) {
    md.push_str("\n| provider | calls/s ours/upstream, h1 c64 (target ≥ 1.15) | h2 c64 | p99 ours/upstream, h1 c1 (target ≤ 0.9) | h2 c1 |\n|---|---|---|---|---|\n");
    for p in PROVIDERS {
        let (ours, theirs) = (Contender::Ours(p), Contender::Upstream(p));
        let rates = |s: &str| format!("{:.2}", samples.rate(s, ours) / samples.rate(s, theirs));
        let p99s = |s: &str| format!("{:.2}", samples.p99(s, ours) / samples.p99(s, theirs));
        let _ =
            writeln!(md, "| {p} | {} | {} | {} | {} |", rates("h1 c64"), rates("h2 c64"), p99s("h1 c1"), p99s("h2 c1"));
    }
}

/// The ceiling: plain HTTP / upstream over HTTP/1.1, the most removing TLS cost altogether could
/// gain.
fn ceiling(md: &mut String, samples: &CallSamples) {
    let (rate, p99) = (|s: &str, c| samples.rate(s, c), |s: &str, c| samples.p99(s, c));
    md.push_str("\n| provider | ceiling: plain HTTP / upstream calls/s, h1 c1 | h1 c64 | p99 plain / upstream, h1 c1 |\n|---|---|---|---|\n");
    for p in PROVIDERS {
        let theirs = Contender::Upstream(p);
        let _ = writeln!(
            md,
            "| {p} | {:.2} | {:.2} | {:.2} |",
            rate("h1 c1", Contender::Plain) / rate("h1 c1", theirs),
            rate("h1 c64", Contender::Plain) / rate("h1 c64", theirs),
            p99("h1 c1", Contender::Plain) / p99("h1 c1", theirs)
        );
    }
}
