//! The `compare` benchmark: smithy-default-tls against the upstream aws-smithy-http-client, side
//! by side in one run (usage in `benches/compare.rs`, method in docs/BENCHMARKS.md).
//!
//! [`main`] either runs one child-process mode (`children`, the server in `server`) or the
//! sections the arguments name, each in a module of its own, against the server in a process of
//! its own, and then writes the `report`.

mod calls;
mod charts;
mod children;
mod cold_start;
mod connections;
mod contenders;
mod curl;
mod entropy;
mod everyday;
mod floor;
mod memory;
mod product;
mod proxy;
mod report;
mod servers;
mod syscalls;
mod throughput;

use std::process::Command;

use tokio::runtime::Runtime;

pub use contenders::BuildUpstream;

use crate::{machine_description, BenchServer};
use report::{Direction, Report};
use servers::{Server, ServerProcess};

/// The benchmark's entry point: this executable's arguments (cargo's `--bench` aside) name
/// either a child-process mode or the sections to run (none: all). `upstream` builds upstream's
/// client.
pub fn main(upstream: BuildUpstream) {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if children::run(&args, upstream) {
        return;
    }
    let wanted = |section: &str| args.is_empty() || args.iter().any(|a| a == section);
    let runtime = runtime();
    let server = ServerProcess::start(true);
    let mut report = Report::default();
    let machine = machine_description();
    println!(
        "# smithy-tls benchmarks\n\nMachine: {machine}; client and server share it, each in a process of its own."
    );
    run_sections(&runtime, &server, &mut report, wanted, upstream);
    // A run that names sections or filters clients or scenarios is partial. (BENCH_PROFILE adds
    // a diagnostic to whatever sections run.)
    let filtered = ["BENCH_ONLY", "BENCH_SCENARIOS", "BENCH_SERVERS"].iter().any(|v| std::env::var_os(v).is_some());
    let charts = [("throughput.svg", charts::throughput(&report)), ("targets.svg", charts::targets(&report))];
    report.write(&machine, args.is_empty() && !filtered, &charts);
}

/// The sections `wanted` selects, in their order.
fn run_sections(
    runtime: &Runtime,
    server: &ServerProcess,
    report: &mut Report,
    wanted: impl Fn(&str) -> bool,
    upstream: BuildUpstream,
) {
    if wanted("negotiated") {
        // What was negotiated is read from the server's own records, so this one section runs
        // the server in this process; it measures nothing.
        let in_process = runtime.block_on(BenchServer::start());
        runtime.block_on(connections::negotiated(&in_process, report, upstream));
    }
    if ["throughput", "uploads", "small-calls", "everyday"].iter().any(|s| wanted(s)) {
        against_every_server(runtime, server, report, &wanted, upstream);
    }
    if wanted("cold-start") {
        cold_start::cold_start(server, report);
    }
    if wanted("entropy") {
        entropy::entropy(server, report);
    }
    if wanted("new-connections") {
        runtime.block_on(connections::new_connections(server, report, upstream));
    }
    if wanted("mutual-tls") {
        runtime.block_on(connections::mutual_tls(server, report));
    }
    if wanted("rss") {
        memory::rss(server, report);
    }
    if wanted("proxy") {
        runtime.block_on(proxy::proxied(server, report));
    }
    if wanted("idle") {
        memory::idle(server, report);
    }
    if let Ok(label) = std::env::var("BENCH_PROFILE") {
        profile(server, &label);
    }
    if wanted("syscalls") {
        syscalls::syscalls(server, report);
    }
}

/// The sections measured against every server BENCH_SERVERS picks (throughput, uploads, small
/// calls, the everyday workload), one server at a time; the servers that cannot run go to the
/// report as skipped.
fn against_every_server(
    runtime: &Runtime,
    ours: &ServerProcess,
    report: &mut Report,
    wanted: &impl Fn(&str) -> bool,
    upstream: BuildUpstream,
) {
    let (servers, skipped) = servers::start_selected(ours);
    report.skipped = skipped;
    let mut everyday = Vec::new();
    for server in &servers {
        let server: &dyn Server = server.as_ref();
        if wanted("throughput") {
            runtime.block_on(throughput::throughput(server, Direction::Download, report, upstream));
        }
        if wanted("uploads") {
            runtime.block_on(throughput::throughput(server, Direction::Upload, report, upstream));
        }
        if wanted("small-calls") {
            runtime.block_on(calls::small_calls(server, report, upstream));
        }
        if wanted("everyday") {
            everyday.push(everyday::everyday(server, report));
        }
    }
    report.lead = everyday::summary(&everyday);
}

/// Diagnostic aid, not part of the report: `perf record` one single-stream download by the
/// client labelled `label`.
fn profile(server: &ServerProcess, label: &str) {
    let base = format!("https://localhost:{}", server.h1.port());
    let exe = std::env::current_exe().expect("current exe");
    let status = Command::new("perf")
        .args(["record", "-g", "-o", "/tmp/smithy-tls-bench.perf.data", "--"])
        .arg(&exe)
        .args(["--download", label, "1"])
        .env("BENCH_CA", &server.ca_pem)
        .env("BENCH_BASE", &base)
        .status();
    println!("perf record: {status:?} → /tmp/smithy-tls-bench.perf.data");
}

/// The tokio runtime every process of this benchmark runs its clients (or its server) on: two
/// worker threads.
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio")
}
