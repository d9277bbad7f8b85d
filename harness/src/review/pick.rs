//! Which of the search's findings a review runs on the kernels. Pure: the findings'
//! directions and the questions each asks, smallest first, in; their indices out.

use super::checklist::Line;
use super::judge::Usual;

/// A question a finding's scenario can ask: one of the reviewers' usual ones
/// (`judge::usual_of_gen`), or a checklist line not every case asks (sequential reads,
/// interleaved streams and several files: `checklist::lines_of`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    Usual(Usual),
    Line(Line),
}

impl Ask {
    /// Every question the choice fills, in the order it fills them.
    pub const ALL: [Ask; 6] = [
        Ask::Usual(Usual::RandomReads),
        Ask::Usual(Usual::Hints),
        Ask::Usual(Usual::Mappings),
        Ask::Usual(Usual::Limits),
        Ask::Line(Line::Sequential),
        Ask::Line(Line::Streams),
    ];
}

/// A finding as the choice sees it: whether the model found the patch worse on it, and
/// which questions its scenario asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub worse: bool,
    pub asks: Vec<Ask>,
}

/// The indices of `found` (sorted smallest first) to run: the first `each` of each
/// direction (worse first), then, for each question ([`Ask::ALL`]) and direction that none
/// of those covers, the first finding of that direction that asks it, so that a question the model
/// saw the patch change is answered from the kernels, a regression above all (seed 003's
/// reviewer: "will we suffer regression for random read case?").
pub fn chosen(found: &[Found], each: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for worse in [true, false] {
        out.extend(found.iter().enumerate().filter(|(_, f)| f.worse == worse).take(each).map(|(i, _)| i));
    }
    for worse in [true, false] {
        for u in Ask::ALL {
            let asks = |f: &Found| f.worse == worse && f.asks.contains(&u);
            if out.iter().any(|&i| asks(&found[i])) {
                continue;
            }
            if let Some(i) = found.iter().position(asks) {
                out.push(i);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(worse: bool, asks: &[Usual]) -> Found {
        Found { worse, asks: asks.iter().map(|&u| Ask::Usual(u)).collect() }
    }

    #[test]
    fn a_checklist_line_no_choice_reads_gets_its_smallest_finding_too() {
        let streams = Found { worse: false, asks: vec![Ask::Line(Line::Streams)] };
        let found = [f(true, &[]), f(false, &[]), f(false, &[]), streams.clone(), streams];
        assert_eq!(chosen(&found, 1), [0, 1, 3], "interleaved streams: the smallest that reads them");
    }

    #[test]
    fn the_smallest_of_each_direction_then_one_for_each_question_and_direction_they_leave_open() {
        let found = [
            f(true, &[Usual::Hints]),
            f(true, &[Usual::Limits]),
            f(true, &[Usual::RandomReads]),
            f(false, &[]),
            f(true, &[Usual::RandomReads, Usual::Mappings]),
            f(false, &[Usual::Mappings]),
            f(false, &[Usual::RandomReads]),
        ];
        // Worse: 0 and 1; better: 3 and 5; then worse random reads (2), worse mappings
        // (4); better random reads (6). No better finding asks hints or limits.
        assert_eq!(chosen(&found, 2), [0, 1, 3, 5, 2, 4, 6]);
        // One of each: 0 (hints), 3; then worse random reads (2), mappings (4), limits (1);
        // better random reads (6) and mappings (5).
        assert_eq!(chosen(&found, 1), [0, 3, 2, 4, 1, 6, 5]);
    }

    #[test]
    fn a_better_case_does_not_answer_for_a_regression_and_nothing_is_added_twice() {
        // A random read found better is not the answer to "will random reads regress?".
        let found = [f(false, &[Usual::RandomReads]), f(true, &[]), f(true, &[Usual::RandomReads])];
        assert_eq!(chosen(&found, 1), [1, 0, 2]);
        let found = [f(true, &[Usual::RandomReads]), f(false, &[Usual::RandomReads])];
        assert_eq!(chosen(&found, 2), [0, 1]);
        assert_eq!(chosen(&[], 2), Vec::<usize>::new());
    }
}
