//! Benchmark (not a test): `apply` and `check` over a synthetic SDK tree of 400 generated-client
//! crates, each with a realistically sized `config.rs` (~2,000 lines), as the CLI runs them
//! (discover → plan → write). Prints wall-clock times; targets: apply < 2 s, check of an
//! up-to-date tree < 1 s on a 2-core machine.
//!
//! ```text
//! cargo bench -p smithy-tls-codegen --bench apply_400
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use smithy_tls_codegen::discover::discover;
use smithy_tls_codegen::plan::plan;
use smithy_tls_codegen::write::write_plan;
use smithy_tls_codegen::{compile, policy, presets};

const CRATES: usize = 400;
const RUNS: usize = 5;

fn write_crate(root: &Path, index: usize) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trees/dotted-tables");
    let dir = root.join(format!("aws-sdk-synthetic{index:03}"));
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    let manifest = std::fs::read_to_string(fixture.join("Cargo.toml"))
        .expect("fixture manifest")
        .replace("fixture-sdk-alpha", &format!("aws-sdk-synthetic{index:03}"));
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("write manifest");
    std::fs::write(dir.join("src/lib.rs"), std::fs::read_to_string(fixture.join("src/lib.rs")).expect("lib"))
        .expect("write lib");
    let mut config = std::fs::read_to_string(fixture.join("src/config.rs")).expect("config");
    // Pad to the size of a real generated config.rs: builder setters with docs.
    for i in 0..120 {
        config.push_str(&format!(
            "\nimpl Builder {{\n    /// Sets setting number {i}.\n    ///\n    /// Longer documentation for setting {i}, as generated code has.\n    \
             pub fn setting_{i}(mut self, value: impl ::std::convert::Into<::std::string::String>) -> Self {{\n        \
             self.set_setting_{i}(::std::option::Option::Some(value.into()));\n        self\n    }}\n\n    \
             /// Sets setting number {i}.\n    pub fn set_setting_{i}(&mut self, value: ::std::option::Option<::std::string::String>) -> &mut Self {{\n        \
             self.config.store_or_unset(value.map(Setting{i}));\n        self\n    }}\n}}\n"
        ));
    }
    std::fs::write(dir.join("src/config.rs"), config).expect("write config");
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let parsed = policy::parse_policy(presets::preset("platform-default").expect("preset")).expect("policy");
    let compiled = compile::compile(&parsed).expect("compiles");
    let lines_per_config = {
        let scratch = tempfile::tempdir().expect("tempdir");
        write_crate(scratch.path(), 0);
        std::fs::read_to_string(scratch.path().join("aws-sdk-synthetic000/src/config.rs"))
            .expect("read")
            .lines()
            .count()
    };
    println!("synthetic tree: {CRATES} crates, config.rs of {lines_per_config} lines each; {RUNS} runs");
    let mut apply_times = Vec::new();
    let mut check_times = Vec::new();
    for run in 1..=RUNS {
        let tree = tempfile::tempdir().expect("tempdir");
        for i in 0..CRATES {
            write_crate(tree.path(), i);
        }
        let started = Instant::now();
        let discovery = discover(tree.path(), &compiled.policy.runtime.package).expect("discover");
        let planned = plan(&compiled, &discovery).expect("plan");
        let planned_at = started.elapsed();
        let written = write_plan(&planned).expect("write");
        let apply = started.elapsed();
        assert_eq!(planned.crates.len(), CRATES);

        let started = Instant::now();
        let discovery = discover(tree.path(), &compiled.policy.runtime.package).expect("discover");
        let again = plan(&compiled, &discovery).expect("plan");
        let check = started.elapsed();
        assert!(again.is_up_to_date(), "check after apply must find nothing to change");
        println!(
            "Run:{run} apply_secs:{:.3} (plan {:.3}, write {:.3}) files_written:{written} check_secs:{:.3}",
            apply.as_secs_f64(),
            planned_at.as_secs_f64(),
            (apply - planned_at).as_secs_f64(),
            check.as_secs_f64()
        );
        apply_times.push(apply);
        check_times.push(check);
    }
    let apply = median(apply_times);
    let check = median(check_times);
    println!(
        "median apply {:.3} s (target < 2 s: {}), median check {:.3} s (target < 1 s: {})",
        apply.as_secs_f64(),
        if apply < Duration::from_secs(2) { "met" } else { "NOT met" },
        check.as_secs_f64(),
        if check < Duration::from_secs(1) { "met" } else { "NOT met" },
    );
}
