//! SVG pictures of traces: each readahead window's size along the file, and the folio
//! order of every page, one colour per variant, so trimmed windows stand out at a glance.
//!
//! Pure: traces in, SVG text out, no dependencies. Layout, top to bottom: a title, a
//! subtitle, a legend (one entry per variant); then per section (a scenario's matrix
//! point) a windows panel (x: page index, y: pages the window submitted; one marker per
//! submission at its start, a bar over the pages it covers; each variant drawn 2 px above
//! the one before, so shared windows show in every colour) and a folios panel (one row
//! per order, one lane per variant in each row, a bar over the pages of each folio).
//! When a trace has faults (mmap), the submissions of a fault's window are squares instead
//! of circles, and a faults panel between the two shows, one lane per variant, each
//! `filemap_fault` as a triangle at its page and each fault-around range as a thin bar;
//! the legend then explains the three marks. Pictures of pread traces have none of this.

use std::fmt::Write;
use std::ops::Range;

use radiff_model::{Submit, Trace, Trigger};

/// One variant's trace in a section.
pub struct Series<'a> {
    pub variant: &'a str,
    pub trace: &'a Trace,
}

/// The panels of one matrix point (`label` None: the scenario has no matrix).
pub struct Section<'a> {
    pub label: Option<&'a str>,
    pub series: Vec<Series<'a>>,
}

/// Colour-blind-safe (Okabe-Ito) colours, one per variant in order; the pale yellow is
/// left out because it does not show on white.
pub const COLOURS: [&str; 7] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"];

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
const WINDOWS_H: f64 = 240.0;
const LANE_H: f64 = 7.0;
const ROW_PAD: f64 = 5.0;
const AXIS_GAP: f64 = 36.0;
/// Height of a variant's lane in the faults panel: a triangle above, fault-around below.
const FAULT_LANE_H: f64 = 16.0;
/// The colour of the legend's marks, which are shapes rather than variants.
const MARK_COLOUR: &str = "#555";
/// Pixels between the windows of successive variants (see `render`).
const LIFT: f64 = 2.0;
/// Above this many markers in the picture, markers carry no tooltip, to keep the file
/// small when the range is the whole of a large file.
const TOOLTIP_LIMIT: usize = 6000;

/// A window's submission as the picture shows it: first page and number of pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub pages: u64,
    /// `ra->order` for `page_cache_ra_order`, None for `page_cache_ra_unbounded`.
    pub order: Option<u32>,
    /// Made in a window a fault opened (read-around, the VM_HUGEPAGE path).
    pub by_fault: bool,
}

/// Every submission of `trace` that starts inside `pages`, in trace order.
pub fn spans(trace: &Trace, pages: &Range<u64>) -> Vec<Span> {
    trace
        .windows
        .iter()
        .flat_map(|w| w.submits.iter().map(move |s| (w.trigger == Trigger::Fault, s)))
        .map(|(by_fault, s)| match *s {
            Submit::Order { index, size, order, .. } => {
                Span { start: index, pages: size, order: Some(order), by_fault }
            }
            Submit::Unbounded { index, nr_to_read, .. } => {
                Span { start: index, pages: nr_to_read, order: None, by_fault }
            }
        })
        .filter(|s| pages.contains(&s.start))
        .collect()
}

/// The pages of `trace`'s faults (`mm_filemap_fault`) inside `pages`, in trace order.
pub fn faults(trace: &Trace, pages: &Range<u64>) -> Vec<u64> {
    trace.windows.iter().filter(|w| w.trigger == Trigger::Fault && pages.contains(&w.index)).map(|w| w.index).collect()
}

/// `trace`'s fault-around ranges (`mm_filemap_map_pages`: first page, pages) that overlap
/// `pages`, in trace order.
pub fn fault_arounds(trace: &Trace, pages: &Range<u64>) -> Vec<(u64, u64)> {
    trace
        .windows
        .iter()
        .filter(|w| w.trigger == Trigger::FaultAround && w.index < pages.end && w.index + w.req_count > pages.start)
        .map(|w| (w.index, w.req_count))
        .collect()
}

/// True when `trace` has a fault or a fault-around range anywhere.
fn has_faults(trace: &Trace) -> bool {
    trace.windows.iter().any(|w| matches!(w.trigger, Trigger::Fault | Trigger::FaultAround))
}

/// Runs of adjacent folios of one order inside `pages`: (first page, pages, order),
/// sorted by page. Adjacent bars of one colour in one row look the same as one bar, and
/// a run is one path command instead of many, which keeps whole-file pictures small.
pub fn folio_runs(trace: &Trace, pages: &Range<u64>) -> Vec<(u64, u64, u32)> {
    let mut folios: Vec<(u64, u32)> =
        trace.folios().filter(|f| pages.contains(&f.index)).map(|f| (f.index, f.order)).collect();
    folios.sort_unstable();
    let mut runs: Vec<(u64, u64, u32)> = Vec::new();
    for (index, order) in folios {
        let len = 1u64 << order;
        match runs.last_mut() {
            Some((start, n, o)) if *o == order && *start + *n == index => *n += len,
            _ => runs.push((index, len, order)),
        }
    }
    runs
}

/// Escapes text for SVG content and attribute values.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            _ => s.push(c),
        }
    }
    s
}

/// A tick step along an axis of `extent` units: a power of two giving at most `max` ticks.
fn pow2_step(extent: u64, max: u64) -> u64 {
    extent.div_ceil(max.max(1)).max(1).next_power_of_two()
}

/// Compact coordinates: one decimal, no trailing `.0`.
fn n(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// The picture. `pages` is the range of page indices shown (not empty).
pub fn render(title: &str, subtitle: &str, pages: Range<u64>, sections: &[Section]) -> String {
    let pages = pages.start..pages.end.max(pages.start + 1);
    let width = (pages.end - pages.start) as f64;
    let x = |page: u64| LEFT + (page.saturating_sub(pages.start).min(pages.end - pages.start)) as f64 / width * PLOT_W;
    let variants = variants_of(sections);
    let colour = |variant: &str| COLOURS[variants.iter().position(|v| *v == variant).unwrap_or(0) % COLOURS.len()];
    let with_faults = sections.iter().flat_map(|s| s.series.iter()).any(|s| has_faults(s.trace));
    let markers: usize = sections
        .iter()
        .flat_map(|s| s.series.iter())
        .map(|s| spans(s.trace, &pages).len() + faults(s.trace, &pages).len() + fault_arounds(s.trace, &pages).len())
        .sum();
    let tooltips = markers <= TOOLTIP_LIMIT;

    let mut body = String::new();
    let mut y = heading(&mut body, title, subtitle, &variants, &colour, with_faults);

    for section in sections {
        if let Some(label) = section.label {
            y += 12.0;
            let _ = writeln!(
                body,
                r#"<text x="{}" y="{}" font-size="14" font-weight="bold">{}</text>"#,
                n(LEFT),
                n(y),
                escape(label)
            );
        }
        y = windows_panel(&mut body, section, &pages, &x, &colour, tooltips, y);

        if with_faults {
            y = faults_panel(&mut body, section, &pages, &x, &colour, tooltips, y);
        }

        y = folios_panel(&mut body, section, &pages, &x, &colour, y);
    }

    document(&body, y)
}

/// The variants of all sections, each once, in the order they first appear.
fn variants_of<'a>(sections: &[Section<'a>]) -> Vec<&'a str> {
    let mut v: Vec<&str> = Vec::new();
    for s in sections.iter().flat_map(|s| s.series.iter()) {
        if !v.contains(&s.variant) {
            v.push(s.variant);
        }
    }
    v
}

/// The title, the subtitle and the legend (the variants' colours, and the fault marks
/// when there are faults). Returns the y below them.
fn heading(
    body: &mut String,
    title: &str,
    subtitle: &str,
    variants: &[&str],
    colour: &dyn Fn(&str) -> &'static str,
    with_faults: bool,
) -> f64 {
    let mut y = 20.0;
    let _ = writeln!(
        body,
        r#"<text x="{}" y="{}" font-size="16" font-weight="bold">{}</text>"#,
        n(LEFT),
        n(y),
        escape(title)
    );
    y += 20.0;
    let _ = writeln!(body, r#"<text x="{}" y="{}" font-size="12">{}</text>"#, n(LEFT), n(y), escape(subtitle));
    y += 22.0;
    // The legend: one entry per variant, in the order given (the first is the baseline).
    let _ = writeln!(body, r#"<g class="legend">"#);
    let mut lx = LEFT;
    for v in variants {
        let _ = writeln!(
            body,
            r#"<g class="legend-entry" data-variant="{v}"><rect x="{}" y="{}" width="14" height="10" fill="{c}"/><text x="{}" y="{}" font-size="12">{v}</text></g>"#,
            n(lx),
            n(y - 9.0),
            n(lx + 18.0),
            n(y),
            v = escape(v),
            c = colour(v)
        );
        lx += 30.0 + 7.0 * v.chars().count() as f64;
    }
    if with_faults {
        // The marks, in a neutral colour: each is drawn in its variant's colour.
        let (ly, c) = (y - 9.0, MARK_COLOUR);
        let marks = [
            ("fault-window", "submission of a fault's window"),
            ("fault", "fault (filemap_fault)"),
            ("fault-around", "fault-around range (filemap_map_pages)"),
        ];
        for (mark, text) in marks {
            let shape = match mark {
                "fault-window" => {
                    format!(r#"<rect x="{}" y="{}" width="6" height="6" fill="{c}"/>"#, n(lx + 4.0), n(ly + 2.0))
                }
                "fault" => format!(r#"<path d="{}" fill="{c}"/>"#, triangle(lx + 7.0, ly + 2.0)),
                _ => format!(r#"<rect x="{}" y="{}" width="14" height="2" fill="{c}"/>"#, n(lx), n(ly + 4.0)),
            };
            let _ = writeln!(
                body,
                r#"<g class="legend-mark" data-mark="{mark}">{shape}<text x="{}" y="{}" font-size="12">{text}</text></g>"#,
                n(lx + 18.0),
                n(y)
            );
            lx += 30.0 + 6.5 * text.chars().count() as f64;
        }
    }
    let _ = writeln!(body, "</g>");
    y += 14.0;
    y
}

/// The windows panel of `section` from `y` down: each submission's size at the page it
/// starts, one lane per variant, each LIFT px above the one before. Returns the y below it.
fn windows_panel(
    body: &mut String,
    section: &Section,
    pages: &Range<u64>,
    x: &dyn Fn(u64) -> f64,
    colour: &dyn Fn(&str) -> &'static str,
    tooltips: bool,
    mut y: f64,
) -> f64 {
    y += 22.0;
    let counts: Vec<String> =
        section.series.iter().map(|s| format!("{} {}", s.variant, spans(s.trace, pages).len())).collect();
    let _ = writeln!(
        body,
        r#"<text x="{}" y="{}" font-size="12">windows: pages each submitted, at the page it starts; each variant {} px above the one before (submissions in range: {})</text>"#,
        n(LEFT),
        n(y - 6.0),
        n(LIFT),
        escape(&counts.join(", "))
    );
    let top = y;
    let max_size = section.series.iter().flat_map(|s| spans(s.trace, pages)).map(|s| s.pages).max().unwrap_or(1).max(1);
    let ystep = pow2_step(max_size, 4);
    let ymax = max_size.div_ceil(ystep) * ystep;
    let ypx = |size: u64| top + WINDOWS_H - size as f64 / ymax as f64 * WINDOWS_H;
    let _ = writeln!(body, r##"<g class="axes" stroke="#ccc" stroke-width="0.5">"##);
    let mut t = 0;
    while t <= ymax {
        let _ =
            writeln!(body, r#"<line x1="{}" y1="{yy}" x2="{}" y2="{yy}"/>"#, n(LEFT), n(LEFT + PLOT_W), yy = n(ypx(t)));
        t += ystep;
    }
    x_grid(body, pages, x, top, top + WINDOWS_H);
    let _ = writeln!(body, "</g>");
    let mut t = 0;
    while t <= ymax {
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" font-size="10" text-anchor="end">{t}</text>"#,
            n(LEFT - 4.0),
            n(ypx(t) + 3.0)
        );
        t += ystep;
    }
    let _ = writeln!(
        body,
        r#"<text transform="translate(14,{}) rotate(-90)" font-size="11" text-anchor="middle">pages</text>"#,
        n(top + WINDOWS_H / 2.0)
    );
    for (lane, s) in section.series.iter().enumerate() {
        // Each later variant is drawn LIFT px higher, so that a window two variants
        // share shows in both colours instead of the last one hiding the others.
        let lift = LIFT * lane as f64;
        let at = |sp: &Span| (x(sp.start), ypx(sp.pages) - lift);
        windows_lane(body, s, &spans(s.trace, pages), x, &at, colour(s.variant), tooltips);
    }
    y = top + WINDOWS_H;
    x_labels(body, pages, x, y);
    y + AXIS_GAP
}

/// One variant's windows: a bar over each window's pages and a marker where it starts
/// (`at`), a circle, or a square for the window a fault opened.
fn windows_lane(
    body: &mut String,
    s: &Series,
    spans: &[Span],
    x: &dyn Fn(u64) -> f64,
    at: &dyn Fn(&Span) -> (f64, f64),
    c: &str,
    tooltips: bool,
) {
    // The bars: one path for the variant; each piece covers the window's pages.
    let mut d = String::new();
    for sp in spans {
        let (x0, y0) = at(sp);
        let _ = write!(d, "M{},{}H{}", n(x0), n(y0), n(x(sp.start + sp.pages)));
    }
    let _ = writeln!(
        body,
        r#"<path class="window-bars" data-variant="{}" d="{d}" stroke="{c}" stroke-width="1.5" stroke-opacity="0.6" fill="none"/>"#,
        escape(s.variant)
    );
    let _ = writeln!(body, r#"<g class="windows" data-variant="{}" fill="{c}">"#, escape(s.variant));
    for sp in spans {
        let (x0, y0) = at(sp);
        let (cx, cy) = (n(x0), n(y0));
        let title = || {
            let what = match sp.order {
                Some(o) => format!("order {o}"),
                None => "unbounded".into(),
            };
            let by = if sp.by_fault { " (fault)" } else { "" };
            format!("<title>{}: [{}+{}) {what}{by}</title>", escape(s.variant), sp.start, sp.pages)
        };
        if sp.by_fault {
            // A square of the circle's size: the window a fault opened.
            let (sx, sy) = (n(x0 - 2.5), n(y0 - 2.5));
            if tooltips {
                let _ = writeln!(
                    body,
                    r#"<rect class="fault-window" x="{sx}" y="{sy}" width="5" height="5">{}</rect>"#,
                    title()
                );
            } else {
                let _ = writeln!(body, r#"<rect class="fault-window" x="{sx}" y="{sy}" width="5" height="5"/>"#);
            }
        } else if tooltips {
            let _ = writeln!(body, r#"<circle cx="{cx}" cy="{cy}" r="2">{}</circle>"#, title());
        } else {
            let _ = writeln!(body, r#"<circle cx="{cx}" cy="{cy}" r="2"/>"#);
        }
    }
    let _ = writeln!(body, "</g>");
}

/// The folios panel of `section` from `y` down: rows by order, highest at the top; one
/// lane per variant. Returns the y below it.
fn folios_panel(
    body: &mut String,
    section: &Section,
    pages: &Range<u64>,
    x: &dyn Fn(u64) -> f64,
    colour: &dyn Fn(&str) -> &'static str,
    mut y: f64,
) -> f64 {
    let runs: Vec<Vec<(u64, u64, u32)>> = section.series.iter().map(|s| folio_runs(s.trace, pages)).collect();
    let max_order = runs.iter().flatten().map(|r| r.2).max().unwrap_or(0);
    let lanes = section.series.len().max(1) as f64;
    let row_h = lanes * LANE_H + ROW_PAD;
    let folios_h = (max_order + 1) as f64 * row_h;
    y += 14.0;
    let _ = writeln!(
        body,
        r#"<text x="{}" y="{}" font-size="12">folios: order of each page's folio (one lane per variant in each row)</text>"#,
        n(LEFT),
        n(y - 6.0)
    );
    let top = y;
    let row_top = |order: u32| top + (max_order - order) as f64 * row_h;
    let _ = writeln!(body, r##"<g class="axes" stroke="#ccc" stroke-width="0.5">"##);
    for o in 0..=max_order {
        let _ = writeln!(
            body,
            r#"<line x1="{}" y1="{yy}" x2="{}" y2="{yy}"/>"#,
            n(LEFT),
            n(LEFT + PLOT_W),
            yy = n(row_top(o) + row_h)
        );
    }
    x_grid(body, pages, x, top, top + folios_h);
    let _ = writeln!(body, "</g>");
    for o in 0..=max_order {
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" font-size="10" text-anchor="end">o{o}</text>"#,
            n(LEFT - 4.0),
            n(row_top(o) + row_h / 2.0 + 3.0)
        );
    }
    for (lane, (s, runs)) in section.series.iter().zip(&runs).enumerate() {
        let mut d = String::new();
        for &(start, len, order) in runs {
            let ly = row_top(order) + ROW_PAD / 2.0 + lane as f64 * LANE_H;
            let (x0, x1) = (x(start), x(start + len));
            let _ = write!(d, "M{},{}h{}v{}h-{}z", n(x0), n(ly), n(x1 - x0), n(LANE_H - 1.0), n(x1 - x0));
        }
        let _ = writeln!(
            body,
            r#"<path class="folios" data-variant="{}" d="{d}" fill="{}"/>"#,
            escape(s.variant),
            colour(s.variant)
        );
    }
    y = top + folios_h;
    x_labels(body, pages, x, y);
    y + AXIS_GAP
}

/// The whole SVG document around `body`, `y` high.
fn document(body: &str, y: f64) -> String {
    let height = y.ceil();
    let mut svg = String::with_capacity(body.len() + 400);
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">"#,
        w = n(WIDTH),
        h = n(height)
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    svg.push_str(body);
    svg.push_str("</svg>\n");
    svg
}

/// The path of a downward triangle 6 px wide and 5 px high, its tip at (`cx`, `top` + 5).
fn triangle(cx: f64, top: f64) -> String {
    format!("M{},{}h6l-3,5z", n(cx - 3.0), n(top))
}

/// The faults panel of `section` from `y` down, one lane per variant: a triangle at each
/// fault's page, a thin bar over each fault-around range (half opaque, so a range mapped
/// again shows darker). Returns the y below it.
fn faults_panel(
    body: &mut String,
    section: &Section,
    pages: &Range<u64>,
    x: &dyn Fn(u64) -> f64,
    colour: &dyn Fn(&str) -> &'static str,
    tooltips: bool,
    mut y: f64,
) -> f64 {
    let counts: Vec<String> = section
        .series
        .iter()
        .map(|s| format!("{} {} and {}", s.variant, faults(s.trace, pages).len(), fault_arounds(s.trace, pages).len()))
        .collect();
    y += 14.0;
    let _ = writeln!(
        body,
        r#"<text x="{}" y="{}" font-size="12">faults: a triangle at each faulting page, a bar over each fault-around range; one lane per variant (faults and ranges in range: {})</text>"#,
        n(LEFT),
        n(y - 6.0),
        escape(&counts.join(", "))
    );
    let top = y;
    let height = section.series.len().max(1) as f64 * FAULT_LANE_H + ROW_PAD;
    let _ = writeln!(body, r##"<g class="axes" stroke="#ccc" stroke-width="0.5">"##);
    let _ = writeln!(
        body,
        r#"<line x1="{}" y1="{yy}" x2="{}" y2="{yy}"/>"#,
        n(LEFT),
        n(LEFT + PLOT_W),
        yy = n(top + height)
    );
    x_grid(body, pages, x, top, top + height);
    let _ = writeln!(body, "</g>");
    for (lane, s) in section.series.iter().enumerate() {
        let (c, v) = (colour(s.variant), escape(s.variant));
        let ly = top + ROW_PAD / 2.0 + lane as f64 * FAULT_LANE_H;
        let clip = |p: u64| x(p.clamp(pages.start, pages.end));
        let arounds = fault_arounds(s.trace, pages);
        let bar =
            |(start, len): (u64, u64)| (n(clip(start)), n(ly + 9.0), n((clip(start + len) - clip(start)).max(1.0)));
        if tooltips {
            let _ = writeln!(body, r#"<g class="fault-around" data-variant="{v}" fill="{c}" fill-opacity="0.5">"#);
            for &(start, len) in &arounds {
                let (bx, by, bw) = bar((start, len));
                let _ = writeln!(
                    body,
                    r#"<rect x="{bx}" y="{by}" width="{bw}" height="3"><title>{v}: around [{start}+{len})</title></rect>"#
                );
            }
            let _ = writeln!(body, "</g>");
        } else {
            let mut d = String::new();
            for &r in &arounds {
                let (bx, by, bw) = bar(r);
                let _ = write!(d, "M{bx},{by}h{bw}v3h-{bw}z");
            }
            let _ = writeln!(
                body,
                r#"<path class="fault-around" data-variant="{v}" d="{d}" fill="{c}" fill-opacity="0.5"/>"#
            );
        }
        let fs = faults(s.trace, pages);
        if tooltips {
            let _ = writeln!(body, r#"<g class="faults" data-variant="{v}" fill="{c}">"#);
            for &page in &fs {
                let _ =
                    writeln!(body, r#"<path d="{}"><title>{v}: fault @{page}</title></path>"#, triangle(x(page), ly));
            }
            let _ = writeln!(body, "</g>");
        } else {
            let d: String = fs.iter().map(|&page| triangle(x(page), ly)).collect();
            let _ = writeln!(body, r#"<path class="faults" data-variant="{v}" d="{d}" fill="{c}"/>"#);
        }
    }
    y = top + height;
    x_labels(body, pages, x, y);
    y + AXIS_GAP
}

/// Vertical grid lines at power-of-two page boundaries, where trims and alignment happen.
fn x_grid(body: &mut String, pages: &Range<u64>, x: &dyn Fn(u64) -> f64, y0: f64, y1: f64) {
    let step = pow2_step(pages.end - pages.start, 16);
    let mut p = pages.start.div_ceil(step) * step;
    while p <= pages.end {
        let _ = writeln!(body, r#"<line x1="{xx}" y1="{}" x2="{xx}" y2="{}"/>"#, n(y0), n(y1), xx = n(x(p)));
        p += step;
    }
}

/// Page-index labels under a panel, and the axis name.
fn x_labels(body: &mut String, pages: &Range<u64>, x: &dyn Fn(u64) -> f64, y: f64) {
    let step = pow2_step(pages.end - pages.start, 8);
    let mut p = pages.start.div_ceil(step) * step;
    while p <= pages.end {
        let _ = writeln!(
            body,
            r#"<text x="{}" y="{}" font-size="10" text-anchor="middle">{p}</text>"#,
            n(x(p)),
            n(y + 12.0)
        );
        p += step;
    }
    let _ = writeln!(
        body,
        r#"<text x="{}" y="{}" font-size="11" text-anchor="middle">page index in the file (4 KiB pages)</text>"#,
        n(LEFT + PLOT_W / 2.0),
        n(y + 26.0)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use radiff_model::{Folio, RaState, Trigger, Window};

    fn window(start: u64, size: u64, folios: &[(u64, u32)]) -> Window {
        Window {
            file: 0,
            trigger: Trigger::Async,
            index: start,
            req_count: 256,
            ra: RaState::default(),
            submits: vec![Submit::Order { index: start, size, async_size: size, order: 6 }],
            folios: folios.iter().map(|&(index, order)| Folio { index, order }).collect(),
            requests: vec![],
        }
    }

    /// The start of seed 000's cycle on base: windows trimmed to 2 and 4 pages at 510
    /// and 636; and a v1-like trace with whole windows.
    fn traces() -> (Trace, Trace) {
        let base = Trace {
            windows: vec![
                window(384, 126, &[(384, 6), (448, 5), (480, 4), (496, 3), (504, 2), (508, 1)]),
                window(510, 2, &[(510, 1)]),
                window(512, 4, &[(512, 2)]),
                window(516, 8, &[(516, 2), (520, 2)]),
                window(572, 64, &[(572, 2)]),
                window(5000, 64, &[(5000, 4)]),
            ],
        };
        let mut start = Window { submits: vec![], ..window(0, 0, &[]) };
        start.trigger = Trigger::Start;
        let v1 = Trace {
            windows: vec![
                start,
                window(384, 128, &[(384, 7)]),
                Window {
                    submits: vec![Submit::Unbounded { index: 512, nr_to_read: 32, lookahead_size: 0 }],
                    ..window(512, 0, &[(512, 0), (513, 0)])
                },
            ],
        };
        (base, v1)
    }

    /// Start tags, end tags and self-closing tags nest properly; returns the start-tag
    /// names in order.
    fn check_well_formed(svg: &str) -> Vec<String> {
        let mut stack: Vec<String> = Vec::new();
        let mut names = Vec::new();
        let mut rest = svg;
        while let Some(open) = rest.find('<') {
            let text = &rest[..open];
            assert!(!text.contains('>'), "stray > in text: {text}");
            for (i, _) in text.match_indices('&') {
                assert!(
                    ["&amp;", "&lt;", "&gt;", "&quot;"].iter().any(|e| text[i..].starts_with(e)),
                    "bare & in {text}"
                );
            }
            let close = rest[open..].find('>').expect("unclosed tag") + open;
            let tag = &rest[open + 1..close];
            assert!(!tag.contains('<'), "< inside a tag: {tag}");
            assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes: {tag}");
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
            } else {
                let name = tag.split_whitespace().next().unwrap().trim_end_matches('/').to_string();
                names.push(name.clone());
                if !tag.ends_with('/') {
                    stack.push(name);
                }
            }
            rest = &rest[close + 1..];
        }
        assert!(stack.is_empty(), "unclosed: {stack:?}");
        assert_eq!(rest.trim(), "");
        names
    }

    /// The text of the `<g class="windows" data-variant="NAME">` group.
    fn windows_group<'a>(svg: &'a str, variant: &str) -> &'a str {
        let open = format!(r#"<g class="windows" data-variant="{variant}""#);
        let at = svg.find(&open).unwrap_or_else(|| panic!("no windows group for {variant}"));
        let end = svg[at..].find("</g>").unwrap() + at;
        &svg[at..end]
    }

    #[test]
    fn spans_are_the_submissions_starting_in_range() {
        let (base, v1) = traces();
        let all = spans(&base, &(0..8192));
        assert_eq!(all.len(), 6);
        assert_eq!(
            spans(&base, &(0..4096)).iter().map(|s| (s.start, s.pages)).collect::<Vec<_>>(),
            vec![(384, 126), (510, 2), (512, 4), (516, 8), (572, 64)]
        );
        // The start window submitted nothing; an unbounded submission counts, with no order.
        assert_eq!(
            spans(&v1, &(0..4096)),
            vec![
                Span { start: 384, pages: 128, order: Some(6), by_fault: false },
                Span { start: 512, pages: 32, order: None, by_fault: false }
            ]
        );
        assert_eq!(spans(&base, &(511..516)).len(), 1);
    }

    #[test]
    fn adjacent_folios_of_one_order_merge_into_one_run() {
        let (base, _) = traces();
        let runs = folio_runs(&base, &(500..600));
        // 504 o2, 508 o1, 510 o1 (merged with 508), 512 o2, 516 o2, 520 o2 (merged), 572 o2.
        assert_eq!(runs, vec![(504, 4, 2), (508, 4, 1), (512, 12, 2), (572, 4, 2)]);
    }

    #[test]
    fn the_picture_is_well_formed_with_a_legend_and_one_marker_per_window() {
        let (base, v1) = traces();
        let sections = [Section {
            label: None,
            series: vec![Series { variant: "base", trace: &base }, Series { variant: "async-align-v1", trace: &v1 }],
        }];
        let svg = render("1mib_after_4k: a & b <c>", "pages 0..4096 of 131072", 0..4096, &sections);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
        let names = check_well_formed(&svg);
        assert_eq!(names[0], "svg");
        assert!(svg.contains("1mib_after_4k: a &amp; b &lt;c&gt;"));
        // A legend entry per variant, each with its own colour.
        assert!(
            svg.contains(&format!(
                r#"<g class="legend-entry" data-variant="base"><rect x="70" y="53" width="14" height="10" fill="{}"/>"#,
                COLOURS[0]
            )),
            "{svg}"
        );
        assert!(
            svg.contains(&format!(
                r#"data-variant="async-align-v1"><rect x="128" y="53" width="14" height="10" fill="{}"/>"#,
                COLOURS[1]
            )),
            "{svg}"
        );
        assert_eq!(svg.matches(r#"class="legend-entry""#).count(), 2);
        assert!(svg.contains(&format!(r#"<g class="windows" data-variant="async-align-v1" fill="{}">"#, COLOURS[1])));
        // One marker per window starting in range: base's window at 5000 is outside.
        assert_eq!(windows_group(&svg, "base").matches("<circle").count(), 5);
        assert_eq!(windows_group(&svg, "async-align-v1").matches("<circle").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 7);
        // The trimmed window at 510 sits at 2 pages on a y axis up to 128 pages: x = 70 +
        // 510/4096*1110, y = 98 + 240 - 2/128*240 with the windows panel's top at 98.
        assert!(
            windows_group(&svg, "base")
                .contains(r#"<circle cx="208.2" cy="334.2" r="2"><title>base: [510+2) order 6</title>"#),
            "{svg}"
        );
        assert!(svg.contains(">128</text>"));
        // v1's whole window at 384 (128 pages, the top of the axis) is lifted 2 px.
        assert!(windows_group(&svg, "async-align-v1").contains(r#"<circle cx="174.1" cy="96" r="2">"#), "{svg}");
        // Rows for orders 0 to 7 (v1's order-7 folio).
        assert!(svg.contains(">o7</text>") && !svg.contains(">o8</text>"));
        assert_eq!(svg.matches(r#"class="folios""#).count(), 2);
    }

    #[test]
    fn a_section_per_matrix_point_and_a_range_in_the_middle() {
        let (base, v1) = traces();
        let sections = [
            Section {
                label: Some("max_sectors_kb=1024"),
                series: vec![Series { variant: "base", trace: &base }, Series { variant: "v1", trace: &v1 }],
            },
            Section {
                label: Some("max_sectors_kb=2048"),
                series: vec![Series { variant: "base", trace: &base }, Series { variant: "v1", trace: &v1 }],
            },
        ];
        let svg = render("t", "s", 4096..8192, &sections);
        check_well_formed(&svg);
        assert!(svg.contains(">max_sectors_kb=1024</text>") && svg.contains(">max_sectors_kb=2048</text>"));
        // The legend names each variant once; only base's window at 5000 is in range.
        assert_eq!(svg.matches(r#"class="legend-entry""#).count(), 2);
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains(">4096</text>") && svg.contains(">8192</text>"));
    }

    /// An mmap-like trace: a fault at 0 whose read-around submits [0+32), fault-around
    /// over [0+16) and twice [16+16), a fault at 24 followed by an async window at 32,
    /// and a fault at 5000 (outside 0..4096) with fault-around [4992+16).
    fn mmap_trace() -> Trace {
        let mut fault = Window::open(Trigger::Fault, 0, 1, RaState::default());
        fault.submits.push(Submit::Order { index: 0, size: 32, async_size: 8, order: 0 });
        fault.folios = (0..32).map(|index| Folio { index, order: 0 }).collect();
        let around = |index, n| Window::open(Trigger::FaultAround, index, n, RaState::default());
        Trace {
            windows: vec![
                fault,
                around(0, 16),
                around(16, 16),
                around(16, 16),
                Window::open(Trigger::Fault, 24, 1, RaState::default()),
                window(32, 32, &[(32, 2)]),
                Window::open(Trigger::Fault, 5000, 1, RaState::default()),
                around(4088, 16),
            ],
        }
    }

    #[test]
    fn faults_and_fault_around_are_drawn_only_when_present() {
        let mmap = mmap_trace();
        assert_eq!(faults(&mmap, &(0..4096)), vec![0, 24]);
        assert_eq!(
            fault_arounds(&mmap, &(0..4096)),
            vec![(0, 16), (16, 16), (16, 16), (4088, 16)],
            "a range overlapping the end counts"
        );
        assert_eq!(fault_arounds(&mmap, &(4100..8192)), vec![(4088, 16)]);
        assert!(spans(&mmap, &(0..4096))[0].by_fault && !spans(&mmap, &(0..4096))[1].by_fault);

        let (base, _) = traces();
        let sections = [Section {
            label: None,
            series: vec![Series { variant: "base", trace: &base }, Series { variant: "mmap", trace: &mmap }],
        }];
        let svg = render("t", "s", 0..4096, &sections);
        check_well_formed(&svg);
        // The legend: a variant entry each, and the three marks.
        assert_eq!(svg.matches(r#"class="legend-entry""#).count(), 2);
        assert_eq!(svg.matches(r#"class="legend-mark""#).count(), 3);
        for mark in ["fault-window", "fault", "fault-around"] {
            assert!(svg.contains(&format!(r#"<g class="legend-mark" data-mark="{mark}">"#)), "{svg}");
        }
        // The fault's read-around is a square in the windows panel, the async window a circle.
        assert_eq!(windows_group(&svg, "mmap").matches("<circle").count(), 1);
        assert!(windows_group(&svg, "mmap").contains(r#"<rect class="fault-window" x="67.5" "#), "{svg}");
        assert!(windows_group(&svg, "mmap").contains("<title>mmap: [0+32) order 0 (fault)</title>"), "{svg}");
        // The faults panel: a lane per variant, base's empty; triangles at 0 and 24 (x = 70
        // + 24/4096*1110 = 76.5, the triangle 3 px either side), bars over each range.
        assert!(svg.contains("(faults and ranges in range: base 0 and 0, mmap 2 and 4)"), "{svg}");
        assert!(
            svg.contains(r##"<g class="faults" data-variant="base" fill="#0072B2">"##)
                && svg.contains(r##"<g class="faults" data-variant="mmap" fill="#D55E00">"##)
        );
        let faults_group = &svg[svg.find(r#"<g class="faults" data-variant="mmap""#).unwrap()..];
        let faults_group = &faults_group[..faults_group.find("</g>").unwrap()];
        assert_eq!(faults_group.matches("<path").count(), 2);
        assert!(
            faults_group.contains(r#"<path d="M73.5,"#) && faults_group.contains("<title>mmap: fault @24</title>"),
            "{faults_group}"
        );
        let around_group = &svg[svg.find(r#"<g class="fault-around" data-variant="mmap""#).unwrap()..];
        let around_group = &around_group[..around_group.find("</g>").unwrap()];
        assert_eq!(around_group.matches("<rect").count(), 4);
        assert_eq!(
            around_group.matches("<title>mmap: around [16+16)</title>").count(),
            2,
            "a range mapped twice is drawn twice"
        );
        // The range at 4088 is clipped at the end of the picture: 8 of its 16 pages show.
        assert!(
            around_group.contains(r#"x="1177.8" y=""#)
                && around_group.contains(r#"width="2.2" height="3"><title>mmap: around [4088+16)"#),
            "{around_group}"
        );

        // Pread traces alone: none of it, not even the words.
        let sections = [Section { label: None, series: vec![Series { variant: "base", trace: &base }] }];
        let svg = render("t", "s", 0..4096, &sections);
        assert!(!svg.contains("fault") && !svg.contains("legend-mark"), "{svg}");
    }

    #[test]
    fn many_faults_draw_as_one_path_per_variant_without_tooltips() {
        let mut windows = Vec::new();
        for page in 0..8192 {
            windows.push(Window::open(Trigger::Fault, page, 1, RaState::default()));
            windows.push(Window::open(Trigger::FaultAround, page, 16, RaState::default()));
        }
        let trace = Trace { windows };
        let sections = [Section { label: None, series: vec![Series { variant: "base", trace: &trace }] }];
        let svg = render("t", "s", 0..8192, &sections);
        check_well_formed(&svg);
        assert!(!svg.contains("<title>"));
        assert_eq!(svg.matches(r#"<path class="faults" data-variant="base""#).count(), 1);
        assert_eq!(svg.matches(r#"<path class="fault-around" data-variant="base""#).count(), 1);
    }

    #[test]
    fn the_whole_headline_file_stays_small() {
        // About the headline's size on base: 3328 windows and 9721 folios over 131072 pages.
        let mut windows = Vec::new();
        let mut page = 0;
        while page < 131072 {
            let size = [2, 4, 8, 16, 32, 64, 126, 64, 64, 65, 63, 2, 4][windows.len() % 13];
            let folios: Vec<(u64, u32)> = (0..size / 2).map(|i| (page + 2 * i, 1)).collect();
            windows.push(window(page, size, &folios));
            page += size;
        }
        let base = Trace { windows };
        let sections =
            [Section { label: None, series: (0..3).map(|_| Series { variant: "base", trace: &base }).collect() }];
        let svg = render("t", "s", 0..131072, &sections);
        check_well_formed(&svg);
        assert!(svg.len() < 2 << 20, "{} bytes", svg.len());
        assert!(!svg.contains("<title>"), "too many markers for tooltips");
    }
}
