//! A patch mail as `radiff review` reads it: a raw mail (replies and all), or an mbox of a
//! series (`git format-patch --stdout`, `b4 am`), each message with a diff one patch.

/// What `radiff review` takes from a mail or an mbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    /// The subject as sent (`[PATCH v2 1/3] mm/readahead: ...`): the cover letter's for a
    /// series that has one, else the first patch's.
    pub subject: String,
    /// Each message that carries a diff, in order, with its own subject.
    pub patches: Vec<Message>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub subject: String,
    /// The whole message, as `patch -p1` reads it (it skips the text around the diff).
    pub text: String,
}

impl Message {
    /// The diff's own lines (headers, hunk headers, context, removed and added), in order:
    /// two mails with the same diff are the same patch, whatever their prose and replies.
    pub fn diff(&self) -> Vec<&str> {
        diff_lines(&self.text)
    }
}

/// Why a text is not a patch mail radiff can review.
pub fn parse(text: &str) -> Result<Mail, String> {
    let messages = split_mbox(text);
    let subject_of_all = messages.iter().find_map(|m| subject(m)).unwrap_or_default();
    let cover = messages
        .iter()
        .filter_map(|m| subject(m))
        .find(|s| s.split(']').next().is_some_and(|tag| tag.contains(" 0/") || tag.contains("00/")));
    let patches: Vec<Message> = messages
        .iter()
        .filter(|m| !diff_lines(m).is_empty())
        .map(|m| Message { subject: subject(m).unwrap_or_else(|| subject_of_all.clone()), text: m.to_string() })
        .collect();
    if patches.is_empty() {
        return Err("it has no diff: no `diff --git` or `--- a/FILE` / `+++ b/FILE` lines at the start of a line (a diff quoted with `> ` in a reply is not applied)".into());
    }
    let subject =
        cover.or(Some(subject_of_all)).filter(|s| !s.is_empty()).unwrap_or_else(|| patches[0].subject.clone());
    Ok(Mail { subject, patches })
}

/// The messages of an mbox: split at `From ` lines (the mbox separator); a raw mail is one.
fn split_mbox(text: &str) -> Vec<&str> {
    let mut starts = vec![0];
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if at > 0 && line.starts_with("From ") && line.trim_end().rsplit(' ').next().is_some_and(is_year) {
            starts.push(at);
        }
        at += line.len();
    }
    starts.push(text.len());
    starts.windows(2).map(|w| &text[w[0]..w[1]]).filter(|m| !m.trim().is_empty()).collect()
}

fn is_year(word: &str) -> bool {
    word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit())
}

/// The message's subject: its `Subject:` header (continuation lines joined), else a first
/// line that is a bracketed subject (`[PATCH] ...`, as lore's raw thread view starts).
fn subject(message: &str) -> Option<String> {
    let mut lines = message.lines().peekable();
    while let Some(line) = lines.next() {
        if line.is_empty() {
            break;
        }
        if let Some(s) = line.strip_prefix("Subject:") {
            let mut s = s.trim().to_string();
            while let Some(next) = lines.peek().filter(|l| l.starts_with([' ', '\t'])) {
                s.push(' ');
                s.push_str(next.trim());
                lines.next();
            }
            return Some(s);
        }
    }
    let first = message.lines().find(|l| !l.trim().is_empty())?.trim();
    first.starts_with('[').then(|| first.to_string())
}

/// The lines of every diff in `text` that `patch` would read: from a `diff --git` or a
/// `--- ` line followed by `+++ `, through the hunks their headers announce.
pub fn diff_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let header = line.starts_with("diff --git ")
            || (line.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")));
        if !header {
            i += 1;
            continue;
        }
        // The file headers, then hunks while their counts last.
        while i < lines.len() && !lines[i].starts_with("@@ ") {
            let l = lines[i];
            let file_header = l.starts_with("diff --git ")
                || l.starts_with("--- ")
                || l.starts_with("+++ ")
                || l.starts_with("index ")
                || l.starts_with("new file mode")
                || l.starts_with("deleted file mode")
                || l.starts_with("similarity index")
                || l.starts_with("rename ");
            if !file_header {
                break;
            }
            out.push(l);
            i += 1;
        }
        while i < lines.len() && lines[i].starts_with("@@ ") {
            let (mut old, mut new) = hunk_counts(lines[i]);
            out.push(lines[i]);
            i += 1;
            while i < lines.len() && (old > 0 || new > 0) {
                let l = lines[i];
                match l.as_bytes().first() {
                    Some(b'-') => old = old.saturating_sub(1),
                    Some(b'+') => new = new.saturating_sub(1),
                    Some(b'\\') => {}
                    _ => {
                        old = old.saturating_sub(1);
                        new = new.saturating_sub(1);
                    }
                }
                out.push(l);
                i += 1;
            }
        }
    }
    out
}

/// The old and new line counts of a hunk header `@@ -a,b +c,d @@` (a missing count is 1).
fn hunk_counts(header: &str) -> (usize, usize) {
    let mut parts = header.split_whitespace().skip(1);
    let count = |p: Option<&str>| {
        p.and_then(|r| r.get(1..))
            .map_or(0, |r| r.split_once(',').map_or(Some(1), |(_, n)| n.parse().ok()).unwrap_or(0))
    };
    (count(parts.next()), count(parts.next()))
}

/// A variant name from a subject: the words after the subsystem prefix, lower case, joined
/// by `-`, at most 40 characters at a word's end; `-v2` for a second version.
/// `[PATCH v2 1/3] mm/readahead: Keep half of the window` -> `keep-half-of-the-window-v2`.
pub fn variant_name(subject: &str) -> String {
    let mut rest = subject.trim();
    let mut version = None;
    while let Some(tagged) = rest.strip_prefix('[') {
        let Some((tag, after)) = tagged.split_once(']') else { break };
        version = version.or_else(|| {
            tag.split_whitespace()
                .find(|w| w.len() > 1 && w.starts_with('v') && w[1..].bytes().all(|b| b.is_ascii_digit()))
        });
        rest = after.trim_start();
    }
    for prefix in ["Re:", "RE:", "Fwd:"] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest).trim_start();
    }
    // `mm/readahead: ...`: the subsystem is in the variant's files already.
    if let Some((head, tail)) = rest.split_once(": ") {
        if !head.contains(' ') && !tail.trim().is_empty() {
            rest = tail;
        }
    }
    let mut name = String::new();
    for word in rest.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()) {
        let word = word.to_ascii_lowercase();
        if !name.is_empty() && name.len() + 1 + word.len() > 40 {
            break;
        }
        if !name.is_empty() {
            name.push('-');
        }
        name.push_str(&word[..word.len().min(40)]);
    }
    if name.is_empty() {
        name.push_str("patch");
    }
    if let Some(v) = version {
        name.push('-');
        name.push_str(&v.to_ascii_lowercase());
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/mm/readahead.c b/mm/readahead.c\nindex 1..2 100644\n--- a/mm/readahead.c\n+++ b/mm/readahead.c\n@@ -1,3 +1,4 @@\n a\n-b\n+c\n+d\n e\n";

    #[test]
    fn a_raw_mail_is_one_patch_named_from_its_subject() {
        let text = format!("[PATCH] mm/readahead: keep at least half of the async window when aligning it\n\nFrom: A <a@b>\n\nprose\n---\n{DIFF}-- \n2.1\n\nRe: [PATCH] ...\n> diff --git a/x b/x\n> -a\n");
        let mail = parse(&text).unwrap();
        assert_eq!(mail.subject, "[PATCH] mm/readahead: keep at least half of the async window when aligning it");
        assert_eq!(mail.patches.len(), 1);
        assert_eq!(mail.patches[0].diff().len(), 10, "the quoted diff in the reply is not part of it");
        assert_eq!(variant_name(&mail.subject), "keep-at-least-half-of-the-async-window");
    }

    #[test]
    fn an_mbox_of_a_series_is_one_patch_per_message_with_a_diff() {
        let msg = |n: &str, body: &str| {
            format!("From 0123456789abcdef Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: [PATCH v2 {n}/2] mm/readahead:\n two words\n\n{body}\n")
        };
        let text = [msg("0", "cover letter"), msg("1", DIFF), msg("2", DIFF)].concat();
        let mail = parse(&text).unwrap();
        assert_eq!(mail.patches.len(), 2);
        assert_eq!(mail.subject, "[PATCH v2 0/2] mm/readahead: two words");
        assert_eq!(mail.patches[1].subject, "[PATCH v2 2/2] mm/readahead: two words");
        assert_eq!(variant_name(&mail.subject), "two-words-v2");
    }

    #[test]
    fn a_mail_without_a_diff_says_so() {
        let err = parse("Subject: [PATCH] x\n\nno diff here\n> --- a/x\n> +++ b/x\n").unwrap_err();
        assert!(err.starts_with("it has no diff"), "{err}");
    }

    #[test]
    fn names_are_short_and_safe() {
        assert_eq!(
            variant_name("[RFC PATCH] f2fs: adjust readahead window based on extent length"),
            "adjust-readahead-window-based-on-extent"
        );
        assert_eq!(variant_name("???"), "patch");
        assert!(variant_name(&"word ".repeat(30)).len() <= 40);
    }
}
