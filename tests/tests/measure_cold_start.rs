//! Measurement (ignored by default; prints figures, asserts none): cold start of an SDK-shaped
//! flow — a fresh process loads aws-config from the environment, builds an STS client and makes
//! one call to a local HTTPS mock — with the unmodified published crates (upstream default
//! client) and with the crates rewritten by the platform-default preset. Release builds; runs
//! interleaved; medians and spread.
//!
//! ```text
//! cargo test -p smithy-tls-e2e --test measure_cold_start -- --ignored --nocapture
//! ```

use std::path::Path;

use smithy_tls_e2e::{build_consumer_release, prepare_variant_tree, scratch_root, MockRun};

fn field(text: &str, key: &str) -> f64 {
    text.split_whitespace().find_map(|w| w.strip_prefix(key)).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

fn stats(mut v: Vec<f64>) -> String {
    v.sort_by(|a, b| a.total_cmp(b));
    format!("{:.1} ({:.1}–{:.1})", v[v.len() / 2], v[0], v[v.len() - 1])
}

#[test]
#[ignore = "two release builds of the SDK crates; run by hand for the figures"]
fn sdk_shaped_cold_start_unmodified_vs_platform_default() {
    let runs: usize = std::env::var("COLD_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
    let mut binaries = Vec::new();
    for variant in ["unmodified", "platform-default"] {
        let preset = (variant != "unmodified").then_some(variant);
        let tree = prepare_variant_tree(&scratch_root().join(format!("cold-{variant}")), preset);
        let target = scratch_root().join("cold-target");
        build_consumer_release(&tree, &target, &["--bin", "cold"]);
        let binary = tree.root.join(format!("cold-{variant}"));
        std::fs::copy(target.join("release/cold"), &binary).expect("copy binary");
        binaries.push((variant, binary));
    }
    let scratch = scratch_root().join("cold-run");
    let served = MockRun::start("cold start CA", scratch.join("ca.pem"));
    let (mock, bundle) = (&served.mock, &served.bundle);
    if let Ok(out_file) = std::env::var("COLD_PERF") {
        // Diagnostic aid: one run of each binary under `perf record` (files <COLD_PERF>-<variant>).
        for (variant, binary) in &binaries {
            let mut cmd = smithy_tls_e2e::consumer_command(Path::new("perf"), mock, &scratch, bundle);
            cmd.args(["record", "-F", "20000", "-g", "-o"]).arg(format!("{out_file}-{variant}")).arg("--").arg(binary);
            let out = cmd.output().expect("perf");
            println!("perf {variant}: {} {}", String::from_utf8_lossy(&out.stdout).trim(), out.status);
        }
    }
    let mut samples: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); binaries.len()];
    for _ in 0..runs {
        for (i, (_, binary)) in binaries.iter().enumerate() {
            let out = smithy_tls_e2e::consumer_command(binary, mock, &scratch, bundle).output().expect("run");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{}: {}", binaries[i].0, String::from_utf8_lossy(&out.stderr));
            samples[i].push((
                field(&text, "load_us=") / 1e3,
                field(&text, "first_call_us=") / 1e3,
                field(&text, "total_us=") / 1e3,
            ));
        }
    }
    println!("\n| crates | aws-config load (ms) | first call (ms) | total (ms) |\n|---|---|---|---|");
    let mut totals = Vec::new();
    for ((variant, _), s) in binaries.iter().zip(&samples) {
        let total: Vec<f64> = s.iter().map(|x| x.2).collect();
        let mut sorted = total.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        totals.push(sorted[sorted.len() / 2]);
        println!(
            "| {variant} | {} | {} | {} |",
            stats(s.iter().map(|x| x.0).collect()),
            stats(s.iter().map(|x| x.1).collect()),
            stats(total)
        );
    }
    println!("\nplatform-default / unmodified (median total): {:.2}", totals[1] / totals[0]);
}
