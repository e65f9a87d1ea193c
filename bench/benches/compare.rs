//! smithy-default-tls against the upstream aws-smithy-http-client, side by side in one run.
//!
//! ```text
//! cargo bench -p smithy-tls-bench --bench compare            # everything, default sizes
//! BENCH_RUNS=3 BENCH_MIB=256 cargo bench -p smithy-tls-bench --bench compare -- throughput
//! ```
//!
//! Sections (pass names as arguments to run a subset): `throughput`, `cold-start`,
//! `new-connections`, `rss`, `proxy`, `negotiated`, `small-calls` (the server in a process of
//! its own), `idle` (many pooled connections), `syscalls` (needs strace). Results are printed; a full
//! run (no section names, no `BENCH_ONLY` / `BENCH_SCENARIOS`) also writes `docs/benchmarks/`
//! (markdown tables and an SVG chart).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::BufRead as _;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use aws_smithy_http_client::tls;
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use smithy_default_tls::{SmithyTlsClient, TlsProvider};
use smithy_tls_bench::{
    child, download, env_number, fetch, field, heap_in_use, machine_description, median, median_range, min_max,
    peak_rss_kib, post, quantile, rss_kib, upload, BenchServer, Loopback, Usage,
};

/// A client under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Contender {
    Ours(&'static str),
    OursNoResumption(&'static str),
    Upstream(&'static str),
    Plain,
}

impl Contender {
    fn label(self) -> String {
        match self {
            Contender::Ours(p) => format!("ours {p}"),
            Contender::OursNoResumption(p) => format!("ours {p} (no resumption)"),
            Contender::Upstream(p) => format!("upstream {p}"),
            Contender::Plain => "plain HTTP (ours)".to_owned(),
        }
    }

    fn parse(text: &str) -> Option<Contender> {
        let all = throughput_contenders().into_iter().chain(connection_contenders());
        all.into_iter().find(|c| c.label() == text)
    }

    fn build(self, ca_pem: &str) -> SharedHttpClient {
        self.build_resolving(ca_pem, false)
    }

    /// The client; with `loopback`, every host name resolves to 127.0.0.1 (each client's own DNS
    /// resolver override).
    fn build_resolving(self, ca_pem: &str, loopback: bool) -> SharedHttpClient {
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
            Contender::Upstream(p) => {
                let provider = match p {
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
        }
    }
}

const PROVIDERS: [&str; 3] = ["rustls-aws-lc", "rustls-ring", "s2n-tls"];

/// Our providers upstream has no counterpart of (the system's OpenSSL): measured beside ours on
/// rustls-aws-lc (and so beside upstream's rustls-aws-lc), in the throughput and new-connection
/// sections.
const OURS_ONLY: [&str; 1] = ["openssl"];

/// Ours and upstream with each provider, side by side per provider.
fn ours_and_upstream() -> impl Iterator<Item = Contender> {
    PROVIDERS.iter().flat_map(|p| [Contender::Ours(p), Contender::Upstream(p)])
}

/// Those of [`ours_and_upstream`] whose label contains BENCH_ONLY (comma-separated substrings).
fn selected_ours_and_upstream() -> Vec<Contender> {
    ours_and_upstream().filter(|c| env_selects("BENCH_ONLY", &c.label())).collect()
}

fn throughput_contenders() -> Vec<Contender> {
    ours_and_upstream().chain(OURS_ONLY.map(Contender::Ours)).chain([Contender::Plain]).collect()
}

/// The contenders the throughput section measures: all, or those whose label contains
/// BENCH_ONLY (comma-separated substrings).
fn selected_throughput_contenders() -> Vec<Contender> {
    throughput_contenders().into_iter().filter(|c| env_selects("BENCH_ONLY", &c.label())).collect()
}

/// `items` in order starting at the `round`-th (wrapping): rounds that interleave the clients
/// start one client further on each time, so that no client always runs first or right after
/// the same other one (a place in the order can carry an effect of its own: the state the
/// previous client left in the server, or a periodic stall of the machine).
fn rotated<T>(items: &[T], round: usize) -> impl Iterator<Item = &T> {
    items.iter().cycle().skip(round % items.len().max(1)).take(items.len())
}

/// Whether the comma-separated substrings in environment variable `var` select `name`: unset or
/// empty selects everything, else `name` must contain one of them.
fn env_selects(var: &str, name: &str) -> bool {
    let list = std::env::var(var).unwrap_or_default();
    list.is_empty() || list.split(',').any(|w| name.contains(w.trim()))
}

fn connection_contenders() -> Vec<Contender> {
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

struct Report {
    markdown: String,
    /// (direction, scenario, contender label) → median Gb/s, for the chart.
    throughput: BTreeMap<(Direction, String, String), f64>,
    /// The targets chart's groups, in the order the sections measured them.
    targets: Vec<TargetGroup>,
}

/// One target of the issue's list as the targets chart shows it: a ratio per provider from this
/// run, oriented so that above 1 is better for ours (lower-is-better figures are upstream / ours),
/// and the ratio the target asks for.
struct TargetGroup {
    label: &'static str,
    goal: f64,
    /// In [`PROVIDERS`]' order; NaN where this run did not measure it.
    ratios: [f64; 3],
}

impl Report {
    /// Adds a group to the targets chart: `ratio(provider)`, above 1 meaning ours is better.
    fn target(&mut self, label: &'static str, goal: f64, ratio: impl Fn(&'static str) -> f64) {
        self.targets.push(TargetGroup { label, goal, ratios: PROVIDERS.map(ratio) });
    }
}

fn gbps(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 * 8.0 / elapsed.as_secs_f64() / 1e9
}

/// Which way the bulk bytes go in a throughput run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Direction {
    /// GETs, as S3 GetObject (one object, or ranged parts in parallel).
    Download,
    /// PUTs, as S3 PutObject (one object) or UploadPart (parts in parallel).
    Upload,
}

impl Direction {
    fn name(self) -> &'static str {
        match self {
            Direction::Download => "download",
            Direction::Upload => "upload",
        }
    }

    /// Moves `total` bytes this way between `client` and `base`, `parallel` streams of `part`
    /// bytes (one stream: one request); how long it took.
    async fn transfer(self, client: &SharedHttpClient, base: &str, total: u64, parallel: usize, part: u64) -> Duration {
        match self {
            Direction::Download => download(client, base, total, parallel, part).await,
            Direction::Upload => upload(client, base, total, parallel, part).await,
        }
    }
}

/// The throughput scenarios: (name, over h2, streams in parallel).
const SCENARIOS: [(&str, bool, usize); 4] =
    [("h1 single", false, 1), ("h1 8x8MiB", false, 8), ("h2 single", true, 1), ("h2 8x8MiB", true, 8)];

/// Bulk transfer, `direction` (download: the `throughput` section; upload: `uploads`): 1 GiB
/// (BENCH_MIB) per run over one stream and as 8 MiB parts 8 at a time, HTTP/1.1 and h2, every
/// client, interleaved round-robin after one uncounted warm-up round. The server runs in a
/// process of its own, so the CPU this process uses during a run is the client's.
async fn throughput(server: &ServerProcess, direction: Direction, report: &mut Report) {
    let runs = env_number("BENCH_RUNS", 9);
    let total = env_number("BENCH_MIB", 1024) << 20;
    let part = 8u64 << 20;
    let contenders = selected_throughput_contenders();
    let clients: Vec<(Contender, SharedHttpClient)> =
        contenders.iter().map(|c| (*c, c.build(&server.ca_pem))).collect();
    let mut results: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut cpu: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut server_cpu: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut faults: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let what = direction.name();
    println!(
        "\n## Throughput, {what}: {} MiB per run, {runs} runs, clients interleaved round-robin, server in its own process",
        total >> 20
    );
    let curl = (direction == Direction::Download).then(|| Curl::find(&server.ca_pem)).flatten();
    let mut curl_rates = Vec::new();
    for (scenario, h2, parallel) in SCENARIOS {
        // BENCH_SCENARIOS="h1 single,h2" runs only the scenarios whose name contains one of these.
        if !env_selects("BENCH_SCENARIOS", scenario) {
            continue;
        }
        println!("\n### {what} {scenario}");
        // Run 0 warms every client up (connections, pools, allocator, page faults) and is not
        // counted: whichever client went first would otherwise pay for it.
        for run in 0..=runs {
            for (contender, client) in rotated(&clients, run as usize) {
                let base = match (contender, h2) {
                    (Contender::Plain, _) => format!("http://{}", server.plain),
                    (_, false) => format!("https://localhost:{}", server.h1.port()),
                    (_, true) => format!("https://localhost:{}", server.h2.port()),
                };
                let (before, server_before) = (Usage::now(), server.cpu_seconds());
                let elapsed = direction.transfer(client, &base, total, parallel, part).await;
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
                results.entry((scenario.to_owned(), contender.label())).or_default().push(rate);
                cpu.entry((scenario.to_owned(), contender.label())).or_default().push(cpu_per_gib);
                server_cpu.entry((scenario.to_owned(), contender.label())).or_default().push(server_used / gib);
                faults.entry((scenario.to_owned(), contender.label())).or_default().push(faults_per_mib);
            }
            if scenario == "h1 single" && run > 0 {
                if let Some(secs) = curl.as_ref().and_then(|c| c.download(server, total)) {
                    let rate = total as f64 * 8.0 / secs / 1e9;
                    println!("{:<28} Run:{run} Secs:{secs:.3} Gb/s:{rate:.2}", "curl (outside reference)");
                    curl_rates.push(rate);
                }
            }
        }
    }
    let header = "| client | h1 single | h1 8x8MiB | h2 single | h2 8x8MiB |\n|---|---|---|---|---|\n";
    let mut md = format!(
        "\n## Throughput, {what} ({} MiB per run, server in its own process; median (min–max) Gb/s of {runs} runs)\n\n{header}",
        total >> 20
    );
    for contender in &contenders {
        let cells: Vec<String> = SCENARIOS
            .iter()
            .map(|(s, _, _)| {
                let Some(samples) = results.get(&(s.to_string(), contender.label())) else {
                    return "-".to_owned();
                };
                report.throughput.insert((direction, s.to_string(), contender.label()), median(samples));
                median_range(samples)
            })
            .collect();
        let _ = writeln!(md, "| {} | {} |", contender.label(), cells.join(" | "));
    }
    // One row per client, one median per scenario.
    let per_scenario = |md: &mut String, samples: &BTreeMap<(String, String), Vec<f64>>, decimals: usize| {
        for contender in &contenders {
            let cells: Vec<String> = SCENARIOS
                .iter()
                .map(|(s, _, _)| {
                    samples
                        .get(&(s.to_string(), contender.label()))
                        .map_or("-".to_owned(), |v| format!("{:.decimals$}", median(v)))
                })
                .collect();
            let _ = writeln!(md, "| {} | {} |", contender.label(), cells.join(" | "));
        }
    };
    let _ = write!(md, "\n### Client CPU seconds per GiB, {what} (median; lower is better)\n\n{header}");
    per_scenario(&mut md, &cpu, 2);
    // The server shares the two cores: what it spends on each client's transfer is what no
    // client-side saving can take back.
    let _ = write!(md, "\n### Server CPU seconds per GiB, {what}, serving each client (median; the same server code for all)\n\n{header}");
    per_scenario(&mut md, &server_cpu, 2);
    // Fresh pages the kernel had to hand out: the allocator giving memory back and taking it
    // again (glibc trimming the top of its heap) shows here, as system CPU time above.
    let _ = write!(
        md,
        "\n### Client page faults per MiB, {what} (median; fresh pages the kernel handed out during a run)\n\n{header}"
    );
    per_scenario(&mut md, &faults, 1);
    // The median of one client's runs in one scenario, from any of the tables above (Gb/s,
    // client or server CPU per GiB).
    let median_of = |map: &BTreeMap<(String, String), Vec<f64>>, s: &str, label: &str| {
        map.get(&(s.to_owned(), label.to_owned())).map_or(f64::NAN, |v| median(v))
    };
    let t = |scenario: &str, label: &str| median_of(&results, scenario, label);
    let _ = write!(md, "\n### Providers without an upstream counterpart, {what}: median Gb/s / ours rustls-aws-lc (/ upstream rustls-aws-lc)\n\n| provider | h1 single | h1 8x8MiB | h2 single | h2 8x8MiB |\n|---|---|---|---|---|\n");
    for p in OURS_ONLY {
        let cells: Vec<String> = SCENARIOS
            .iter()
            .map(|(s, _, _)| {
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
    let _ = write!(md, "\n### Ratios ours / upstream, {what} (median Gb/s; CPU per GiB in brackets, lower is better)\n\n| provider | h1 single | h1 8x8MiB | h2 single | h2 8x8MiB | our h2 / our h1 (single, 8x) |\n|---|---|---|---|---|---|\n");
    let c = |scenario: &str, label: &str| median_of(&cpu, scenario, label);
    for p in PROVIDERS {
        let ours = Contender::Ours(p).label();
        let theirs = Contender::Upstream(p).label();
        let ratios: Vec<String> = SCENARIOS
            .iter()
            .map(|(s, _, _)| format!("{:.2} ({:.2})", t(s, &ours) / t(s, &theirs), c(s, &ours) / c(s, &theirs)))
            .collect();
        let h2_vs_h1 = format!(
            "{:.2}, {:.2}",
            t("h2 single", &ours) / t("h1 single", &ours),
            t("h2 8x8MiB", &ours) / t("h1 8x8MiB", &ours)
        );
        let _ = writeln!(md, "| {p} | {} | {h2_vs_h1} |", ratios.join(" | "));
    }
    // With client and server on the same two cores, a transfer that keeps both busy goes as fast
    // as their CPU per GiB together allows: a client-side gain of 1.2× needs the client's CPU per
    // GiB to fall to (upstream's client + server) / 1.2 − the server's for ours.
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
                (median_of(&cpu, scenario, label) + median_of(&server_cpu, scenario, label)) * t(scenario, label) * 1e9
                    / 8.0
                    / (1u64 << 30) as f64
            };
            let needed = (median_of(&cpu, scenario, &theirs) + median_of(&server_cpu, scenario, &theirs)) / 1.2
                - median_of(&server_cpu, scenario, &ours);
            let _ = writeln!(
                md,
                "| {p} | {scenario} | {:.2} | {:.2} | {:.2} | {needed:.2} |",
                busy(&ours),
                busy(&theirs),
                median_of(&cpu, scenario, &ours)
            );
        }
    }
    // The ceiling: no client can beat plain HTTP from the same server, so plain / upstream is the
    // largest "ours / upstream" ratio any TLS client could reach in this run.
    let plain = Contender::Plain.label();
    let _ = write!(md, "\n### Ceiling, {what}: plain HTTP / upstream (the most any TLS client could gain here)\n\n| provider | h1 single | h1 8x8MiB | h2 single | h2 8x8MiB |\n|---|---|---|---|---|\n");
    for p in PROVIDERS {
        let theirs = Contender::Upstream(p).label();
        let ceilings: Vec<String> =
            SCENARIOS.iter().map(|(s, _, _)| format!("{:.2}", t(s, &plain) / t(s, &theirs))).collect();
        let _ = writeln!(md, "| {p} | {} |", ceilings.join(" | "));
    }
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
    if let (Some(curl), false) = (&curl, curl_rates.is_empty()) {
        let _ = writeln!(
            md,
            "\nOutside reference, h1 single: {} (its own process, body to /dev/null): {:.2} Gb/s median.",
            curl.version,
            median(&curl_rates)
        );
    }
    let s2n = Contender::Ours("s2n-tls").label();
    let awslc = Contender::Ours("rustls-aws-lc").label();
    let _ = writeln!(
        md,
        "\nOur s2n-tls / our rustls-aws-lc, {what}: h1 single {:.2}, h1 8x {:.2}.",
        t("h1 single", &s2n) / t("h1 single", &awslc),
        t("h1 8x8MiB", &s2n) / t("h1 8x8MiB", &awslc)
    );
    print!("{md}");
    report.markdown.push_str(&md);
}

/// The `curl` command line tool, when installed: an outside reference for single-stream h1.
struct Curl {
    version: String,
    ca_file: std::path::PathBuf,
}

impl Curl {
    fn find(ca_pem: &str) -> Option<Curl> {
        let out = Command::new("curl").arg("--version").output().ok()?;
        let first = String::from_utf8_lossy(&out.stdout).lines().next()?.to_owned();
        // "curl 7.88.1 (x86_64-pc-linux-gnu) libcurl/7.88.1 OpenSSL/3.0.19 ..." -> name, version, TLS library
        let words: Vec<&str> = first.split_whitespace().collect();
        let tls = words.iter().find(|w| w.contains("SSL/") || w.contains("TLS/") || w.contains("rustls")).copied();
        let version = format!("curl {} ({})", words.get(1).unwrap_or(&"?"), tls.unwrap_or("unknown TLS"));
        let ca_file = std::env::temp_dir().join(format!("smithy-tls-bench-ca-{}.pem", std::process::id()));
        std::fs::write(&ca_file, ca_pem).ok()?;
        Some(Curl { version, ca_file })
    }

    /// Seconds for one download of `total` bytes over HTTP/1.1, as curl reports them.
    fn download(&self, server: &ServerProcess, total: u64) -> Option<f64> {
        let out = Command::new("curl")
            .args(["-sS", "--http1.1", "-o", "/dev/null", "-w", "%{time_total} %{size_download}", "--cacert"])
            .arg(&self.ca_file)
            .arg(format!("https://localhost:{}/obj/{total}", server.h1.port()))
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut fields = text.split_whitespace();
        let secs: f64 = fields.next()?.parse().ok()?;
        let size: f64 = fields.next()?.parse().ok()?;
        (out.status.success() && size as u64 == total).then_some(secs)
    }
}

impl Drop for Curl {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca_file);
    }
}

/// Child-process mode: build the client, make one request, print the timings, exit.
fn cold_start_child(label: &str) {
    let contender = Contender::parse(label).unwrap_or_else(|| panic!("unknown contender {label}"));
    let ca = std::env::var("BENCH_CA").expect("BENCH_CA");
    let url = std::env::var("BENCH_URL").expect("BENCH_URL");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let gap = Duration::from_millis(env_number("BENCH_COLD_GAP_MS", 0));
    let started = Instant::now();
    let client = contender.build(&ca);
    let constructed = started.elapsed();
    // Other start-up work of the application (config loading, argument parsing…), simulated.
    std::thread::sleep(gap);
    let started = Instant::now();
    runtime.block_on(async {
        let mut sink = Vec::new();
        fetch(&client, &url, None, &mut sink, false).await;
    });
    let first = started.elapsed();
    println!("COLD construct_us={} first_request_us={}", constructed.as_micros(), first.as_micros());
}

/// Child-process mode: the 8-way download, then the peak RSS.
fn rss_child(label: &str) {
    let contender = Contender::parse(label).unwrap_or_else(|| panic!("unknown contender {label}"));
    let ca = std::env::var("BENCH_CA").expect("BENCH_CA");
    let base = std::env::var("BENCH_BASE").expect("BENCH_BASE");
    let total = env_number("BENCH_MIB", 1024) << 20;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let client = contender.build(&ca);
    runtime.block_on(download(&client, &base, total, 8, 8 << 20));
    println!("RSS peak_kib={}", peak_rss_kib().unwrap_or(0));
}

/// Child-process mode (`--idle LABEL`): BENCH_IDLE_CONNECTIONS pooled connections, one per
/// distinct host name (`h<i>.idle.test`, resolved to 127.0.0.1), each having carried one GET of
/// BENCH_IDLE_BYTES; prints how long opening them took and what each added: resident memory,
/// the same once glibc has returned what is free, and heap in use.
fn idle_child(label: &str) {
    let contender = Contender::parse(label).unwrap_or_else(|| panic!("unknown contender {label}"));
    let ca = std::env::var("BENCH_CA").expect("BENCH_CA");
    let port = env_number("BENCH_PORT", 0);
    let count = env_number("BENCH_IDLE_CONNECTIONS", 1000);
    let bytes = env_number("BENCH_IDLE_BYTES", 1024);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let client = contender.build_resolving(&ca, true);
    let mut sink = Vec::new();
    let (open, before, after) = runtime.block_on(async {
        // One connection first: TLS preparation, the pools and the allocator's start-up are
        // not what an idle connection costs.
        fetch(&client, &format!("https://h0.idle.test:{port}/obj/{bytes}"), None, &mut sink, false).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        // SAFETY: malloc_trim only returns free memory to the kernel; no allocation is touched.
        unsafe { libc::malloc_trim(0) };
        let before = (rss_kib().unwrap_or(0), heap_in_use());
        let started = Instant::now();
        for i in 1..=count {
            fetch(&client, &format!("https://h{i}.idle.test:{port}/obj/{bytes}"), None, &mut sink, false).await;
        }
        let open = started.elapsed();
        // Let every connection go back to its pool and settle there.
        tokio::time::sleep(Duration::from_millis(300)).await;
        (open, before, (rss_kib().unwrap_or(0), heap_in_use()))
    });
    // What the connections still hold: memory they gave back to the allocator but that glibc
    // has not returned to the kernel is counted in RSS above and not here.
    // SAFETY: malloc_trim only returns free memory to the kernel; no allocation is touched.
    unsafe { libc::malloc_trim(0) };
    let held = rss_kib().unwrap_or(0);
    let per_conn = |kib: u64| kib.saturating_sub(before.0) as f64 / count as f64;
    let heap_per_conn = match (before.1, after.1) {
        (Some(before), Some(after)) => after.saturating_sub(before) as f64 / 1024.0 / count as f64,
        _ => f64::NAN,
    };
    println!(
        "IDLE open_ms={:.1} kib_per_conn={:.2} held_kib_per_conn={:.2} heap_kib_per_conn={heap_per_conn:.3}",
        open.as_secs_f64() * 1e3,
        per_conn(after.0),
        per_conn(held)
    );
    drop(client);
}

/// Many connections kept open, as a process talking to many S3 bucket hosts keeps them: the
/// resident memory each idle pooled connection costs, and the time to open them, each client in
/// a fresh process of its own (the server in this one), rounds interleaved.
fn idle(server: &ServerProcess, report: &mut Report) {
    let count = env_number("BENCH_IDLE_CONNECTIONS", 1000);
    let rounds = env_number("BENCH_IDLE_ROUNDS", 3).max(1) as usize;
    let contenders = selected_ours_and_upstream();
    let mut md = format!(
        "\n## Idle pooled connections ({count} distinct host names → 127.0.0.1 through each client's DNS resolver override, one GET each, HTTP/1.1; each client in its own process; median (min–max) of {rounds} rounds, interleaved)\n\n| client | response carried | RSS per idle connection (KiB) | still held when glibc returns what is free (KiB) | heap in use per idle connection (KiB) | time to open them (ms) |\n|---|---|---|---|---|---|\n"
    );
    let mut per_conn: BTreeMap<(u64, String), Vec<f64>> = BTreeMap::new();
    let mut held: BTreeMap<(u64, String), Vec<f64>> = BTreeMap::new();
    let mut heap: BTreeMap<(u64, String), Vec<f64>> = BTreeMap::new();
    let sizes = [1024u64, 256 << 10];
    for bytes in sizes {
        let mut open: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for round in 0..rounds {
            for c in rotated(&contenders, round) {
                let out = child(
                    &["--idle", &c.label()],
                    &[
                        ("BENCH_CA", server.ca_pem.clone()),
                        ("BENCH_PORT", server.h1.port().to_string()),
                        ("BENCH_IDLE_CONNECTIONS", count.to_string()),
                        ("BENCH_IDLE_BYTES", bytes.to_string()),
                    ],
                );
                per_conn.entry((bytes, c.label())).or_default().push(field(&out, "kib_per_conn="));
                held.entry((bytes, c.label())).or_default().push(field(&out, "held_kib_per_conn="));
                heap.entry((bytes, c.label())).or_default().push(field(&out, "heap_kib_per_conn="));
                open.entry(c.label()).or_default().push(field(&out, "open_ms="));
            }
        }
        for c in &contenders {
            let key = (bytes, c.label());
            let (kib, kept, ms) = (&per_conn[&key], &held[&key], &open[&c.label()]);
            let _ = writeln!(
                md,
                "| {} | {} KiB | {} | {} | {} | {} |",
                c.label(),
                bytes >> 10,
                median_range(kib),
                median_range(kept),
                median_range(&heap[&key]),
                median_range(ms)
            );
        }
    }
    md.push_str("\n| provider | RSS per idle connection, ours / upstream (target ≤ 1.0): after 1 KiB | after 256 KiB | held, after 1 KiB | held, after 256 KiB | heap, after 1 KiB | heap, after 256 KiB |\n|---|---|---|---|---|---|---|\n");
    for p in PROVIDERS {
        let ratio_to = |table: &BTreeMap<(u64, String), Vec<f64>>, bytes: u64, digits: usize| {
            let get = |c: Contender| table.get(&(bytes, c.label())).map_or(f64::NAN, |v| median(v));
            format!("{:.digits$}", get(Contender::Ours(p)) / get(Contender::Upstream(p)))
        };
        let ratio = |table: &BTreeMap<(u64, String), Vec<f64>>, bytes: u64| ratio_to(table, bytes, 2);
        let _ = writeln!(
            md,
            "| {p} | {} | {} | {} | {} | {} | {} |",
            ratio(&per_conn, sizes[0]),
            ratio(&per_conn, sizes[1]),
            ratio(&held, sizes[0]),
            ratio(&held, sizes[1]),
            // Heap is exact to the byte: a third digit tells what RSS cannot.
            ratio_to(&heap, sizes[0], 3),
            ratio_to(&heap, sizes[1], 3)
        );
    }
    let smaller = |bytes: u64| {
        let per_conn = &per_conn;
        move |p: &'static str| {
            let get = |c: Contender| per_conn.get(&(bytes, c.label())).map_or(f64::NAN, |v| median(v));
            get(Contender::Upstream(p)) / get(Contender::Ours(p))
        }
    };
    report.target("idle RSS after 1 KiB", 1.0, smaller(sizes[0]));
    report.target("idle RSS after 256 KiB", 1.0, smaller(sizes[1]));
    print!("{md}");
    report.markdown.push_str(&md);
}

/// Child-process mode: one download from (or upload to) BENCH_BASE of BENCH_MIB with
/// `parallel` streams.
fn transfer_child(direction: Direction, label: &str, parallel: &str) {
    let contender = Contender::parse(label).unwrap_or_else(|| panic!("unknown contender {label}"));
    let ca = std::env::var("BENCH_CA").expect("BENCH_CA");
    let base = std::env::var("BENCH_BASE").expect("BENCH_BASE");
    let total = env_number("BENCH_MIB", 1024) << 20;
    let parallel: usize = parallel.parse().expect("parallel");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let client = contender.build(&ca);
    let elapsed = runtime.block_on(direction.transfer(&client, &base, total, parallel, 8 << 20));
    let tag = direction.name().to_uppercase();
    println!("{tag} secs={:.3} gbps={:.2}", elapsed.as_secs_f64(), gbps(total, elapsed));
}

/// Child-process mode: BENCH_CALLS small calls (POST 1 KiB → 1 KiB) to BENCH_URL,
/// `concurrency` at a time.
fn calls_child(label: &str, concurrency: &str) {
    let contender = Contender::parse(label).unwrap_or_else(|| panic!("unknown contender {label}"));
    let ca = std::env::var("BENCH_CA").expect("BENCH_CA");
    let url = std::env::var("BENCH_URL").expect("BENCH_URL");
    let calls = env_number("BENCH_CALLS", 2000) as usize;
    let concurrency: usize = concurrency.parse().expect("concurrency");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let client = contender.build(&ca);
    let body = Bytes::from(vec![b'x'; 1024]);
    let (elapsed, _) = runtime.block_on(run_calls(&client, &url, &body, calls, concurrency));
    println!("CALLS secs={:.3}", elapsed.as_secs_f64());
}

/// Child-process mode: BENCH_CONNECTIONS sequential requests to BENCH_URL, each on a new
/// connection (`connection: close`), after one to warm up: one client alone in a process, for
/// `perf` and `strace` (the `new-connections` section runs every client in one process).
fn connections_child(label: &str) {
    let contender = Contender::parse(label).unwrap_or_else(|| panic!("unknown contender {label}"));
    let ca = std::env::var("BENCH_CA").expect("BENCH_CA");
    let url = std::env::var("BENCH_URL").expect("BENCH_URL");
    let count = env_number("BENCH_CONNECTIONS", 200);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let client = contender.build(&ca);
    let mut sink = Vec::new();
    let (elapsed, cpu) = runtime.block_on(async {
        fetch(&client, &url, None, &mut sink, true).await;
        let usage = Usage::now();
        let started = Instant::now();
        for _ in 0..count {
            fetch(&client, &url, None, &mut sink, true).await;
        }
        (started.elapsed(), Usage::now().since(usage).cpu_seconds)
    });
    println!(
        "CONNECTIONS per_sec={:.0} cpu_us_per_request={:.0}",
        count as f64 / elapsed.as_secs_f64(),
        cpu * 1e6 / count as f64
    );
}

/// System calls of one child process run, as `strace -f -c` counts them.
struct SyscallCounts {
    /// read, recvfrom, readv, recvmsg.
    reads: f64,
    /// write, sendto, writev, sendmsg.
    writes: f64,
    /// epoll_wait, futex: the wake-ups.
    wakeups: f64,
    all: f64,
    /// (calls, name), most frequent first.
    by_name: Vec<(f64, String)>,
}

impl SyscallCounts {
    /// The four most frequent calls, each divided by `per`.
    fn top(&self, per: f64) -> String {
        let top: Vec<String> = self.by_name.iter().take(4).map(|(n, name)| format!("{name} {:.1}", n / per)).collect();
        top.join(", ")
    }
}

/// Runs this executable with `args` under `strace -f -c`; None when strace cannot be run.
fn strace(args: &[&str], envs: &[(&str, String)]) -> Option<SyscallCounts> {
    let exe = std::env::current_exe().expect("current exe");
    let out_file = std::env::temp_dir().join(format!("smithy-tls-strace-{}.txt", std::process::id()));
    let status = Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(&out_file)
        .arg(&exe)
        .args(args)
        .envs(envs.iter().map(|(k, v)| (*k, v)))
        .output()
        .ok()?;
    assert!(status.status.success(), "strace child {args:?} failed: {}", String::from_utf8_lossy(&status.stderr));
    let text = std::fs::read_to_string(&out_file).unwrap_or_default();
    let _ = std::fs::remove_file(&out_file);
    let mut counts = SyscallCounts { reads: 0.0, writes: 0.0, wakeups: 0.0, all: 0.0, by_name: Vec::new() };
    for line in text.lines() {
        // "% time  seconds  usecs/call  calls  [errors]  syscall"
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 5 || cols[0].parse::<f64>().is_err() {
            continue;
        }
        let calls: f64 = cols[3].parse().unwrap_or(0.0);
        let name = cols.last().copied().unwrap_or("");
        if name == "total" {
            continue;
        }
        counts.all += calls;
        counts.by_name.push((calls, name.to_owned()));
        match name {
            "read" | "recvfrom" | "readv" | "recvmsg" => counts.reads += calls,
            "write" | "sendto" | "writev" | "sendmsg" => counts.writes += calls,
            "epoll_wait" | "futex" => counts.wakeups += calls,
            _ => {}
        }
    }
    counts.by_name.sort_by(|a, b| b.0.total_cmp(&a.0));
    Some(counts)
}

/// System calls per MiB moved (downloads, uploads) and per small call, counted by strace in a
/// child process doing one run (its start-up, client construction and handshakes included).
fn syscalls(server: &ServerProcess, report: &mut Report) {
    let mib = env_number("BENCH_SYSCALL_MIB", 256);
    let calls = env_number("BENCH_SYSCALL_CALLS", 2000);
    let base = format!("https://localhost:{}", server.h1.port());
    let envs = [("BENCH_CA", server.ca_pem.clone()), ("BENCH_BASE", base), ("BENCH_MIB", mib.to_string())];
    let unavailable = |md: &mut String| md.push_str("\nstrace is not available: no system-call counts.\n");
    let mut md = String::new();
    let contenders = selected_ours_and_upstream();
    for (mode, moved) in [("--download", "received"), ("--upload", "sent")] {
        let _ = write!(
            md,
            "\n## System calls per MiB {moved} (strace -f -c, one {mib} MiB transfer over HTTP/1.1, whole client process)\n\n| client | streams | read-side / MiB | write-side / MiB | epoll_wait + futex / MiB | all / MiB | most frequent / MiB |\n|---|---|---|---|---|---|---|\n"
        );
        for c in &contenders {
            for parallel in ["1", "8"] {
                let Some(n) = strace(&[mode, &c.label(), parallel], &envs) else {
                    unavailable(&mut md);
                    print!("{md}");
                    report.markdown.push_str(&md);
                    return;
                };
                let per = mib as f64;
                let _ = writeln!(
                    md,
                    "| {} | {parallel} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
                    c.label(),
                    n.reads / per,
                    n.writes / per,
                    n.wakeups / per,
                    n.all / per,
                    n.top(per)
                );
            }
        }
    }
    let _ = write!(
        md,
        "\n## System calls per small call (strace -f -c, {calls} POSTs of 1 KiB → 1 KiB over kept-alive connections, whole client process, start-up and handshakes included)\n\n| client | scenario | read-side / call | write-side / call | epoll_wait + futex / call | all / call | most frequent / call |\n|---|---|---|---|---|---|---|\n"
    );
    for c in &contenders {
        for (scenario, port, concurrency) in server.call_scenarios() {
            let url = format!("https://localhost:{}/obj/1024", port.port());
            let envs = [("BENCH_CA", server.ca_pem.clone()), ("BENCH_URL", url), ("BENCH_CALLS", calls.to_string())];
            let Some(n) = strace(&["--calls", &c.label(), &concurrency.to_string()], &envs) else {
                unavailable(&mut md);
                break;
            };
            let per = calls as f64;
            let _ = writeln!(
                md,
                "| {} | {scenario} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
                c.label(),
                n.reads / per,
                n.writes / per,
                n.wakeups / per,
                n.all / per,
                n.top(per)
            );
        }
    }
    print!("{md}");
    report.markdown.push_str(&md);
}

fn cold_start(server: &ServerProcess, report: &mut Report) {
    for gap in [0, 30] {
        cold_start_with_gap(server, report, gap);
    }
}

fn cold_start_with_gap(server: &ServerProcess, report: &mut Report, gap_ms: u64) {
    let runs = env_number("BENCH_COLD_RUNS", 15);
    let url = format!("https://localhost:{}/obj/1024", server.h1.port());
    let contenders: Vec<Contender> = ours_and_upstream().collect();
    let mut samples: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
    println!("\n## Cold start: fresh process, build client, {gap_ms} ms of other start-up work, one request ({runs} runs each, interleaved)");
    for run in 0..runs {
        for c in rotated(&contenders, run as usize) {
            let started = Instant::now();
            let out = child(
                &["--cold-start", &c.label()],
                &[
                    ("BENCH_CA", server.ca_pem.clone()),
                    ("BENCH_URL", url.clone()),
                    ("BENCH_COLD_GAP_MS", gap_ms.to_string()),
                ],
            );
            let wall = started.elapsed().as_secs_f64() * 1e3;
            let construct = field(&out, "construct_us=") / 1e3;
            let first = field(&out, "first_request_us=") / 1e3;
            samples.entry(c.label()).or_default().push((construct, first, wall));
        }
    }
    let mut md = format!(
        "\n## Cold start, {gap_ms} ms between building the client and its first request (milliseconds; median, min–max)\n\n| client | construction | first request | process wall |\n|---|---|---|---|\n",
    );
    let stat = |v: Vec<f64>| median_range(&v);
    for c in &contenders {
        let s = &samples[&c.label()];
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            c.label(),
            stat(s.iter().map(|x| x.0).collect()),
            stat(s.iter().map(|x| x.1).collect()),
            stat(s.iter().map(|x| x.2).collect())
        );
    }
    md.push_str("\n| provider | ours / upstream (construction + first request, median) |\n|---|---|\n");
    let total = |label: String| median(&samples[&label].iter().map(|x| x.0 + x.1).collect::<Vec<_>>());
    for p in PROVIDERS {
        let _ =
            writeln!(md, "| {p} | {:.2} |", total(Contender::Ours(p).label()) / total(Contender::Upstream(p).label()));
    }
    // The target (ours ≤ 0.5× upstream) is set with other start-up work before the first request.
    if gap_ms == 30 {
        report.target("cold start, 30 ms gap", 2.0, |p| {
            total(Contender::Upstream(p).label()) / total(Contender::Ours(p).label())
        });
    }
    print!("{md}");
    report.markdown.push_str(&md);
}

async fn new_connections(server: &ServerProcess, report: &mut Report) {
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
    let clients: Vec<_> = contenders.iter().map(|c| (*c, c.build(&server.ca_pem))).collect();
    let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut cpu: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut resumed_counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut sink = Vec::new();
    for (_, client) in &clients {
        fetch(client, &url, None, &mut sink, true).await; // warm: first full handshake
    }
    for round in 0..rounds {
        for (c, client) in rotated(&clients, round) {
            let (_, resumed_before) = server.h1_handshakes();
            let usage = Usage::now();
            let started = Instant::now();
            for _ in 0..count {
                fetch(client, &url, None, &mut sink, true).await;
            }
            samples.entry(c.label()).or_default().push(count as f64 / started.elapsed().as_secs_f64());
            cpu.entry(c.label()).or_default().push(Usage::now().since(usage).cpu_seconds * 1e6 / count as f64);
            let (_, resumed_after) = server.h1_handshakes();
            *resumed_counts.entry(c.label()).or_default() += resumed_after - resumed_before;
        }
    }
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
    print!("{md}");
    report.markdown.push_str(&md);
}

/// What going through an HTTP CONNECT proxy (the test-support proxy, in this process) costs a
/// download: ours direct vs ours through the proxy, h1 single stream, per provider, interleaved.
async fn proxied(server: &ServerProcess, report: &mut Report) {
    use smithy_default_tls::ProxyConfig;
    use smithy_tls_test_support::{ConnectProxy, ProxyMode};

    let runs = env_number("BENCH_PROXY_RUNS", 5);
    let total = env_number("BENCH_PROXY_MIB", 256) << 20;
    let proxy = ConnectProxy::start(ProxyMode::Open).await;
    let base = format!("https://localhost:{}", server.h1.port());
    let client = |provider: &str, through: bool| {
        let provider = TlsProvider::ALL.iter().copied().find(|t| t.name() == provider).expect("provider compiled in");
        let builder = SmithyTlsClient::builder().provider(provider).extra_root_pem(&server.ca_pem).expect("CA");
        let builder = if through {
            builder.proxy(ProxyConfig::builder().all(proxy.url()).build().expect("proxy URL"))
        } else {
            builder
        };
        builder.build().expect("client").into_shared()
    };
    let clients: Vec<(String, bool, SharedHttpClient)> = PROVIDERS
        .iter()
        .flat_map(|p| [(p.to_string(), false, client(p, false)), (p.to_string(), true, client(p, true))])
        .collect();
    let mut rates: BTreeMap<(String, bool), Vec<f64>> = BTreeMap::new();
    for run in 0..=runs {
        for (provider, through, client) in &clients {
            let rate = gbps(total, download(client, &base, total, 1, total).await);
            if run > 0 {
                rates.entry((provider.clone(), *through)).or_default().push(rate);
            }
        }
    }
    let mut md = format!(
        "\n## Through an HTTP CONNECT proxy (test proxy in this process; h1, one stream, {} MiB, {runs} runs; Gb/s median (min–max))\n\n| provider | direct | through the proxy | proxied / direct |\n|---|---|---|---|\n",
        total >> 20
    );
    for p in PROVIDERS {
        let stat = |through: bool| {
            let v = &rates[&(p.to_string(), through)];
            (median(v), median_range(v))
        };
        let ((direct, direct_text), (proxied, proxied_text)) = (stat(false), stat(true));
        let _ = writeln!(md, "| {p} | {direct_text} | {proxied_text} | {:.2} |", proxied / direct);
    }
    print!("{md}");
    report.markdown.push_str(&md);
}

fn rss(server: &ServerProcess, report: &mut Report) {
    let base = format!("https://localhost:{}", server.h1.port());
    let mut md = String::from(
        "\n## Peak RSS during the 8-way download (fresh process, h1)\n\n| client | peak RSS (MiB) |\n|---|---|\n",
    );
    for c in ours_and_upstream() {
        let out = child(&["--rss", &c.label()], &[("BENCH_CA", server.ca_pem.clone()), ("BENCH_BASE", base.clone())]);
        let _ = writeln!(md, "| {} | {:.1} |", c.label(), field(&out, "peak_kib=") / 1024.0);
    }
    print!("{md}");
    report.markdown.push_str(&md);
}

async fn negotiated(server: &BenchServer, report: &mut Report) {
    let mut md = String::from("\n## What each client negotiated (seen by the server)\n\nThe first handshake of a new client per port; on the HTTP/1.1 port a second request on a new connection (`connection: close`) shows whether the client resumes its session.\n\n| client | port | version | cipher | group | ALPN | second connection resumed |\n|---|---|---|---|---|---|---|\n");
    for c in ours_and_upstream() {
        for (port_name, addr) in [("h1", server.h1), ("h2", server.h2)] {
            let client = c.build(&server.ca_pem);
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
    print!("{md}");
    report.markdown.push_str(&md);
}

/// A grouped bar chart, as SVG (plotters; text is left to the viewer's sans-serif font): one
/// group per x position, labelled under its centre, one bar per series in each group, an optional
/// reference line, a legend.
struct GroupedBars<'a> {
    size: (u32, u32),
    caption: &'a str,
    caption_font: u32,
    y_desc: &'a str,
    y_max: f64,
    /// Each group's label: one line, or two when the second is not empty.
    groups: Vec<(String, String)>,
    label_font: u32,
    /// Pixels between the axis and a group label's first line.
    label_gap: i32,
    /// Room under the axis for the group labels.
    label_area: u32,
    /// (name, colour, value per group; a value that is not finite draws no bar).
    series: Vec<(String, plotters::style::RGBColor, Vec<f64>)>,
    /// How much of a group's width its bars take, centred.
    fill: f64,
    /// A value drawn as a thin grey line across the chart, under the bars.
    reference: Option<f64>,
    legend: plotters::chart::SeriesLabelPosition,
}

/// The drawing area and coordinates a [`GroupedBars`] overlay draws in.
type BarChart<'a, 'b> = plotters::chart::ChartContext<
    'a,
    plotters::backend::SVGBackend<'b>,
    plotters::coord::cartesian::Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::types::RangedCoordf64,
    >,
>;

impl GroupedBars<'_> {
    /// The chart; `overlay` draws whatever else it shows (lines, ticks) in its coordinates, over
    /// the bars and under the legend.
    fn svg(self, overlay: impl FnOnce(&mut BarChart<'_, '_>)) -> String {
        use plotters::prelude::*;
        use plotters::style::text_anchor::{HPos, Pos, VPos};

        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, self.size).into_drawing_area();
            root.fill(&WHITE).expect("chart background");
            let mut chart = ChartBuilder::on(&root)
                .caption(self.caption, ("sans-serif", self.caption_font))
                .margin(12)
                .x_label_area_size(self.label_area)
                .y_label_area_size(48)
                .build_cartesian_2d(0.0..self.groups.len().max(1) as f64, 0.0..self.y_max)
                .expect("chart axes");
            chart
                .configure_mesh()
                .disable_x_mesh()
                .light_line_style(WHITE)
                .x_labels(0)
                .y_desc(self.y_desc)
                .draw()
                .expect("chart mesh");
            if let Some(value) = self.reference {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(0.0, value), (self.groups.len() as f64, value)],
                        RGBColor(0x99, 0x99, 0x99).stroke_width(1),
                    )))
                    .expect("reference line");
            }
            // Group names under each group's centre (plotters' own labels go at round numbers).
            let style = TextStyle::from(("sans-serif", self.label_font)).pos(Pos::new(HPos::Center, VPos::Top));
            let gap = self.label_gap;
            for (g, (first, second)) in self.groups.iter().enumerate() {
                let (x, y) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
                root.draw(&Text::new(first.clone(), (x, y + gap), style.clone())).expect("group label");
                if !second.is_empty() {
                    let below = y + gap + self.label_font as i32 + 3;
                    root.draw(&Text::new(second.clone(), (x, below), style.clone())).expect("group label");
                }
            }
            let bar = self.fill / self.series.len().max(1) as f64;
            let start = (1.0 - self.fill) / 2.0;
            for (i, (name, color, values)) in self.series.iter().enumerate() {
                let color = *color;
                let bars = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(g, value)| {
                    let x = g as f64 + start + bar * i as f64;
                    Rectangle::new([(x, 0.0), (x + bar * 0.9, *value)], color.filled())
                });
                chart
                    .draw_series(bars)
                    .expect("bars")
                    .label(name.as_str())
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
            }
            overlay(&mut chart);
            chart
                .configure_series_labels()
                .position(self.legend)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK.mix(0.3))
                .draw()
                .expect("legend");
            root.present().expect("chart");
        }
        svg
    }
}

/// The targets at a glance: one group per target the run measured, a bar per provider with the
/// ratio this run measured (above 1 = ours better), the target as a black tick across its group
/// and 1.0 (no difference) as a grey line.
fn targets_chart(report: &Report) -> String {
    use plotters::prelude::*;

    let colors = [RGBColor(0x1f, 0x77, 0xb4), RGBColor(0x2c, 0xa0, 0x2c), RGBColor(0xd6, 0x27, 0x28)];
    let groups = &report.targets;
    let top = groups
        .iter()
        .flat_map(|g| g.ratios.iter().copied().chain([g.goal]))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max)
        * 1.3; // headroom for the legend
    let chart = GroupedBars {
        size: (1400, 560),
        caption: "Targets: ratio in this run, above 1 = ours better (upstream / ours for time and memory); black tick = target",
        caption_font: 17,
        y_desc: "ratio",
        y_max: top,
        groups: groups
            .iter()
            .map(|g| {
                let (first, second) = split_label(g.label);
                (first.to_owned(), second.to_owned())
            })
            .collect(),
        label_font: 12,
        label_gap: 6,
        label_area: 44,
        series: PROVIDERS
            .iter()
            .enumerate()
            .map(|(k, p)| (p.to_string(), colors[k], groups.iter().map(|g| g.ratios[k]).collect()))
            .collect(),
        fill: 0.8,
        reference: Some(1.0),
        legend: SeriesLabelPosition::UpperRight,
    };
    chart.svg(|chart| {
        chart
            .draw_series(groups.iter().enumerate().map(|(i, group)| {
                PathElement::new(
                    vec![(i as f64 + 0.05, group.goal), (i as f64 + 0.95, group.goal)],
                    BLACK.stroke_width(2),
                )
            }))
            .expect("target ticks");
    })
}

/// A group label as at most two lines: split at the space nearest the middle.
fn split_label(label: &str) -> (&str, &str) {
    if label.len() <= 14 {
        return (label, "");
    }
    let middle = label.len() / 2;
    match label.char_indices().filter(|(_, c)| *c == ' ').min_by_key(|(i, _)| i.abs_diff(middle)) {
        Some((i, _)) => (&label[..i], &label[i + 1..]),
        None => (label, ""),
    }
}

/// A grouped bar chart of median throughput, downloads then uploads, one bar per client per
/// scenario.
fn chart(report: &Report) -> String {
    use plotters::prelude::*;

    let groups: Vec<(Direction, &str)> = [Direction::Download, Direction::Upload]
        .into_iter()
        .flat_map(|d| SCENARIOS.iter().map(move |(s, _, _)| (d, *s)))
        .collect();
    let colors = [
        RGBColor(0x1f, 0x77, 0xb4),
        RGBColor(0xae, 0xc7, 0xe8),
        RGBColor(0x2c, 0xa0, 0x2c),
        RGBColor(0x98, 0xdf, 0x8a),
        RGBColor(0xd6, 0x27, 0x28),
        RGBColor(0xff, 0x98, 0x96),
        RGBColor(0x7f, 0x7f, 0x7f),
    ];
    let max = report.throughput.values().copied().filter(|v| v.is_finite()).fold(1.0, f64::max) * 1.45; // headroom for the legend
    let series = throughput_contenders()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let label = c.label();
            let values = groups
                .iter()
                .map(|(direction, scenario)| {
                    report
                        .throughput
                        .get(&(*direction, scenario.to_string(), label.clone()))
                        .copied()
                        .unwrap_or(f64::NAN)
                })
                .collect();
            (label, colors[i % colors.len()], values)
        })
        .collect();
    GroupedBars {
        size: (1200, 520),
        caption: "Median throughput, Gb/s (higher is better; server in its own process)",
        caption_font: 18,
        y_desc: "Gb/s",
        y_max: max,
        groups: groups
            .iter()
            .map(|(direction, scenario)| (format!("{} {scenario}", direction.name()), String::new()))
            .collect(),
        label_font: 13,
        label_gap: 8,
        label_area: 36,
        series,
        fill: 0.9,
        reference: None,
        legend: SeriesLabelPosition::UpperLeft,
    }
    .svg(|_| {})
}

/// The benchmark server in a process of its own, as S3 or DynamoDB is to an SDK: this executable
/// started with `--serve`, which prints its ports and CA, answers questions about the
/// handshakes it saw on its standard input, and serves until that closes (when this is
/// dropped). Every section that compares clients measures against this server, so no client
/// shares its process, runtime or allocator with the server.
struct ServerProcess {
    child: std::process::Child,
    /// The question channel: the server's standard input and the lines it prints.
    control:
        std::sync::Mutex<(std::process::ChildStdin, std::io::Lines<std::io::BufReader<std::process::ChildStdout>>)>,
    h1: SocketAddr,
    h2: SocketAddr,
    plain: SocketAddr,
    ca_pem: String,
}

impl ServerProcess {
    fn start() -> ServerProcess {
        let exe = std::env::current_exe().expect("current exe");
        let mut child = Command::new(exe)
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the server process");
        let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        let first = lines.next().and_then(Result::ok).expect("the server process prints its ports");
        let addr = |key: &str| -> SocketAddr {
            first
                .split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .and_then(|a| a.parse().ok())
                .unwrap_or_else(|| panic!("no {key} in {first:?}"))
        };
        let (h1, h2, plain) = (addr("h1="), addr("h2="), addr("plain="));
        let mut ca_pem = String::new();
        for line in lines.by_ref() {
            let line = line.expect("server output");
            if line == "END" {
                break;
            }
            ca_pem.push_str(&line);
            ca_pem.push('\n');
        }
        let stdin = child.stdin.take().expect("stdin");
        ServerProcess { child, control: std::sync::Mutex::new((stdin, lines)), h1, h2, plain, ca_pem }
    }

    /// How many handshakes the server completed on its HTTP/1.1 port so far, and how many of
    /// them resumed a session.
    fn h1_handshakes(&self) -> (usize, usize) {
        use std::io::Write as _;
        let mut control = self.control.lock().expect("server control");
        let (stdin, lines) = &mut *control;
        writeln!(stdin, "HANDSHAKES H1").and_then(|()| stdin.flush()).expect("ask the server process");
        let answer = lines.next().and_then(Result::ok).expect("the server process answers");
        let number = |key: &str| field(&answer, key) as usize;
        (number("total="), number("resumed="))
    }

    /// The server process's CPU seconds (user + system) so far, from its own `getrusage`.
    fn cpu_seconds(&self) -> f64 {
        use std::io::Write as _;
        let mut control = self.control.lock().expect("server control");
        let (stdin, lines) = &mut *control;
        writeln!(stdin, "CPU").and_then(|()| stdin.flush()).expect("ask the server process");
        let answer = lines.next().and_then(Result::ok).expect("the server process answers");
        field(&answer, "seconds=")
    }

    /// The small-call scenarios: (name, port, calls in flight).
    fn call_scenarios(&self) -> [(&'static str, SocketAddr, usize); 4] {
        [("h1 c1", self.h1, 1), ("h1 c64", self.h1, 64), ("h2 c1", self.h2, 1), ("h2 c64", self.h2, 64)]
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Child-process mode (`--serve`): the benchmark server, until standard input closes. A line
/// `HANDSHAKES H1` on standard input is answered with the HTTP/1.1 port's handshake counts, a
/// line `CPU` with the CPU seconds the process has used.
fn serve_child() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let server = runtime.block_on(BenchServer::start());
    println!("SERVE h1={} h2={} plain={}", server.h1, server.h2, server.plain);
    println!("{}", server.ca_pem.trim_end());
    println!("END");
    for line in std::io::stdin().lines() {
        let Ok(line) = line else { break };
        match line.trim() {
            "HANDSHAKES H1" => {
                let seen = server.handshakes(server.h1);
                println!("HANDSHAKES total={} resumed={}", seen.len(), seen.iter().filter(|h| h.resumed).count());
            }
            "CPU" => println!("CPU seconds={:.6}", Usage::now().cpu_seconds),
            other => panic!("the server process does not know {other:?}"),
        }
    }
    drop(server);
}

/// `n` POSTs of `body` to `url` through `client`, `concurrency` at a time: how long they took,
/// and each call's latency in µs. Bounded in count, and in time (a stuck client fails the run).
async fn run_calls(
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

/// Small request/response calls, as DynamoDB, SQS, STS or Lambda invoke make them: POST 1 KiB,
/// 1 KiB back, over kept-alive connections, HTTP/1.1 and h2, one at a time and 64 at once, the
/// server in a process of its own. Clients interleaved; the first round warms up and is not
/// counted.
async fn small_calls(server: &ServerProcess, report: &mut Report) {
    let calls = env_number("BENCH_CALLS", 20_000) as usize;
    let rounds = env_number("BENCH_CALL_ROUNDS", 3).max(1) as usize;
    // Plain HTTP (no TLS) over HTTP/1.1 as the ceiling: what a call costs without TLS.
    let contenders = selected_throughput_contenders();
    let clients: Vec<(Contender, SharedHttpClient)> =
        contenders.iter().map(|c| (*c, c.build(&server.ca_pem))).collect();
    let body = Bytes::from(vec![b'x'; 1024]);
    let scenarios = server.call_scenarios();
    let mut rates: BTreeMap<(&str, String), Vec<f64>> = BTreeMap::new();
    let mut latencies: BTreeMap<(&str, String), Vec<f64>> = BTreeMap::new();
    let mut cpu_per_call: BTreeMap<(&str, String), Vec<(f64, f64)>> = BTreeMap::new();
    println!(
        "\n## Small calls: POST 1 KiB → 1 KiB, {calls} calls per round, {rounds} rounds, server in its own process"
    );
    for (scenario, addr, concurrency) in scenarios {
        if !env_selects("BENCH_SCENARIOS", scenario) {
            continue;
        }
        let url = format!("https://localhost:{}/obj/1024", addr.port());
        let plain_url = format!("http://{}/obj/1024", server.plain);
        for round in 0..=rounds {
            for (contender, client) in rotated(&clients, round) {
                let url = match contender {
                    Contender::Plain if addr == server.h2 => continue, // h1 only
                    Contender::Plain => &plain_url,
                    _ => &url,
                };
                let n = if round == 0 { (concurrency * 20).max(500) } else { calls };
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
                cpu_per_call.entry((scenario, contender.label())).or_default().push((client_us, server_us));
                rates.entry((scenario, contender.label())).or_default().push(rate);
                latencies.entry((scenario, contender.label())).or_default().extend(sample);
            }
        }
    }
    let mut md = format!(
        "\n## Small calls (POST 1 KiB → 1 KiB, keep-alive, server in its own process; {calls} calls per round, median (min–max) of {rounds} rounds, clients interleaved; latency quantiles over every counted call)\n\n| client | scenario | calls/s | p50 µs | p99 µs | p99.9 µs | client CPU per call µs | server CPU per call µs |\n|---|---|---|---|---|---|---|---|\n"
    );
    let cpu = &cpu_per_call;
    for ((scenario, label), samples) in &rates {
        let lat = &latencies[&(*scenario, label.clone())];
        let (low, high) = min_max(samples);
        let _ = writeln!(
            md,
            "| {label} | {scenario} | {:.0} ({low:.0}–{high:.0}) | {:.0} | {:.0} | {:.0} | {:.1} | {:.1} |",
            median(samples),
            quantile(lat, 0.5),
            quantile(lat, 0.99),
            quantile(lat, 0.999),
            median(&cpu[&(*scenario, label.clone())].iter().map(|c| c.0).collect::<Vec<_>>()),
            median(&cpu[&(*scenario, label.clone())].iter().map(|c| c.1).collect::<Vec<_>>())
        );
    }
    // Per scenario and client: the median round's calls/s, and p99 over every counted call.
    let rate = |scenario: &str, c: Contender| rates.get(&(scenario, c.label())).map_or(f64::NAN, |v| median(v));
    let p99 =
        |scenario: &str, c: Contender| latencies.get(&(scenario, c.label())).map_or(f64::NAN, |v| quantile(v, 0.99));
    md.push_str("\n| provider | calls/s ours/upstream, h1 c64 (target ≥ 1.15) | h2 c64 | p99 ours/upstream, h1 c1 (target ≤ 0.9) | h2 c1 |\n|---|---|---|---|---|\n");
    for p in PROVIDERS {
        let (ours, theirs) = (Contender::Ours(p), Contender::Upstream(p));
        let rates = |s: &str| format!("{:.2}", rate(s, ours) / rate(s, theirs));
        let p99s = |s: &str| format!("{:.2}", p99(s, ours) / p99(s, theirs));
        let _ =
            writeln!(md, "| {p} | {} | {} | {} | {} |", rates("h1 c64"), rates("h2 c64"), p99s("h1 c1"), p99s("h2 c1"));
    }
    let faster = |s: &'static str| move |p: &'static str| rate(s, Contender::Ours(p)) / rate(s, Contender::Upstream(p));
    let sooner = |s: &'static str| move |p: &'static str| p99(s, Contender::Upstream(p)) / p99(s, Contender::Ours(p));
    report.target("calls h1 64 at once", 1.15, faster("h1 c64"));
    report.target("calls h2 64 at once", 1.15, faster("h2 c64"));
    report.target("p99 h1 1 at a time", 1.0 / 0.9, sooner("h1 c1"));
    report.target("p99 h2 1 at a time", 1.0 / 0.9, sooner("h2 c1"));
    // The ceiling: plain HTTP / upstream over HTTP/1.1, the most removing TLS cost altogether
    // could gain.
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
    print!("{md}");
    report.markdown.push_str(&md);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if let [flag, label, parallel] = args.as_slice() {
        match flag.as_str() {
            "--download" => return transfer_child(Direction::Download, label, parallel),
            "--upload" => return transfer_child(Direction::Upload, label, parallel),
            "--calls" => return calls_child(label, parallel),
            _ => {}
        }
    }
    if args.first().map(String::as_str) == Some("--serve") {
        return serve_child();
    }
    if let [flag, label] = args.as_slice() {
        match flag.as_str() {
            "--cold-start" => return cold_start_child(label),
            "--rss" => return rss_child(label),
            "--idle" => return idle_child(label),
            "--connections" => return connections_child(label),
            _ => {}
        }
    }
    let wanted = |section: &str| args.is_empty() || args.iter().any(|a| a == section);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let server = ServerProcess::start();
    let mut report = Report { markdown: String::new(), throughput: BTreeMap::new(), targets: Vec::new() };
    let machine = machine_description();
    println!(
        "# smithy-tls benchmarks\n\nMachine: {machine}; client and server share it, each in a process of its own."
    );
    if wanted("negotiated") {
        // What was negotiated is read from the server's own records, so this one section runs
        // the server in this process; it measures nothing.
        let in_process = runtime.block_on(BenchServer::start());
        runtime.block_on(negotiated(&in_process, &mut report));
    }
    if wanted("throughput") {
        runtime.block_on(throughput(&server, Direction::Download, &mut report));
    }
    if wanted("uploads") {
        runtime.block_on(throughput(&server, Direction::Upload, &mut report));
    }
    if wanted("cold-start") {
        cold_start(&server, &mut report);
    }
    if wanted("new-connections") {
        runtime.block_on(new_connections(&server, &mut report));
    }
    if wanted("rss") {
        rss(&server, &mut report);
    }
    if wanted("proxy") {
        runtime.block_on(proxied(&server, &mut report));
    }
    if wanted("idle") {
        idle(&server, &mut report);
    }
    if wanted("small-calls") {
        runtime.block_on(small_calls(&server, &mut report));
    }
    if let Ok(label) = std::env::var("BENCH_PROFILE") {
        // Diagnostic aid, not part of the report: `perf record` one single-stream download.
        let base = format!("https://localhost:{}", server.h1.port());
        let exe = std::env::current_exe().expect("current exe");
        let status = Command::new("perf")
            .args(["record", "-g", "-o", "/tmp/smithy-tls-bench.perf.data", "--"])
            .arg(&exe)
            .args(["--download", &label, "1"])
            .env("BENCH_CA", &server.ca_pem)
            .env("BENCH_BASE", &base)
            .status();
        println!("perf record: {status:?} → /tmp/smithy-tls-bench.perf.data");
    }
    if wanted("syscalls") {
        syscalls(&server, &mut report);
    }
    let header = format!("# Benchmark results\n\nMachine: {machine}; client and server share it, each in a process of its own. Produced by `cargo bench -p smithy-tls-bench --bench compare`; see ../BENCHMARKS.md.\n");
    // Only a full run (every section, every client, every scenario) replaces the published
    // report in docs/benchmarks/; a partial run writes its report and chart to
    // target/benchmarks-partial/ instead. (BENCH_PROFILE adds a diagnostic to whatever
    // sections run.)
    let filtered = ["BENCH_ONLY", "BENCH_SCENARIOS"].iter().any(|v| std::env::var_os(v).is_some());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = if !args.is_empty() || filtered {
        root.join("target/benchmarks-partial")
    } else {
        root.join("docs/benchmarks")
    };
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
    std::fs::write(dir.join("results.md"), format!("{header}{}", report.markdown)).expect("write results.md");
    std::fs::write(dir.join("throughput.svg"), chart(&report)).expect("write chart");
    std::fs::write(dir.join("targets.svg"), targets_chart(&report)).expect("write targets chart");
    println!("\nwrote {}", dir.display());
}
