//! What each trust-roots choice costs on this machine (Linux): start-up (a fresh process builds
//! the client and sends one request) and every full handshake (sequential `connection: close`
//! requests, session resumption off), for `native`, `webpki` and `platform-verifier` roots with
//! each rustls provider, measured in the same run and reported as ratios to `native`.
//!
//! ```text
//! cargo bench -p smithy-tls-bench --bench roots
//! BENCH_ROOTS_RUNS=21 BENCH_ROOTS_HANDSHAKES=400 cargo bench -p smithy-tls-bench --bench roots
//! ```
//!
//! The server's certificate comes from a private CA. `native` and `platform-verifier` read it
//! from `SSL_CERT_FILE`, set to the system bundle with that CA appended, so they load a
//! realistic store (every root the system trusts); `webpki` uses the bundled roots plus the CA
//! added with `extra_root_pem`. macOS, iOS, Windows and Android cannot be measured here.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use smithy_default_tls::{SmithyTlsClient, TlsProvider, TrustRoots};
use smithy_tls_bench::{
    child, env_number, fetch, field, machine_description, median, median_range as stat, min_max, BenchServer,
};

const PROVIDERS: [TlsProvider; 2] = [TlsProvider::RustlsAwsLc, TlsProvider::RustlsRing];
const ROOTS: [TrustRoots; 3] = [TrustRoots::Native, TrustRoots::Webpki, TrustRoots::PlatformVerifier];
/// The system bundle `native` reads on this machine (Debian/Ubuntu layout).
const SYSTEM_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

fn by_name<T: Copy>(all: &[T], name: &str, label: impl Fn(T) -> &'static str) -> T {
    all.iter().copied().find(|t| label(*t) == name).unwrap_or_else(|| panic!("unknown {name}"))
}

fn client(provider: TlsProvider, roots: TrustRoots, ca_pem: &str, resumption: bool) -> SmithyTlsClient {
    let builder = SmithyTlsClient::builder().provider(provider).trust_roots(roots).session_resumption(resumption);
    let builder = if roots == TrustRoots::Webpki { builder.extra_root_pem(ca_pem).expect("CA") } else { builder };
    builder.build().expect("client")
}

/// Child process: build the client, one request; prints the two times.
fn cold_child(provider: &str, roots: &str) {
    let provider = by_name(TlsProvider::ALL, provider, TlsProvider::name);
    let roots = by_name(&ROOTS, roots, TrustRoots::name);
    let ca = std::env::var("BENCH_CA").expect("BENCH_CA");
    let url = std::env::var("BENCH_URL").expect("BENCH_URL");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let started = Instant::now();
    let client = client(provider, roots, &ca, true).into_shared();
    let constructed = started.elapsed();
    let started = Instant::now();
    runtime.block_on(async {
        let mut sink = Vec::new();
        fetch(&client, &url, None, &mut sink, false).await;
    });
    println!("COLD construct_us={} first_request_us={}", constructed.as_micros(), started.elapsed().as_micros());
}

/// Child process: `count` full handshakes in a row; prints the rate.
fn handshake_child(provider: &str, roots: &str) {
    let provider = by_name(TlsProvider::ALL, provider, TlsProvider::name);
    let roots = by_name(&ROOTS, roots, TrustRoots::name);
    let ca = std::env::var("BENCH_CA").expect("BENCH_CA");
    let url = std::env::var("BENCH_URL").expect("BENCH_URL");
    let count = env_number("BENCH_ROOTS_HANDSHAKES", 200);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let client = client(provider, roots, &ca, false).into_shared();
    runtime.block_on(async {
        let mut sink = Vec::new();
        fetch(&client, &url, None, &mut sink, true).await; // roots loaded, first handshake done
        let started = Instant::now();
        for _ in 0..count {
            fetch(&client, &url, None, &mut sink, true).await;
        }
        println!("RATE handshakes_per_s={:.1}", count as f64 / started.elapsed().as_secs_f64());
    });
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if let [flag, provider, roots] = args.as_slice() {
        match flag.as_str() {
            "--cold" => return cold_child(provider, roots),
            "--handshakes" => return handshake_child(provider, roots),
            _ => {}
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let server = runtime.block_on(BenchServer::start());
    let system = std::fs::read_to_string(SYSTEM_BUNDLE)
        .unwrap_or_else(|e| panic!("{SYSTEM_BUNDLE}: {e}: the native store of this machine is needed"));
    let system_roots = system.matches("-----BEGIN CERTIFICATE-----").count();
    let bundle = std::env::temp_dir().join(format!("smithy-tls-roots-bench-{}.pem", std::process::id()));
    std::fs::write(&bundle, format!("{system}\n{}", server.ca_pem)).expect("write the bundle");
    let url = format!("https://localhost:{}/obj/1024", server.h1.port());
    let envs = [
        ("BENCH_CA", server.ca_pem.clone()),
        ("BENCH_URL", url),
        ("SSL_CERT_FILE", bundle.display().to_string()),
        ("AWS_CA_BUNDLE", String::new()),
    ];
    let runs = env_number("BENCH_ROOTS_RUNS", 11);
    let handshakes = env_number("BENCH_ROOTS_HANDSHAKES", 200);
    println!(
        "# Trust roots on Linux\n\nMachine: {}; system store: {SYSTEM_BUNDLE} ({system_roots} roots).",
        machine_description()
    );

    let (cold, rates) = measure(&envs, runs);
    let _ = std::fs::remove_file(&bundle);
    print!("{}{}", startup_table(&cold, runs), handshake_table(&rates, handshakes));
}

/// (provider index, roots index) → one sample per round.
type Samples<T> = BTreeMap<(usize, usize), Vec<T>>;

/// Every combination once per round, interleaved: `runs` rounds of start-up (construction and
/// first request, ms) and 3 of full-handshake rates, each in a child process.
fn measure(envs: &[(&str, String)], runs: u64) -> (Samples<(f64, f64)>, Samples<f64>) {
    let combos: Vec<(TlsProvider, TrustRoots)> =
        PROVIDERS.iter().flat_map(|p| ROOTS.iter().map(move |r| (*p, *r))).collect();
    let mut cold: Samples<(f64, f64)> = BTreeMap::new();
    let mut rates: Samples<f64> = BTreeMap::new();
    for _ in 0..runs {
        for (i, (p, r)) in combos.iter().enumerate() {
            let key = (i / ROOTS.len(), i % ROOTS.len());
            let out = child(&["--cold", p.name(), r.name()], envs);
            cold.entry(key)
                .or_default()
                .push((field(&out, "construct_us=") / 1e3, field(&out, "first_request_us=") / 1e3));
        }
    }
    for _ in 0..3 {
        for (i, (p, r)) in combos.iter().enumerate() {
            let key = (i / ROOTS.len(), i % ROOTS.len());
            let out = child(&["--handshakes", p.name(), r.name()], envs);
            rates.entry(key).or_default().push(field(&out, "handshakes_per_s="));
        }
    }
    (cold, rates)
}

/// The start-up table: per provider and roots, construction and first request, and the total
/// against `native`'s.
fn startup_table(cold: &Samples<(f64, f64)>, runs: u64) -> String {
    let mut md = format!(
        "\n## Start-up: fresh process, build the client, one request ({runs} runs; ms, median (min–max))\n\n| provider | roots | construction | first request | total / native |\n|---|---|---|---|---|\n"
    );
    for (pi, p) in PROVIDERS.iter().enumerate() {
        let total = |ri: usize| median(&cold[&(pi, ri)].iter().map(|(c, f)| c + f).collect::<Vec<_>>());
        for (ri, r) in ROOTS.iter().enumerate() {
            let samples = &cold[&(pi, ri)];
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {:.2} |",
                p.name(),
                r.name(),
                stat(&samples.iter().map(|s| s.0).collect::<Vec<_>>()),
                stat(&samples.iter().map(|s| s.1).collect::<Vec<_>>()),
                total(ri) / total(0)
            );
        }
    }
    md
}

/// The full-handshake table: per provider and roots, the rate and its ratio to `native`'s.
fn handshake_table(rates: &Samples<f64>, handshakes: u64) -> String {
    let mut md = String::new();
    let _ = write!(
        md,
        "\n## Full handshakes: {handshakes} sequential `connection: close` requests, resumption off (3 rounds; requests/s, median (min–max))\n\n| provider | roots | handshakes/s | rate / native |\n|---|---|---|---|\n"
    );
    for (pi, p) in PROVIDERS.iter().enumerate() {
        for (ri, r) in ROOTS.iter().enumerate() {
            let samples = &rates[&(pi, ri)];
            let (low, high) = min_max(samples);
            let _ = writeln!(
                md,
                "| {} | {} | {:.0} ({low:.0}–{high:.0}) | {:.2} |",
                p.name(),
                r.name(),
                median(samples),
                median(samples) / median(&rates[&(pi, 0)])
            );
        }
    }
    md
}
