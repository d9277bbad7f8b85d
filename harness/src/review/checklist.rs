//! The checklist every reply answers: the questions readahead reviewers ask of every patch
//! (limits kept, sequential reads, random reads, folio orders, hints, the mmap fault path,
//! interleaved streams and several files),
//! each from the kernels' figures (the model's where only the model ran, marked so), and
//! the lines a patch author pastes below `---`. Pure: the review's cases in, lines out; the
//! detectors are [`super::questions`]'.

use radiff_model::{Step, Trace};

use super::evidence::{Case, KernelRuns, Origin};
use super::judge::{usual_of, Usual};
use super::questions::{
    amplification, asked_bytes, hints_ignored, hints_reset, largest_request_kb, largest_window_kb, order_drop,
    pages_per_folio, random_amplified, requests_over, size, windows_over, Fired, Hinted, Limits,
};
use super::reply::Review;
use crate::report::percent;
use crate::scenario::{Point, Scenario};
use crate::summary::Figures;

/// A question of the checklist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    Limits,
    Sequential,
    RandomReads,
    FolioOrders,
    Hints,
    Mmap,
    Streams,
}

impl Line {
    pub const ALL: [Line; 7] =
        [Line::Limits, Line::Sequential, Line::RandomReads, Line::FolioOrders, Line::Hints, Line::Mmap, Line::Streams];

    pub fn name(self) -> &'static str {
        match self {
            Line::Limits => "Limits kept (read_ahead_kb, max_sectors_kb)",
            Line::Sequential => "Sequential reads",
            Line::RandomReads => "Random reads",
            Line::FolioOrders => "Folio orders",
            Line::Hints => "Hints honoured",
            Line::Mmap => "The mmap fault path",
            Line::Streams => "Interleaved streams and several files",
        }
    }

    /// What no case did, for a line not reached.
    fn unreached(self) -> &'static str {
        match self {
            Line::Limits | Line::FolioOrders => "no case ran",
            Line::Sequential => "no case read sequentially",
            Line::RandomReads => "no case read at random",
            Line::Hints => "no case gave a hint (fadvise, madvise, readahead(2))",
            Line::Mmap => "no case mapped the file",
            Line::Streams => "no case read several streams or several files",
        }
    }
}

/// A line's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Unchanged,
    Better,
    Worse,
    NotReached,
}

impl Answer {
    pub fn name(self) -> &'static str {
        match self {
            Answer::Unchanged => "unchanged",
            Answer::Better => "better",
            Answer::Worse => "worse",
            Answer::NotReached => "not reached",
        }
    }
}

/// What one case gives the checklist: its name, the lines it asks, its limits, the bytes
/// its calls ask, and its two traces (the kernels' first runs, else the model's).
#[derive(Clone, Debug)]
pub struct Seen<'a> {
    pub name: &'a str,
    pub lines: Vec<Line>,
    /// The hints its steps give (`fadvise willneed`, `readahead(2)`).
    pub hints: Vec<String>,
    pub limits: Limits,
    /// Bytes its calls ask to read (`None`: a program's, not known here).
    pub asked: Option<u64>,
    pub base: &'a Trace,
    pub patch: &'a Trace,
    /// From the kernels (two runs each that agree); else the model's prediction.
    pub kernels: bool,
    /// How small it is (steps, file size): the smallest case that shows a thing is named.
    pub smallness: (usize, u64),
    /// Base's traces and the patch's with the case's hints and without them (the hint
    /// detectors'): the kernels' where they ran both twice each without a race, else the
    /// model's, where it gives hints and the model predicted it.
    pub hinted: Option<(Hinted<'a>, Hinted<'a>)>,
    /// Whether [`Seen::hinted`] is the kernels'.
    pub hinted_kernels: bool,
}

/// The lines `point` of `scenario` asks: limits and folio orders always; sequential reads
/// where it reads in order and nowhere at random; random reads, hints and the fault path
/// as [`usual_of`] reads them.
pub fn lines_of(scenario: &Scenario, point: &Point) -> Vec<Line> {
    let usual = usual_of(scenario, point);
    let in_order = scenario.steps.iter().any(|s| {
        matches!(
            s,
            Step::Sequential { .. } | Step::SequentialWith { .. } | Step::Interleaved { .. } | Step::Splice { .. }
        )
    }) || scenario.programs.iter().any(|p| p.job.as_deref().is_some_and(|j| j.contains("rw=read")));
    let mut lines = vec![Line::Limits];
    if in_order && !usual.contains(&Usual::RandomReads) {
        lines.push(Line::Sequential);
    }
    if streams(scenario) {
        lines.push(Line::Streams);
    }
    for (u, line) in
        [(Usual::RandomReads, Line::RandomReads), (Usual::Hints, Line::Hints), (Usual::Mappings, Line::Mmap)]
    {
        if usual.contains(&u) {
            lines.push(line);
        }
    }
    lines.push(Line::FolioOrders);
    lines
}

/// Whether `scenario` reads several streams at once or several files: an interleaved step,
/// a second file, a `threads:` step or a fio job of several jobs (each a program of its
/// own descriptors on one file).
fn streams(scenario: &Scenario) -> bool {
    let several_jobs = |job: &str| {
        job.lines().filter(|l| l.trim_start().starts_with('[') && !l.contains("[global]")).count() > 1
            || job
                .lines()
                .any(|l| l.trim().strip_prefix("numjobs=").and_then(|n| n.trim().parse::<u32>().ok()) > Some(1))
    };
    scenario.steps.iter().any(|s| matches!(s, Step::Interleaved { .. }))
        || !scenario.other_files.is_empty()
        || scenario
            .programs
            .iter()
            .any(|p| p.label.starts_with(crate::scenario::THREADS) || p.job.as_deref().is_some_and(several_jobs))
}

/// The hints `scenario`'s steps give ([`super::questions::is_hint_step`]), each once, in order.
pub fn hints_of(scenario: &Scenario) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in scenario.steps.iter().filter(|s| super::questions::is_hint_step(s)) {
        let hint = match s {
            Step::Fadvise { advice, .. } => format!("fadvise {}", format!("{advice:?}").to_lowercase()),
            Step::Madvise { advice, .. } => format!("madvise {}", format!("{advice:?}").to_lowercase()),
            Step::Readahead { .. } => "readahead(2)".to_string(),
            _ => continue,
        };
        if !out.contains(&hint) {
            out.push(hint);
        }
    }
    out
}

/// What the review's cases give the checklist: every case the kernels ran twice each
/// without a race, or else the model predicted (a race's kernel runs count neither way, nor
/// do the runs of a case whose tasks raced: only their pages repeat, not these figures).
pub fn seen(r: &Review) -> Vec<Seen<'_>> {
    let mut out = Vec::new();
    for c in &r.cases {
        let (base, patch, kernels) = match (&c.runs, &c.model) {
            (Some(k), _) if k.race().is_none() && k.raced.is_none() => (&k.base_trace, &k.patch_trace, true),
            (_, Some((a, b))) => (a, b, false),
            (_, None) => continue,
        };
        out.push(seen_case(c, base, patch, kernels));
    }
    out
}

fn seen_case<'a>(c: &'a Case, base: &'a Trace, patch: &'a Trace, kernels: bool) -> Seen<'a> {
    let single = c.single();
    let q = crate::explore::queue_limits(&single);
    let asked = if c.scenario.programs.is_empty() {
        asked_bytes(
            &radiff_model::pattern::expand_files(&c.scenario.steps, &c.scenario.file_sizes()),
            &c.scenario.file_sizes(),
        )
    } else {
        None
    };
    let on_kernels = kernels_hinted(c);
    Seen {
        name: &c.name,
        lines: lines_of(&c.scenario, &c.scenario.points[c.point]),
        hints: hints_of(&c.scenario),
        limits: Limits { read_ahead_kb: q.read_ahead_kb, max_sectors_kb: q.max_sectors_kb },
        asked,
        base,
        patch,
        kernels,
        smallness: (c.scenario.steps.len().max(1), c.scenario.file_size),
        hinted: on_kernels.or_else(|| c.model_hinted()),
        hinted_kernels: on_kernels.is_some(),
    }
}

/// A window or request over its limit on the patch and not on base in case `c`, from the
/// kernels (run twice on each, no race), said by name: `windows exceed read_ahead_kb: 272
/// KiB > 256 KiB`. Such a case is worse whatever its other figures say.
pub fn limit_broken(c: &Case) -> Option<String> {
    let k = c.runs.as_ref().filter(|k| k.race().is_none())?;
    let s = seen_case(c, &k.base_trace, &k.patch_trace, true);
    [windows_over, requests_over]
        .iter()
        .find_map(|over| over(s.patch, &s.limits).filter(|_| over(s.base, &s.limits).is_none()))
        .map(|o| o.said())
}

/// Hints of case `c` the patch ignores where base heeds them, or that reset the patch's
/// stream and not base's, on the kernels (the case run twice on each with its hints and
/// without them, no race), said by name: `hints reset the stream: ...`.
pub fn hints_broken(c: &Case) -> Option<String> {
    let (base, patch) = kernels_hinted(c)?;
    hints_ignored(base, patch).or_else(|| hints_reset(base, patch))
}

/// The kernels' traces of base and of the patch with case `c`'s hints and without them,
/// where they ran both twice each without a race and their tasks did not race.
fn kernels_hinted(c: &Case) -> Option<(Hinted<'_>, Hinted<'_>)> {
    let repeats = |k: &KernelRuns| k.race().is_none() && k.raced.is_none();
    let (k, u) = (c.runs.as_ref().filter(|k| repeats(k))?, c.unhinted_runs.as_ref().filter(|u| repeats(u))?);
    Some((
        Hinted { with: &k.base_trace, without: &u.base_trace },
        Hinted { with: &k.patch_trace, without: &u.patch_trace },
    ))
}

/// What the kernels show broken on case `c` whatever its figures say: a limit
/// ([`limit_broken`]), else hints ([`hints_broken`]).
pub fn broken(c: &Case) -> Option<String> {
    limit_broken(c).or_else(|| hints_broken(c))
}

/// Whether some case of `r` breaks a limit on the kernels ([`limit_broken`]).
pub fn limits_broken(r: &Review) -> bool {
    r.cases.iter().any(|c| limit_broken(c).is_some())
}

/// One line of the checklist, answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Said {
    pub line: Line,
    pub answer: Answer,
    /// The figures and the scenario (or why not reached).
    pub text: String,
    /// Only the model ran the cases it rests on.
    pub model: bool,
    /// The detectors that fired on the patch, by name (on the base too, marked).
    pub fired: Vec<Fired>,
}

impl Said {
    /// `Limits kept (...): worse (kernels): windows exceed read_ahead_kb: ...`.
    pub fn sentence(&self) -> String {
        let from = match (self.answer, self.model) {
            (Answer::NotReached, _) => "",
            (_, true) => " (the model's figures; the kernels ran none of these cases)",
            (_, false) => " (kernels)",
        };
        // Each question once, in the smallest case that shows it, the others counted.
        let mut news: Vec<String> = Vec::new();
        let mut asked: Vec<&str> = Vec::new();
        let new: Vec<&Fired> = self.fired.iter().filter(|f| !f.on_base).collect();
        for f in &new {
            let question = f.said.split(':').next().unwrap_or("");
            if asked.contains(&question) {
                continue;
            }
            asked.push(question);
            let more = new.iter().filter(|g| g.said.split(':').next() == Some(question)).count() - 1;
            news.push(match more {
                0 => f.sentence(),
                n => format!("{} (and in {})", f.sentence(), cases(n).replace("case", "more case")),
            });
        }
        let news = if news.is_empty() { String::new() } else { format!("{}; ", news.join("; ")) };
        format!("{}: {}{from}: {news}{}", self.line.name(), self.answer.name(), self.text)
    }
}

/// Whether a case is worse, better or unchanged on figures where more is worse.
fn direction(pairs: &[(u64, u64)]) -> Answer {
    if pairs.iter().any(|(a, b)| b > a) {
        Answer::Worse
    } else if pairs.iter().any(|(a, b)| b < a) {
        Answer::Better
    } else {
        Answer::Unchanged
    }
}

/// The line's answer from its cases' answers: worse where one is, better where one is and
/// none worse.
fn overall(answers: impl IntoIterator<Item = Answer>) -> Answer {
    let all: Vec<Answer> = answers.into_iter().collect();
    if all.contains(&Answer::Worse) {
        Answer::Worse
    } else if all.contains(&Answer::Better) {
        Answer::Better
    } else {
        Answer::Unchanged
    }
}

/// `3329 -> 1032 (-69%)`, or `16 (unchanged)`.
fn from_to(a: u64, b: u64) -> String {
    if a == b {
        format!("{a} (unchanged)")
    } else {
        format!("{a} -> {b} ({})", percent(a as f64, b as f64))
    }
}

fn bytes_to(a: u64, b: u64) -> String {
    if a == b {
        format!("{} (unchanged)", size(a))
    } else {
        format!("{} -> {} ({})", size(a), size(b), percent(a as f64, b as f64))
    }
}

/// The checklist over `seen`: every line, answered from the kernels' cases where some of
/// the line's ran on them, else from the model's; "not reached" where no case asks it.
pub fn checklist(seen: &[Seen]) -> Vec<Said> {
    Line::ALL
        .iter()
        .map(|&line| {
            let all: Vec<&Seen> = seen.iter().filter(|s| s.lines.contains(&line)).collect();
            let kernels: Vec<&Seen> = all.iter().copied().filter(|s| s.kernels).collect();
            let model = kernels.is_empty();
            let mut pool = if model { all } else { kernels };
            pool.sort_by_key(|s| s.smallness);
            if pool.is_empty() {
                return Said {
                    line,
                    answer: Answer::NotReached,
                    text: format!("{}.", line.unreached()),
                    model: false,
                    fired: Vec::new(),
                };
            }
            let (mut answer, text, mut fired) = match line {
                Line::Limits => limits(&pool),
                Line::FolioOrders => orders(&pool),
                Line::RandomReads => random(&pool),
                Line::Sequential | Line::Hints | Line::Mmap | Line::Streams => reads(line, &pool),
            };
            if line == Line::Hints {
                // Each hinted case's own: on the kernels where they ran it without its
                // hints too, else on the model; the kernels' first.
                let mut hinted: Vec<&Seen> = seen.iter().filter(|s| s.hinted.is_some()).collect();
                hinted.sort_by_key(|s| (!s.hinted_kernels, s.smallness));
                fired.extend(hints_fired(&hinted));
                if fired.iter().any(|f| !f.on_base) {
                    answer = Answer::Worse;
                }
            }
            Said { line, answer, text, model, fired }
        })
        .collect()
}

/// The hint detectors on `pool`'s traces with and without their hints (the kernels' where
/// they ran both, else the model's): hints the patch ignores where base heeds them, and
/// hints that empty the patch's readahead state more often than base's.
fn hints_fired(pool: &[&Seen]) -> Vec<Fired> {
    let mut out = Vec::new();
    for s in pool {
        let Some((base, patch)) = s.hinted else { continue };
        for said in [hints_ignored(base, patch), hints_reset(base, patch)].into_iter().flatten() {
            let hints = if s.hints.is_empty() { String::new() } else { format!(" ({})", s.hints.join(", ")) };
            let from = if s.hinted_kernels { "the kernels, run without them too" } else { "the model" };
            out.push(Fired { case: format!("{}{hints}, on {from}", s.name), said, on_base: false });
        }
    }
    out
}

/// The case a line names: the smallest worse, else the one that changed most, else the
/// smallest; with its answer.
fn shown<'a>(
    pool: &[&'a Seen<'a>],
    answer_of: impl Fn(&Seen) -> Answer,
    change: impl Fn(&Seen) -> f64,
) -> &'a Seen<'a> {
    if let Some(s) = pool.iter().find(|s| answer_of(s) == Answer::Worse) {
        return s;
    }
    pool.iter()
        .filter(|s| answer_of(s) == Answer::Better)
        .fold(None, |best: Option<&&Seen>, s| match best {
            Some(b) if change(b) >= change(s) => best,
            _ => Some(s),
        })
        .copied()
        .unwrap_or(pool[0])
}

/// The relative change of device reads and bytes read, whichever is larger.
fn reads_change(s: &Seen) -> f64 {
    let (a, b) = (Figures::of(s.base), Figures::of(s.patch));
    let rel = |x: u64, y: u64| (y as f64 - x as f64).abs() / (x.max(1) as f64);
    rel(a.data_reads, b.data_reads).max(rel(a.bytes_read, b.bytes_read))
}

fn cases(n: usize) -> String {
    format!("{n} case{}", if n == 1 { "" } else { "s" })
}

/// Limits: the largest window and request, base and patch, against read_ahead_kb and
/// max_sectors_kb; a window or request over its limit on the patch, the smallest case first.
fn limits(pool: &[&Seen]) -> (Answer, String, Vec<Fired>) {
    let mut fired = Vec::new();
    let mut answers = Vec::new();
    for s in pool {
        let mut case = Answer::Unchanged;
        for over in [windows_over, requests_over] {
            match (over(s.base, &s.limits), over(s.patch, &s.limits)) {
                (b, Some(p)) => {
                    fired.push(Fired { case: s.name.to_string(), said: p.said(), on_base: b.is_some() });
                    if b.is_none() {
                        case = Answer::Worse;
                    }
                }
                (Some(_), None) if case != Answer::Worse => case = Answer::Better,
                _ => {}
            }
        }
        answers.push(case);
    }
    let window = pool.iter().max_by_key(|s| (largest_window_kb(s.patch), std::cmp::Reverse(s.smallness))).unwrap();
    let request = pool.iter().max_by_key(|s| (largest_request_kb(s.patch), std::cmp::Reverse(s.smallness))).unwrap();
    let kb = |a: u64, b: u64| if a == b { format!("{a} KiB (unchanged)") } else { format!("{a} KiB -> {b} KiB") };
    let mut text = format!(
        "largest window {} in {} (read_ahead_kb {}), largest request {} in {} (max_sectors_kb {})",
        kb(largest_window_kb(window.base), largest_window_kb(window.patch)),
        window.name,
        window.limits.read_ahead_kb,
        kb(largest_request_kb(request.base), largest_request_kb(request.patch)),
        request.name,
        request.limits.max_sectors_kb
    );
    let answer = overall(answers.iter().copied());
    if fired.is_empty() {
        text.push_str(", none over its limit");
    }
    let kept: Vec<String> = fired.iter().filter(|f| f.on_base).map(Fired::sentence).collect();
    if !kept.is_empty() {
        text.push_str(&format!("; the base's own: {}", kept.join("; ")));
    }
    if answer == Answer::Better {
        let gone: Vec<&str> =
            pool.iter().zip(&answers).filter(|(_, a)| **a == Answer::Better).map(|(s, _)| s.name).collect();
        text.push_str(&format!("; over its limit on base only in {}", gone.join(", ")));
    }
    (answer, format!("{text}; {}.", cases(pool.len())), fired)
}

/// Folio orders: the distribution over the line's cases, base and patch, and where it drops.
fn orders(pool: &[&Seen]) -> (Answer, String, Vec<Fired>) {
    let answer_of = |s: &Seen| {
        let (a, b) = (Figures::of(s.base), Figures::of(s.patch));
        if order_drop(&a, &b).is_some() {
            Answer::Worse
        } else if pages_per_folio(&b) > pages_per_folio(&a) {
            Answer::Better
        } else {
            Answer::Unchanged
        }
    };
    let mut sum = (Figures::default(), Figures::default());
    let mut fired = Vec::new();
    for s in pool {
        let (a, b) = (Figures::of(s.base), Figures::of(s.patch));
        for (to, from) in [(&mut sum.0, &a), (&mut sum.1, &b)] {
            for (o, n) in &from.folio_orders {
                *to.folio_orders.entry(*o).or_default() += n;
            }
            to.folios += from.folios;
        }
        if let Some(d) = order_drop(&a, &b) {
            fired.push(Fired { case: s.name.to_string(), said: d.said(), on_base: false });
        }
    }
    let distribution = if sum.0.folio_orders == sum.1.folio_orders {
        format!("{} (unchanged)", sum.0.orders_line())
    } else {
        format!("{} -> {}", sum.0.orders_line(), sum.1.orders_line())
    };
    let ppf = |t: &Trace| pages_per_folio(&Figures::of(t));
    let at = shown(pool, answer_of, |s| (ppf(s.patch) - ppf(s.base)).abs());
    let text = format!(
        "folios {distribution} over {}; {}: {:.1} -> {:.1} pages per folio{}.",
        cases(pool.len()),
        at.name,
        ppf(at.base),
        ppf(at.patch),
        if fired.is_empty() { "; no order drops" } else { "" }
    );
    (overall(pool.iter().map(|s| answer_of(s))), text, fired)
}

/// Random reads: bytes read per byte asked and device reads; amplified random reads on the
/// patch by name.
fn random(pool: &[&Seen]) -> (Answer, String, Vec<Fired>) {
    let answer_of = |s: &Seen| {
        let (a, b) = (Figures::of(s.base), Figures::of(s.patch));
        direction(&[(a.bytes_read, b.bytes_read), (a.data_reads, b.data_reads)])
    };
    let mut fired = Vec::new();
    for s in pool {
        if let Some(p) = random_amplified(s.patch, s.asked) {
            let base = amplification(s.base, s.asked).unwrap_or(0.0);
            fired.push(Fired {
                case: s.name.to_string(),
                said: format!("random reads amplified: {p:.2} bytes read per byte asked (base {base:.2})"),
                on_base: random_amplified(s.base, s.asked).is_some(),
            });
        }
    }
    let at = shown(pool, answer_of, reads_change);
    let (a, b) = (Figures::of(at.base), Figures::of(at.patch));
    let per_byte = match (amplification(at.base, at.asked), amplification(at.patch, at.asked)) {
        (Some(x), Some(y)) => format!("{x:.2} -> {y:.2} bytes read per byte asked, "),
        _ => String::new(),
    };
    let text = format!(
        "{}: {per_byte}device reads {}, bytes read {}; {}.",
        at.name,
        from_to(a.data_reads, b.data_reads),
        bytes_to(a.bytes_read, b.bytes_read),
        cases(pool.len())
    );
    (overall(pool.iter().map(|s| answer_of(s))), text, fired)
}

/// Sequential reads, hints, the fault path: device reads and bytes read (and faults on the
/// fault path), more being worse, the case that shows it named; the hints given, by name.
fn reads(line: Line, pool: &[&Seen]) -> (Answer, String, Vec<Fired>) {
    let answer_of = |s: &Seen| {
        let (a, b) = (Figures::of(s.base), Figures::of(s.patch));
        let mut pairs = vec![(a.data_reads, b.data_reads), (a.bytes_read, b.bytes_read)];
        if line == Line::Mmap {
            pairs.push((a.faults, b.faults));
        }
        direction(&pairs)
    };
    let at = shown(pool, answer_of, reads_change);
    let (a, b) = (Figures::of(at.base), Figures::of(at.patch));
    let mut text = at.name.to_string();
    if line == Line::Hints && !at.hints.is_empty() {
        text.push_str(&format!(" ({})", at.hints.join(", ")));
    }
    text.push_str(&format!(
        ": device reads {}, bytes read {}",
        from_to(a.data_reads, b.data_reads),
        bytes_to(a.bytes_read, b.bytes_read)
    ));
    if line == Line::Mmap {
        text.push_str(&format!(", faults {}", from_to(a.faults, b.faults)));
    }
    (overall(pool.iter().map(|s| answer_of(s))), format!("{text}; {}.", cases(pool.len())), Vec::new())
}

/// The heading of the lines for the changelog (the reply's last part).
pub const CHANGELOG: &str = "For the changelog (below ---):";

/// The lines a patch author pastes below `---`: the headline's device reads, bytes and
/// folio orders before and after, from the kernels, and the commands that reproduce them;
/// where the kernels showed no change, that, and the review's command.
pub fn changelog(r: &Review) -> Vec<String> {
    let mut out = Vec::new();
    let variant = &r.variant;
    match r.headline().map(|h| &r.cases[h]) {
        Some(c) if c.runs.is_some() => {
            let k = c.runs.as_ref().expect("the headline ran");
            let (a, b) = (&k.base[0], &k.patch[0]);
            out.push(format!("radiff, {}: {}", c.name, c.scenario.description.trim_end_matches('.')));
            out.push("Base -> patch, two runs of each kernel:".to_string());
            if let Some((x, y)) = c.raced_page_counts() {
                out.push(format!("  pages brought in  {} (its tasks raced: only the pages repeat)", from_to(x, y)));
            } else {
                out.push(format!("  device reads  {}", from_to(a.data_reads, b.data_reads)));
                out.push(format!("  bytes read    {}", bytes_to(a.bytes_read, b.bytes_read)));
                out.push(format!("  folio orders  {} -> {}", a.orders_line(), b.orders_line()));
            }
            let file = c.file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            let scenario = match (&c.origin, r.folder.is_empty()) {
                (Origin::Repository, true) => c.file.display().to_string(),
                (_, true) => format!("scenarios/{file}"),
                (_, false) => format!("{}/scenarios/{file}", r.folder),
            };
            if r.made && !r.folder.is_empty() {
                out.push(format!("  cp -r {}/variant kernels/variants/{variant} &&", r.folder));
            }
            out.push(format!("  radiff report {scenario} --variants base,{variant} --runs 2"));
        }
        _ => {
            let ran = r.cases.iter().filter(|c| c.runs.as_ref().is_some_and(|k| k.race().is_none())).count();
            out.push(format!(
                "radiff: no change of device reads, bytes or folios on the kernels ({} run twice on each).",
                cases(ran)
            ));
        }
    }
    if !r.command.is_empty() {
        out.push(format!("  {}", r.command));
    }
    out
}

#[cfg(test)]
#[path = "checklist_tests.rs"]
mod tests;
