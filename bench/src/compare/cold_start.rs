//! Cold start (the `cold-start` section): a fresh process per client builds it, waits as an
//! application's other start-up work would, and makes one request.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use super::contenders::{every_provider, rotated, Contender, OURS_ONLY, PROVIDERS};
use super::report::Report;
use super::servers::{Server, ServerProcess};
use crate::{child_of, env_number, field, median, median_range};

/// The section: with no gap, then with 30 ms between building the client and its first request.
pub(crate) fn cold_start(server: &ServerProcess, report: &mut Report) {
    for gap in [0, 30] {
        cold_start_with_gap(server, report, gap);
    }
}

/// Every client, fresh processes interleaved, `gap_ms` between construction and the request.
fn cold_start_with_gap(server: &ServerProcess, report: &mut Report, gap_ms: u64) {
    let runs = env_number("BENCH_COLD_RUNS", 15);
    let contenders: Vec<Contender> = every_provider().collect();
    let mut samples: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
    println!("\n## Cold start: fresh process, build client, {gap_ms} ms of other start-up work, one request ({runs} runs each, interleaved)");
    let this = std::env::current_exe().expect("current exe");
    for run in 0..runs {
        for c in rotated(&contenders, run as usize) {
            let started = Instant::now();
            let (construct, first) = cold_sample(&this, *c, server, gap_ms, None);
            let wall = started.elapsed().as_secs_f64() * 1e3;
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
    md.push_str("\n| provider | / ours rustls-aws-lc | / upstream rustls-aws-lc |\n|---|---|---|\n");
    for p in OURS_ONLY {
        let mine = total(Contender::Ours(p).label());
        let (ours, upstream) = (Contender::Ours("rustls-aws-lc"), Contender::Upstream("rustls-aws-lc"));
        let _ = writeln!(md, "| {p} | {:.2} | {:.2} |", mine / total(ours.label()), mine / total(upstream.label()));
    }
    // The target (ours ≤ 0.5× upstream) is set with other start-up work before the first request.
    if gap_ms == 30 {
        report.target("cold start, 30 ms gap", 2.0, |p| {
            total(Contender::Upstream(p).label()) / total(Contender::Ours(p).label())
        });
    }
    report.publish(&md);
}

/// The variables that point OpenSSL-style libraries at the system trust store. cargo sets both
/// for every process it runs when they are unset (its TLS library's probe), so this benchmark,
/// run by cargo, inherits them where a deployed application usually has neither; and s2n-tls's
/// `s2n_init` reads the whole of `SSL_CERT_FILE` into its built-in default config.
pub(crate) const STORE_VARIABLES: [&str; 2] = ["SSL_CERT_FILE", "SSL_CERT_DIR"];

/// One fresh process of the benchmark executable `exe` (this one, or the same benchmark built
/// otherwise) that builds `contender`'s client, waits `gap_ms` and makes one request to `server`:
/// construction and first request, in milliseconds. The process runs without
/// [`STORE_VARIABLES`], or with `SSL_CERT_FILE` alone set to `cert_file`.
pub(crate) fn cold_sample(
    exe: &Path,
    contender: Contender,
    server: &dyn Server,
    gap_ms: u64,
    cert_file: Option<&str>,
) -> (f64, f64) {
    let mut envs = vec![
        ("BENCH_CA", server.ca_pem().to_owned()),
        ("BENCH_URL", format!("https://localhost:{}/obj/1024", server.h1().port())),
        ("BENCH_COLD_GAP_MS", gap_ms.to_string()),
    ];
    envs.extend(cert_file.map(|path| (STORE_VARIABLES[0], path.to_owned())));
    let out = child_of(exe, &["--cold-start", &contender.label()], &envs, &STORE_VARIABLES);
    (field(&out, "construct_us=") / 1e3, field(&out, "first_request_us=") / 1e3)
}
