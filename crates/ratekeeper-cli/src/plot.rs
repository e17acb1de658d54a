//! The picture of a simulation: one lane for the offered traffic and one per
//! limiter, time across, each showing how many units went through in the
//! trailing window (the shaded curve), the limiter's nominal quota for that
//! window (dashed), and every request as a tick underneath — admitted in the
//! lane's colour, refused in red.
//!
//! [`PlotData::new`] computes the numbers the picture shows, separately
//! from the drawing, so tests check the picture's content: on the boundary
//! attack the fixed window's curve peaks at twice its limit and the sliding
//! log's never passes it. [`write()`] draws them with plotters, as SVG or PNG
//! (by the file's extension).
//!
//! A load-driven lane (`bbr`, `system_guard`, `none`, a thread-grade `flow`,
//! against the simulated server) shows latency instead: the shaded curve is the longest latency
//! of the requests arriving in each column, on one scale shared by all
//! such lanes — without a limiter it climbs for as long as the overload
//! lasts, under BBR it stays at the service time — and the red ticks are
//! the requests it shed.
//!
//! Text is laid out and, in PNG, drawn with DejaVu Sans embedded in the
//! binary (the `dejavu` crate), registered with plotters' `ab_glyph` font
//! backend: no system font, no fontconfig, the same picture everywhere. SVG
//! names the family `sans-serif` and leaves the drawing to the viewer.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::durations::format_micros;
use crate::simulation::LaneResult;
use crate::summary::max_in_window;
use crate::trace::Arrival;

/// How many columns time is cut into: about one per pixel of the plot.
pub const BINS: usize = 1_000;

/// One lane of the plot.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneSeries {
    /// The lane's title (`offered` for the arrivals, else the limiter's
    /// label).
    pub label: String,
    /// For each column, the most units in any trailing window `(t − W, t]`
    /// ending in that column: the curve.
    pub in_window: Vec<u64>,
    /// Admitted requests (arrivals, for the offered lane) per column.
    pub admitted: Vec<u32>,
    /// Refused requests per column.
    pub refused: Vec<u32>,
    /// The nominal quota per window, if the limiter has one: the dashed line.
    pub nominal: Option<f64>,
    /// The most units in any window over the whole trace (the summary's
    /// number; equal to the curve's peak).
    pub max_in_window: u64,
    /// Load-driven lanes: the longest latency (microseconds) of the
    /// requests admitted in each column (0 where none): the curve drawn
    /// instead of `in_window`.
    pub latency: Option<Vec<i64>>,
    /// Load-driven lanes: the 99th-percentile and the longest latency.
    pub latency_p99_max: Option<(i64, i64)>,
}

/// Everything the plot draws.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotData {
    /// The trace's description.
    pub title: String,
    /// The trailing window, in microseconds.
    pub window_micros: i64,
    /// The time range across the plot, in microseconds: from a window before
    /// the first event to a window after the last, so that every curve rises
    /// from and falls back to 0.
    pub from_micros: i64,
    /// The end of the range.
    pub to_micros: i64,
    /// The offered traffic, then one lane per limiter.
    pub lanes: Vec<LaneSeries>,
}

/// Units per column of the events `(time, cost)` (sorted by time): the most
/// in any trailing window ending in the column, and how many events fall in
/// it.
fn columns(events: &[(i64, u64)], window: i64, from: i64, width: f64) -> (Vec<u64>, Vec<u32>) {
    let mut prefix = Vec::with_capacity(events.len() + 1);
    prefix.push(0u64);
    for &(_, c) in events {
        prefix.push(prefix.last().copied().unwrap_or(0).saturating_add(c));
    }
    // Units in (t − W, t].
    let in_window = |t: i64| {
        let upto = events.partition_point(|e| e.0 <= t);
        let before = events.partition_point(|e| e.0 <= t.saturating_sub(window));
        prefix[upto] - prefix[before]
    };
    let column = |t: i64| (((t - from) as f64 / width) as usize).min(BINS - 1);
    let mut peak: Vec<u64> = (0..BINS).map(|b| in_window(from + (b as f64 * width) as i64)).collect();
    let mut count = vec![0u32; BINS];
    for &(t, _) in events {
        let b = column(t);
        peak[b] = peak[b].max(in_window(t));
        count[b] = count[b].saturating_add(1);
    }
    (peak, count)
}

impl PlotData {
    /// The plot of a simulation of `arrivals` whose lanes gave `results`.
    pub fn new(title: String, arrivals: &[Arrival], results: &[LaneResult], window_micros: i64) -> Self {
        let window = window_micros.max(1);
        let firsts = arrivals.first().map(|a| a.at_micros).into_iter();
        let lasts = arrivals.last().map(|a| a.at_micros).into_iter();
        let first = firsts.chain(results.iter().filter_map(|r| r.admissions.first().map(|a| a.0))).min().unwrap_or(0);
        let last = lasts.chain(results.iter().filter_map(|r| r.admissions.last().map(|a| a.0))).max().unwrap_or(0);
        let from = first.saturating_sub(window).max(0).min(first);
        let to = last.saturating_add(window);
        let width = (to - from) as f64 / BINS as f64;
        let offered: Vec<(i64, u64)> = arrivals.iter().map(|a| (a.at_micros, a.cost)).collect();
        let (in_window, admitted) = columns(&offered, window, from, width);
        let mut lanes = vec![LaneSeries {
            label: "offered".to_owned(),
            in_window,
            admitted,
            refused: vec![0; BINS],
            nominal: None,
            max_in_window: max_in_window(&offered, window),
            latency: None,
            latency_p99_max: None,
        }];
        for r in results {
            let (in_window, admitted) = columns(&r.admissions, window, from, width);
            let refusals: Vec<(i64, u64)> = r.refusals.iter().map(|&t| (t, 1)).collect();
            let (_, refused) = columns(&refusals, window, from, width);
            let (latency, latency_p99_max) = if r.config.load_driven() {
                let mut longest = vec![0i64; BINS];
                for &(t, l) in &r.latencies {
                    let b = (((t - from) as f64 / width) as usize).min(BINS - 1);
                    longest[b] = longest[b].max(l);
                }
                let all: Vec<i64> = r.latencies.iter().map(|&(_, l)| l).collect();
                let p99_max = crate::summary::percentile(&all, 99.0).zip(all.iter().max().copied());
                (Some(longest), p99_max)
            } else {
                (None, None)
            };
            lanes.push(LaneSeries {
                label: r.config.label.clone(),
                in_window,
                admitted,
                refused,
                nominal: r.config.nominal_per(window),
                max_in_window: max_in_window(&r.admissions, window),
                latency,
                latency_p99_max,
            });
        }
        PlotData { title, window_micros: window, from_micros: from, to_micros: to, lanes }
    }
}

/// Tableau's ten colours less its red, which marks refusals.
const COLOURS: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
];
const REFUSED: RGBColor = RGBColor(214, 39, 40);
const OFFERED: RGBColor = RGBColor(90, 90, 90);

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The embedded font is valid; were it not, text would fail to lay
        // out and `write` would say so.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

const WIDTH: u32 = 1200;
const LANE_HEIGHT: u32 = 170;
const TITLE_HEIGHT: u32 = 70;

/// The title's height: a line more when latency lanes need explaining.
fn title_height(data: &PlotData) -> u32 {
    if data.lanes.iter().any(|l| l.latency.is_some()) {
        TITLE_HEIGHT + 18
    } else {
        TITLE_HEIGHT
    }
}

fn size(data: &PlotData) -> (u32, u32) {
    (WIDTH, title_height(data) + LANE_HEIGHT * data.lanes.len() as u32)
}

/// Draws `data` to `path`: SVG, or PNG when the name ends in `.png`.
pub fn write(data: &PlotData, path: &Path) -> Result<(), String> {
    register_font();
    let png = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if png {
        let root = BitMapBackend::new(path, size(data)).into_drawing_area();
        draw(&root, data)?;
        root.present().map_err(|e| format!("cannot write {}: {e}", path.display()))
    } else {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size(data)).into_drawing_area();
            draw(&root, data)?;
            root.present().map_err(|e| e.to_string())?;
        }
        std::fs::write(path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, data: &PlotData) -> Result<(), String> {
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing the plot: {e}");
    root.fill(&WHITE).map_err(fail)?;
    let (title, body) = root.split_vertically(title_height(data));
    let w = format_micros(data.window_micros);
    title
        .draw_text(&data.title, &("sans-serif", 20).into_font().style(FontStyle::Bold).color(&BLACK), (16, 10))
        .map_err(fail)?;
    title
        .draw_text(
            &format!(
                "shaded: units that went ahead in the trailing {w} (offered: that arrived); dashed: the limiter's quota per {w}; ticks: admitted (colour) and refused (red) requests"
            ),
            &("sans-serif", 13).into_font().color(&BLACK),
            (16, 42),
        )
        .map_err(fail)?;
    if data.lanes.iter().any(|l| l.latency.is_some()) {
        title
            .draw_text(
                "latency lanes (against the simulated server): shaded, the longest latency of the requests arriving then (one scale for all); red ticks: shed requests",
                &("sans-serif", 13).into_font().color(&BLACK),
                (16, 60),
            )
            .map_err(fail)?;
    }
    let x0 = data.from_micros as f64 / 1e6;
    let x1 = data.to_micros as f64 / 1e6;
    let top = data
        .lanes
        .iter()
        .filter(|l| l.latency.is_none())
        .flat_map(|l| l.in_window.iter().map(|&v| v as f64).chain(l.nominal))
        .fold(1.0f64, f64::max)
        * 1.12;
    // Latency lanes in milliseconds, on one scale.
    let latency_top =
        data.lanes.iter().filter_map(|l| l.latency.as_ref()).flatten().map(|&l| l as f64 / 1e3).fold(1.0f64, f64::max)
            * 1.12;
    let width = (data.to_micros - data.from_micros) as f64 / BINS as f64;
    let x_of = |b: usize| (data.from_micros as f64 + b as f64 * width) / 1e6;
    for (i, (lane, area)) in data.lanes.iter().zip(body.split_evenly((data.lanes.len(), 1))).enumerate() {
        let colour = if i == 0 { OFFERED } else { COLOURS[(i - 1) % COLOURS.len()] };
        let shed: u32 = lane.refused.iter().sum();
        let caption = match (lane.latency_p99_max, lane.nominal) {
            (Some((p99, max)), _) => format!(
                "{} — latency p99 {}, max {}; {shed} shed; at most {} admitted in any {w}",
                lane.label,
                format_micros(p99),
                format_micros(max),
                lane.max_in_window
            ),
            (None, Some(n)) => {
                format!("{} — at most {} in any {w} (quota {})", lane.label, lane.max_in_window, trim_number(n))
            }
            (None, None) => format!("{} — at most {} in any {w}", lane.label, lane.max_in_window),
        };
        let latency_ms: Option<Vec<u64>> =
            lane.latency.as_ref().map(|l| l.iter().map(|&v| (v as f64 / 1e3).ceil() as u64).collect());
        let top = if latency_ms.is_some() { latency_top } else { top };
        let rug = top * 0.16;
        let mut chart = ChartBuilder::on(&area)
            .caption(caption, ("sans-serif", 15))
            .margin_left(16)
            .margin_right(24)
            .margin_bottom(4)
            .x_label_area_size(22)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, -rug..top)
            .map_err(fail)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(RGBColor(235, 235, 235))
            .y_labels(5)
            .y_label_formatter(&|y| match (*y < 0.0, latency_ms.is_some()) {
                (true, _) => String::new(),
                (false, true) => format!("{} ms", trim_number(*y)),
                (false, false) => trim_number(*y),
            })
            .x_labels(12)
            .x_label_formatter(&|x| format!("{x:.2} s"))
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(fail)?;
        // Window edges (windows are aligned to time 0): where a fixed
        // window starts again.
        let first_edge = data.from_micros.div_euclid(data.window_micros) + 1;
        let last_edge = data.to_micros.div_euclid(data.window_micros);
        if last_edge - first_edge < 60 {
            let edges = (first_edge..=last_edge).map(|k| {
                let x = (k * data.window_micros) as f64 / 1e6;
                PathElement::new(vec![(x, 0.0), (x, top)], RGBColor(170, 170, 170).stroke_width(1))
            });
            chart.draw_series(edges).map_err(fail)?;
        }
        chart
            .draw_series(
                AreaSeries::new(steps(latency_ms.as_ref().unwrap_or(&lane.in_window), x_of), 0.0, colour.mix(0.25))
                    .border_style(colour.stroke_width(2)),
            )
            .map_err(fail)?;
        if let Some(n) = lane.nominal {
            chart
                .draw_series(DashedLineSeries::new(vec![(x0, n), (x1, n)], 8, 5, REFUSED.stroke_width(2)))
                .map_err(fail)?;
        }
        let tick = |counts: &[u32], lo: f64, hi: f64, c: RGBColor| {
            counts
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(move |(b, _)| PathElement::new(vec![(x_of(b), lo), (x_of(b), hi)], c.stroke_width(1)))
                .collect::<Vec<_>>()
        };
        chart.draw_series(tick(&lane.admitted, -rug * 0.45, -rug * 0.08, colour)).map_err(fail)?;
        chart.draw_series(tick(&lane.refused, -rug * 0.95, -rug * 0.55, REFUSED)).map_err(fail)?;
    }
    Ok(())
}

/// The curve as a staircase: a point where the value changes, not two per
/// column (a long flat stretch is one segment).
fn steps(values: &[u64], x_of: impl Fn(usize) -> f64) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    let mut previous = None;
    for (b, &v) in values.iter().enumerate() {
        if previous != Some(v) {
            if let Some(p) = previous {
                points.push((x_of(b), p as f64));
            }
            points.push((x_of(b), v as f64));
            previous = Some(v);
        }
    }
    if let Some(p) = previous {
        points.push((x_of(values.len()), p as f64));
    }
    points
}

/// 100 → "100", 12.5 → "12.5", 0.333 → "0.33".
fn trim_number(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}
