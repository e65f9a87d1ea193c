//! The SDK's everyday workload as the product a user gets (the `everyday` section): each preset's
//! x86_64 Linux provider against upstream's default client on small calls, one at a time and 64
//! at once, new connections, idle pooled connections and a fresh process's first request, against
//! every server.
//!
//! Every sample is a fresh process of its own (a `children` mode), so no client inherits another's
//! allocator or runtime. Clients are interleaved within a round and rotated from round to round;
//! the ratio is taken round by round and the rounds' ratios pooled, the method that gave the
//! steadiest download ratios (docs/benchmarks/investigations.md, "The Linux product on
//! HTTP/1.1").

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::calls::warmup_calls;
use super::cold_start::cold_sample;
use super::contenders::{rotated, Contender};
use super::memory::idle_sample;
use super::product::{products, Product, LINUX, UPSTREAM_DEFAULT};
use super::report::{range_cell, table_head, Report};
use super::servers::{Server, NAMES};
use crate::{child, env_number, field, median};

/// Which way a figure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Better {
    /// Rates: ours / upstream ≥ 1 meets the goal.
    Higher,
    /// Latency, memory, time: ours / upstream ≤ 1 meets the goal.
    Lower,
}

impl Better {
    /// Whether a ratio ours / upstream meets the goal of 1.0 this way.
    fn meets(self, ratio: f64) -> bool {
        match self {
            Better::Higher => ratio >= 1.0,
            Better::Lower => ratio <= 1.0,
        }
    }

    /// The goal, as the tables write it.
    fn goal(self) -> &'static str {
        match self {
            Better::Higher => "≥ 1.0",
            Better::Lower => "≤ 1.0",
        }
    }
}

/// What an idle connection's memory is counted as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Memory {
    /// Resident memory.
    Rss,
    /// Resident memory once glibc has returned what is free to the kernel.
    Held,
    /// Heap in use (glibc's `mallinfo2`).
    Heap,
}

/// A figure the section measures for each client, one per round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Figure {
    /// Small calls (POST 1 KiB → 1 KiB) per second over kept-alive connections.
    CallsPerSecond { h2: bool, concurrency: usize },
    /// A small call's latency at this percentile, calls one at a time.
    Latency { h2: bool, percentile: u8 },
    /// The client process's CPU (user + system) per small call, µs: steadier than the rate on
    /// two cores the server shares.
    CpuPerCall { h2: bool, concurrency: usize },
    /// Requests per second, each on a new connection; against a port that resumes sessions, or
    /// one that never does (every handshake a full one, for both clients alike).
    NewConnections { resumed: bool },
    /// The client process's CPU per request on a new connection, µs.
    CpuPerConnection { resumed: bool },
    /// KiB per idle pooled connection after one response of `bytes`.
    Idle { memory: Memory, bytes: u64 },
    /// Milliseconds from a fresh process's start of client construction to its first response.
    FirstRequest,
}

/// The figures in the order the tables list them.
const FIGURES: [Figure; 21] = [
    Figure::CallsPerSecond { h2: false, concurrency: 64 },
    Figure::CallsPerSecond { h2: true, concurrency: 64 },
    Figure::CallsPerSecond { h2: false, concurrency: 1 },
    Figure::CallsPerSecond { h2: true, concurrency: 1 },
    Figure::Latency { h2: false, percentile: 50 },
    Figure::Latency { h2: false, percentile: 99 },
    Figure::Latency { h2: true, percentile: 50 },
    Figure::Latency { h2: true, percentile: 99 },
    Figure::CpuPerCall { h2: false, concurrency: 64 },
    Figure::CpuPerCall { h2: true, concurrency: 64 },
    Figure::NewConnections { resumed: true },
    Figure::NewConnections { resumed: false },
    Figure::CpuPerConnection { resumed: true },
    Figure::CpuPerConnection { resumed: false },
    Figure::Idle { memory: Memory::Rss, bytes: SMALL },
    Figure::Idle { memory: Memory::Rss, bytes: LARGE },
    Figure::Idle { memory: Memory::Held, bytes: SMALL },
    Figure::Idle { memory: Memory::Held, bytes: LARGE },
    Figure::Idle { memory: Memory::Heap, bytes: SMALL },
    Figure::Idle { memory: Memory::Heap, bytes: LARGE },
    Figure::FirstRequest,
];

/// The small response an idle connection carried (and every small call's size).
const SMALL: u64 = 1 << 10;
/// The large response an idle connection carried.
const LARGE: u64 = 256 << 10;

impl Figure {
    /// How the tables name it.
    fn label(self) -> String {
        let http = |h2: bool| if h2 { "h2" } else { "h1" };
        match self {
            Figure::CallsPerSecond { h2, concurrency: 1 } => format!("calls/s {}, 1 at a time", http(h2)),
            Figure::CallsPerSecond { h2, concurrency } => format!("calls/s {}, {concurrency} at once", http(h2)),
            Figure::Latency { h2, percentile } => format!("p{percentile} {}, 1 at a time", http(h2)),
            Figure::CpuPerCall { h2, concurrency } => {
                format!("client CPU per call {}, {concurrency} at once", http(h2))
            }
            Figure::NewConnections { resumed: true } => "new connections/s, resumed".to_owned(),
            Figure::NewConnections { resumed: false } => "new connections/s, full handshakes".to_owned(),
            Figure::CpuPerConnection { resumed: true } => "client CPU per new connection, resumed".to_owned(),
            Figure::CpuPerConnection { resumed: false } => "client CPU per new connection, full handshake".to_owned(),
            Figure::Idle { memory, bytes } => {
                let what = match memory {
                    Memory::Rss => "RSS",
                    Memory::Held => "held",
                    Memory::Heap => "heap",
                };
                format!("idle {what} per connection after {} KiB", bytes >> 10)
            }
            Figure::FirstRequest => "first request of a fresh process".to_owned(),
        }
    }

    /// The unit of the absolute figures.
    fn unit(self) -> &'static str {
        match self {
            Figure::CallsPerSecond { .. } | Figure::NewConnections { .. } => "per s",
            Figure::Latency { .. } | Figure::CpuPerCall { .. } | Figure::CpuPerConnection { .. } => "µs",
            Figure::Idle { .. } => "KiB",
            Figure::FirstRequest => "ms",
        }
    }

    /// Which way it is better, and so how a ratio meets the goal.
    fn better(self) -> Better {
        match self {
            Figure::CallsPerSecond { .. } | Figure::NewConnections { .. } => Better::Higher,
            Figure::Latency { .. }
            | Figure::CpuPerCall { .. }
            | Figure::CpuPerConnection { .. }
            | Figure::Idle { .. }
            | Figure::FirstRequest => Better::Lower,
        }
    }
}

/// One child process per client and round: what it measures.
#[derive(Clone, Copy, Debug)]
enum Run {
    /// `--calls`: small calls over kept-alive connections, HTTP/2 or not, this many in flight.
    Calls { h2: bool, concurrency: usize },
    /// `--connections`: a new connection per request, to the port that resumes or never does.
    Connections { resumed: bool },
    /// `--idle`: a thousand pooled connections, each after one response of `bytes`.
    Idle { bytes: u64 },
    /// `--cold-start`: building the client and its first request in a fresh process.
    FirstRequest,
}

/// Every run of a round, in order.
const RUNS: [Run; 9] = [
    Run::Calls { h2: false, concurrency: 64 },
    Run::Calls { h2: true, concurrency: 64 },
    Run::Calls { h2: false, concurrency: 1 },
    Run::Calls { h2: true, concurrency: 1 },
    Run::Connections { resumed: true },
    Run::Connections { resumed: false },
    Run::Idle { bytes: SMALL },
    Run::Idle { bytes: LARGE },
    Run::FirstRequest,
];

impl Run {
    /// Runs it for `client` against `server` in fresh processes: the figures it yields.
    fn measure(self, server: &dyn Server, client: Contender) -> Vec<(Figure, f64)> {
        let label = client.label();
        let ca = ("BENCH_CA", server.ca_pem().to_owned());
        let url = |port: u16, bytes: u64| ("BENCH_URL", format!("https://localhost:{port}/obj/{bytes}"));
        match self {
            Run::Calls { h2, concurrency } => {
                let port = if h2 { server.h2() } else { server.h1() }.port();
                let envs = [
                    ca,
                    url(port, SMALL),
                    ("BENCH_CALLS", env_number("BENCH_CALLS", 20_000).to_string()),
                    ("BENCH_CALL_WARMUP", warmup_calls(concurrency).to_string()),
                ];
                let out = child(&["--calls", &label, &concurrency.to_string()], &envs);
                let mut figures = vec![
                    (Figure::CallsPerSecond { h2, concurrency }, field(&out, "per_sec=")),
                    (Figure::CpuPerCall { h2, concurrency }, field(&out, "cpu_us_per_call=")),
                ];
                if concurrency == 1 {
                    figures.push((Figure::Latency { h2, percentile: 50 }, field(&out, "p50_us=")));
                    figures.push((Figure::Latency { h2, percentile: 99 }, field(&out, "p99_us=")));
                }
                figures
            }
            Run::Connections { resumed } => {
                let port = if resumed { server.h1() } else { server.full() }.port();
                let envs = [ca, url(port, 1), ("BENCH_CONNECTIONS", env_number("BENCH_CONNECTIONS", 200).to_string())];
                let out = child(&["--connections", &label], &envs);
                vec![
                    (Figure::NewConnections { resumed }, field(&out, "per_sec=")),
                    (Figure::CpuPerConnection { resumed }, field(&out, "cpu_us_per_request=")),
                ]
            }
            Run::Idle { bytes } => {
                let idle = idle_sample(server, client, env_number("BENCH_IDLE_CONNECTIONS", 1000), bytes);
                [(Memory::Rss, idle.per_conn), (Memory::Held, idle.held), (Memory::Heap, idle.heap)]
                    .map(|(memory, kib)| (Figure::Idle { memory, bytes }, kib))
                    .to_vec()
            }
            Run::FirstRequest => {
                // The median of a few processes: one fresh process's first request is bimodal.
                let exe = std::env::current_exe().expect("current exe");
                let samples: Vec<f64> = (0..env_number("BENCH_EVERYDAY_COLD", 3).max(1))
                    .map(|_| {
                        let (construct, first) = cold_sample(&exe, client, server, 0, None);
                        construct + first
                    })
                    .collect();
                vec![(Figure::FirstRequest, median(&samples))]
            }
        }
    }
}

/// What one server's rounds measured: per (figure, client label), one figure per round.
pub(crate) struct ServerSamples {
    server: &'static str,
    samples: BTreeMap<(Figure, String), Vec<f64>>,
}

impl ServerSamples {
    /// `client`'s figures, one per round (empty when not measured).
    fn get(&self, figure: Figure, client: Contender) -> &[f64] {
        self.samples.get(&(figure, client.label())).map_or(&[], Vec::as_slice)
    }

    /// Ours with `provider` / upstream's default, round by round (clients interleave within a
    /// round, so each round's ratio compares like with like).
    fn ratios(&self, figure: Figure, provider: &'static str) -> Vec<f64> {
        let ours = self.get(figure, Contender::Ours(provider));
        let theirs = self.get(figure, Contender::Upstream(UPSTREAM_DEFAULT));
        ours.iter().zip(theirs).map(|(a, b)| a / b).collect()
    }
}

/// A column of the product tables: a provider, and the presets that give it to [`LINUX`].
struct Column {
    provider: &'static str,
    presets: Vec<&'static str>,
}

impl Column {
    /// `presets (provider)`, as the tables head the column.
    fn title(&self) -> String {
        format!("{} ({})", self.presets.join(", "), self.provider)
    }
}

/// A product table's column names: `first`, then each column's title.
fn head(first: &[&str], columns: &[Column]) -> Vec<String> {
    first.iter().map(|s| (*s).to_owned()).chain(columns.iter().map(Column::title)).collect()
}

/// The presets' [`LINUX`] providers, each once, in the presets' order.
fn columns(products: &[Product]) -> Vec<Column> {
    let mut columns: Vec<Column> = Vec::new();
    for product in products {
        match columns.iter_mut().find(|c| c.provider == product.provider) {
            Some(column) => column.presets.push(product.preset),
            None => columns.push(Column { provider: product.provider, presets: vec![product.preset] }),
        }
    }
    columns
}

/// The section against one server: `BENCH_EVERYDAY_ROUNDS` (5) rounds, each running every
/// [`RUNS`] entry for every client, clients rotated. The absolute figures are published now;
/// what it returns goes into the report's lead table ([`summary`]).
pub(crate) fn everyday(server: &dyn Server, report: &mut Report) -> ServerSamples {
    let rounds = env_number("BENCH_EVERYDAY_ROUNDS", 5).max(1) as usize;
    let columns = columns(&products());
    let clients: Vec<Contender> =
        columns.iter().map(|c| Contender::Ours(c.provider)).chain([Contender::Upstream(UPSTREAM_DEFAULT)]).collect();
    let name = server.name();
    println!("\n## The everyday workload, server {name}: {rounds} rounds, a fresh process per sample");
    let mut samples = ServerSamples { server: name, samples: BTreeMap::new() };
    for round in 0..rounds {
        for run in RUNS {
            for client in rotated(&clients, round) {
                for (figure, value) in run.measure(server, *client) {
                    println!(
                        "{:<22} round {} {}: {value:.1} {}",
                        client.label(),
                        round + 1,
                        figure.label(),
                        figure.unit()
                    );
                    samples.samples.entry((figure, client.label())).or_default().push(value);
                }
            }
        }
    }
    let head: Vec<String> =
        ["figure".to_owned(), "unit".to_owned()].into_iter().chain(clients.iter().map(|c| c.label())).collect();
    let mut md = format!(
        "\n## The everyday workload, server {name}: each client's figures (median (min–max) of {rounds} rounds, a fresh process per sample)\n\n{}",
        table_head(&head)
    );
    for figure in FIGURES {
        let cells: Vec<String> = clients.iter().map(|c| range_cell(samples.get(figure, *c))).collect();
        let _ = writeln!(md, "| {} | {} | {} |", figure.label(), figure.unit(), cells.join(" | "));
    }
    report.publish(&md);
    samples
}

/// The lead of results.md: per figure and product, the median ratio to upstream's default on
/// each server and on how many servers it meets 1.0; then each server's table with the rounds'
/// range. Empty when the section did not run.
pub(crate) fn summary(servers: &[ServerSamples]) -> String {
    let mut md = String::new();
    if servers.is_empty() {
        return md;
    }
    let columns = columns(&products());
    let measured: Vec<&ServerSamples> = NAMES.iter().filter_map(|n| servers.iter().find(|s| s.server == *n)).collect();
    let names: Vec<&str> = measured.iter().map(|s| s.server).collect();
    let _ = write!(
        md,
        "\n## The everyday workload: each preset's {LINUX} provider / upstream's default ({UPSTREAM_DEFAULT})\n\nMedian of the per-round ratios against each server ({}), then on how many servers the median meets the goal of 1.0: ≥ for rates, ≤ for latency, memory and time. A fresh process per sample, clients interleaved and rotated.\n\n{}",
        names.join(" / "),
        table_head(&head(&["figure", "goal"], &columns))
    );
    for figure in FIGURES {
        let better = figure.better();
        let cells: Vec<String> = columns
            .iter()
            .map(|column| {
                let medians: Vec<f64> = measured.iter().map(|s| median(&s.ratios(figure, column.provider))).collect();
                let met = medians.iter().filter(|r| better.meets(**r)).count();
                let shown: Vec<String> = medians.iter().map(|r| format!("{r:.2}")).collect();
                format!("{} ({met} of {})", shown.join(" / "), medians.len())
            })
            .collect();
        let _ = writeln!(md, "| {} | {} | {} |", figure.label(), better.goal(), cells.join(" | "));
    }
    for server in measured {
        let _ = write!(
            md,
            "\n### The everyday workload, server {}: median (min–max) of the per-round ratios\n\n{}",
            server.server,
            table_head(&head(&["figure"], &columns))
        );
        for figure in FIGURES {
            let cells: Vec<String> = columns.iter().map(|c| range_cell(&server.ratios(figure, c.provider))).collect();
            let _ = writeln!(md, "| {} | {} |", figure.label(), cells.join(" | "));
        }
    }
    md
}
