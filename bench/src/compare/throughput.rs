//! Bulk transfer (the `throughput` section downloads, `uploads` uploads): every client moving the
//! same bytes over HTTP/1.1 and h2, one stream and 8 parts at a time, against the server process;
//! Gb/s, CPU on both sides, page faults, their ratios, and the ceiling plain HTTP sets.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use aws_smithy_runtime_api::client::http::SharedHttpClient;

use super::contenders::{
    env_selects, rotated, selected_throughput_contenders, BuildUpstream, Contender, OURS_ONLY, PROVIDERS,
};
use super::curl::Curl;
use super::product::{products, UPSTREAM_DEFAULT};
use super::report::{table_head, Direction, Report};
use super::servers::Server;
use crate::{download, env_number, median, median_range, upload, Shape, Usage};

/// Bits per second, in billions, of `bytes` moved in `elapsed`.
pub(crate) fn gbps(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 * 8.0 / elapsed.as_secs_f64() / 1e9
}

impl Direction {
    /// Moves `total` bytes this way between `client` and `base`, in `shape`; how long it took.
    pub(crate) async fn transfer(self, client: &SharedHttpClient, base: &str, total: u64, shape: Shape) -> Duration {
        match self {
            Direction::Download => download(client, base, total, shape).await,
            Direction::Upload => upload(client, base, total, shape).await,
        }
    }
}

/// One throughput scenario: its name in the tables, whether it runs over h2, and how the bytes
/// move.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scenario {
    pub(crate) name: &'static str,
    pub(crate) h2: bool,
    pub(crate) shape: Shape,
}

/// Bytes per part when a transfer moves parts.
pub(crate) const PART: u64 = 8 << 20;

/// The throughput scenarios: one stream, 8 MiB parts 8 at a time (an S3 transfer manager), and
/// on HTTP/1.1 also 8 MiB parts one after the other (the SDK's own loop of ranged GETs).
pub(crate) const SCENARIOS: [Scenario; 5] = [
    Scenario { name: "h1 single", h2: false, shape: Shape::Whole },
    Scenario { name: "h1 8x8MiB", h2: false, shape: Shape::Parts { parallel: 8, part: PART } },
    Scenario { name: "h1 8MiB one at a time", h2: false, shape: Shape::Parts { parallel: 1, part: PART } },
    Scenario { name: "h2 single", h2: true, shape: Shape::Whole },
    Scenario { name: "h2 8x8MiB", h2: true, shape: Shape::Parts { parallel: 8, part: PART } },
];

/// The head of a per-scenario table: `first` names the rows, a column per scenario, then `more`.
fn header(first: &str, more: &[&str]) -> String {
    let names: Vec<&str> =
        [first].into_iter().chain(SCENARIOS.iter().map(|s| s.name)).chain(more.iter().copied()).collect();
    table_head(&names)
}

/// Per (scenario, contender label): one figure per counted run.
type PerRun = BTreeMap<(String, String), Vec<f64>>;

/// One direction's runs: which way, how many are counted, and the bytes each moves.
struct Runs {
    direction: Direction,
    count: u64,
    total: u64,
}

/// What one direction's counted runs measured.
#[derive(Default)]
struct Samples {
    /// Gb/s.
    rates: PerRun,
    /// The client's CPU seconds per GiB.
    cpu: PerRun,
    /// The server's CPU seconds per GiB, serving that client.
    server_cpu: PerRun,
    /// The client's minor page faults per MiB.
    faults: PerRun,
    /// curl's Gb/s, h1 single (downloads, when curl is installed).
    curl: Vec<f64>,
}

impl Samples {
    /// The median Gb/s of one client (`label`) in one scenario.
    fn rate(&self, scenario: &str, label: &str) -> f64 {
        median_of(&self.rates, scenario, label)
    }
}

/// The median of one client's runs in one scenario, from any of the tables (Gb/s, client or
/// server CPU per GiB).
fn median_of(map: &PerRun, scenario: &str, label: &str) -> f64 {
    map.get(&(scenario.to_owned(), label.to_owned())).map_or(f64::NAN, |v| median(v))
}

/// Bulk transfer, `direction` (download: the `throughput` section; upload: `uploads`): 1 GiB
/// (BENCH_MIB) per run over one stream and as 8 MiB parts 8 at a time, HTTP/1.1 and h2, every
/// client, interleaved round-robin after one uncounted warm-up round. The server runs in a
/// process of its own, so the CPU this process uses during a run is the client's.
pub(crate) async fn throughput(
    server: &dyn Server,
    direction: Direction,
    report: &mut Report,
    upstream: BuildUpstream,
) {
    let runs = Runs { direction, count: env_number("BENCH_RUNS", 9), total: env_number("BENCH_MIB", 1024) << 20 };
    let contenders = selected_throughput_contenders();
    let clients: Vec<(Contender, SharedHttpClient)> =
        contenders.iter().map(|c| (*c, c.build(server.ca_pem(), upstream))).collect();
    let what = direction.name();
    let name = server.name();
    println!(
        "\n## Throughput, {what}, server {name}: {} MiB per run, {} runs, clients interleaved round-robin, server in its own process",
        runs.total >> 20,
        runs.count
    );
    let curl = (direction == Direction::Download).then(|| Curl::find(server.ca_pem())).flatten();
    let samples = measure(server, &runs, &clients, curl.as_ref()).await;
    record_ratios(report, name, direction, &samples);
    let mut md = rate_table(&runs, name, &contenders, &samples, report);
    cost_tables(&mut md, what, &contenders, &samples);
    ours_only_table(&mut md, what, &samples);
    ratio_table(&mut md, what, &samples);
    needed_table(&mut md, direction, &samples);
    ceiling_table(&mut md, what, &samples);
    if direction == Direction::Download {
        floor_table(&mut md, &samples);
    }
    // The targets chart is drawn for our server (the one the history used).
    if name == "ours" {
        targets(direction, &samples, report);
    }
    notes(&mut md, what, curl.as_ref(), &samples);
    report.publish(&md);
}

/// Every scenario BENCH_SCENARIOS selects, `runs.count` rounds of every client after the
/// warm-up round, and curl after each counted round of h1 single; each run printed as it ends.
async fn measure(
    server: &dyn Server,
    runs: &Runs,
    clients: &[(Contender, SharedHttpClient)],
    curl: Option<&Curl>,
) -> Samples {
    let (what, total) = (runs.direction.name(), runs.total);
    let mut samples = Samples::default();
    for Scenario { name: scenario, h2, shape } in SCENARIOS {
        // BENCH_SCENARIOS="h1 single,h2" runs only the scenarios whose name contains one of these.
        if !env_selects("BENCH_SCENARIOS", scenario) {
            continue;
        }
        println!("\n### {what} {scenario}, server {}", server.name());
        // Run 0 warms every client up (connections, pools, allocator, page faults) and is not
        // counted: whichever client went first would otherwise pay for it.
        for run in 0..=runs.count {
            for (contender, client) in rotated(clients, run as usize) {
                let base = base_url(server, *contender, h2);
                let (before, server_before) = (Usage::now(), server.cpu_seconds());
                let elapsed = runs.direction.transfer(client, &base, total, shape).await;
                let (used, server_used) = (Usage::now().since(before), server.cpu_seconds() - server_before);
                let gib = total as f64 / (1u64 << 30) as f64;
                let cpu_per_gib = used.cpu_seconds / gib;
                let faults_per_mib = used.minor_faults as f64 / (total >> 20) as f64;
                let rate = gbps(total, elapsed);
                if run == 0 {
                    println!(
                        "{:<28} warm-up Secs:{:.3} Gb/s:{rate:.2} (not counted)",
                        contender.label(),
                        elapsed.as_secs_f64()
                    );
                    continue;
                }
                println!(
                    "{:<28} Run:{run} Secs:{:.3} Gb/s:{rate:.2} CPU s/GiB:{cpu_per_gib:.2} server CPU s/GiB:{:.2} faults/MiB:{faults_per_mib:.1}",
                    contender.label(),
                    elapsed.as_secs_f64(),
                    server_used / gib
                );
                let key = (scenario.to_owned(), contender.label());
                samples.rates.entry(key.clone()).or_default().push(rate);
                samples.cpu.entry(key.clone()).or_default().push(cpu_per_gib);
                samples.server_cpu.entry(key.clone()).or_default().push(server_used / gib);
                samples.faults.entry(key).or_default().push(faults_per_mib);
            }
            if scenario == "h1 single" && run > 0 {
                if let Some(secs) = curl.and_then(|c| c.download(server, total)) {
                    let rate = total as f64 * 8.0 / secs / 1e9;
                    println!("{:<28} Run:{run} Secs:{secs:.3} Gb/s:{rate:.2}", "curl (outside reference)");
                    samples.curl.push(rate);
                }
            }
        }
    }
    samples
}

/// Where `contender` fetches from: the plain HTTP port, or the HTTP/1.1-only or h2 TLS port.
fn base_url(server: &dyn Server, contender: Contender, h2: bool) -> String {
    match (contender, h2) {
        (Contender::Plain, _) => format!("http://{}", server.plain()),
        (_, false) => format!("https://localhost:{}", server.h1().port()),
        (_, true) => format!("https://localhost:{}", server.h2().port()),
    }
}

/// Ours / upstream per provider and scenario, and each preset's Linux provider / upstream's
/// default, round by round (clients interleave within a round), into the report's per-server
/// summaries.
fn record_ratios(report: &mut Report, server: &str, direction: Direction, samples: &Samples) {
    let short = match direction {
        Direction::Download => "down",
        Direction::Upload => "up",
    };
    for Scenario { name: scenario, .. } in SCENARIOS {
        let row = format!("{short} {scenario}");
        let get = |c: Contender| samples.rates.get(&(scenario.to_owned(), c.label())).cloned().unwrap_or_default();
        let per_round = |ours: Vec<f64>, theirs: Vec<f64>| ours.iter().zip(&theirs).map(|(a, b)| a / b).collect();
        report.record_ratios(server, &row, |p| per_round(get(Contender::Ours(p)), get(Contender::Upstream(p))));
        let upstream_default = get(Contender::Upstream(UPSTREAM_DEFAULT));
        let products = products()
            .into_iter()
            .map(|product| (product, per_round(get(Contender::Ours(product.provider)), upstream_default.clone())))
            .collect();
        report.record_products(server, &row, products);
    }
}

/// The Gb/s table, median (min–max) per client and scenario; each median also goes to the
/// report's chart.
fn rate_table(runs: &Runs, server: &str, contenders: &[Contender], samples: &Samples, report: &mut Report) -> String {
    let (what, direction) = (runs.direction.name(), runs.direction);
    let mut md = format!(
        "\n## Throughput, {what}, server {server} ({} MiB per run, server in its own process; median (min–max) Gb/s of {} runs)\n\n{}",
        runs.total >> 20,
        runs.count,
        header("client", &[])
    );
    for contender in contenders {
        let cells: Vec<String> = SCENARIOS
            .iter()
            .map(|Scenario { name: s, .. }| {
                let Some(rates) = samples.rates.get(&(s.to_string(), contender.label())) else {
                    return "-".to_owned();
                };
                if server == "ours" {
                    report.throughput.insert((direction, s.to_string(), contender.label()), median(rates));
                }
                median_range(rates)
            })
            .collect();
        let _ = writeln!(md, "| {} | {} |", contender.label(), cells.join(" | "));
    }
    md
}

/// One row per client, one median per scenario.
fn per_scenario(md: &mut String, contenders: &[Contender], samples: &PerRun, decimals: usize) {
    for contender in contenders {
        let cells: Vec<String> = SCENARIOS
            .iter()
            .map(|Scenario { name: s, .. }| {
                samples
                    .get(&(s.to_string(), contender.label()))
                    .map_or("-".to_owned(), |v| format!("{:.decimals$}", median(v)))
            })
            .collect();
        let _ = writeln!(md, "| {} | {} |", contender.label(), cells.join(" | "));
    }
}

/// What each client's transfers cost: its CPU, the server's CPU serving it, and page faults.
fn cost_tables(md: &mut String, what: &str, contenders: &[Contender], samples: &Samples) {
    let _ =
        write!(md, "\n### Client CPU seconds per GiB, {what} (median; lower is better)\n\n{}", header("client", &[]));
    per_scenario(md, contenders, &samples.cpu, 2);
    // The server shares the two cores: what it spends on each client's transfer is what no
    // client-side saving can take back.
    let _ = write!(
        md,
        "\n### Server CPU seconds per GiB, {what}, serving each client (median; the same server code for all)\n\n{}",
        header("client", &[])
    );
    per_scenario(md, contenders, &samples.server_cpu, 2);
    // Fresh pages the kernel had to hand out: the allocator giving memory back and taking it
    // again (glibc trimming the top of its heap) shows here, as system CPU time above.
    let _ = write!(
        md,
        "\n### Client page faults per MiB, {what} (median; fresh pages the kernel handed out during a run)\n\n{}",
        header("client", &[])
    );
    per_scenario(md, contenders, &samples.faults, 1);
}

/// Each provider of [`OURS_ONLY`] against ours and upstream's rustls-aws-lc.
fn ours_only_table(md: &mut String, what: &str, samples: &Samples) {
    let t = |scenario: &str, label: &str| samples.rate(scenario, label);
    let _ = write!(md, "\n### Providers without an upstream counterpart, {what}: median Gb/s / ours rustls-aws-lc (/ upstream rustls-aws-lc)\n\n{}", header("provider", &[]));
    for p in OURS_ONLY {
        let cells: Vec<String> = SCENARIOS
            .iter()
            .map(|Scenario { name: s, .. }| {
                let ours = t(s, &Contender::Ours(p).label());
                let (base, upstream) = (
                    t(s, &Contender::Ours("rustls-aws-lc").label()),
                    t(s, &Contender::Upstream("rustls-aws-lc").label()),
                );
                format!("{:.2} ({:.2})", ours / base, ours / upstream)
            })
            .collect();
        let _ = writeln!(md, "| {p} | {} |", cells.join(" | "));
    }
}

/// Ours / upstream per provider and scenario (Gb/s, and CPU per GiB), and our h2 / our h1.
fn ratio_table(md: &mut String, what: &str, samples: &Samples) {
    let t = |scenario: &str, label: &str| samples.rate(scenario, label);
    let _ = write!(
        md,
        "\n### Ratios ours / upstream, {what} (median Gb/s; CPU per GiB in brackets, lower is better)\n\n{}",
        header("provider", &["our h2 / our h1 (single, 8x)"])
    );
    let c = |scenario: &str, label: &str| median_of(&samples.cpu, scenario, label);
    for p in PROVIDERS {
        let ours = Contender::Ours(p).label();
        let theirs = Contender::Upstream(p).label();
        let ratios: Vec<String> = SCENARIOS
            .iter()
            .map(|Scenario { name: s, .. }| {
                format!("{:.2} ({:.2})", t(s, &ours) / t(s, &theirs), c(s, &ours) / c(s, &theirs))
            })
            .collect();
        let h2_vs_h1 = format!(
            "{:.2}, {:.2}",
            t("h2 single", &ours) / t("h1 single", &ours),
            t("h2 8x8MiB", &ours) / t("h1 8x8MiB", &ours)
        );
        let _ = writeln!(md, "| {p} | {} | {h2_vs_h1} |", ratios.join(" | "));
    }
}

/// With client and server on the same two cores, a transfer that keeps both busy goes as fast
/// as their CPU per GiB together allows: a client-side gain of 1.2× needs the client's CPU per
/// GiB to fall to (upstream's client + server) / 1.2 − the server's for ours.
fn needed_table(md: &mut String, direction: Direction, samples: &Samples) {
    let what = direction.name();
    let (cpu, server_cpu) = (&samples.cpu, &samples.server_cpu);
    let _ = write!(md, "\n### What 1.2× upstream would take, {what}: cores busy (client + server CPU per GiB × GiB/s), and the client CPU per GiB that would reach 1.2× if the two cores are the limit\n\n| provider | scenario | cores busy, ours | upstream | client CPU s/GiB, ours | for 1.2× |\n|---|---|---|---|---|---|\n");
    for p in PROVIDERS {
        // The scenarios the targets name: h1 downloads, 8 × 8 MiB uploads.
        let scenarios = match direction {
            Direction::Download => ["h1 single", "h1 8x8MiB"],
            Direction::Upload => ["h1 8x8MiB", "h2 8x8MiB"],
        };
        for scenario in scenarios {
            let (ours, theirs) = (Contender::Ours(p).label(), Contender::Upstream(p).label());
            let busy = |label: &str| {
                (median_of(cpu, scenario, label) + median_of(server_cpu, scenario, label))
                    * samples.rate(scenario, label)
                    * 1e9
                    / 8.0
                    / (1u64 << 30) as f64
            };
            let needed = (median_of(cpu, scenario, &theirs) + median_of(server_cpu, scenario, &theirs)) / 1.2
                - median_of(server_cpu, scenario, &ours);
            let _ = writeln!(
                md,
                "| {p} | {scenario} | {:.2} | {:.2} | {:.2} | {needed:.2} |",
                busy(&ours),
                busy(&theirs),
                median_of(cpu, scenario, &ours)
            );
        }
    }
}

/// The ceiling: no client can beat plain HTTP from the same server, so plain / upstream is the
/// largest "ours / upstream" ratio any TLS client could reach in this run.
fn ceiling_table(md: &mut String, what: &str, samples: &Samples) {
    let plain = Contender::Plain.label();
    let _ = write!(
        md,
        "\n### Ceiling, {what}: plain HTTP / upstream (the most any TLS client could gain here)\n\n{}",
        header("provider", &[])
    );
    for p in PROVIDERS {
        let theirs = Contender::Upstream(p).label();
        let ceilings: Vec<String> = SCENARIOS
            .iter()
            .map(|Scenario { name: s, .. }| format!("{:.2}", samples.rate(s, &plain) / samples.rate(s, &theirs)))
            .collect();
        let _ = writeln!(md, "| {p} | {} |", ceilings.join(" | "));
    }
}

/// Each client's CPU per GiB on h1 downloads against the floor: the plain-HTTP client's CPU per
/// GiB in this run plus the AEAD's cost per GiB, timed here with the provider's own primitive.
/// Providers upstream lacks (OpenSSL) are held to upstream's default, rustls-aws-lc, whose
/// AES-GCM also stands in for theirs (both are AES-NI + carry-less multiply assembly).
fn floor_table(md: &mut String, samples: &Samples) {
    let _ = write!(md, "\n### Client CPU per GiB against the floor, download (floor: plain HTTP's client CPU per GiB in this run + AES-128-GCM opening 1 GiB of 16 KiB records, timed here; goal ≤ 1.3× the floor; upstream's default for providers it lacks)\n\n| provider | scenario | AEAD s/GiB | floor s/GiB | ours s/GiB | ours / floor | upstream s/GiB | upstream / floor |\n|---|---|---|---|---|---|---|---|\n");
    let rows = PROVIDERS.iter().map(|&p| (p, p)).chain(OURS_ONLY.iter().map(|&p| (p, PROVIDERS[0])));
    for (p, theirs_provider) in rows {
        let aead = super::floor::aead_seconds_per_gib(theirs_provider);
        let theirs_label = if p == theirs_provider { String::new() } else { format!(" ({theirs_provider})") };
        for scenario in ["h1 single", "h1 8x8MiB"] {
            let cpu = |c: Contender| median_of(&samples.cpu, scenario, &c.label());
            let floor = cpu(Contender::Plain) + aead;
            let (ours, theirs) = (cpu(Contender::Ours(p)), cpu(Contender::Upstream(theirs_provider)));
            let _ = writeln!(
                md,
                "| {p} | {scenario} | {aead:.2} | {floor:.2} | {ours:.2} | {:.2} | {theirs:.2}{theirs_label} | {:.2} |",
                ours / floor,
                theirs / floor
            );
        }
    }
}

/// This direction's groups in the targets chart.
fn targets(direction: Direction, samples: &Samples, report: &mut Report) {
    let t = |scenario: &str, label: &str| samples.rate(scenario, label);
    let vs_upstream = |scenario: &'static str| {
        move |p: &'static str| t(scenario, &Contender::Ours(p).label()) / t(scenario, &Contender::Upstream(p).label())
    };
    let h2_over_h1 =
        |p: &'static str| t("h2 single", &Contender::Ours(p).label()) / t("h1 single", &Contender::Ours(p).label());
    let (h1_single, h1_parts, h2_parts) =
        (vs_upstream("h1 single"), vs_upstream("h1 8x8MiB"), vs_upstream("h2 8x8MiB"));
    match direction {
        Direction::Download => {
            report.target("down h1 1 stream", 1.2, h1_single);
            report.target("down h1 8 streams", 1.2, h1_parts);
            report.target("down h2/h1 (ours)", 0.9, h2_over_h1);
        }
        Direction::Upload => {
            report.target("up h1 8x8 MiB", 1.2, h1_parts);
            report.target("up h2 8x8 MiB", 1.2, h2_parts);
            report.target("up h2/h1 (ours)", 0.9, h2_over_h1);
        }
    }
}

/// The closing lines: curl as an outside reference, and our s2n-tls against our rustls-aws-lc.
fn notes(md: &mut String, what: &str, curl: Option<&Curl>, samples: &Samples) {
    if let (Some(curl), false) = (curl, samples.curl.is_empty()) {
        let _ = writeln!(
            md,
            "\nOutside reference, h1 single: {} (its own process, body to /dev/null): {:.2} Gb/s median.",
            curl.version,
            median(&samples.curl)
        );
    }
    let t = |scenario: &str, label: &str| samples.rate(scenario, label);
    let s2n = Contender::Ours("s2n-tls").label();
    let awslc = Contender::Ours("rustls-aws-lc").label();
    let _ = writeln!(
        md,
        "\nOur s2n-tls / our rustls-aws-lc, {what}: h1 single {:.2}, h1 8x {:.2}.",
        t("h1 single", &s2n) / t("h1 single", &awslc),
        t("h1 8x8MiB", &s2n) / t("h1 8x8MiB", &awslc)
    );
}
