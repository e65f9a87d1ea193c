//! The single-client child-process modes: each builds one client in a fresh process, measures
//! one thing, prints it as `KEY name=value ...` and exits. The sections that need a process of
//! their own per client (cold start, RSS, idle connections, system calls) run them, and so can
//! `perf` or `strace` by hand.

use std::time::{Duration, Instant};

use bytes::Bytes;

use super::calls::run_calls;
use super::contenders::{BuildUpstream, Contender};
use super::report::Direction;
use super::runtime;
use super::servers::{serve_child, serve_named};
use super::throughput::{gbps, PART};
use crate::{download, env_number, fetch, heap_in_use, peak_rss_kib, quantile, rss_kib, Shape, Usage};

/// Runs the child-process mode `args` name, if they name one (`--serve`, or a flag, a client
/// label and for some a number); whether they did.
pub(crate) fn run(args: &[String], upstream: BuildUpstream) -> bool {
    match args {
        [flag, label, parallel] if flag == "--download" => {
            transfer_child(Direction::Download, label, parallel, upstream)
        }
        [flag, label, parallel] if flag == "--upload" => transfer_child(Direction::Upload, label, parallel, upstream),
        [flag, label, concurrency] if flag == "--calls" => calls_child(label, concurrency, upstream),
        [flag, mode] if flag == "--serve" => serve_child(mode != "default"),
        [flag, name] if flag == "--server" => serve_named(name),
        [flag, label] if flag == "--cold-start" => cold_start_child(label, upstream),
        [flag, label] if flag == "--rss" => rss_child(label, upstream),
        [flag, label] if flag == "--idle" => idle_child(label, upstream),
        [flag, label] if flag == "--connections" => connections_child(label, upstream),
        _ => return false,
    }
    true
}

/// Environment variable `name`, which the parent process sets; panics when it is missing.
fn var(name: &str) -> String {
    std::env::var(name).expect(name)
}

/// Child-process mode: build the client, make one request, print the timings, exit.
fn cold_start_child(label: &str, upstream: BuildUpstream) {
    let contender = Contender::parse(label);
    let ca = var("BENCH_CA");
    let url = var("BENCH_URL");
    let runtime = runtime();
    let gap = Duration::from_millis(env_number("BENCH_COLD_GAP_MS", 0));
    let started = Instant::now();
    let client = contender.build(&ca, upstream);
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
fn rss_child(label: &str, upstream: BuildUpstream) {
    let contender = Contender::parse(label);
    let ca = var("BENCH_CA");
    let base = var("BENCH_BASE");
    let total = env_number("BENCH_MIB", 1024) << 20;
    let runtime = runtime();
    let client = contender.build(&ca, upstream);
    runtime.block_on(download(&client, &base, total, Shape::Parts { parallel: 8, part: PART }));
    println!("RSS peak_kib={}", peak_rss_kib().unwrap_or(0));
}

/// Child-process mode (`--idle LABEL`): BENCH_IDLE_CONNECTIONS pooled connections, one per
/// distinct host name (`h<i>.idle.test`, resolved to 127.0.0.1), each having carried one GET of
/// BENCH_IDLE_BYTES; prints how long opening them took and what each added: resident memory,
/// the same once glibc has returned what is free, and heap in use.
fn idle_child(label: &str, upstream: BuildUpstream) {
    let contender = Contender::parse(label);
    let ca = var("BENCH_CA");
    let port = env_number("BENCH_PORT", 0);
    let count = env_number("BENCH_IDLE_CONNECTIONS", 1000);
    let bytes = env_number("BENCH_IDLE_BYTES", 1024);
    let runtime = runtime();
    let client = contender.build_resolving(&ca, true, upstream);
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
    // For a heap profiler: exit with every connection still open, so that what they hold is
    // reported as never freed.
    if std::env::var_os("BENCH_IDLE_EXIT_OPEN").is_some() {
        std::process::exit(0);
    }
    drop(client);
}

/// Child-process mode: one download from (or upload to) BENCH_BASE of BENCH_MIB with
/// `parallel` streams.
fn transfer_child(direction: Direction, label: &str, parallel: &str, upstream: BuildUpstream) {
    let contender = Contender::parse(label);
    let ca = var("BENCH_CA");
    let base = var("BENCH_BASE");
    let total = env_number("BENCH_MIB", 1024) << 20;
    let parallel: usize = parallel.parse().expect("parallel");
    let runtime = runtime();
    let client = contender.build(&ca, upstream);
    let shape = if parallel <= 1 { Shape::Whole } else { Shape::Parts { parallel, part: PART } };
    let elapsed = runtime.block_on(direction.transfer(&client, &base, total, shape));
    let tag = direction.name().to_uppercase();
    println!("{tag} secs={:.3} gbps={:.2}", elapsed.as_secs_f64(), gbps(total, elapsed));
}

/// Child-process mode: BENCH_CALLS small calls (POST 1 KiB → 1 KiB) to BENCH_URL,
/// `concurrency` at a time, after BENCH_CALL_WARMUP uncounted ones (default none, so that
/// `strace` counts start-up and handshakes in): calls/s, latency quantiles, client CPU per call.
fn calls_child(label: &str, concurrency: &str, upstream: BuildUpstream) {
    let contender = Contender::parse(label);
    let ca = var("BENCH_CA");
    let url = var("BENCH_URL");
    let calls = env_number("BENCH_CALLS", 2000) as usize;
    let warmup = env_number("BENCH_CALL_WARMUP", 0) as usize;
    let concurrency: usize = concurrency.parse().expect("concurrency");
    let runtime = runtime();
    let client = contender.build(&ca, upstream);
    let body = Bytes::from(vec![b'x'; 1024]);
    if warmup > 0 {
        runtime.block_on(run_calls(&client, &url, &body, warmup, concurrency));
    }
    let before = Usage::now();
    let (elapsed, latencies) = runtime.block_on(run_calls(&client, &url, &body, calls, concurrency));
    let cpu = Usage::now().since(before).cpu_seconds;
    println!(
        "CALLS secs={:.3} per_sec={:.1} p50_us={:.1} p99_us={:.1} cpu_us_per_call={:.2}",
        elapsed.as_secs_f64(),
        calls as f64 / elapsed.as_secs_f64(),
        quantile(&latencies, 0.5),
        quantile(&latencies, 0.99),
        cpu * 1e6 / calls as f64
    );
}

/// Child-process mode: BENCH_CONNECTIONS sequential requests to BENCH_URL, each on a new
/// connection (`connection: close`), after one to warm up: one client alone in a process, for
/// `perf` and `strace` (the `new-connections` section runs every client in one process).
fn connections_child(label: &str, upstream: BuildUpstream) {
    let contender = Contender::parse(label);
    let ca = var("BENCH_CA");
    let url = var("BENCH_URL");
    let count = env_number("BENCH_CONNECTIONS", 200);
    let runtime = runtime();
    let client = contender.build(&ca, upstream);
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
