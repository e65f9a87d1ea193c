//! What a run reports: the markdown every section adds, the figures the charts draw, and where
//! the files go (`docs/benchmarks/` after a full run, `target/benchmarks-partial/` otherwise).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::charts;
use super::contenders::PROVIDERS;
use super::throughput::Direction;

/// The run's results so far.
#[derive(Default)]
pub(crate) struct Report {
    markdown: String,
    /// (direction, scenario, contender label) → median Gb/s, for the chart.
    pub(crate) throughput: BTreeMap<(Direction, String, String), f64>,
    /// The targets chart's groups, in the order the sections measured them.
    pub(crate) targets: Vec<TargetGroup>,
}

/// One target of the list as the targets chart shows it: a ratio per provider from this
/// run, oriented so that above 1 is better for ours (lower-is-better figures are upstream / ours),
/// and the ratio the target asks for.
pub(crate) struct TargetGroup {
    pub(crate) label: &'static str,
    pub(crate) goal: f64,
    /// In [`PROVIDERS`]' order; NaN where this run did not measure it.
    pub(crate) ratios: [f64; 3],
}

impl Report {
    /// Adds a group to the targets chart: `ratio(provider)`, above 1 meaning ours is better.
    pub(crate) fn target(&mut self, label: &'static str, goal: f64, ratio: impl Fn(&'static str) -> f64) {
        self.targets.push(TargetGroup { label, goal, ratios: PROVIDERS.map(ratio) });
    }

    /// Prints a section's tables and keeps them for `results.md`.
    pub(crate) fn publish(&mut self, md: &str) {
        print!("{md}");
        self.markdown.push_str(md);
    }

    /// Writes `results.md` (headed by `machine`), `throughput.svg` and `targets.svg`: to
    /// `docs/benchmarks/` when the run was `full`, else to `target/benchmarks-partial/`.
    pub(crate) fn write(&self, machine: &str, full: bool) {
        let header = format!("# Benchmark results\n\nMachine: {machine}; client and server share it, each in a process of its own. Produced by `cargo bench -p smithy-tls-bench --bench compare`; see ../BENCHMARKS.md.\n");
        let dir = output_dir(full);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
        std::fs::write(dir.join("results.md"), format!("{header}{}", self.markdown)).expect("write results.md");
        std::fs::write(dir.join("throughput.svg"), charts::throughput(self)).expect("write chart");
        std::fs::write(dir.join("targets.svg"), charts::targets(self)).expect("write targets chart");
        println!("\nwrote {}", dir.display());
    }
}

/// Only a full run (every section, every client, every scenario) replaces the published report
/// in docs/benchmarks/; a partial run writes its report and charts to target/benchmarks-partial/
/// instead.
fn output_dir(full: bool) -> PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if full {
        root.join("docs/benchmarks")
    } else {
        root.join("target/benchmarks-partial")
    }
}
