//! Measurement (ignored by default; prints figures, asserts none): a clean release build of the
//! consumer application against the unmodified published crates and against the crates rewritten
//! with each preset. Reports build time and binary size.
//!
//! ```text
//! cargo test -p smithy-tls-e2e --test measure_builds -- --ignored --nocapture
//! ```

use std::time::Instant;

use smithy_tls_codegen::presets;
use smithy_tls_e2e::{build_consumer_release, prepare_variant_tree, scratch_root};

#[test]
#[ignore = "takes a clean release build per variant; run by hand for the figures"]
fn consumer_build_time_and_size_per_preset() {
    let mut variants: Vec<Option<&str>> = vec![None];
    variants.extend(presets::names().map(Some));
    let mut rows = Vec::new();
    for variant in variants {
        let name = variant.unwrap_or("unmodified");
        let tree = prepare_variant_tree(&scratch_root().join(format!("measure-{name}")), variant);
        let target = scratch_root().join(format!("measure-target-{name}"));
        let _ = std::fs::remove_dir_all(&target);
        let started = Instant::now();
        build_consumer_release(&tree, &target, &[]);
        let secs = started.elapsed().as_secs_f64();
        let size = std::fs::metadata(target.join("release/e2e-consumer")).expect("binary").len();
        println!("MEASURE variant={name} release_build_secs={secs:.0} binary_bytes={size}");
        rows.push((name.to_owned(), secs, size));
        let _ = std::fs::remove_dir_all(&target);
    }
    println!("\n| crates | clean release build (s) | consumer binary (MiB) |\n|---|---|---|");
    for (name, secs, size) in rows {
        println!("| {name} | {secs:.0} | {:.1} |", size as f64 / (1024.0 * 1024.0));
    }
}
