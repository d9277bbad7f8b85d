//! The model against traces the real kernel produced (committed fixtures): the same
//! parse, normalisation and comparison the VM trials use, without a VM.

use std::path::{Path, PathBuf};

use radiff::compare::{self, normalise, Part};
use radiff::ftrace::{self, Capture, Filter};
use radiff::model_check;
use radiff::run::model_input;
use radiff::scenario::Scenario;
use radiff::summary::Figures;
use radiff::wire::GuestEnv;
use radiff_model::{predict, AsyncAlign, Policy, Trace};

fn fixture(scenario: &str, variant: &str) -> (Scenario, GuestEnv, Capture) {
    let root = radiff::repo_root();
    let dir: PathBuf = root.join("harness/tests/fixtures").join(scenario).join(variant);
    let scenario = Scenario::load(&root.join("scenarios").join(format!("{scenario}.yaml"))).unwrap();
    let env: GuestEnv = serde_json::from_str(&std::fs::read_to_string(dir.join("env.json")).unwrap()).unwrap();
    let text = std::fs::read_to_string(dir.join("trace.txt")).unwrap();
    let capture = ftrace::parse(&text, &Filter::new(&env.dev, env.inos()).unwrap()).unwrap();
    (scenario, env, capture)
}

/// The fixture's run checked against the model as a trial checks it
/// ([`radiff::model_check::check`]); panics with the rendered divergence.
fn check(scenario_name: &str, variant: &str) -> (Trace, Trace) {
    let (scenario, env, capture) = fixture(scenario_name, variant);
    let checked = model_check::check(&scenario, &env, &capture, &Policy::for_variant(variant).unwrap());
    if let Some(d) = checked.divergence {
        panic!(
            "{}",
            compare::render(&d, &format!("{scenario_name}::{variant} (fixture)"), "cargo test --test fixtures")
        );
    }
    (capture.trace, checked.model)
}

#[test]
fn the_model_predicts_the_headline_trace_on_base_exactly() {
    let (kernel, model) = check("1mib_after_4k", "base");
    // The real kernel's figures, as seed 000 reports them and the committed fixture
    // (tests/fixtures/1mib_after_4k/base) holds them; the model must get
    // them by computing (it did: the traces are equal above).
    let k = Figures::of(&kernel);
    assert_eq!(k.folios, 9721);
    assert_eq!(k.folio_orders.get(&7), None);
    assert_eq!(k.folio_orders.values().copied().collect::<Vec<_>>(), vec![516, 768, 3067, 1278, 2554, 1024, 514]);
    assert_eq!(k.windows, 3327);
    assert_eq!(k.metadata_reads, 1);
    let m = Figures::of(&model);
    assert_eq!((m.folios, m.data_reads), (k.folios, k.data_reads));
}

#[test]
fn the_model_predicts_the_headline_trace_on_async_align_v1_exactly() {
    let (kernel, _) = check("1mib_after_4k", "async-align-v1");
    let k = Figures::of(&kernel);
    assert_eq!(k.folios, 1052);
    assert_eq!(k.folio_orders.get(&7), Some(&1019));
}

/// A test of the tests: a model without the end-of-window alignment of
/// page_cache_async_ra() must fail the headline comparison, at the first window the
/// alignment trims (the window at page 20, whose end 52 is rounded down to 48), with a
/// diff that shows both sides.
#[test]
fn a_model_without_the_alignment_fails_at_the_first_trimmed_window() {
    let (scenario, env, Capture { trace: kernel, pfns, .. }) = fixture("1mib_after_4k", "base");
    let broken = Policy { async_align: AsyncAlign::Unaligned, ..Policy::BASE };
    let model = predict(&model_input(&scenario, &env, &pfns), &broken);
    let (normalised, _) = normalise(&kernel, &env.extents);
    let d = compare::compare(&normalised, &model).expect("a model without alignment must diverge");
    assert!(matches!(d.part, Part::Requests | Part::Folios), "{:?}", d.part);
    let w = &normalised.windows[d.window];
    assert_eq!(w.submits.len(), 1);
    let radiff_model::Submit::Order { index, size, .. } = w.submits[0] else { panic!() };
    assert_eq!((index, size), (20, 28), "the first divergent window is the trimmed one");
    let text =
        compare::render(&d, "scenario_1mib_after_4k::base", "cargo test -- --exact scenario_1mib_after_4k::base");
    assert!(text.contains("kernel and model part at window"), "{text}");
    assert!(text.contains("-    2 async @4 req 253 | ra [20+28) async 28 order 4"), "{text}");
    assert!(text.contains("+    2 async @4 req 253 | ra [20+32) async 32 order 4"), "{text}");
    assert!(text.contains("rerun: cargo test -- --exact scenario_1mib_after_4k::base"), "{text}");
}

#[test]
fn fixtures_parse_with_nothing_unexplained() {
    for variant in ["base", "async-align-v1"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/1mib_after_4k").join(variant);
        let env: GuestEnv = serde_json::from_str(&std::fs::read_to_string(dir.join("env.json")).unwrap()).unwrap();
        let text = std::fs::read_to_string(dir.join("trace.txt")).unwrap();
        let capture = ftrace::parse(&text, &Filter::new(&env.dev, env.inos()).unwrap()).unwrap();
        let lines = text.lines().filter(|l| !l.starts_with('#')).count() as u64;
        assert_eq!(capture.events, lines);
        let kept = capture
            .trace
            .windows
            .iter()
            .map(|w| 1 + w.submits.len() + w.folios.len() + w.requests.len())
            .sum::<usize>() as u64;
        let filtered: u64 = capture.filtered.values().sum();
        // Every line is either in the trace (a window opener, a submission, a folio, a
        // request) or counted as filtered; the start window adds one opener of its own.
        assert_eq!(kept + filtered, lines + 1, "{variant}");
    }
}

/// A test of the tests on the fault path: the model equals the kernel's trace of a
/// sequential touch (fault windows, fault-around ranges, read-around, async windows), and
/// the same model with fault-around off (fault_around_bytes one page, so
/// should_fault_around() is false) fails at the kernel's first fault-around window.
#[test]
fn a_model_without_fault_around_fails_at_the_first_fault_around() {
    let (kernel, _) = check("mmap_seq_8mib", "base");
    let (scenario, env, Capture { pfns, .. }) = fixture("mmap_seq_8mib", "base");
    let (normalised, _) = normalise(&kernel, &env.extents);
    let first_around = normalised
        .windows
        .iter()
        .position(|w| w.trigger == radiff_model::Trigger::FaultAround)
        .expect("the kernel faults around");
    assert!(normalised.windows[..first_around].iter().any(|w| w.trigger == radiff_model::Trigger::Fault));
    let mut input = model_input(&scenario, &env, &pfns);
    input.vm.fault_around_bytes = 4096;
    let d = compare::compare(&normalised, &predict(&input, &Policy::BASE))
        .expect("a model without fault-around must diverge");
    assert_eq!(
        d.window,
        first_around,
        "{}",
        compare::render(&d, "mmap_seq_8mib::base (no fault-around)", "cargo test --test fixtures")
    );
    assert!(matches!(d.part, Part::Faults | Part::WindowCount), "{:?}", d.part);
}

/// `radiff report`'s picture of the headline, drawn from the model's traces (equal to the
/// kernel's) with the title and subtitle of docs/1mib_after_4k.svg, is that file byte for
/// byte: pread pictures do not change when the report learns about faults. The real mmap
/// trace's picture has a mark for every fault and fault-around range.
#[test]
fn report_pictures_of_the_fixtures() {
    let root = radiff::repo_root();
    let (scenario, env, Capture { pfns, .. }) = fixture("1mib_after_4k", "base");
    let input = model_input(&scenario, &env, &pfns);
    let traces: Vec<(String, Trace)> = ["base", "async-align-v1", "async-align-v2"]
        .iter()
        .map(|v| (v.to_string(), predict(&input, &Policy::for_variant(v).unwrap())))
        .collect();
    let (range, what) = radiff::report::page_range(None, env.file_size / 4096).unwrap();
    let subtitle = format!("{what}; traces of the first of 3 runs; kernel 7.3.4+ under QEMU TCG, 2 vCPUs");
    let svg = radiff::report::picture(
        &format!("{}: {}", scenario.name, scenario.description),
        &subtitle,
        range,
        &[(None, traces)],
    );
    assert!(
        svg == std::fs::read_to_string(root.join("docs/1mib_after_4k.svg")).unwrap(),
        "docs/1mib_after_4k.svg differs from the picture drawn now"
    );

    let (scenario, env, Capture { trace: kernel, .. }) = fixture("mmap_seq_8mib", "base");
    let f = Figures::of(&kernel);
    let (range, what) = radiff::report::page_range(None, env.file_size / 4096).unwrap();
    let svg = radiff::report::picture(&scenario.name, &what, range, &[(None, vec![("base".to_string(), kernel)])]);
    assert_eq!(svg.matches("<title>base: fault @").count() as u64, f.faults);
    assert_eq!(svg.matches("<title>base: around [").count() as u64, f.fault_arounds);
    assert_eq!(svg.matches(r#"class="legend-mark""#).count(), 3);
    assert_eq!(svg.matches(r#"<rect class="fault-window""#).count(), 1, "the read-around of the fault at page 0");
}
