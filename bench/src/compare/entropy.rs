//! aws-lc's start-up entropy (the `entropy` section): the first request in a fresh process, with
//! this benchmark as built and with the same benchmark built with `AWS_LC_SYS_NO_JITTER_ENTROPY=1`,
//! which leaves aws-lc's CPU-jitter entropy source out so that it seeds from the operating system
//! alone, as ring does. The switch is the application's (`[env]` in its `.cargo/config.toml`,
//! README): this section shows what it buys, against ring in the same run.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::cold_start::{cold_sample, STORE_VARIABLES};
use super::contenders::{rotated, Contender};
use super::report::Report;
use super::servers::ServerProcess;
use crate::{env_number, median, median_range};

/// The build-time switch this section measures, as aws-lc-sys reads it.
pub(crate) const NO_JITTER: (&str, &str) = ("AWS_LC_SYS_NO_JITTER_ENTROPY", "1");

/// The clients on aws-lc (each measured from both builds) and the one on ring they are held to.
const AWS_LC: [Contender; 3] =
    [Contender::Ours("rustls-aws-lc"), Contender::Ours("s2n-tls"), Contender::Upstream("rustls-aws-lc")];
const RING: Contender = Contender::Ours("rustls-ring");

/// Which build a sample came from.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Build {
    /// This benchmark, as cargo built it.
    AsBuilt,
    /// The same benchmark with [`NO_JITTER`] set for its build.
    NoJitter,
}

/// One kind of fresh process the section measures.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Sample<'a> {
    client: Contender,
    build: Build,
    /// `SSL_CERT_FILE` for the process (otherwise it runs with no store variable).
    cert_file: Option<&'a str>,
}

impl Sample<'_> {
    /// `client` from `build`, with no store variable.
    fn new(client: Contender, build: Build) -> Self {
        Sample { client, build, cert_file: None }
    }
}

/// The section: builds the no-jitter benchmark (once, in a target dir of its own), then fresh
/// processes of both, interleaved; prints the first request's time and its ratio to ring's.
pub(crate) fn entropy(server: &ServerProcess, report: &mut Report) {
    let Some(no_jitter) = no_jitter_binary() else {
        report.publish(
            "\n## Start-up entropy: SKIPPED (the benchmark did not build with AWS_LC_SYS_NO_JITTER_ENTROPY=1)\n",
        );
        return;
    };
    let runs = env_number("BENCH_COLD_RUNS", 15);
    let this = std::env::current_exe().expect("current exe");
    // The trust store file this process was given (by cargo or the machine), for the one sample
    // that shows what s2n-tls's `s2n_init` does with it.
    let cert_file = std::env::var(STORE_VARIABLES[0]).ok();
    let mut clients: Vec<Sample> =
        AWS_LC.iter().flat_map(|&c| [Sample::new(c, Build::AsBuilt), Sample::new(c, Build::NoJitter)]).collect();
    clients.push(Sample::new(RING, Build::AsBuilt));
    let s2n_with_store = cert_file
        .as_deref()
        .map(|path| Sample { cert_file: Some(path), ..Sample::new(Contender::Ours("s2n-tls"), Build::NoJitter) });
    clients.extend(s2n_with_store);
    println!("\n## Start-up entropy: fresh process, build client, one request ({runs} runs each, interleaved)");
    let mut first_ms: BTreeMap<Sample<'_>, Vec<f64>> = BTreeMap::new();
    for run in 0..runs {
        for &sample in rotated(&clients, run as usize) {
            let exe = if sample.build == Build::NoJitter { &no_jitter } else { &this };
            let (construct, first) = cold_sample(exe, sample.client, server, 0, sample.cert_file);
            first_ms.entry(sample).or_default().push(construct + first);
        }
    }
    let ring = median(&first_ms[&Sample::new(RING, Build::AsBuilt)]);
    let mut md = format!(
        "\n## Start-up entropy: construction + first request in a fresh process, aws-lc built with and without \
         {}={} (milliseconds; median, min–max; {runs} runs; {} unset, as a deployed application runs)\n\n\
         | client | as built | without jitter entropy | as built / {} | without / {} |\n|---|---|---|---|---|\n",
        NO_JITTER.0,
        NO_JITTER.1,
        STORE_VARIABLES.join(" and "),
        RING.label(),
        RING.label(),
    );
    for c in AWS_LC {
        let samples = |build| &first_ms[&Sample::new(c, build)];
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.2} | {:.2} |",
            c.label(),
            median_range(samples(Build::AsBuilt)),
            median_range(samples(Build::NoJitter)),
            median(samples(Build::AsBuilt)) / ring,
            median(samples(Build::NoJitter)) / ring,
        );
    }
    let _ = writeln!(
        md,
        "| {} | {} | | 1.00 | |",
        RING.label(),
        median_range(&first_ms[&Sample::new(RING, Build::AsBuilt)])
    );
    match s2n_with_store {
        Some(sample @ Sample { cert_file: Some(path), .. }) => {
            let _ = writeln!(
                md,
                "\nours s2n-tls without jitter entropy, with {}={path} (s2n_init loads that file into s2n-tls's \
                 default config): {} ms, {:.2}× {}",
                STORE_VARIABLES[0],
                median_range(&first_ms[&sample]),
                median(&first_ms[&sample]) / ring,
                RING.label(),
            );
        }
        _ => {
            let _ = writeln!(
                md,
                "\n(no {} in this run's environment: s2n-tls with a store file not measured)",
                STORE_VARIABLES[0]
            );
        }
    }
    report.publish(&md);
}

/// This benchmark built with [`NO_JITTER`], in `<target dir>/no-jitter-entropy`; `None` (said on
/// stderr) when the build fails.
fn no_jitter_binary() -> Option<PathBuf> {
    // This executable is <target dir>/release/deps/compare-<hash>.
    let this = std::env::current_exe().expect("current exe");
    let target_dir = this.ancestors().nth(3).expect("the benchmark runs from a cargo target dir");
    let target_dir = target_dir.join("no-jitter-entropy");
    eprintln!("entropy: building the benchmark with {}={} in {}", NO_JITTER.0, NO_JITTER.1, target_dir.display());
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args([
            "bench",
            "--no-run",
            "--locked",
            "-p",
            "smithy-tls-bench",
            "--bench",
            "compare",
            "--message-format=json",
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env(NO_JITTER.0, NO_JITTER.1)
        .output()
        .expect("run cargo");
    if !out.status.success() {
        eprintln!("entropy: the build failed:\n{}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    compare_executable(&String::from_utf8_lossy(&out.stdout), &target_dir)
}

/// The `compare` benchmark's executable in cargo's JSON messages.
fn compare_executable(messages: &str, target_dir: &Path) -> Option<PathBuf> {
    messages
        .lines()
        .filter(|line| line.contains("\"reason\":\"compiler-artifact\"") && line.contains("\"name\":\"compare\""))
        .find_map(|line| {
            let path = line.split("\"executable\":\"").nth(1)?.split('"').next()?;
            Some(PathBuf::from(path))
        })
        .filter(|path| path.starts_with(target_dir))
}
