//! The `syscalls` section: system calls per MiB moved and per small call, counted by
//! `strace -f -c` around a child process doing one run.

use std::fmt::Write as _;
use std::process::Command;

use super::contenders::{selected_ours_and_upstream, Contender};
use super::report::Report;
use super::servers::{call_scenarios, ServerProcess};
use crate::env_number;

/// System calls of one child process run, as `strace -f -c` counts them.
struct SyscallCounts {
    /// read, recvfrom, readv, recvmsg.
    reads: f64,
    /// write, sendto, writev, sendmsg.
    writes: f64,
    /// epoll_wait, futex: the wake-ups.
    wakeups: f64,
    /// Every call.
    all: f64,
    /// (calls, name), most frequent first.
    by_name: Vec<(f64, String)>,
}

impl SyscallCounts {
    /// The counts in `strace -c`'s summary table.
    fn parse(text: &str) -> SyscallCounts {
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
        counts
    }

    /// The four most frequent calls, each divided by `per`.
    /// One markdown row: the `leading` cells, then the counts divided by `per` with `decimals`.
    fn row(&self, md: &mut String, leading: &str, per: f64, decimals: usize) {
        let [reads, writes, wakeups, all] = [self.reads, self.writes, self.wakeups, self.all].map(|n| n / per);
        let top = self.top(per);
        let _ = writeln!(md, "| {leading} | {reads:.decimals$} | {writes:.decimals$} | {wakeups:.decimals$} | {all:.decimals$} | {top} |");
    }

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
    Some(SyscallCounts::parse(&text))
}

/// System calls per MiB moved (downloads, uploads) and per small call, counted by strace in a
/// child process doing one run (its start-up, client construction and handshakes included).
pub(crate) fn syscalls(server: &ServerProcess, report: &mut Report) {
    let mut md = String::new();
    let contenders = selected_ours_and_upstream();
    if per_mib(&mut md, server, &contenders) {
        per_call(&mut md, server, &contenders);
    }
    report.publish(&md);
}

/// Says that strace could not be run.
fn unavailable(md: &mut String) {
    md.push_str("\nstrace is not available: no system-call counts.\n");
}

/// System calls per MiB of one BENCH_SYSCALL_MIB download and upload per client, one stream and
/// eight; false when strace cannot be run.
fn per_mib(md: &mut String, server: &ServerProcess, contenders: &[Contender]) -> bool {
    let mib = env_number("BENCH_SYSCALL_MIB", 256);
    let base = format!("https://localhost:{}", server.h1.port());
    let envs = [("BENCH_CA", server.ca_pem.clone()), ("BENCH_BASE", base), ("BENCH_MIB", mib.to_string())];
    for (mode, moved) in [("--download", "received"), ("--upload", "sent")] {
        let _ = write!(
            md,
            "\n## System calls per MiB {moved} (strace -f -c, one {mib} MiB transfer over HTTP/1.1, whole client process)\n\n| client | streams | read-side / MiB | write-side / MiB | epoll_wait + futex / MiB | all / MiB | most frequent / MiB |\n|---|---|---|---|---|---|---|\n"
        );
        for c in contenders {
            for parallel in ["1", "8"] {
                let Some(n) = strace(&[mode, &c.label(), parallel], &envs) else {
                    unavailable(md);
                    return false;
                };
                n.row(md, &format!("{} | {parallel}", c.label()), mib as f64, 1);
            }
        }
    }
    true
}

/// System calls per small call: BENCH_SYSCALL_CALLS calls per client in each small-call scenario.
fn per_call(md: &mut String, server: &ServerProcess, contenders: &[Contender]) {
    let calls = env_number("BENCH_SYSCALL_CALLS", 2000);
    let _ = write!(
        md,
        "\n## System calls per small call (strace -f -c, {calls} POSTs of 1 KiB → 1 KiB over kept-alive connections, whole client process, start-up and handshakes included)\n\n| client | scenario | read-side / call | write-side / call | epoll_wait + futex / call | all / call | most frequent / call |\n|---|---|---|---|---|---|---|\n"
    );
    for c in contenders {
        for (scenario, port, concurrency) in call_scenarios(server) {
            let url = format!("https://localhost:{}/obj/1024", port.port());
            let envs = [("BENCH_CA", server.ca_pem.clone()), ("BENCH_URL", url), ("BENCH_CALLS", calls.to_string())];
            let Some(n) = strace(&["--calls", &c.label(), &concurrency.to_string()], &envs) else {
                unavailable(md);
                break;
            };
            n.row(md, &format!("{} | {scenario}", c.label()), calls as f64, 2);
        }
    }
}
