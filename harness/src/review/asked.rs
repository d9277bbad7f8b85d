//! What the thread's reviewers asked, by checklist line: a reply to the patch that says
//! "I actually miss evaluation how order of folios changed" asks the Folio orders line,
//! "will we suffer regression for random read case?" the Random reads line. The reply
//! names the reviewer and quotes the sentence at the line that answers it. Pure: the
//! thread's messages in, the questions out. The lines themselves are answered from traces
//! ([`super::checklist`]); this only finds who asked for which.

use super::checklist::Line;

/// What a reviewer's sentence asks for: a checklist line's answer, or numbers for the
/// changelog ("include the performance testing results in the actual changelog").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topic {
    Line(Line),
    Changelog,
}

/// A sentence of a reviewer's that asks a checklist line's question, or for the changelog's
/// numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    pub who: String,
    /// The sentence, on one line, at most [`SENTENCE_MAX`] characters.
    pub said: String,
    pub topic: Topic,
}

/// The longest sentence quoted; a longer one is cut at a word and ends in `...`.
pub const SENTENCE_MAX: usize = 160;

/// The words that ask each topic (lower case; a sentence holding one asks it).
const TOPICS: [(Topic, &[&str]); 8] = [
    (
        Topic::Line(Line::FolioOrders),
        &["order of folios", "orders of folios", "folio order", "large folio", "folio size"],
    ),
    (
        Topic::Line(Line::RandomReads),
        &["random read", "randread", "random i/o", "random io", "random access", "random workload"],
    ),
    (
        Topic::Line(Line::Sequential),
        &[
            "sequential read",
            "sequential i/o",
            "sequential io",
            "sequential access",
            "sequential workload",
            "streaming read",
        ],
    ),
    (Topic::Line(Line::Limits), &["read_ahead_kb", "max_sectors_kb", "ra_pages", "io_pages", "max_pages"]),
    (
        Topic::Line(Line::Hints),
        &["fadvise", "madvise", "fmode_random", "willneed", "posix_fadv", "readahead(2)", "madv_"],
    ),
    (Topic::Line(Line::Mmap), &["mmap", "page fault", "fault path", "filemap_fault", "fault-around"]),
    (
        Topic::Line(Line::Streams),
        &["interleaved", "several files", "multiple files", "multiple streams", "concurrent read"],
    ),
    (Topic::Changelog, &["changelog"]),
];

/// The topics `sentence` asks, in [`TOPICS`]' order.
pub fn topics_asked(sentence: &str) -> Vec<Topic> {
    let lower = sentence.to_lowercase();
    TOPICS.iter().filter(|(_, words)| words.iter().any(|w| lower.contains(w))).map(|(t, _)| *t).collect()
}

/// A name as a mail shows it, for comparing senders: `Daejun Park via B4 Relay` and
/// `Daejun Park <d@x>` are both `daejun park`.
fn person(name: &str) -> String {
    shown(name).to_lowercase()
}

/// Who speaks from this line on, where it says: a lore thread's `[Jan Kara]` line, a
/// body's `From: Name <addr>` line.
fn speaker(line: &str) -> Option<&str> {
    let t = line.trim_end();
    if let Some(name) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        // A name, not a `[...]` that marks a cut in a quote.
        return (name.chars().any(char::is_alphabetic) && !name.contains('[')).then_some(name);
    }
    t.strip_prefix("From: ").map(|r| r.split('<').next().unwrap_or(r).trim()).filter(|n| !n.is_empty())
}

/// The sentences of `text`, each on one line.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let words: Vec<&str> = text.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
        let ends = w.ends_with(['?', '!']) || (w.ends_with('.') && !w.ends_with("..") && w.len() > 2);
        if ends || i + 1 == words.len() {
            out.push(std::mem::take(&mut cur));
        }
    }
    out
}

/// The words a line's question starts at in `words`: the first whose rest, in lower case
/// and without an opening bracket or quote, starts with one of the line's words.
fn asked_at(words: &[&str], topic: Topic) -> usize {
    let topic = TOPICS.iter().find(|(t, _)| *t == topic).map_or(&[][..], |(_, w)| *w);
    (0..words.len())
        .find(|&i| {
            let rest = words[i..].join(" ").to_lowercase();
            let rest = rest.trim_start_matches(['(', '"', '\'']);
            topic.iter().any(|w| rest.starts_with(w))
        })
        .unwrap_or(0)
}

/// `s` cut at words to at most [`SENTENCE_MAX`] characters around where it asks `line`
/// (a few words before it), `...` where it was cut.
fn cut(s: &str, topic: Topic) -> String {
    if s.chars().count() <= SENTENCE_MAX {
        return s.to_string();
    }
    let words: Vec<&str> = s.split_whitespace().collect();
    let from = asked_at(&words, topic).saturating_sub(6);
    let mut out = if from > 0 { "...".to_string() } else { String::new() };
    let mut cut = false;
    for w in &words[from..] {
        if out.chars().count() + w.chars().count() + 5 > SENTENCE_MAX {
            cut = true;
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if cut {
        out.push_str(" ...");
    }
    out
}

/// A sender's name as the reply gives it: `Chao Yu` of `Chao Yu via Linux-f2fs-devel` or
/// of `"Chao Yu" <c@example.org>`.
fn shown(name: &str) -> String {
    let name = name.split('<').next().unwrap_or(name);
    name.split(" via ").next().unwrap_or(name).trim().trim_matches('"').to_string()
}

/// The questions `messages` (each its sender, where the headers give one, and its decoded
/// text, in the thread's order) ask of the checklist: every sentence of someone other than
/// the patch's author (the first sender) outside quotes (`> `), attributions (`... wrote:`)
/// and diffs; the first sentence of each reviewer that asks a line, once per line and
/// reviewer.
pub fn asked(messages: &[(Option<String>, String)]) -> Vec<Asked> {
    let mut out: Vec<Asked> = Vec::new();
    let mut author: Option<String> = None;
    for (from, text) in messages {
        let mut who = from.clone();
        let mut paragraph = String::new();
        let mut in_diff = false;
        if author.is_none() {
            author = who.as_deref().map(person);
        }
        // A message with its headers: they say nothing a reviewer asked.
        let body = match from {
            Some(_) => text.split_once("\n\n").map_or("", |(_, body)| body),
            None => text.as_str(),
        };
        let lines = body.lines().chain(std::iter::once(""));
        for line in lines {
            let named = speaker(line);
            in_diff |= line.starts_with("diff --git ") || line == "---";
            let prose = !in_diff
                && named.is_none()
                && !line.starts_with('>')
                && !line.trim_end().ends_with("wrote:")
                && !line.trim().is_empty();
            if prose {
                paragraph.push_str(line);
                paragraph.push('\n');
                continue;
            }
            let text = std::mem::take(&mut paragraph);
            if let Some(name) = who.as_deref().filter(|w| author.as_deref() != Some(person(w).as_str())) {
                for sentence in sentences(&text) {
                    for topic in topics_asked(&sentence) {
                        if !out.iter().any(|a| a.topic == topic && person(&a.who) == person(name)) {
                            out.push(Asked { who: shown(name), said: cut(&sentence, topic), topic });
                        }
                    }
                }
            }
            if let Some(name) = named {
                who = Some(name.to_string());
                in_diff = false;
            }
            if author.is_none() {
                author = who.as_deref().map(person);
            }
        }
    }
    out
}

/// Who asked `line`'s question in the thread, quoted: ` (Chao Yu asked: "will we suffer
/// regression for random read case?")`, each reviewer's; `None` where no one did.
pub fn quoted(asked: &[Asked], topic: Topic) -> Option<String> {
    let all: Vec<String> =
        asked.iter().filter(|a| a.topic == topic).map(|a| format!("{} asked: \"{}\"", a.who, a.said)).collect();
    (!all.is_empty()).then(|| format!(" ({})", all.join("; ")))
}

/// `sentence`, a checklist line's (it starts with the line's name), with who asked it
/// quoted after the name.
pub fn at_line(asked: &[Asked], line: Line, sentence: &str) -> String {
    match quoted(asked, Topic::Line(line)) {
        Some(q) => sentence.replacen(line.name(), &format!("{}{q}", line.name()), 1),
        None => sentence.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread as lore's flat view gives it: each message a subject, `[Sender]`, its text.
    const THREAD: &str = "[PATCH] mm/readahead: a change\n\n[Ann Author via B4 Relay]\n\nFrom: Ann Author <ann@example.org>\n\nThis changes random reads of folio orders.\n---\n mm/readahead.c | 1 +\n\ndiff --git a/mm/readahead.c b/mm/readahead.c\n+\tra->size = 1;\n\nRe: [PATCH] mm/readahead: a change\n\n[Rev Iewer]\n\nOn Mon, Ann Author wrote:\n> This changes random reads of folio orders.\n\nWhat about the order of folios after your change\n(large folios matter here)? Also, mmap.\nAnd will we suffer regression for random read\ncase?\n\nRE: [PATCH] mm/readahead: a change\n\n[Ann Author]\n\n> will we suffer regression for random read case?\nNo: random reads are the same.\n";

    #[test]
    fn a_reviewers_sentences_outside_quotes_ask_their_lines_and_the_authors_own_do_not() {
        let got = asked(&[(None, THREAD.to_string())]);
        let lines: Vec<(Topic, &str)> = got.iter().map(|a| (a.topic, a.who.as_str())).collect();
        assert_eq!(
            lines,
            [
                (Topic::Line(Line::FolioOrders), "Rev Iewer"),
                (Topic::Line(Line::Mmap), "Rev Iewer"),
                (Topic::Line(Line::RandomReads), "Rev Iewer")
            ],
            "{got:?}"
        );
        assert_eq!(got[0].said, "What about the order of folios after your change (large folios matter here)?");
        assert_eq!(got[2].said, "And will we suffer regression for random read case?");
    }

    #[test]
    fn senders_come_from_the_headers_where_the_thread_is_an_mbox() {
        let messages = [
            (
                Some("Ann Author <ann@example.org>".to_string()),
                "The patch keeps read_ahead_kb.\n\ndiff --git a/x b/x\n".to_string(),
            ),
            (
                Some("\"Rev Iewer\" <rev@example.org>".to_string()),
                "From: \"Rev Iewer\" <rev@example.org>\nSubject: Re: [PATCH] keep read_ahead_kb\n\nDoes read_ahead_kb still hold?\n"
                    .to_string(),
            ),
        ];
        let got = asked(&messages);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].topic, got[0].said.as_str()), (Topic::Line(Line::Limits), "Does read_ahead_kb still hold?"));
        assert_eq!(got[0].who, "Rev Iewer", "the name, not the address");
    }

    #[test]
    fn a_long_sentence_is_cut_at_a_word_and_a_line_is_asked_once_per_reviewer() {
        let long = format!("[Ann]\n\nPatch.\n\n[Rev]\n\nThe fadvise {} end. And fadvise again.\n", "word ".repeat(60));
        let got = asked(&[(None, long)]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].said.ends_with(" ...") && got[0].said.chars().count() <= SENTENCE_MAX, "{}", got[0].said);
        assert!(got[0].said.starts_with("The fadvise word"), "{}", got[0].said);
        let late = format!("{} and then the order of folios changed, did it not?", "word ".repeat(60));
        let said = cut(&late, Topic::Line(Line::FolioOrders));
        assert!(
            said.starts_with("... word word") && said.contains("the order of folios changed, did it not?"),
            "{said}"
        );
        assert_eq!(
            topics_asked("Any numbers for sequential reads? And random reads?"),
            [Topic::Line(Line::RandomReads), Topic::Line(Line::Sequential)]
        );
        assert_eq!(topics_asked("Put the numbers in the changelog."), [Topic::Changelog]);
        assert_eq!(topics_asked("Looks good to me."), Vec::<Topic>::new());
    }

    #[test]
    fn a_line_someone_asked_quotes_them_after_its_name() {
        let got = asked(&[(None, THREAD.to_string())]);
        let line = "Random reads: unchanged (kernels): r: device reads 4 (unchanged); 1 case.";
        assert_eq!(
            at_line(&got, Line::RandomReads, line),
            "Random reads (Rev Iewer asked: \"And will we suffer regression for random read case?\"): unchanged (kernels): r: device reads 4 (unchanged); 1 case."
        );
        assert_eq!(at_line(&got, Line::Limits, "Limits kept (...): x"), "Limits kept (...): x", "no one asked it");
    }

    /// What the reviewers asked in a variant's mail in `kernels/variants/` (a thread as
    /// lore's flat view saves it).
    fn asked_in(variant: &str) -> Vec<(Topic, String)> {
        let dir = crate::repo_root().join("kernels/variants").join(variant);
        let file = crate::files::entries(&dir)
            .unwrap()
            .into_iter()
            .find(|p| p.extension().is_some_and(|e| e == "mbox"))
            .unwrap();
        let mail = crate::mail::parse(&crate::files::read_bytes(&file).unwrap()).unwrap();
        asked(&mail.said).into_iter().map(|a| (a.topic, a.who)).collect()
    }

    #[test]
    fn the_seed_threads_reviewers_ask_the_lines_they_ask() {
        // Jan Kara on seed 000: "I actually miss evaluation how order of folios changed".
        let seed000 = asked_in("async-align-v1");
        assert!(seed000.contains(&(Topic::Line(Line::FolioOrders), "Jan Kara".into())), "{seed000:?}");
        // Andrew Morton: "include the performance testing results in the actual changelog".
        assert!(seed000.contains(&(Topic::Changelog, "Andrew Morton".into())), "{seed000:?}");
        assert_eq!(seed000.len(), 2, "the author's own sentences ask nothing: {seed000:?}");
        // Chao Yu on seed 003: sequential read numbers, and "will we suffer regression for
        // random read case?".
        let seed003 = asked_in("f2fs-extent-ra");
        for line in [Line::Sequential, Line::RandomReads] {
            assert!(seed003.contains(&(Topic::Line(line), "Chao Yu".into())), "{line:?}: {seed003:?}");
        }
    }
}
