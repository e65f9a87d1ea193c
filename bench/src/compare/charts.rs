//! The report's SVG charts (plotters): median throughput per client and scenario, and the
//! targets at a glance.

use super::contenders::{throughput_contenders, PROVIDERS};
use super::report::{Direction, Report};
use super::throughput::SCENARIOS;

/// A grouped bar chart, as SVG (plotters; text is left to the viewer's sans-serif font): one
/// group per x position, labelled under its centre, one bar per series in each group, an optional
/// reference line, a legend.
struct GroupedBars<'a> {
    size: (u32, u32),
    caption: &'a str,
    caption_font: u32,
    y_desc: &'a str,
    y_max: f64,
    /// Each group's label: one line, or two when the second is not empty.
    groups: Vec<(String, String)>,
    label_font: u32,
    /// Pixels between the axis and a group label's first line.
    label_gap: i32,
    /// Room under the axis for the group labels.
    label_area: u32,
    /// (name, colour, value per group; a value that is not finite draws no bar).
    series: Vec<(String, plotters::style::RGBColor, Vec<f64>)>,
    /// How much of a group's width its bars take, centred.
    fill: f64,
    /// A value drawn as a thin grey line across the chart, under the bars.
    reference: Option<f64>,
    legend: plotters::chart::SeriesLabelPosition,
}

/// The drawing area and coordinates a [`GroupedBars`] overlay draws in.
type BarChart<'a, 'b> = plotters::chart::ChartContext<
    'a,
    plotters::backend::SVGBackend<'b>,
    plotters::coord::cartesian::Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::types::RangedCoordf64,
    >,
>;

impl GroupedBars<'_> {
    /// The chart; `overlay` draws whatever else it shows (lines, ticks) in its coordinates, over
    /// the bars and under the legend.
    fn svg(self, overlay: impl FnOnce(&mut BarChart<'_, '_>)) -> String {
        use plotters::prelude::*;
        use plotters::style::text_anchor::{HPos, Pos, VPos};

        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, self.size).into_drawing_area();
            root.fill(&WHITE).expect("chart background");
            let mut chart = ChartBuilder::on(&root)
                .caption(self.caption, ("sans-serif", self.caption_font))
                .margin(12)
                .x_label_area_size(self.label_area)
                .y_label_area_size(48)
                .build_cartesian_2d(0.0..self.groups.len().max(1) as f64, 0.0..self.y_max)
                .expect("chart axes");
            chart
                .configure_mesh()
                .disable_x_mesh()
                .light_line_style(WHITE)
                .x_labels(0)
                .y_desc(self.y_desc)
                .draw()
                .expect("chart mesh");
            if let Some(value) = self.reference {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(0.0, value), (self.groups.len() as f64, value)],
                        RGBColor(0x99, 0x99, 0x99).stroke_width(1),
                    )))
                    .expect("reference line");
            }
            // Group names under each group's centre (plotters' own labels go at round numbers).
            let style = TextStyle::from(("sans-serif", self.label_font)).pos(Pos::new(HPos::Center, VPos::Top));
            let gap = self.label_gap;
            for (g, (first, second)) in self.groups.iter().enumerate() {
                let (x, y) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
                root.draw(&Text::new(first.clone(), (x, y + gap), style.clone())).expect("group label");
                if !second.is_empty() {
                    let below = y + gap + self.label_font as i32 + 3;
                    root.draw(&Text::new(second.clone(), (x, below), style.clone())).expect("group label");
                }
            }
            let bar = self.fill / self.series.len().max(1) as f64;
            let start = (1.0 - self.fill) / 2.0;
            for (i, (name, color, values)) in self.series.iter().enumerate() {
                let color = *color;
                let bars = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(g, value)| {
                    let x = g as f64 + start + bar * i as f64;
                    Rectangle::new([(x, 0.0), (x + bar * 0.9, *value)], color.filled())
                });
                chart
                    .draw_series(bars)
                    .expect("bars")
                    .label(name.as_str())
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
            }
            overlay(&mut chart);
            chart
                .configure_series_labels()
                .position(self.legend)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK.mix(0.3))
                .draw()
                .expect("legend");
            root.present().expect("chart");
        }
        svg
    }
}

/// The targets at a glance: one group per target the run measured, a bar per provider with the
/// ratio this run measured (above 1 = ours better), the target as a black tick across its group
/// and 1.0 (no difference) as a grey line.
pub(crate) fn targets(report: &Report) -> String {
    use plotters::prelude::*;

    let colors = [RGBColor(0x1f, 0x77, 0xb4), RGBColor(0x2c, 0xa0, 0x2c), RGBColor(0xd6, 0x27, 0x28)];
    let groups = &report.targets;
    let top = groups
        .iter()
        .flat_map(|g| g.ratios.iter().copied().chain([g.goal]))
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max)
        * 1.3; // headroom for the legend
    let chart = GroupedBars {
        size: (1400, 560),
        caption: "Targets: ratio in this run, above 1 = ours better (upstream / ours for time and memory); black tick = target",
        caption_font: 17,
        y_desc: "ratio",
        y_max: top,
        groups: groups
            .iter()
            .map(|g| {
                let (first, second) = split_label(g.label);
                (first.to_owned(), second.to_owned())
            })
            .collect(),
        label_font: 12,
        label_gap: 6,
        label_area: 44,
        series: PROVIDERS
            .iter()
            .enumerate()
            .map(|(k, p)| (p.to_string(), colors[k], groups.iter().map(|g| g.ratios[k]).collect()))
            .collect(),
        fill: 0.8,
        reference: Some(1.0),
        legend: SeriesLabelPosition::UpperRight,
    };
    chart.svg(|chart| {
        chart
            .draw_series(groups.iter().enumerate().map(|(i, group)| {
                PathElement::new(
                    vec![(i as f64 + 0.05, group.goal), (i as f64 + 0.95, group.goal)],
                    BLACK.stroke_width(2),
                )
            }))
            .expect("target ticks");
    })
}

/// A group label as at most two lines: split at the space nearest the middle.
fn split_label(label: &str) -> (&str, &str) {
    if label.len() <= 14 {
        return (label, "");
    }
    let middle = label.len() / 2;
    match label.char_indices().filter(|(_, c)| *c == ' ').min_by_key(|(i, _)| i.abs_diff(middle)) {
        Some((i, _)) => (&label[..i], &label[i + 1..]),
        None => (label, ""),
    }
}

/// A grouped bar chart of median throughput, downloads then uploads, one bar per client per
/// scenario.
pub(crate) fn throughput(report: &Report) -> String {
    use plotters::prelude::*;

    let groups: Vec<(Direction, &str)> = [Direction::Download, Direction::Upload]
        .into_iter()
        .flat_map(|d| SCENARIOS.iter().map(move |s| (d, s.name)))
        .collect();
    let colors = [
        RGBColor(0x1f, 0x77, 0xb4),
        RGBColor(0xae, 0xc7, 0xe8),
        RGBColor(0x2c, 0xa0, 0x2c),
        RGBColor(0x98, 0xdf, 0x8a),
        RGBColor(0xd6, 0x27, 0x28),
        RGBColor(0xff, 0x98, 0x96),
        RGBColor(0x7f, 0x7f, 0x7f),
    ];
    let max = report.throughput.values().copied().filter(|v| v.is_finite()).fold(1.0, f64::max) * 1.45; // headroom for the legend
    let series = throughput_contenders()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let label = c.label();
            let values = groups
                .iter()
                .map(|(direction, scenario)| {
                    report
                        .throughput
                        .get(&(*direction, scenario.to_string(), label.clone()))
                        .copied()
                        .unwrap_or(f64::NAN)
                })
                .collect();
            (label, colors[i % colors.len()], values)
        })
        .collect();
    GroupedBars {
        size: (1200, 520),
        caption: "Median throughput, Gb/s (higher is better; server in its own process)",
        caption_font: 18,
        y_desc: "Gb/s",
        y_max: max,
        groups: groups
            .iter()
            .map(|(direction, scenario)| (format!("{} {scenario}", direction.name()), String::new()))
            .collect(),
        label_font: 13,
        label_gap: 8,
        label_area: 36,
        series,
        fill: 0.9,
        reference: None,
        legend: SeriesLabelPosition::UpperLeft,
    }
    .svg(|_| {})
}
