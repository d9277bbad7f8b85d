//! The review's reply, in mailing-list form (plain text, 72 columns, the patch's hunks
//! quoted with `> ` where a finding points at them) and its Markdown twin.

use std::fmt::Write;

use super::checklist;
use super::evidence::{Case, Origin};
use super::judge::{judge, looked, shortfall_lines, Looked, Usual};
use crate::report::{differences, percent, rows, Cell, Sample};
use crate::summary::Figures;

/// Columns of the reply's own lines (quoted hunks keep their width).
pub const WIDTH: usize = 72;

/// A function the patch changes, and how the model followed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Touched {
    pub function: String,
    pub file: String,
    pub how: String,
    /// Whether the model follows it (a known policy, the hybrid).
    pub modelled: bool,
}

/// Where base and patch part on a case, in the base's kernel lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placed {
    pub window: usize,
    /// Each decision with its lines (`id  (mm/readahead.c:713-717)`).
    pub lines: Vec<String>,
    /// The patch's hunks (indexes into [`Review::hunks`]) that hold one of those lines.
    pub hunks: Vec<usize>,
    /// Whether the window is the kernels' (the model did not predict the case).
    pub from_kernels: bool,
}

/// Everything the reply says.
#[derive(Clone, Debug, Default)]
pub struct Review {
    pub subject: String,
    /// What the thread's reviewers asked of the checklist: each quoted at its line.
    pub asked: Vec<super::asked::Asked>,
    /// The mail it answers: whom to send it to, and where in the thread.
    pub thread: crate::mail::Thread,
    pub variant: String,
    /// What the kernels were: `Linux 7.3.4 (Debian linux-source-7.3) under QEMU TCG`.
    pub kernels: String,
    pub touched: Vec<Touched>,
    /// How the model predicted the patch (`None`: it could not; [`Touched`] says why).
    pub model: Option<String>,
    /// Repository cases first, then the search's.
    pub cases: Vec<Case>,
    /// Per case (same index), where base and patch part.
    pub placed: Vec<Option<Placed>>,
    /// The patch's hunks, as `diff -u` shows them in the base's lines.
    pub hunks: Vec<String>,
    /// The search, in a sentence (none when there was none, with why).
    pub searched: String,
    /// The search's wall time and the generated scenarios it predicted, when one ran.
    pub search: Option<(std::time::Duration, u64)>,
    /// The usual questions the search's generated scenarios asked (on the model).
    pub search_reached: Vec<super::judge::Usual>,
    /// Whether a model predicts the patch (a known policy, the hybrid, the port).
    pub modelled: bool,
    /// Why no model follows the patch, when none does.
    pub why_not: Option<String>,
    /// The file systems the patch can reach (`xfs`, `ext4`, `f2fs`).
    pub file_systems: Vec<String>,
    /// The patch's functions that no scenario's base path reached.
    pub uncovered: Vec<String>,
    /// How many patches (more than one: a series).
    pub patches: usize,
    /// For a series: which patch first changes a case (case name, patch subject).
    pub series: Vec<(String, String)>,
    /// The headline's picture, relative to the review folder.
    pub picture: Option<String>,
    /// The review's folder (`review-VARIANT`), once written.
    pub folder: String,
    /// Whether the variant's folder is the review's own (`cp -r FOLDER/variant` makes it one).
    pub made: bool,
    /// The `radiff review` command that made it.
    pub command: String,
}

impl Review {
    fn repository(&self) -> impl Iterator<Item = (usize, &Case)> {
        self.cases.iter().enumerate().filter(|(_, c)| c.origin == Origin::Repository)
    }

    /// The case that shows the patch most: the strongest change shown by the kernels,
    /// among the repository's first.
    pub fn headline(&self) -> Option<usize> {
        // A case whose tasks raced shows only its pages: any other first.
        let best = |repo: bool, raced: bool| {
            self.cases
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    c.shown_by_kernels()
                        && (c.origin == Origin::Repository) == repo
                        && c.raced_pages().is_some() == raced
                })
                .fold(None, |best: Option<(usize, f64)>, (i, c)| match best {
                    Some((_, s)) if s >= c.strength() => best,
                    _ => Some((i, c.strength())),
                })
                .map(|(i, _)| i)
        };
        [(true, false), (false, false), (true, true), (false, true)].into_iter().find_map(|(r, raced)| best(r, raced))
    }

    /// Whether the kernels show anything worse (run twice each, no race).
    pub fn worse(&self) -> bool {
        self.cases.iter().any(|c| c.shown_by_kernels() && worse(c))
    }

    fn races(&self) -> Vec<(&Case, String)> {
        self.cases.iter().filter_map(|c| Some((c, c.runs.as_ref()?.race()?))).collect()
    }
}

/// Whether a case is worse: a figure, or what the kernels show broken on the patch alone
/// (a window or request over its limit, hints ignored or resetting the stream:
/// [`checklist::broken`]).
fn worse(c: &Case) -> bool {
    c.worse() || checklist::broken(c).is_some()
}

/// Wraps `text` at [`WIDTH`] columns, each line after the first indented by `indent`.
fn wrap(text: &str, first: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.len() + 1 + word.len() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// A shell command at [`WIDTH`] columns, indented by two, each line but the last ending
/// in ` \\` (a word longer than a line keeps its line).
fn wrap_command(command: &str) -> String {
    // An option and its value stay on one line.
    let mut words: Vec<String> = Vec::new();
    for word in command.split_whitespace() {
        match words.last_mut() {
            Some(last) if last.starts_with("--") && !last.contains(' ') && !word.starts_with('-') => {
                last.push(' ');
                last.push_str(word);
            }
            _ => words.push(word.to_string()),
        }
    }
    let mut lines: Vec<String> = vec!["  ".to_string()];
    for word in &words {
        let line = lines.last_mut().expect("one line");
        if line.len() > 4 && line.len() + 1 + word.len() + 2 > WIDTH {
            lines.push(format!("    {word}"));
        } else {
            if line.len() > 2 {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.join(" \\\n") + "\n"
}

/// The figures that differ, base against patch, as `report --all` lists them: (figure,
/// base, patch, change).
pub fn figure_rows(base: &[Figures], patch: &[Figures]) -> Vec<[String; 4]> {
    let cell = |v: &str, f: &[Figures]| Cell {
        point: None,
        variant: v.into(),
        samples: f
            .iter()
            .map(|f| Sample { figures: f.clone(), pattern_ns: 0, raced: false, pages: Default::default() })
            .collect(),
    };
    let r = rows(&[cell("base", base), cell("patch", patch)]);
    differences(&r[0], &r[1])
        .into_iter()
        .map(|d| [d.col.name(), d.col.format(d.a), d.col.format(d.b), percent(d.a, d.b)])
        .collect()
}

/// A case's two sets of figures: the kernels' runs, else the model's prediction.
fn figures_of(c: &Case) -> (Vec<Figures>, Vec<Figures>, &'static str) {
    match (&c.runs, &c.model) {
        (Some(r), _) => (r.base.clone(), r.patch.clone(), "kernels"),
        (None, Some((a, b))) => (vec![Figures::of(a)], vec![Figures::of(b)], "model"),
        _ => (Vec::new(), Vec::new(), "none"),
    }
}

/// The figure rows of a case, aligned under its name.
fn table(out: &mut String, c: &Case) {
    if let Some((x, y)) = c.raced_page_counts() {
        // The tasks raced: only the pages brought in repeat (docs/concurrency.md).
        let change = crate::report::percent(x as f64, y as f64);
        let _ = writeln!(out, "    {:<22}  {x:>10}  {y:>10}  {change:>8}", "pages brought in");
        return;
    }
    let (a, b, _) = figures_of(c);
    if a.is_empty() {
        return;
    }
    for [name, x, y, change] in figure_rows(&a, &b) {
        let _ = writeln!(out, "    {name:<22}  {x:>10}  {y:>10}  {change:>8}");
    }
}

/// The reply as plain text: a mail a maintainer sends as it is (`git send-email`, `mutt
/// -H`), its headers first, then a blank line and the body.
pub fn text(r: &Review) -> String {
    let mut s = super::thread::headers(r);
    s.push('\n');
    s.push_str(&wrap(
        &format!(
            "radiff ran this {} ({}) against {}. Every figure below that says \"kernels\" comes from two runs of each kernel that agree; {}",
            if r.patches > 1 { format!("series of {} patches", r.patches) } else { "patch".to_string() },
            r.variant,
            r.kernels,
            match &r.model {
                Some(m) => format!("the model ({m}) chose what to run."),
                None => "the model cannot predict this patch (below), so the kernels ran every repository scenario the patch can reach and a small generated covering set of the usual questions: no model, no search, no Tested-by.".into(),
            }
        ),
        "",
        "",
    ));
    s.push_str("\nWhat it touches:\n");
    for t in &r.touched {
        s.push_str(&wrap(&format!("{}() ({}): {}", t.function, t.file, t.how), "- ", "  "));
    }
    if r.touched.is_empty() {
        s.push_str("- none of the functions the model ports\n");
    }
    repository_part(&mut s, r);
    let mut quoted = Vec::new();
    let headline = r.headline();
    if let Some(h) = headline {
        headline_part(&mut s, r, h, &mut quoted);
    }
    checklist_part(&mut s, r);
    for worse in [false, true] {
        let mut shown: Vec<usize> = r
            .cases
            .iter()
            .enumerate()
            .filter(|(_, c)| c.shown_by_kernels() && self::worse(c) == worse)
            .map(|(i, _)| i)
            .collect();
        // The smallest first: fewest steps, then the smallest file.
        shown.sort_by_key(|&i| (r.cases[i].scenario.steps.len().max(1), r.cases[i].scenario.file_size));
        let title = if worse { "Where it is worse" } else { "Where it is better" };
        match shown.len() {
            0 => {
                let _ = writeln!(s, "\n{title}: nowhere the kernels showed.");
            }
            n => {
                let _ = writeln!(s, "\n{title} ({n} case{}, the smallest first):", if n == 1 { "" } else { "s" });
            }
        }
        // Every worse case in full; of the better ones the smallest, the rest a line each;
        // the headline by name.
        let mut full = 0;
        for i in shown {
            let c = &r.cases[i];
            if Some(i) == headline {
                s.push_str(&wrap(&format!("{}: the headline above: {}", c.name, one_line(c)), "- ", "  "));
            } else if worse || full == 0 {
                case_part(&mut s, r, i, &mut quoted);
                full += 1;
            } else {
                s.push_str(&wrap(&format!("{}: {}", c.name, one_line(c)), "- ", "  "));
            }
        }
    }
    closing_part(&mut s, r);
    if let Some(q) = super::asked::quoted(&r.asked, super::asked::Topic::Changelog) {
        let q = q.trim().trim_start_matches('(').trim_end_matches(')');
        s.push('\n');
        s.push_str(&wrap(&format!("{q}: the lines below are the numbers."), "", ""));
    }
    let _ = writeln!(s, "\n{}", checklist::CHANGELOG);
    for line in checklist::changelog(r) {
        match line.strip_prefix("  radiff ").or_else(|| line.strip_prefix("  cp ")) {
            Some(_) => s.push_str(&wrap_command(line.trim_start())),
            // `  folio orders  A -> B`: the figure's lines under its own column.
            None => match line.strip_prefix("  ").and_then(|l| l.find("  ")) {
                Some(at) => {
                    let rest = line[2 + at..].trim_start();
                    let first = &line[..line.len() - rest.len()];
                    s.push_str(&wrap(rest, first, &" ".repeat(first.len())));
                }
                None => s.push_str(&wrap(&line, "", "  ")),
            },
        }
    }
    s
}

/// The reviewers' questions, a line each ([`checklist`]): the answer, the figures, the
/// case, and each detector that fired on the patch by name; who asked it in the thread,
/// quoted after its name ([`super::asked`]).
fn checklist_part(s: &mut String, r: &Review) {
    let _ = writeln!(s, "\nThe reviewers' questions:");
    for said in checklist::checklist(&checklist::seen(r)) {
        s.push_str(&wrap(&super::asked::at_line(&r.asked, said.line, &said.sentence()), "- ", "  "));
    }
}

fn repository_part(s: &mut String, r: &Review) {
    let repo: Vec<(usize, &Case)> = r.repository().collect();
    let changed: Vec<&(usize, &Case)> = repo.iter().filter(|(_, c)| c.changed()).collect();
    let _ = writeln!(
        s,
        "\nThe repository's scenarios: {} of {} points change requests or folios{}",
        changed.len(),
        repo.len(),
        if changed.is_empty() { "." } else { ":" }
    );
    for (_, c) in &changed {
        let (_, _, from) = figures_of(c);
        if c.runs.as_ref().is_some_and(|k| k.race().is_some()) {
            let _ = writeln!(s, "  {} ({from}: a race, set aside below)", c.name);
            continue;
        }
        let _ = writeln!(s, "  {} ({from})", c.name);
        table(s, c);
    }
    let unchanged: Vec<String> = repo
        .iter()
        .filter(|(_, c)| !c.changed() && (c.runs.is_some() || c.model.is_some()))
        .map(|(_, c)| format!("{}{}", c.name, if c.runs.is_some() { "" } else { "*" }))
        .collect();
    if !unchanged.is_empty() {
        s.push_str(&wrap(
            &format!(
                "Unchanged{}: {}.",
                if unchanged.iter().any(|u| u.ends_with('*')) {
                    " (* the model's prediction, not run on the patch; a program's on the calls its base run recorded)"
                } else {
                    " on the kernels"
                },
                unchanged.join(", ")
            ),
            "",
            "",
        ));
    }
}

fn headline_part(s: &mut String, r: &Review, h: usize, quoted: &mut Vec<usize>) {
    let c = &r.cases[h];
    let _ = writeln!(s);
    s.push_str(&wrap(&format!("The headline, {}: {}.", c.name, c.scenario.description), "", ""));
    if let Some((x, y)) = c.raced_page_counts() {
        let _ = writeln!(
            s,
            "  pages brought in  {x} -> {y} ({}); its tasks raced: only the pages repeat",
            percent(x as f64, y as f64)
        );
    } else if let Some(k) = &c.runs {
        let (a, b) = (&k.base[0], &k.patch[0]);
        let _ = writeln!(
            s,
            "  device reads   {} -> {} ({})",
            a.data_reads,
            b.data_reads,
            percent(a.data_reads as f64, b.data_reads as f64)
        );
        s.push_str(&wrap(&format!("{} ({})", a.folios, a.orders_line()), "  folios before  ", "                 "));
        s.push_str(&wrap(&format!("{} ({})", b.folios, b.orders_line()), "  folios after   ", "                 "));
        if a.read_sizes != b.read_sizes {
            s.push_str(&wrap(&a.sizes_line(4), "  reads before   ", "                 "));
            s.push_str(&wrap(&b.sizes_line(4), "  reads after    ", "                 "));
        }
    }
    let worse: Vec<&str> = c.changes().iter().filter(|x| x.worse).map(|x| x.figure.name()).collect();
    if !worse.is_empty() {
        s.push_str(&wrap(&format!("Worse on {}.", worse.join(", ")), "  ", "  "));
    }
    if let Some(said) = checklist::broken(c) {
        s.push_str(&wrap(&format!("{said}."), "  ", "  "));
    }
    parting_part(s, r, h, quoted);
    if let Some(p) = &r.picture {
        let _ = writeln!(s, "  The windows of both kernels: {p}");
    }
}

/// Where base and patch part on case `i`, in kernel lines, and the hunks there: quoted the
/// first time (`quoted` keeps which were), named after that.
fn parting_part(s: &mut String, r: &Review, i: usize, quoted: &mut Vec<usize>) {
    let Some(Some(p)) = r.placed.get(i) else { return };
    let whose =
        if p.from_kernels { "the kernels' windows, the model not predicting it" } else { "the model's windows" };
    if p.lines.is_empty() {
        s.push_str(&wrap(&format!("Base and patch part at window {} ({whose}).", p.window), "  ", "  "));
    } else {
        let _ = writeln!(s, "  Base and patch part at window {}, where the base decides:", p.window);
        for l in &p.lines {
            s.push_str(&wrap(l, "    ", "      "));
        }
    }
    for &h in &p.hunks {
        let first = r.hunks[h].lines().next().unwrap_or("");
        // `@@ -713,6 +713,9 @@`, without the function the header repeats.
        let header = first.match_indices("@@").nth(1).map_or(first, |(at, _)| &first[..at + 2]);
        if quoted.contains(&h) {
            let _ = writeln!(s, "  in the hunk quoted above ({header})");
            continue;
        }
        let _ = writeln!(s, "  in this hunk of the patch:");
        if quoted.is_empty() {
            if let Some(line) = super::thread::attribution(&r.thread) {
                s.push_str(&wrap(&line, "", ""));
            }
        }
        quoted.push(h);
        for line in r.hunks[h].lines() {
            let _ = writeln!(s, "> {line}");
        }
    }
}

/// A case's changed figures in one line: `device reads 3329 -> 1032 (-69%), ...`.
fn one_line(c: &Case) -> String {
    let parts: Vec<String> = c
        .changes()
        .iter()
        .map(|x| {
            let n = |v: f64| crate::explore::detect::fmt_num(v);
            format!("{} {} -> {} ({})", x.figure, n(x.base), n(x.variant), percent(x.base, x.variant))
        })
        .collect();
    parts.join(", ")
}

fn case_part(s: &mut String, r: &Review, i: usize, quoted: &mut Vec<usize>) {
    let c = &r.cases[i];
    let _ = writeln!(s, "- {} ({})", c.name, c.file.display());
    s.push_str(&wrap(&format!("{}.", c.scenario.description), "  ", "  "));
    if let Origin::Found { key } = &c.origin {
        s.push_str(&wrap(key, "  Found by the search: ", "    "));
        let yaml = crate::files::read_text(&c.file).unwrap_or_default();
        let body: Vec<&str> = yaml.lines().filter(|l| !l.starts_with('#') && !l.starts_with("description:")).collect();
        if body.len() <= 24 && body.iter().all(|l| l.len() + 4 <= WIDTH) {
            for l in body {
                let _ = writeln!(s, "    {l}");
            }
        }
    }
    s.push_str(&wrap(&one_line(c), "  ", "  "));
    if let Some(said) = checklist::broken(c) {
        s.push_str(&wrap(&format!("{said}."), "  ", "  "));
    }
    parting_part(s, r, i, quoted);
}

fn closing_part(s: &mut String, r: &Review) {
    let races = r.races();
    if !races.is_empty() {
        let _ = writeln!(s, "\nSet aside as races (two runs of one kernel differ):");
        for (c, why) in races {
            s.push_str(&wrap(&format!("{}: {why}", c.name), "- ", "  "));
        }
    }
    let not_run: Vec<String> = r
        .cases
        .iter()
        .filter(|c| c.changed() && c.runs.is_none())
        .map(|c| format!("{} ({})", c.name, c.not_run.as_deref().unwrap_or("not run")))
        .collect();
    if !not_run.is_empty() {
        let _ = writeln!(s);
        s.push_str(&wrap(&format!("Predicted to change but not run on the kernels: {}.", not_run.join("; ")), "", ""));
    }
    let mut unreached: Vec<(&str, usize)> = Vec::new();
    for c in r.cases.iter().filter(|c| !c.changed() && c.runs.is_none() && c.model.is_none()) {
        let why = c.not_run.as_deref().unwrap_or("not run");
        match unreached.iter_mut().find(|(w, _)| *w == why) {
            Some((_, n)) => *n += 1,
            None => unreached.push((why, 1)),
        }
    }
    for (why, n) in unreached {
        let _ = writeln!(s);
        s.push_str(&wrap(&format!("Not run, {n} point{}: {why}.", if n == 1 { "" } else { "s" }), "", ""));
    }
    let _ = writeln!(s);
    s.push_str(&wrap(&r.searched, "", ""));
    if !r.uncovered.is_empty() {
        s.push_str(&wrap(&format!("Not covered: no scenario's base path reached {}.", r.uncovered.join(", ")), "", ""));
    }
    for line in series_lines(&r.series) {
        s.push_str(&wrap(&line, "", ""));
    }
    let looked = looked(r);
    looked_part(s, &looked);
    let verdict = judge(&looked);
    let _ = writeln!(s);
    if verdict.tested_by() {
        let _ = writeln!(s, "Tested-by: radiff (nothing worse on the kernels above)");
        return;
    }
    if verdict.worse {
        s.push_str(&wrap("No Tested-by: the kernels show it worse above.", "", ""));
        if verdict.shortfalls.is_empty() {
            return;
        }
        s.push_str("Nor, without that, is there enough evidence for a Tested-by:\n");
    } else {
        s.push_str("Not enough evidence for a Tested-by:\n");
    }
    for line in shortfall_lines(&verdict, &looked) {
        s.push_str(&wrap(&line, "- ", "  "));
    }
}

/// How far the review looked ([`Looked`]), a line per part: the model, the search, the
/// kernels, the usual questions.
fn looked_part(s: &mut String, l: &Looked) {
    let _ = writeln!(s, "\nHow far it looked:");
    let modelled = l.functions.iter().filter(|f| f.modelled).count();
    let names: Vec<String> = l.functions.iter().map(|f| format!("{}()", f.function)).collect();
    let model = match (l.modelled, l.functions.len()) {
        (false, _) => "no model follows the patch".to_string(),
        (true, 0) => "it follows the patch (it changes none of the functions the model ports)".to_string(),
        (true, n) => format!("it follows {modelled} of the {n} changed functions ({})", names.join(", ")),
    };
    s.push_str(&wrap(&format!("The model: {model}."), "- ", "  "));
    let search = match &l.search {
        Some(x) => format!(
            "{} generated scenarios on the model in {:.0} s; the kernels ran {} of the {} findings it kept",
            x.scenarios,
            x.elapsed.as_secs_f64(),
            x.kept_ran,
            x.kept
        ),
        None => "none".to_string(),
    };
    s.push_str(&wrap(&format!("The search: {search}."), "- ", "  "));
    let covering = match l.covering {
        0 => String::new(),
        n => format!(" ({} of the {n} of the generated covering set among them)", l.covering_ran),
    };
    s.push_str(&wrap(
        &format!(
            "The kernels: {} of the {} points of the patch's reach ran twice on each kernel{covering}, on {}.",
            l.reach_ran,
            l.reach,
            l.file_systems.join(", ")
        ),
        "- ",
        "  ",
    ));
    let reached: Vec<&str> = Usual::ALL.iter().filter(|u| !l.unreached.contains(u)).map(|u| u.name()).collect();
    let unreached: Vec<&str> = l.unreached.iter().map(|u| u.name()).collect();
    let usual = match (reached.is_empty(), unreached.is_empty()) {
        (_, true) => format!("each reached by some case: {}", reached.join("; ")),
        (true, _) => format!("none reached: {}", unreached.join("; ")),
        (false, false) => format!("reached: {}; no case reached: {}", reached.join("; "), unreached.join("; ")),
    };
    s.push_str(&wrap(&format!("The usual questions, {usual}."), "- ", "  "));
}

/// The reply as Markdown, for a web page or a cover letter: the same content, its tables
/// as tables and its hunks as diffs.
pub fn markdown(r: &Review) -> String {
    let plain = text(r);
    // The mail's headers but its subject are for sending, not for a page.
    let (head, body) = plain.split_once("\n\n").unwrap_or((&plain, ""));
    let subject = head.lines().find_map(|l| l.strip_prefix("Subject: ")).unwrap_or("");
    let mut md = format!("# {subject}\n\n");
    let mut in_quote = false;
    let mut in_table = false;
    let (body, changelog) = match body.split_once(&format!("\n{}\n", checklist::CHANGELOG)) {
        Some((before, after)) => (before, Some(after)),
        None => (body, None),
    };
    for line in body.lines() {
        let quoted = line.starts_with("> ");
        if quoted != in_quote {
            md.push_str(if quoted { "```diff\n" } else { "```\n" });
            in_quote = quoted;
        }
        if quoted {
            md.push_str(&line[2..]);
            md.push('\n');
            continue;
        }
        if in_table && !is_figure_row(line) {
            // A table ends at a blank line; the next line would be read as its row.
            md.push('\n');
        }
        if is_case_heading(line) {
            if !md.ends_with("\n\n") {
                md.push('\n');
            }
            let _ = writeln!(md, "### {}", line.trim());
        } else if line.ends_with(':') && !line.starts_with(' ') && !line.starts_with('-') {
            let _ = writeln!(md, "\n## {}", line.trim_end_matches(':'));
        } else if is_figure_row(line) {
            if !in_table {
                md.push_str("\n| figure | base | patch | change |\n|:--|--:|--:|--:|\n");
                in_table = true;
            }
            let cells: Vec<&str> = line.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
            continue;
        } else {
            md.push_str(line);
            md.push('\n');
        }
        in_table = false;
    }
    if in_quote {
        md.push_str("```\n");
    }
    if let Some(lines) = changelog {
        let _ = write!(md, "\n## {}\n\n```\n{lines}```\n", checklist::CHANGELOG.trim_end_matches(':'));
    }
    md
}

/// Whether a plain line names a repository case above its figures (`  NAME (kernels)`).
fn is_case_heading(line: &str) -> bool {
    line.starts_with("  ")
        && !line.starts_with("   ")
        && (line.ends_with("(kernels)") || line.ends_with("(model)") || line.ends_with("set aside below)"))
}

/// Whether a plain line is a figure row of [`table`] (the change column ends it).
fn is_figure_row(line: &str) -> bool {
    let last = line.split_whitespace().last().unwrap_or("");
    line.starts_with("    ") && (last.ends_with('%') || last == "new")
}

/// The series' bisections, one sentence per verdict in the order they came, the cases it
/// holds for named together: "The series, a and b: patch 1 of 2 first changes each (...)".
pub(crate) fn series_lines(series: &[(String, String)]) -> Vec<String> {
    let mut by_verdict: Vec<(&str, Vec<&str>)> = Vec::new();
    for (case, verdict) in series {
        match by_verdict.iter_mut().find(|(v, _)| v == verdict) {
            Some((_, cases)) => cases.push(case),
            None => by_verdict.push((verdict, vec![case])),
        }
    }
    by_verdict
        .into_iter()
        .map(|(verdict, cases)| match cases.split_last() {
            Some((last, rest)) if !rest.is_empty() => {
                format!("The series, {} and {last}: {}.", rest.join(", "), verdict.replacen(" it ", " each ", 1))
            }
            _ => format!("The series, {}: {verdict}.", cases.join("")),
        })
        .collect()
}
