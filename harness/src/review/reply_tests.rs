//! The reply's form, from hand-made cases: columns, quoting, the headline, the verdict line.

use std::path::PathBuf;

use radiff_model::{Folio, RaState, Request, Submit, Trace, Trigger, Window};

use super::evidence::{Case, KernelRuns, Origin};
use super::reply::{markdown, series_lines, text, Placed, Review, Touched, WIDTH};
use crate::scenario::Scenario;
use crate::summary::Figures;

/// `windows` windows of one read of `pages` pages in one folio of `order`.
fn trace(windows: u64, pages: u64, order: u32) -> Trace {
    Trace {
        windows: (0..windows)
            .map(|i| Window {
                file: 0,
                trigger: if i == 0 { Trigger::Sync } else { Trigger::Async },
                index: i * pages,
                req_count: 256,
                ra: RaState::default(),
                submits: vec![Submit::Order { index: i * pages, size: pages, async_size: pages, order }],
                folios: vec![Folio { index: i * pages, order }],
                requests: vec![Request { sector: 1000 + i * pages * 8, sectors: pages * 8, rwbs: "RA".into() }],
            })
            .collect(),
    }
}

fn case(name: &str, base: Trace, patch: Trace, race: bool) -> Case {
    let scenario = Scenario::parse(
        &PathBuf::from(format!("scenarios/{name}.yaml")),
        // Steps that ask each usual question (random reads, a hint, a mapping, a limit), so
        // that a review of these cases can earn its Tested-by.
        "description: 1 MiB reads after a 4 KiB read\ndevice: {kind: nvme, size: 1 GiB}\nfilesystem: xfs\nfile: {size: 1 MiB}\nqueue: {read_ahead_kb: 0}\nreads:\n  - read: {offset: 0, size: 4 KiB}\n  - random: {count: 2, size: 4 KiB, seed: 1}\n  - fadvise: {advice: willneed}\n  - mmap: {map: 0}\n  - touch: {map: 0, order: sequential}\n",
    )
    .unwrap();
    let (a, b) = (Figures::of(&base), Figures::of(&patch));
    let mut again = a.clone();
    if race {
        again.data_reads += 1;
    }
    let file = scenario.path.clone();
    let mut c = Case::new(name.into(), scenario, 0, Origin::Repository, file);
    c.wanted = true;
    c.model = Some((base.clone(), patch.clone()));
    c.runs = Some(KernelRuns {
        base: vec![a, again],
        patch: vec![b.clone(), b],
        base_trace: base,
        patch_trace: patch,
        raced: None,
    });
    c
}

fn review(cases: Vec<Case>) -> Review {
    let placed = cases
        .iter()
        .map(|c| {
            c.changed().then(|| Placed {
                window: 3,
                lines: vec!["page_cache_async_ra: aligned_end < end: trimmed  (mm/readahead.c:713-717)".into()],
                hunks: vec![0],
                from_kernels: false,
            })
        })
        .collect();
    Review {
        subject: "[PATCH] mm/readahead: keep at least half of the async window when aligning it".into(),
        variant: "v1".into(),
        kernels: "Linux 7.3.4 (Debian's linux-source-7.3) and the same with the patch, under QEMU".into(),
        touched: vec![Touched {
            function: "page_cache_async_ra".into(),
            file: "mm/readahead.c".into(),
            how: "ran as this patch's C inside the model (the hybrid)".into(),
            modelled: true,
        }],
        model: Some("the hybrid".into()),
        modelled: true,
        search: Some((std::time::Duration::from_secs(100), 100)),
        file_systems: vec!["xfs".into(), "ext4".into(), "f2fs".into()],
        cases,
        placed,
        hunks: vec!["@@ -713,6 +713,9 @@ void page_cache_async_ra(struct readahead_control *ractl,\n \taligned_end = round_down(end, align);\n+\twhile (aligned_end > ra->start && 2 * (aligned_end - ra->start) < ra->size)\n+\t\talign >>= 1;".into()],
        searched: "The search predicted 100 generated scenarios.".into(),
        ..Default::default()
    }
}

#[test]
fn a_reply_is_72_columns_quotes_each_hunk_once_and_gives_the_headline_with_its_folio_orders() {
    let r = review(vec![
        case("1mib_after_4k", trace(40, 4, 2), trace(10, 16, 4), false),
        case("64k_after_4k", trace(8, 4, 2), trace(4, 8, 3), false),
        case("random_4k", trace(5, 1, 0), trace(5, 1, 0), false),
    ]);
    let t = text(&r);
    assert!(t.starts_with("Subject: Re: [PATCH] mm/readahead: keep at least half"), "{t}");
    for line in t.lines().filter(|l| !l.starts_with("> ") && !l.starts_with("Subject: ")) {
        assert!(line.len() <= WIDTH, "over {WIDTH} columns: {line:?}");
    }
    assert!(t.contains("The repository's scenarios: 2 of 3 points change requests or folios:"), "{t}");
    assert!(t.contains("  device reads   40 -> 10 (-75%)\n"), "{t}");
    assert!(t.contains("  folios before  40 (40 o2)\n  folios after   10 (10 o4)\n"), "{t}");
    assert!(t.contains("  reads before   40 x 16 KiB\n  reads after    10 x 64 KiB\n"), "{t}");
    assert!(t.contains("Unchanged on the kernels: random_4k."), "{t}");
    assert_eq!(t.matches("\n> @@ -713,6 +713,9 @@").count(), 1, "the hunk is quoted once:\n{t}");
    assert!(t.contains("  in the hunk quoted above (@@ -713,6 +713,9 @@"), "{t}");
    assert!(t.contains("(mm/readahead.c:713-717)"), "{t}");
    assert!(t.contains("Where it is worse: nowhere the kernels showed."), "{t}");
    assert!(
        t.contains("\nTested-by: radiff (nothing worse on the kernels above)\n\nFor the changelog (below ---):\nradiff, 1mib_after_4k: 1 MiB reads after a 4 KiB read\nBase -> patch, two runs of each kernel:\n  device reads  40 -> 10 (-75%)\n  bytes read    640 KiB (unchanged)\n  folio orders  40 o2 -> 10 o4\n  radiff report scenarios/1mib_after_4k.yaml --variants base,v1 \\\n    --runs 2\n"),
        "the verdict, then the lines for the changelog:\n{t}"
    );
    assert!(
        t.contains(
            "\nThe reviewers' questions:\n- Limits kept (read_ahead_kb, max_sectors_kb): unchanged (kernels):\n"
        ),
        "the checklist:\n{t}"
    );
    assert!(t.contains("\n- Folio orders: better (kernels): "), "{t}");
    // A reviewer who asked a line is quoted at it.
    let mut asked = r.clone();
    asked.asked = vec![crate::review::asked::Asked {
        who: "Jan Kara".into(),
        said: "how order of folios changed".into(),
        topic: crate::review::asked::Topic::Line(crate::review::checklist::Line::FolioOrders),
    }];
    asked.asked.push(crate::review::asked::Asked {
        who: "Andrew Morton".into(),
        said: "include the results in the changelog.".into(),
        topic: crate::review::asked::Topic::Changelog,
    });
    let t = text(&asked);
    assert!(
        t.contains("\n- Folio orders (Jan Kara asked: \"how order of folios changed\"): better\n  (kernels): "),
        "{t}"
    );
    assert!(
        t.contains("\n\nAndrew Morton asked: \"include the results in the changelog.\": the lines\nbelow are the numbers.\n\nFor the changelog (below ---):\n"),
        "{t}"
    );
    assert!(markdown(&asked).contains("\n## For the changelog (below ---)\n\n```\nradiff, "), "the lines stay fenced");
    let md = markdown(&r);
    assert!(md.starts_with("# Re: [PATCH]"), "{md}");
    assert!(md.contains("```diff\n@@ -713,6 +713,9 @@"), "{md}");
    assert!(md.contains("\n### 1mib_after_4k (kernels)\n\n| figure | base | patch | change |\n|:--|--:|--:|--:|\n| device reads | 40 | 10 | -75% |"), "{md}");
    assert!(
        md.contains("| order-4 folios | 0 | 10 | new |\n\n### 64k_after_4k (kernels)\n"),
        "a blank line ends each table:\n{md}"
    );
    assert!(md.contains("\n## The reviewers' questions\n- Limits kept"), "{md}");
    assert!(md.contains("\n## For the changelog (below ---)\n\n```\nradiff, 1mib_after_4k"), "{md}");
    assert!(md.ends_with("```\n"), "the changelog's lines are fenced as they are:\n{md}");
}

#[test]
fn worse_on_the_kernels_withholds_the_tested_by_and_so_does_a_race() {
    let worse = review(vec![case("3mib_after_4k_msk2048", trace(10, 16, 4), trace(20, 8, 3), false)]);
    assert!(worse.worse());
    let t = text(&worse);
    assert!(t.contains("Where it is better: nowhere the kernels showed."), "{t}");
    assert!(t.contains("No Tested-by: the kernels show it worse above."), "{t}");
    assert!(t.contains("  Worse on device reads, folios, pages per folio, windows.\n"), "{t}");
    assert!(t.contains("Where it is worse (1 case, the smallest first):\n- 3mib_after_4k_msk2048: the headline above: device reads 10 -> 20\n  (+100%)"), "the headline is named among the worse:\n{t}");
    assert!(!t.contains("Tested-by: radiff"), "{t}");

    let raced = review(vec![case("1mib_after_4k", trace(40, 4, 2), trace(10, 16, 4), true)]);
    assert!(!raced.worse(), "a race is not evidence");
    let t = text(&raced);
    assert!(
        t.contains("Set aside as races (two runs of one kernel differ):\n- 1mib_after_4k: two runs of base differ"),
        "{t}"
    );
    assert!(
        t.contains("Not enough evidence for a Tested-by:\n- 1 case was set aside as races; what would give it: rerunning them\n  (`radiff report`) until both kernels repeat.\n\nFor the changelog (below ---):\nradiff: no change"),
        "{t}"
    );
    assert!(t.contains("  1mib_after_4k (kernels: a race, set aside below)\n"), "no figures for a race:\n{t}");
    assert!(!t.contains("The headline"), "a race is no headline:\n{t}");
}

#[test]
fn the_series_names_together_the_cases_one_patch_first_changes() {
    let p1 = "patch 1 of 2 first changes it (\"mm: one\")".to_string();
    let p2 = "patch 2 of 2 first changes it (\"mm: two\")".to_string();
    let series: Vec<(String, String)> =
        [("a", &p1), ("b", &p2), ("c", &p1), ("d", &p1)].iter().map(|(c, v)| (c.to_string(), v.to_string())).collect();
    assert_eq!(
        series_lines(&series),
        vec![
            "The series, a, c and d: patch 1 of 2 first changes each (\"mm: one\").".to_string(),
            "The series, b: patch 2 of 2 first changes it (\"mm: two\").".to_string(),
        ]
    );
}

#[test]
fn the_headline_is_the_case_whose_reads_or_folios_change_most_not_its_window_count() {
    // More windows for the same reads (a hint now counted as windows), and larger folios.
    let mut windows = trace(1, 16, 3);
    let empty = Window { submits: Vec::new(), folios: Vec::new(), requests: Vec::new(), ..windows.windows[0].clone() };
    windows.windows.extend(std::iter::repeat_n(empty, 63));
    let r = review(vec![
        case("more_windows", trace(1, 16, 2), windows, false),
        case("more_reads", trace(10, 16, 4), trace(30, 16, 4), false),
    ]);
    assert_eq!(r.headline().map(|h| r.cases[h].name.as_str()), Some("more_reads"));
}

#[test]
fn a_reply_threads_under_the_mail_it_answers_and_attributes_the_quoted_hunk() {
    let mail = crate::mail::parse(
        b"From: A Developer <dev@example.org>\nTo: linux-mm@kvack.org\nCc: Reviewer <r@example.org>,\n Other <o@example.org>\nDate: Mon, 3 Aug 2026 10:00:00 +0000\nMessage-ID: <patch@example.org>\nReferences: <cover@example.org>\n <v1@example.org>\nSubject: [PATCH] mm/readahead: keep at least half\n\n---\n--- a/mm/readahead.c\n+++ b/mm/readahead.c\n@@ -1 +1 @@\n-a\n+b\n",
    )
    .unwrap();
    let mut r = review(vec![case("1mib_after_4k", trace(40, 4, 2), trace(10, 16, 4), false)]);
    r.thread = mail.thread;
    let t = text(&r);
    let (head, body) = t.split_once("\n\n").unwrap();
    assert_eq!(
        head,
        "Subject: Re: [PATCH] mm/readahead: keep at least half of the async window when aligning it\n\
         To: A Developer <dev@example.org>\n\
         Cc: linux-mm@kvack.org, Reviewer <r@example.org>, Other <o@example.org>\n\
         In-Reply-To: <patch@example.org>\n\
         References: <cover@example.org>\n <v1@example.org>\n <patch@example.org>"
    );
    let quote = body.find("\n> @@ -713,6 +713,9 @@").expect("the hunk is quoted");
    assert!(
        body[..quote].ends_with("  in this hunk of the patch:\nOn Mon, 3 Aug 2026 10:00:00 +0000, A Developer wrote:"),
        "the attribution line stands right above the first quote:\n{t}"
    );
    assert_eq!(t.matches(" wrote:").count(), 1, "{t}");
    let md = markdown(&r);
    assert!(md.starts_with("# Re: [PATCH] mm/readahead: keep at least half"), "{md}");
    assert!(!md.contains("In-Reply-To") && !md.contains("\nTo: "), "the headers are the mail's, not the page's:\n{md}");

    // A mail saved without headers (lore's raw view): a subject and no more, no attribution.
    r.thread = crate::mail::Thread::default();
    let t = text(&r);
    assert!(
        t.starts_with(
            "Subject: Re: [PATCH] mm/readahead: keep at least half of the async window when aligning it\n\nradiff ran"
        ),
        "{t}"
    );
    assert!(!t.contains(" wrote:"), "{t}");
}

/// A review no model follows: the kernels ran the covering set and nothing changed, yet
/// the reply signs nothing, says how far it looked, and ends with what would give the
/// Tested-by.
#[test]
fn a_review_the_model_cannot_follow_says_how_far_it_looked_and_ends_without_a_tested_by() {
    let mut same = case("covering_random_f2fs", trace(4, 1, 0), trace(4, 1, 0), false);
    same.origin = Origin::Covering;
    same.model = None;
    let mut unrun = case("covering_limits_f2fs", trace(4, 1, 0), trace(4, 1, 0), false);
    unrun.origin = Origin::Covering;
    (unrun.model, unrun.runs, unrun.not_run) = (None, None, Some("the budget".into()));
    let mut r = review(vec![same, unrun]);
    r.touched = vec![Touched {
        function: "f2fs_mpage_readpages".into(),
        file: "fs/f2fs/data.c".into(),
        how: "the model cannot follow it: it changes f2fs_mpage_readpages() in fs/f2fs/data.c".into(),
        modelled: false,
    }];
    (r.model, r.modelled, r.search) = (None, false, None);
    r.why_not = Some("it changes f2fs_mpage_readpages() in fs/f2fs/data.c".into());
    r.file_systems = vec!["f2fs".into()];
    let t = text(&r);
    assert!(!t.contains("Tested-by: radiff"), "{t}");
    assert!(
        t.contains("How far it looked:\n- The model: no model follows the patch.\n- The search: none.\n- The kernels: 1 of the 2 points of the patch's reach ran twice on each\n  kernel (1 of the 2 of the generated covering set among them), on f2fs.\n"),
        "{t}"
    );
    let (body, _) = t.split_once("\n\nFor the changelog (below ---):\n").expect("the changelog's lines end the reply");
    let (_, tail) = body.rsplit_once("\n\n").unwrap();
    let lines: Vec<&str> = tail.lines().filter(|l| l.starts_with("- ")).collect();
    assert!(
        tail.starts_with("Not enough evidence for a Tested-by:\n- the model does not follow the patch: it changes f2fs_mpage_readpages()\n  in fs/f2fs/data.c; what would give it:"),
        "{t}"
    );
    assert!(lines[1].starts_with("- no search ran"), "{tail}");
    assert!(lines[2].starts_with("- the kernels ran 1 of the 2 points of the patch's reach"), "{tail}");
    assert_eq!(lines.len(), 3, "the usual questions were reached (the cases' steps ask each):\n{tail}");
    assert_eq!(super::judge::judge(&super::judge::looked(&r)).exit_code(), super::judge::EXIT_NOT_ENOUGH);
}

/// A review whose kernels show it worse where no model follows it: no Tested-by for the
/// worse case, and the shortfalls still said.
#[test]
fn worse_without_a_model_says_both_why_there_is_no_tested_by() {
    let mut worse = case("covering_random_f2fs", trace(4, 1, 0), trace(4, 8, 0), false);
    worse.origin = Origin::Covering;
    worse.model = None;
    let mut r = review(vec![worse]);
    (r.model, r.modelled, r.search) = (None, false, None);
    r.touched[0].modelled = false;
    let t = text(&r);
    assert!(t.contains("No Tested-by: the kernels show it worse above.\nNor, without that, is there enough evidence for a Tested-by:\n- the model does not follow page_cache_async_ra()"), "{t}");
    assert_eq!(super::judge::judge(&super::judge::looked(&r)).exit_code(), 1);
}
