//! What a run reports: the markdown every section adds, the figures the charts draw, and where
//! the files go (`docs/benchmarks/` after a full run, `target/benchmarks-partial/` otherwise).

use std::collections::BTreeMap;
use std::path::PathBuf;

use std::fmt::Write as _;

use super::contenders::PROVIDERS;
use super::product::{Product, LINUX, UPSTREAM_DEFAULT};
use super::servers::NAMES;
use crate::median_range;

/// The run's results so far.
#[derive(Default)]
pub(crate) struct Report {
    markdown: String,
    /// (direction, scenario, contender label) → median Gb/s, for the chart.
    pub(crate) throughput: BTreeMap<(Direction, String, String), f64>,
    /// The targets chart's groups, in the order the sections measured them.
    pub(crate) targets: Vec<TargetGroup>,
    /// (server, row such as `down h2 single`, per provider ours / upstream round by round), in
    /// the order the sections measured them.
    ratios: Vec<(String, String, [Vec<f64>; 3])>,
    /// The product tables' rows, in the order the sections measured them.
    products: Vec<ProductRow>,
    /// The servers that could not run, and why.
    pub(crate) skipped: Vec<String>,
    /// What the report opens with, before the product and ratio summaries (the everyday
    /// section's tables).
    pub(crate) lead: String,
}

/// One row of a server's product table: per product, ours with the preset's Linux provider /
/// upstream's default, round by round.
struct ProductRow {
    server: String,
    row: String,
    per_product: Vec<(Product, Vec<f64>)>,
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

    /// Adds one row to `server`'s table of ratios: `per_round(provider)` is ours / upstream,
    /// one per counted round (empty where the run did not measure it).
    pub(crate) fn record_ratios(&mut self, server: &str, row: &str, per_round: impl Fn(&'static str) -> Vec<f64>) {
        self.ratios.push((server.to_owned(), row.to_owned(), PROVIDERS.map(per_round)));
    }

    /// Adds one row to `server`'s product table: per product, ours with its provider /
    /// upstream's default, one per counted round.
    pub(crate) fn record_products(&mut self, server: &str, row: &str, per_round: Vec<(Product, Vec<f64>)>) {
        self.products.push(ProductRow { server: server.to_owned(), row: row.to_owned(), per_product: per_round });
    }

    /// The product tables: what each preset gives Linux against what upstream gives everyone,
    /// per server (median (min–max) over rounds); empty when no section measured any.
    pub(crate) fn product_summary(&self) -> String {
        let mut md = String::new();
        let Some(first) = self.products.first() else { return md };
        let head: Vec<String> = ["scenario".to_owned()]
            .into_iter()
            .chain(first.per_product.iter().map(|(p, _)| format!("{} ({})", p.preset, p.provider)))
            .collect();
        let _ = write!(
            md,
            "\n## What a Linux user gets: each preset's {LINUX} provider / upstream's default ({UPSTREAM_DEFAULT}), per server\n\nMedian (min–max) of the per-round ratios (clients interleaved within a round); above 1: ours faster. `8MiB one at a time` is the SDK's own loop of ranged GETs, `8x8MiB` a transfer manager's 8 in parallel.\n"
        );
        for server in NAMES.iter().copied().filter(|n| self.products.iter().any(|r| r.server == *n)) {
            let _ = write!(md, "\n### Server: {server}\n\n{}", table_head(&head));
            for ProductRow { row, per_product, .. } in self.products.iter().filter(|r| r.server == server) {
                let cells: Vec<String> = per_product.iter().map(|(_, v)| range_cell(v)).collect();
                let _ = writeln!(md, "| {row} | {} |", cells.join(" | "));
            }
        }
        md
    }

    /// The per-server tables of ratios (ours / upstream, median (min–max) over rounds), and
    /// the servers skipped; empty when no section measured any.
    pub(crate) fn ratio_summary(&self) -> String {
        let mut md = String::new();
        if !self.ratios.is_empty() || !self.skipped.is_empty() {
            md.push_str("\n## Ours / upstream per server (median (min–max) of the per-round ratios; calls/s for small calls; above 1: ours faster)\n");
        }
        for server in NAMES {
            let measured = |v: &[Vec<f64>; 3]| v.iter().any(|r| !r.is_empty());
            let rows: Vec<_> = self.ratios.iter().filter(|(s, _, v)| s == server && measured(v)).collect();
            if rows.is_empty() {
                continue;
            }
            let _ =
                write!(md, "\n### Server: {server}\n\n| scenario | {} |\n|---|---|---|---|\n", PROVIDERS.join(" | "));
            for (_, row, per_provider) in rows {
                let cells: Vec<String> = per_provider.iter().map(|v| range_cell(v)).collect();
                let _ = writeln!(md, "| {row} | {} |", cells.join(" | "));
            }
        }
        for why in &self.skipped {
            let _ = writeln!(md, "\n**Server skipped: {why}**");
        }
        md
    }

    /// Prints a section's tables and keeps them for `results.md`.
    pub(crate) fn publish(&mut self, md: &str) {
        print!("{md}");
        self.markdown.push_str(md);
    }

    /// Writes `results.md` (headed by `machine`) and the `charts` (file name, SVG): to
    /// `docs/benchmarks/` when the run was `full`, else to `target/benchmarks-partial/`.
    pub(crate) fn write(&self, machine: &str, full: bool, charts: &[(&str, String)]) {
        let header = format!("# Benchmark results\n\nMachine: {machine}; client and server share it, each in a process of its own. Produced by `cargo bench -p smithy-tls-bench --bench compare`; see ../BENCHMARKS.md.\n");
        let dir = output_dir(full);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
        let summary = format!("{}{}{}", self.lead, self.product_summary(), self.ratio_summary());
        print!("{summary}");
        std::fs::write(dir.join("results.md"), format!("{header}{summary}{}", self.markdown))
            .expect("write results.md");
        for (name, svg) in charts {
            std::fs::write(dir.join(name), svg).unwrap_or_else(|e| panic!("write {name}: {e}"));
        }
        println!("\nwrote {}", dir.display());
    }
}

/// The head of a markdown table: the row naming `columns`, then the separator row.
pub(crate) fn table_head<S: AsRef<str>>(columns: &[S]) -> String {
    let names: Vec<&str> = columns.iter().map(AsRef::as_ref).collect();
    format!("| {} |\n|{}\n", names.join(" | "), "---|".repeat(names.len()))
}

/// A table cell for some per-round figures: `median (min–max)`, or `-` where nothing was
/// measured.
pub(crate) fn range_cell(values: &[f64]) -> String {
    if values.is_empty() {
        "-".to_owned()
    } else {
        median_range(values)
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

/// Which way the bulk bytes go in a throughput run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Direction {
    /// GETs, as S3 GetObject (one object, or ranged parts in parallel).
    Download,
    /// PUTs, as S3 PutObject (one object) or UploadPart (parts in parallel).
    Upload,
}

impl Direction {
    /// "download" or "upload", as the tables say it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Direction::Download => "download",
            Direction::Upload => "upload",
        }
    }
}
