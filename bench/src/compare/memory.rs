//! What clients hold in memory: peak RSS during a download (the `rss` section) and what each
//! idle pooled connection costs (`idle`), each client in a fresh process of its own.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::contenders::{ours_and_upstream, rotated, selected_every_provider, Contender, OURS_ONLY, PROVIDERS};
use super::report::Report;
use super::servers::{Server, ServerProcess};
use crate::{child, env_number, field, median, median_range};

/// The `rss` section: each client's peak resident memory during one 8-way download, in a fresh
/// process.
pub(crate) fn rss(server: &ServerProcess, report: &mut Report) {
    let base = format!("https://localhost:{}", server.h1.port());
    let mut md = String::from(
        "\n## Peak RSS during the 8-way download (fresh process, h1)\n\n| client | peak RSS (MiB) |\n|---|---|\n",
    );
    for c in ours_and_upstream() {
        let out = child(&["--rss", &c.label()], &[("BENCH_CA", server.ca_pem.clone()), ("BENCH_BASE", base.clone())]);
        let _ = writeln!(md, "| {} | {:.1} |", c.label(), field(&out, "peak_kib=") / 1024.0);
    }
    report.publish(&md);
}

/// The sizes of the response each idle connection carried before it went idle.
const SIZES: [u64; 2] = [1024, 256 << 10];

/// Per (bytes carried, contender label): one figure per round.
type PerRound = BTreeMap<(u64, String), Vec<f64>>;

/// What the idle section's child processes reported.
#[derive(Default)]
struct IdleSamples {
    /// RSS per idle connection, KiB.
    per_conn: PerRound,
    /// The same once glibc has returned what is free, KiB.
    held: PerRound,
    /// Heap in use per idle connection, KiB.
    heap: PerRound,
    /// Milliseconds to open them all.
    open: PerRound,
}

/// Many connections kept open, as a process talking to many S3 bucket hosts keeps them: the
/// resident memory each idle pooled connection costs, and the time to open them, each client in
/// a fresh process of its own (the server in this one), rounds interleaved.
pub(crate) fn idle(server: &ServerProcess, report: &mut Report) {
    let count = env_number("BENCH_IDLE_CONNECTIONS", 1000);
    let rounds = env_number("BENCH_IDLE_ROUNDS", 3).max(1) as usize;
    let contenders = selected_every_provider();
    let mut md = format!(
        "\n## Idle pooled connections ({count} distinct host names → 127.0.0.1 through each client's DNS resolver override, one GET each, HTTP/1.1; each client in its own process; median (min–max) of {rounds} rounds, interleaved)\n\n| client | response carried | RSS per idle connection (KiB) | still held when glibc returns what is free (KiB) | heap in use per idle connection (KiB) | time to open them (ms) |\n|---|---|---|---|---|---|\n"
    );
    let samples = measure_idle(server, &contenders, count, rounds);
    for bytes in SIZES {
        for c in &contenders {
            let key = (bytes, c.label());
            let (kib, kept, ms) = (&samples.per_conn[&key], &samples.held[&key], &samples.open[&key]);
            let _ = writeln!(
                md,
                "| {} | {} KiB | {} | {} | {} | {} |",
                c.label(),
                bytes >> 10,
                median_range(kib),
                median_range(kept),
                median_range(&samples.heap[&key]),
                median_range(ms)
            );
        }
    }
    idle_ratios(&mut md, &samples);
    let smaller = |bytes: u64| {
        let per_conn = &samples.per_conn;
        move |p: &'static str| {
            let get = |c: Contender| per_conn.get(&(bytes, c.label())).map_or(f64::NAN, |v| median(v));
            get(Contender::Upstream(p)) / get(Contender::Ours(p))
        }
    };
    report.target("idle RSS after 1 KiB", 1.0, smaller(SIZES[0]));
    report.target("idle RSS after 256 KiB", 1.0, smaller(SIZES[1]));
    report.publish(&md);
}

/// For each response size, `rounds` rounds of `count` idle connections per client (`--idle`).
fn measure_idle(server: &ServerProcess, contenders: &[Contender], count: u64, rounds: usize) -> IdleSamples {
    let mut samples = IdleSamples::default();
    for bytes in SIZES {
        for round in 0..rounds {
            for c in rotated(contenders, round) {
                let idle = idle_sample(server, *c, count, bytes);
                let key = (bytes, c.label());
                samples.per_conn.entry(key.clone()).or_default().push(idle.per_conn);
                samples.held.entry(key.clone()).or_default().push(idle.held);
                samples.heap.entry(key.clone()).or_default().push(idle.heap);
                samples.open.entry(key).or_default().push(idle.open_ms);
            }
        }
    }
    samples
}

/// What one `--idle` child reported: KiB per idle connection (resident, held once glibc has
/// returned what is free, heap in use) and the milliseconds to open them all.
pub(crate) struct IdleSample {
    /// Resident memory added per idle connection, KiB.
    pub(crate) per_conn: f64,
    /// Resident memory per connection once glibc has returned what is free (`malloc_trim`), KiB.
    pub(crate) held: f64,
    /// Heap in use per connection, KiB.
    pub(crate) heap: f64,
    /// Milliseconds to open all the connections.
    pub(crate) open_ms: f64,
}

/// `count` pooled connections of `client` to `server`'s HTTP/1.1 port, each after one GET of
/// `bytes`, in a fresh process (`--idle`).
pub(crate) fn idle_sample(server: &dyn Server, client: Contender, count: u64, bytes: u64) -> IdleSample {
    let out = child(
        &["--idle", &client.label()],
        &[
            ("BENCH_CA", server.ca_pem().to_owned()),
            ("BENCH_PORT", server.h1().port().to_string()),
            ("BENCH_IDLE_CONNECTIONS", count.to_string()),
            ("BENCH_IDLE_BYTES", bytes.to_string()),
        ],
    );
    IdleSample {
        per_conn: field(&out, "kib_per_conn="),
        held: field(&out, "held_kib_per_conn="),
        heap: field(&out, "heap_kib_per_conn="),
        open_ms: field(&out, "open_ms="),
    }
}

/// Ours / upstream per provider: RSS, held and heap per idle connection, after each size.
fn idle_ratios(md: &mut String, samples: &IdleSamples) {
    md.push_str("\n| provider | RSS per idle connection, ours / upstream (target ≤ 1.0): after 1 KiB | after 256 KiB | held, after 1 KiB | held, after 256 KiB | heap, after 1 KiB | heap, after 256 KiB |\n|---|---|---|---|---|---|---|\n");
    for p in PROVIDERS {
        let ratio_to = |table: &PerRound, bytes: u64, digits: usize| {
            let get = |c: Contender| table.get(&(bytes, c.label())).map_or(f64::NAN, |v| median(v));
            format!("{:.digits$}", get(Contender::Ours(p)) / get(Contender::Upstream(p)))
        };
        let ratio = |table: &PerRound, bytes: u64| ratio_to(table, bytes, 2);
        let _ = writeln!(
            md,
            "| {p} | {} | {} | {} | {} | {} | {} |",
            ratio(&samples.per_conn, SIZES[0]),
            ratio(&samples.per_conn, SIZES[1]),
            ratio(&samples.held, SIZES[0]),
            ratio(&samples.held, SIZES[1]),
            // Heap is exact to the byte: a third digit tells what RSS cannot.
            ratio_to(&samples.heap, SIZES[0], 3),
            ratio_to(&samples.heap, SIZES[1], 3)
        );
    }
    md.push_str("\n| provider | RSS per idle connection / ours rustls-aws-lc (/ upstream rustls-aws-lc): after 1 KiB | after 256 KiB |\n|---|---|---|\n");
    for p in OURS_ONLY {
        let get = |c: Contender, bytes: u64| samples.per_conn.get(&(bytes, c.label())).map_or(f64::NAN, |v| median(v));
        let cell = |bytes: u64| {
            let mine = get(Contender::Ours(p), bytes);
            let ours = get(Contender::Ours("rustls-aws-lc"), bytes);
            let upstream = get(Contender::Upstream("rustls-aws-lc"), bytes);
            format!("{:.2} ({:.2})", mine / ours, mine / upstream)
        };
        let _ = writeln!(md, "| {p} | {} | {} |", cell(SIZES[0]), cell(SIZES[1]));
    }
}
