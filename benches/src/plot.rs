//! Inline SVG plots for `bench.html`, hand-rolled (no script, no network): linear and
//! logarithmic axes with ticks at readable values (`1 MiB, 4 MiB, 16 MiB`; `1, 8, 64, 1000`;
//! `1, 2, 5, 10`), one series per side (its own colour and marker; when a plot has several
//! variants, the first drawn solid with filled markers, the others dashed or dotted with hollow
//! markers, so a lone point of a variant is told apart too), and the legend to the right of
//! the plot area, never over the data.
//!
//! Every coordinate written is finite: a value an axis cannot show (zero or negative on a log
//! axis, NaN) is left out rather than drawn.

use std::fmt::Write as _;

/// How values map onto an axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Linear from `lo` to `hi`.
    Linear {
        /// The value at the start of the axis.
        lo: f64,
        /// The value at the end of the axis.
        hi: f64,
    },
    /// Logarithmic from `lo` to `hi` (both positive).
    Log {
        /// The value at the start of the axis.
        lo: f64,
        /// The value at the end of the axis.
        hi: f64,
    },
}

impl Scale {
    /// Where `v` lies along the axis: 0 at `lo`, 1 at `hi` (outside 0..=1 beyond them);
    /// `None` for a value the axis cannot show (not finite; not positive on a log axis).
    pub fn frac(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        let f = match *self {
            Scale::Linear { lo, hi } => (v - lo) / (hi - lo),
            Scale::Log { lo, hi } => {
                if v <= 0.0 {
                    return None;
                }
                (v / lo).ln() / (hi / lo).ln()
            }
        };
        f.is_finite().then_some(f)
    }
}

/// What an axis counts: how its ticks are chosen and labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes: ticks at powers of two (`1 MiB`, `16 MiB`, `4 GiB`).
    Bytes,
    /// A count of things (delegations): ticks at the values plotted when there are few
    /// (`1, 8, 64, 1000`), else at powers of ten.
    Count,
    /// Any other quantity (MB/s, MiB, s): ticks at 1, 2, 5 times a power of ten.
    Plain,
}

/// An axis: its scale and its ticks (value, label).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// How values map onto it.
    pub scale: Scale,
    /// Ticks inside the axis's range, ascending.
    pub ticks: Vec<(f64, String)>,
}

/// At most this many distinct values are each a tick of a [`Unit::Count`] axis.
const MAX_VALUE_TICKS: usize = 8;
/// A tick set is readable with this many ticks.
const GOOD_TICKS: std::ops::RangeInclusive<usize> = 3..=8;

fn finite_positive(values: &[f64]) -> Vec<f64> {
    values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect()
}

fn min_max(values: &[f64]) -> Option<(f64, f64)> {
    let lo = values.iter().copied().reduce(f64::min)?;
    let hi = values.iter().copied().reduce(f64::max)?;
    Some((lo, hi))
}

/// A byte count as a reader writes it: `512 B`, `64 KiB`, `1 MiB`, `1.5 GiB`.
pub fn bytes_label(v: f64) -> String {
    const UNITS: [(&str, f64); 4] = [
        ("GiB", 1073741824.0),
        ("MiB", 1048576.0),
        ("KiB", 1024.0),
        ("B", 1.0),
    ];
    for (name, size) in UNITS {
        if v >= size || name == "B" {
            let x = v / size;
            return if (x - x.round()).abs() < 1e-9 {
                format!("{} {name}", x.round())
            } else {
                format!("{} {name}", plain_label(x))
            };
        }
    }
    String::new()
}

/// A number with no more digits than it needs (at most three significant ones below 1000).
pub fn plain_label(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if v.abs() >= 1000.0 || (v - v.round()).abs() < 1e-9 * v.abs().max(1.0) {
        return format!("{}", v.round());
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Ticks on a log axis from `lo` to `hi`: powers of `base` times each of `mantissas`.
fn ticks_by(lo: f64, hi: f64, base: f64, mantissas: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    let mut e = (lo.ln() / base.ln()).floor() as i32 - 1;
    let top = (hi.ln() / base.ln()).ceil() as i32 + 1;
    while e <= top {
        for m in mantissas {
            let v = m * base.powi(e);
            // A hair of tolerance: a tick at the very end of the range is kept.
            if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                out.push(v);
            }
        }
        e += 1;
    }
    out
}

/// Log ticks between `lo` and `hi` for `unit`: the coarsest readable set (3 to 8 ticks), else
/// the fullest set of at most 8.
pub fn log_ticks(lo: f64, hi: f64, unit: Unit) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi >= lo) {
        return Vec::new();
    }
    let candidates: Vec<Vec<f64>> = match unit {
        Unit::Bytes => vec![
            ticks_by(lo, hi, 16.0, &[1.0]),
            ticks_by(lo, hi, 4.0, &[1.0]),
            ticks_by(lo, hi, 2.0, &[1.0]),
        ],
        Unit::Count | Unit::Plain => vec![
            ticks_by(lo, hi, 10.0, &[1.0]),
            ticks_by(lo, hi, 10.0, &[1.0, 2.0, 5.0]),
        ],
    };
    if let Some(t) = candidates.iter().find(|t| GOOD_TICKS.contains(&t.len())) {
        return t.clone();
    }
    candidates
        .into_iter()
        .filter(|t| t.len() <= *GOOD_TICKS.end())
        .max_by_key(Vec::len)
        .unwrap_or_default()
}

/// A step of 1, 2 or 5 times a power of ten, near `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let n = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * p
}

fn label(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Bytes => bytes_label(v),
        Unit::Count | Unit::Plain => plain_label(v),
    }
}

impl Axis {
    /// A log axis over `values` (those not positive or not finite are ignored), a little
    /// wider than they span so no point sits on the frame.
    pub fn log(values: &[f64], unit: Unit) -> Axis {
        let v = finite_positive(values);
        let (lo, hi) = min_max(&v).unwrap_or((1.0, 10.0));
        let pad = if unit == Unit::Bytes { 2.0 } else { 1.6 };
        let (lo, hi) = (lo / pad, hi * pad);
        let mut distinct = v.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup_by(|a, b| (*a - *b).abs() <= 1e-9 * b.abs());
        let ticks =
            if unit == Unit::Count && !distinct.is_empty() && distinct.len() <= MAX_VALUE_TICKS {
                distinct
            } else {
                log_ticks(lo, hi, unit)
            };
        Axis {
            scale: Scale::Log { lo, hi },
            ticks: ticks.into_iter().map(|t| (t, label(t, unit))).collect(),
        }
    }

    /// A linear axis from 0 to a round value at or above every one of `values`.
    pub fn linear_from_zero(values: &[f64], unit: Unit) -> Axis {
        let hi = values
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let hi = if hi > 0.0 { hi } else { 1.0 };
        let step = nice_step(hi / 5.0);
        let top = (hi / step).ceil().max(1.0) * step;
        let n = (top / step).round() as usize;
        let ticks = (0..=n)
            .map(|i| {
                let t = step * i as f64;
                (t, label(t, unit))
            })
            .collect();
        Axis {
            scale: Scale::Linear { lo: 0.0, hi: top },
            ticks,
        }
    }
}

/// A marker shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A filled circle.
    Circle,
    /// A filled square.
    Square,
    /// A filled triangle, point up.
    Triangle,
    /// A filled diamond.
    Diamond,
    /// An upside-down triangle.
    TriangleDown,
    /// No marker (lines only).
    None,
}

impl Marker {
    /// The SVG of this marker centred at (`x`, `y`): filled with `colour`, or `hollow`
    /// (white inside, outlined in `colour`).
    fn svg(self, x: f64, y: f64, colour: &str, hollow: bool) -> String {
        let r = 4.0;
        let fill = if hollow {
            format!("white' stroke='{colour}' stroke-width='1.5")
        } else {
            colour.to_string()
        };
        let colour = fill.as_str();
        match self {
            Marker::Circle => format!("<circle cx='{x:.1}' cy='{y:.1}' r='{r}' fill='{colour}'/>"),
            Marker::Square => format!(
                "<rect x='{:.1}' y='{:.1}' width='{}' height='{}' fill='{colour}'/>",
                x - r,
                y - r,
                2.0 * r,
                2.0 * r
            ),
            Marker::Triangle => format!(
                "<polygon points='{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}' fill='{colour}'/>",
                x,
                y - r - 1.0,
                x - r - 1.0,
                y + r,
                x + r + 1.0,
                y + r
            ),
            Marker::TriangleDown => format!(
                "<polygon points='{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}' fill='{colour}'/>",
                x,
                y + r + 1.0,
                x - r - 1.0,
                y - r,
                x + r + 1.0,
                y - r
            ),
            Marker::Diamond => format!(
                "<polygon points='{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}' fill='{colour}'/>",
                x,
                y - r - 1.0,
                x + r + 1.0,
                y,
                x,
                y + r + 1.0,
                x - r - 1.0,
                y
            ),
            Marker::None => String::new(),
        }
    }
}

/// One plotted point: where, the spread (min..max) drawn as a whisker, and a tooltip.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// x value.
    pub x: f64,
    /// y value (the median).
    pub y: f64,
    /// The spread of y (min, max), drawn when it differs from y.
    pub spread: Option<(f64, f64)>,
    /// The tooltip (`<title>`): which workload, what value.
    pub title: String,
}

/// One side: its name, colour, marker, and its lines (one per variant, in the plot's
/// variant order; a line with one point is just its marker).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's name (`ceiling`, `delegator`, `python-sdk`, ...).
    pub name: String,
    /// CSS colour.
    pub colour: String,
    /// Marker shape.
    pub marker: Marker,
    /// Per variant (index into [`Plot::variants`]), its points.
    pub lines: Vec<(usize, Vec<Point>)>,
}

/// A plot: title, axes, series.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// An id (`data-plot`), for tests and links.
    pub id: String,
    /// The title.
    pub title: String,
    /// The x axis and its label.
    pub x: (Axis, String),
    /// The y axis and its label.
    pub y: (Axis, String),
    /// Variant names (line styles); with one or none, the legend shows no line styles.
    pub variants: Vec<String>,
    /// The series.
    pub series: Vec<Series>,
}

/// SVG geometry: the whole picture and the plot area inside it.
pub mod layout {
    /// Width of the picture.
    pub const WIDTH: f64 = 780.0;
    /// Height of the picture.
    pub const HEIGHT: f64 = 340.0;
    /// The plot area's left edge (room for the y ticks and label).
    pub const LEFT: f64 = 74.0;
    /// The plot area's top edge (room for the title).
    pub const TOP: f64 = 34.0;
    /// The plot area's right edge; the legend is to the right of it.
    pub const RIGHT: f64 = 580.0;
    /// The plot area's bottom edge (room for the x ticks and label).
    pub const BOTTOM: f64 = 290.0;
    /// The legend's left edge.
    pub const LEGEND_X: f64 = 596.0;
    // The legend lies between the plot area and the picture's right edge.
    const _: () = assert!(LEGEND_X > RIGHT && LEGEND_X < WIDTH && LEFT < RIGHT && TOP < BOTTOM);
}

/// Horizontal distance between the points of neighbouring series at one x, px.
const DODGE: f64 = 5.0;

/// Dash patterns of the variants, in order.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\'', "&#39;")
}

impl Plot {
    fn px(&self, p: (f64, f64)) -> Option<(f64, f64)> {
        use layout::*;
        let fx = self.x.0.scale.frac(p.0)?;
        let fy = self.y.0.scale.frac(p.1)?;
        Some((LEFT + fx * (RIGHT - LEFT), BOTTOM - fy * (BOTTOM - TOP)))
    }

    /// The plot as one `<svg>` element (class `plot`, `data-plot` its id; the plot area is
    /// `rect.plot-area`, each series a `g.series[data-series]`, the legend `g.legend` with its
    /// box `rect.legend-box`).
    pub fn svg(&self) -> String {
        use layout::*;
        let mut o = format!(
            "<svg xmlns='http://www.w3.org/2000/svg' class='plot' data-plot='{}' width='{WIDTH}' height='{HEIGHT}' viewBox='0 0 {WIDTH} {HEIGHT}' style='font:12px sans-serif'>",
            esc(&self.id)
        );
        let _ = write!(
            o,
            "<text x='{:.1}' y='20' text-anchor='middle' font-weight='bold'>{}</text>",
            (LEFT + RIGHT) / 2.0,
            esc(&self.title)
        );
        let _ = write!(
            o,
            "<rect class='plot-area' x='{LEFT}' y='{TOP}' width='{}' height='{}' fill='none' stroke='#444'/>",
            RIGHT - LEFT,
            BOTTOM - TOP
        );
        // Ticks and grid lines.
        for (v, l) in &self.x.0.ticks {
            let Some(f) = self.x.0.scale.frac(*v) else {
                continue;
            };
            let x = LEFT + f * (RIGHT - LEFT);
            let _ = write!(
                o,
                "<line x1='{x:.1}' y1='{TOP}' x2='{x:.1}' y2='{BOTTOM}' stroke='#e4e4e4'/><line x1='{x:.1}' y1='{BOTTOM}' x2='{x:.1}' y2='{:.1}' stroke='#444'/><text class='xtick' x='{x:.1}' y='{:.1}' text-anchor='middle'>{}</text>",
                BOTTOM + 5.0,
                BOTTOM + 18.0,
                esc(l)
            );
        }
        for (v, l) in &self.y.0.ticks {
            let Some(f) = self.y.0.scale.frac(*v) else {
                continue;
            };
            let y = BOTTOM - f * (BOTTOM - TOP);
            let _ = write!(
                o,
                "<line x1='{LEFT}' y1='{y:.1}' x2='{RIGHT}' y2='{y:.1}' stroke='#e4e4e4'/><line x1='{:.1}' y1='{y:.1}' x2='{LEFT}' y2='{y:.1}' stroke='#444'/><text class='ytick' x='{:.1}' y='{:.1}' text-anchor='end'>{}</text>",
                LEFT - 5.0,
                LEFT - 8.0,
                y + 4.0,
                esc(l)
            );
        }
        let _ = write!(
            o,
            "<text x='{:.1}' y='{:.1}' text-anchor='middle'>{}</text><text x='16' y='{:.1}' transform='rotate(-90 16 {:.1})' text-anchor='middle'>{}</text>",
            (LEFT + RIGHT) / 2.0,
            HEIGHT - 12.0,
            esc(&self.x.1),
            (TOP + BOTTOM) / 2.0,
            (TOP + BOTTOM) / 2.0,
            esc(&self.y.1)
        );
        // The data, clipped to the plot area.
        let _ = write!(
            o,
            "<clipPath id='clip-{id}'><rect x='{LEFT}' y='{TOP}' width='{}' height='{}'/></clipPath><g clip-path='url(#clip-{id})'>",
            RIGHT - LEFT,
            BOTTOM - TOP,
            id = esc(&self.id)
        );
        // Series with markers are set a few pixels apart around each x, so that points and
        // whiskers of different sides at one x do not hide each other.
        let n = self.series.len() as f64;
        for (i, s) in self.series.iter().enumerate() {
            let dodge = if s.marker == Marker::None {
                0.0
            } else {
                (i as f64 - (n - 1.0) / 2.0) * DODGE
            };
            let px = |p: (f64, f64)| self.px(p).map(|(x, y)| (x + dodge, y));
            let _ = write!(o, "<g class='series' data-series='{}'>", esc(&s.name));
            for (variant, points) in &s.lines {
                let mut pts: Vec<&Point> = points.iter().collect();
                pts.sort_by(|a, b| a.x.total_cmp(&b.x));
                let path: Vec<String> = pts
                    .iter()
                    .filter_map(|p| px((p.x, p.y)))
                    .map(|(x, y)| format!("{x:.1},{y:.1}"))
                    .collect();
                if path.len() > 1 {
                    let dash = DASHES[variant % DASHES.len()];
                    let dash = if dash.is_empty() {
                        String::new()
                    } else {
                        format!(" stroke-dasharray='{dash}'")
                    };
                    let _ = write!(
                        o,
                        "<polyline fill='none' stroke='{}' stroke-width='2'{dash} points='{}'/>",
                        s.colour,
                        path.join(" ")
                    );
                }
                if s.marker == Marker::None {
                    continue;
                }
                for p in pts {
                    let Some((x, y)) = px((p.x, p.y)) else {
                        continue;
                    };
                    if let Some((lo, hi)) = p.spread
                        && (lo < p.y || hi > p.y)
                        && let (Some((_, ylo)), Some((_, yhi))) = (px((p.x, lo)), px((p.x, hi)))
                    {
                        let _ = write!(
                            o,
                            "<line x1='{x:.1}' y1='{ylo:.1}' x2='{x:.1}' y2='{yhi:.1}' stroke='{}' stroke-width='1.5'/>",
                            s.colour
                        );
                    }
                    let _ = write!(
                        o,
                        "<g class='point'><title>{}</title>{}</g>",
                        esc(&p.title),
                        s.marker.svg(x, y, &s.colour, *variant > 0)
                    );
                }
            }
            o.push_str("</g>");
        }
        o.push_str("</g>");
        o.push_str(&self.legend());
        o.push_str("</svg>");
        o
    }

    /// The legend, right of the plot area: one entry per series (line and marker in its
    /// colour), then the line styles of the variants when there are several.
    fn legend(&self) -> String {
        use layout::*;
        let row = 18.0;
        let mut o = String::from("<g class='legend'>");
        let mut y = TOP + 14.0;
        let mut body = String::new();
        for s in &self.series {
            let _ = write!(
                body,
                "<line x1='{:.1}' y1='{:.1}' x2='{:.1}' y2='{:.1}' stroke='{}' stroke-width='2'/>{}<text x='{:.1}' y='{:.1}'>{}</text>",
                LEGEND_X + 8.0,
                y - 4.0,
                LEGEND_X + 32.0,
                y - 4.0,
                s.colour,
                s.marker.svg(LEGEND_X + 20.0, y - 4.0, &s.colour, false),
                LEGEND_X + 40.0,
                y,
                esc(&s.name)
            );
            y += row;
        }
        if self.variants.len() > 1 {
            y += 4.0;
            for (i, v) in self.variants.iter().enumerate() {
                let dash = DASHES[i % DASHES.len()];
                let _ = write!(
                    body,
                    "<line x1='{:.1}' y1='{:.1}' x2='{:.1}' y2='{:.1}' stroke='#555' stroke-width='2'{}/>{}<text x='{:.1}' y='{:.1}'>{}</text>",
                    LEGEND_X + 8.0,
                    y - 4.0,
                    LEGEND_X + 32.0,
                    y - 4.0,
                    if dash.is_empty() {
                        String::new()
                    } else {
                        format!(" stroke-dasharray='{dash}'")
                    },
                    Marker::Circle.svg(LEGEND_X + 20.0, y - 4.0, "#555", i > 0),
                    LEGEND_X + 40.0,
                    y,
                    esc(v)
                );
                y += row;
            }
        }
        let _ = write!(
            o,
            "<rect class='legend-box' x='{LEGEND_X}' y='{TOP}' width='{:.1}' height='{:.1}' fill='white' stroke='#bbb'/>{body}</g>",
            WIDTH - LEGEND_X - 4.0,
            (y - TOP - 6.0).max(row)
        );
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_mapping_is_geometric() {
        let s = Scale::Log {
            lo: 1.0,
            hi: 10_000.0,
        };
        assert_eq!(s.frac(1.0), Some(0.0));
        assert!((s.frac(10_000.0).unwrap() - 1.0).abs() < 1e-12);
        assert!((s.frac(100.0).unwrap() - 0.5).abs() < 1e-12);
        assert!((s.frac(10.0).unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(s.frac(0.0), None, "zero has no place on a log axis");
        assert_eq!(s.frac(-1.0), None);
        assert_eq!(s.frac(f64::NAN), None);
        assert_eq!(s.frac(f64::INFINITY), None);
        let l = Scale::Linear { lo: 0.0, hi: 50.0 };
        assert_eq!(l.frac(25.0), Some(0.5));
        assert_eq!(l.frac(f64::NAN), None);
        let degenerate = Scale::Log { lo: 5.0, hi: 5.0 };
        assert_eq!(
            degenerate.frac(5.0),
            None,
            "no NaN out of a zero-width axis"
        );
    }

    #[test]
    fn byte_ticks_are_powers_of_two_labelled_in_binary_units() {
        let mib = 1048576.0;
        // 1 MiB .. 4 GiB: powers of 16.
        let t = log_ticks(mib, 4096.0 * mib, Unit::Bytes);
        let labels: Vec<String> = t.iter().map(|v| bytes_label(*v)).collect();
        assert_eq!(labels, ["1 MiB", "16 MiB", "256 MiB", "4 GiB"]);
        // 32 MiB .. 512 MiB: too few powers of 16 or 4, so powers of 2.
        let t = log_ticks(32.0 * mib, 512.0 * mib, Unit::Bytes);
        let labels: Vec<String> = t.iter().map(|v| bytes_label(*v)).collect();
        assert_eq!(
            labels,
            ["32 MiB", "64 MiB", "128 MiB", "256 MiB", "512 MiB"]
        );
        assert_eq!(bytes_label(512.0), "512 B");
        assert_eq!(bytes_label(65536.0), "64 KiB");
        assert_eq!(bytes_label(1.5 * 1073741824.0), "1.5 GiB");
    }

    #[test]
    fn count_axes_tick_the_values_plotted_and_plain_axes_1_2_5() {
        let a = Axis::log(&[1.0, 8.0, 64.0, 1000.0, 64.0], Unit::Count);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "8", "64", "1000"]);
        // Every tick inside the axis, none on its frame.
        for (v, _) in &a.ticks {
            let f = a.scale.frac(*v).unwrap();
            assert!(f > 0.0 && f < 1.0, "{v} at {f}");
        }
        // Many distinct counts: decades.
        let many: Vec<f64> = (0..20).map(|i| f64::from(1 << i)).collect();
        let a = Axis::log(&many, Unit::Count);
        assert!(
            a.ticks.iter().all(|(v, _)| v.log10().fract().abs() < 1e-9),
            "{:?}",
            a.ticks
        );
        // MB/s from 19 to 1000: 1-2-5 ticks, at most eight.
        let t = log_ticks(12.0, 1600.0, Unit::Plain);
        let labels: Vec<String> = t.iter().map(|v| plain_label(*v)).collect();
        assert_eq!(labels, ["20", "50", "100", "200", "500", "1000"]);
        // Four decades: decades only.
        let t = log_ticks(0.3, 1600.0, Unit::Plain);
        let labels: Vec<String> = t.iter().map(|v| plain_label(*v)).collect();
        assert_eq!(labels, ["1", "10", "100", "1000"]);
        assert_eq!(plain_label(0.5), "0.5");
        assert_eq!(plain_label(0.30000000000000004), "0.3");
        assert_eq!(plain_label(12.5), "12.5");
        assert!(log_ticks(0.0, 1.0, Unit::Plain).is_empty());
    }

    #[test]
    fn linear_axes_start_at_zero_and_end_on_a_round_tick() {
        let a = Axis::linear_from_zero(&[3.2, 47.0, f64::NAN], Unit::Plain);
        assert_eq!(a.scale, Scale::Linear { lo: 0.0, hi: 50.0 });
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0", "10", "20", "30", "40", "50"]);
        let empty = Axis::linear_from_zero(&[], Unit::Plain);
        assert_eq!(empty.scale, Scale::Linear { lo: 0.0, hi: 1.0 });
    }

    fn plot(points: &[(f64, f64)]) -> Plot {
        Plot {
            id: "t".into(),
            title: "t".into(),
            x: (
                Axis::log(&points.iter().map(|p| p.0).collect::<Vec<_>>(), Unit::Bytes),
                "size".into(),
            ),
            y: (
                Axis::log(&points.iter().map(|p| p.1).collect::<Vec<_>>(), Unit::Plain),
                "MB/s".into(),
            ),
            variants: vec!["text".into(), "raw".into()],
            series: vec![Series {
                name: "delegator".into(),
                colour: "#c00".into(),
                marker: Marker::Square,
                lines: vec![(
                    0,
                    points
                        .iter()
                        .map(|&(x, y)| Point {
                            x,
                            y,
                            spread: Some((y * 0.9, y * 1.1)),
                            title: "p".into(),
                        })
                        .collect(),
                )],
            }],
        }
    }

    #[test]
    fn svg_has_only_finite_coordinates_and_skips_unplottable_points() {
        let svg = plot(&[(1048576.0, 300.0), (4.0 * 1048576.0, 0.0), (f64::NAN, 2.0)]).svg();
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        assert_eq!(svg.matches("<g class='point'>").count(), 1, "{svg}");
        assert!(svg.contains("class='legend-box'"));
        assert!(
            svg.contains("stroke-dasharray='7 4'"),
            "the second variant's style is in the legend"
        );
    }

    #[test]
    fn the_legend_is_right_of_the_plot_area() {
        use layout::*;
        let svg = plot(&[(1048576.0, 300.0)]).svg();
        assert!(svg.contains(&format!("<rect class='legend-box' x='{LEGEND_X}'")));
    }
}
