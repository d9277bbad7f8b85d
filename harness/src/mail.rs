//! A patch mail as it comes (a raw mail with its replies, an mbox of a series, a body in
//! quoted-printable or base64, the patch as an attachment, CRLF line ends), decoded to the
//! text `patch -p1` reads.
//!
//! Pure: bytes in, text out. mailparse undoes the transfer encodings and charsets and
//! splits multipart bodies; a text with no header block (a diff, or a mail as lore's raw
//! thread view shows it, `[PATCH] ...` first) is taken as it is. A mail that needs no
//! decoding comes out byte for byte as it went in, so the kernels built from it keep
//! their keys.

use mailparse::{MailHeaderMap, ParsedMail};

/// What radiff takes from a mail or an mbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    /// The subject as sent (`[PATCH v2 1/3] mm/readahead: ...`): the cover letter's for a
    /// series that has one, else the first patch's; for a mail without one, what its first
    /// diff changes (`mm/readahead.c: page_cache_sync_ra()`).
    pub subject: String,
    /// The name of a variant made from it: from the subject, else from the first diff
    /// ([`variant_name`], [`diff_name`]).
    pub name: String,
    /// The headers a reply threads on: the cover letter's, else the first patch's.
    pub thread: Thread,
    /// Each message that carries a diff, in order, with its own subject.
    pub patches: Vec<Message>,
    /// Every message, replies included, as its sender (where its headers give one) and its
    /// decoded text, in order: what the thread said.
    pub said: Vec<(Option<String>, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Its subject, or what its diff changes.
    pub subject: String,
    /// A name for its own patch file, from the subject or the diff.
    pub name: String,
    /// The message decoded, as `patch -p1` reads it (it skips the text around the diff).
    pub text: String,
    /// The message as it came (an mbox's `From ` line and all), to keep as the variant's
    /// file: the kernels decode it as they apply it ([`patch_text`]).
    pub raw: Vec<u8>,
}

/// The headers of the message a reply answers, as it sent them (RFC 2047 words decoded);
/// all empty for a text without headers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Thread {
    /// `<id@host>`.
    pub message_id: Option<String>,
    /// Its `References:` ids, oldest first.
    pub references: Vec<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub cc: Option<String>,
    pub date: Option<String>,
}

impl Thread {
    /// The sender's name as the attribution line gives it (`A Developer` of `A Developer
    /// <dev@example.org>`, the address where it has no name).
    pub fn author(&self) -> Option<String> {
        let from = self.from.as_deref()?;
        let single = match mailparse::addrparse(from).ok()?.first()? {
            mailparse::MailAddr::Single(s) => s.clone(),
            mailparse::MailAddr::Group(g) => g.addrs.first()?.clone(),
        };
        Some(single.display_name.filter(|n| !n.trim().is_empty()).unwrap_or(single.addr))
    }
}

impl Message {
    /// The diff's own lines (headers, hunk headers, context, removed and added), in order:
    /// two mails with the same diff are the same patch, whatever their prose, replies and
    /// encoding.
    pub fn diff(&self) -> Vec<&str> {
        diff_lines(&self.text)
    }
}

/// The mail in `raw`, or why it is not a patch mail radiff can take.
pub fn parse(raw: &[u8]) -> Result<Mail, String> {
    let mut messages = Vec::new();
    for (at, bytes) in split_mbox(raw) {
        let decoded = decode(&bytes).map_err(|e| format!("message {} (byte {at}): {e}", messages.len() + 1))?;
        messages.push((bytes, decoded));
    }
    let subject_of_all = messages.iter().find_map(|(_, d)| d.subject.clone());
    let cover = messages.iter().find(|(_, d)| {
        d.subject
            .as_deref()
            .is_some_and(|s| s.split(']').next().is_some_and(|tag| tag.contains(" 0/") || tag.contains("00/")))
    });
    let patches: Vec<Message> = messages
        .iter()
        .filter(|(_, d)| !diff_lines(&d.text).is_empty())
        .map(|(raw, d)| {
            let subject = d.subject.clone().or_else(|| subject_of_all.clone());
            let name = subject.as_deref().and_then(variant_name).unwrap_or_else(|| diff_name(&d.text));
            let subject = subject.unwrap_or_else(|| describe_diff(&d.text));
            Message { subject, name, text: d.text.clone(), raw: raw.clone() }
        })
        .collect();
    if patches.is_empty() {
        return Err("it has no diff: no `diff --git` or `--- a/FILE` / `+++ b/FILE` lines at the start of a line (a diff quoted with `> ` in a reply is not applied)".into());
    }
    let answered = cover.or_else(|| messages.iter().find(|(_, d)| !diff_lines(&d.text).is_empty()));
    let thread = answered.map(|(_, d)| d.thread.clone()).unwrap_or_default();
    let subject = cover.and_then(|(_, d)| d.subject.clone()).or(subject_of_all);
    let said = messages.iter().map(|(_, d)| (d.thread.from.clone(), d.text.clone())).collect();
    Ok(Mail {
        said,
        name: subject.as_deref().and_then(variant_name).unwrap_or_else(|| patches[0].name.clone()),
        subject: subject.unwrap_or_else(|| patches[0].subject.clone()),
        thread,
        patches,
    })
}

/// The text `patch -p1` gets of a patch file (a mail, an mbox, or a plain diff): each
/// message decoded, in order.
pub fn patch_text(raw: &[u8]) -> Result<String, String> {
    let mut text = String::new();
    for (at, bytes) in split_mbox(raw) {
        text.push_str(&decode(&bytes).map_err(|e| format!("the message at byte {at}: {e}"))?.text);
    }
    Ok(text)
}

/// One message decoded.
struct Decoded {
    subject: Option<String>,
    thread: Thread,
    /// Its header block as it came (CRLF made LF), then its text parts decoded.
    text: String,
}

fn decode(message: &[u8]) -> Result<Decoded, String> {
    // An mbox's separator line is not a header; it stays in the text (patch skips it).
    let (separator, rest) = match message.starts_with(b"From ") {
        true => message.split_at(message.iter().position(|&b| b == b'\n').map_or(message.len(), |i| i + 1)),
        false => (&message[..0], message),
    };
    let as_it_is = |subject: Option<String>| Decoded {
        subject: subject.or_else(|| bracketed_subject(&String::from_utf8_lossy(rest))),
        thread: Thread::default(),
        text: lf(&String::from_utf8_lossy(message)),
    };
    if !starts_with_header(rest) {
        return Ok(as_it_is(None));
    }
    // Headers run into the diff with no blank line between (a patch written by hand):
    // nothing declared an encoding, so the text is what patch reads.
    let Ok(parsed) = mailparse::parse_mail(rest) else {
        let text = String::from_utf8_lossy(rest);
        let subject = text.lines().find_map(|l| l.strip_prefix("Subject:")).map(|s| s.trim().to_string());
        return Ok(as_it_is(subject));
    };
    let headers = &parsed.headers;
    let first = |key: &str| headers.get_first_value(key).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let thread = Thread {
        message_id: first("Message-ID"),
        references: first("References").map_or_else(Vec::new, |r| r.split_whitespace().map(str::to_string).collect()),
        from: first("From"),
        to: first("To"),
        cc: first("Cc"),
        date: first("Date"),
    };
    let mut text = lf(&String::from_utf8_lossy(separator));
    text.push_str(&lf(&String::from_utf8_lossy(parsed.get_headers().get_raw_bytes())));
    let mut parts = Vec::new();
    text_parts(&parsed, &mut parts)?;
    text.push_str(&parts.join("\n"));
    Ok(Decoded { subject: first("Subject"), thread, text })
}

/// Whether `text` opens with a header field (`Name: value`, a name of printable ASCII
/// with no space): `[PATCH] mm/readahead: ...` and `diff --git ...` do not.
fn starts_with_header(text: &[u8]) -> bool {
    let line = text.split(|&b| b == b'\n').next().unwrap_or_default();
    line.iter()
        .position(|&b| b == b':')
        .is_some_and(|colon| colon > 0 && line[..colon].iter().all(|b| b.is_ascii_graphic()))
}

/// The text of each part that is text, or an attachment holding a diff, decoded, in order.
fn text_parts(part: &ParsedMail, out: &mut Vec<String>) -> Result<(), String> {
    if !part.subparts.is_empty() {
        return part.subparts.iter().try_for_each(|p| text_parts(p, out));
    }
    let bytes = part.get_body_raw().map_err(|e| format!("a {} part does not decode: {e}", part.ctype.mimetype))?;
    let charset = part.ctype.charset.to_ascii_lowercase();
    // As it came where it is UTF-8 (or ASCII) already: a mail without a charset gets
    // mailparse's us-ascii, which would replace any other byte.
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) if ["utf-8", "utf8", "us-ascii", "ascii"].contains(&charset.as_str()) => t.to_string(),
        _ => part.get_body().map_err(|e| format!("a {} part's {charset} does not decode: {e}", part.ctype.mimetype))?,
    };
    let text = lf(&text);
    if part.ctype.mimetype.starts_with("text/") || !diff_lines(&text).is_empty() {
        out.push(text);
    }
    Ok(())
}

fn lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// The messages of an mbox, each with its offset: split at `From ` lines (the mbox
/// separator), each message's `>From ` lines unescaped (mboxrd: one `>` less); a raw mail
/// is one message.
fn split_mbox(raw: &[u8]) -> Vec<(usize, Vec<u8>)> {
    let mut starts = vec![0];
    let mut at = 0;
    for line in raw.split_inclusive(|&b| b == b'\n') {
        let year = String::from_utf8_lossy(line).trim_end().rsplit(' ').next().is_some_and(is_year);
        if at > 0 && line.starts_with(b"From ") && year {
            starts.push(at);
        }
        at += line.len();
    }
    starts.push(raw.len());
    starts
        .windows(2)
        .map(|w| (w[0], &raw[w[0]..w[1]]))
        .filter(|(_, m)| !m.iter().all(u8::is_ascii_whitespace))
        .map(|(at, m)| (at, if m.starts_with(b"From ") { unescape_from(m) } else { m.to_vec() }))
        .collect()
}

/// `>From ` -> `From `, `>>From ` -> `>From `, ... at the start of a line.
fn unescape_from(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len());
    for line in message.split_inclusive(|&b| b == b'\n') {
        let quotes = line.iter().take_while(|&&b| b == b'>').count();
        let escaped = quotes > 0 && line[quotes..].starts_with(b"From ");
        out.extend_from_slice(if escaped { &line[1..] } else { line });
    }
    out
}

fn is_year(word: &str) -> bool {
    word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit())
}

/// A first line that is a bracketed subject (`[PATCH] ...`, as lore's raw thread view
/// starts).
fn bracketed_subject(text: &str) -> Option<String> {
    let first = text.lines().find(|l| !l.trim().is_empty())?.trim();
    first.starts_with('[').then(|| first.to_string())
}

/// The first file a diff changes and the function of its first hunk: `mm/readahead.c:
/// page_cache_sync_ra()` (the file alone when the hunk header names no function).
pub fn describe_diff(text: &str) -> String {
    let (file, function) = first_change(text);
    match function {
        Some(f) => format!("{file}: {f}()"),
        None => file,
    }
}

/// A variant name from the first file and function a diff changes:
/// `mm-readahead-page-cache-sync-ra`.
pub fn diff_name(text: &str) -> String {
    let (file, function) = first_change(text);
    let file = file.rsplit_once('.').map_or(file.as_str(), |(stem, _)| stem).to_string();
    variant_name(&format!("{file} {}", function.unwrap_or_default())).unwrap_or_else(|| "patch".into())
}

/// The diff's first file (its `b/` side) and the function its first hunk header names.
fn first_change(text: &str) -> (String, Option<String>) {
    let diff = diff_lines(text);
    let file = diff
        .iter()
        .find_map(|l| l.strip_prefix("+++ "))
        .map(|f| f.split_whitespace().next().unwrap_or(f))
        .map(|f| f.strip_prefix("b/").unwrap_or(f).to_string())
        .unwrap_or_else(|| "patch".into());
    let function = diff.iter().find_map(|l| l.strip_prefix("@@ ")).and_then(|h| {
        let (_, section) = h.split_once("@@")?;
        let name = section.split('(').next()?.split_whitespace().last()?.trim_start_matches('*');
        (!name.is_empty() && section.contains('(')).then(|| name.to_string())
    });
    (file, function)
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
/// `[PATCH v2 1/3] mm/readahead: Keep half of the window` -> `keep-half-of-the-window-v2`;
/// `None` for a subject with no word to name it by.
pub fn variant_name(subject: &str) -> Option<String> {
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
        return None;
    }
    if let Some(v) = version {
        name.push('-');
        name.push_str(&v.to_ascii_lowercase());
    }
    Some(name)
}

/// The first file a patch names (either side of a `---`/`+++` pair) that is not a path
/// inside the tree once its first name (`a/`, `b/`) is stripped, with its line; `None`
/// when every one is.
pub fn outside_the_tree(patch: &str) -> Option<(usize, String)> {
    patch.lines().enumerate().find_map(|(i, l)| {
        let name = l.strip_prefix("+++ ").or_else(|| l.strip_prefix("--- "))?.split_whitespace().next()?;
        if name == "/dev/null" {
            return None;
        }
        let rel = name.split_once('/').map_or(name, |(_, rest)| rest);
        let why = if name.starts_with('/') { crate::files::below(name).err() } else { crate::files::below(rel).err() };
        why.map(|why| (i + 1, format!("`{l}`: {why}")))
    })
}

/// The files a patch (a mail or a plain diff) changes: the `b/` side of its `+++` lines.
pub fn touched_files(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|l| l.strip_prefix("+++ "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|p| *p != "/dev/null")
        .map(|p| p.split_once('/').map_or(p, |(_, rest)| rest).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/mm/readahead.c b/mm/readahead.c\nindex 1..2 100644\n--- a/mm/readahead.c\n+++ b/mm/readahead.c\n@@ -1,3 +1,4 @@ void page_cache_sync_ra(struct readahead_control *ractl,\n a\n-b\n+c\n+d\n e\n";

    /// Seed 001's mail as the repository keeps it (lore's raw view: no headers).
    const SEED_001: &str = include_str!(
        "../../kernels/variants/sync-ra-when-disabled/0001-mm-readahead-improve-randread-performance-with-readahead-disabled.mbox"
    );

    #[test]
    fn a_raw_mail_is_one_patch_named_from_its_subject() {
        let text = format!("[PATCH] mm/readahead: keep at least half of the async window when aligning it\n\nFrom: A <a@b>\n\nprose\n---\n{DIFF}-- \n2.1\n\nRe: [PATCH] ...\n> diff --git a/x b/x\n> -a\n");
        let mail = parse(text.as_bytes()).unwrap();
        assert_eq!(mail.subject, "[PATCH] mm/readahead: keep at least half of the async window when aligning it");
        assert_eq!(mail.patches.len(), 1);
        assert_eq!(mail.patches[0].diff().len(), 10, "the quoted diff in the reply is not part of it");
        assert_eq!(mail.name, "keep-at-least-half-of-the-async-window");
        assert_eq!(mail.patches[0].text, text, "a mail that needs no decoding is kept as it is");
    }

    #[test]
    fn an_mbox_of_a_series_is_one_patch_per_message_with_a_diff() {
        let msg = |n: &str, body: &str| {
            format!("From 0123456789abcdef Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nMessage-ID: <{n}@b>\nSubject: [PATCH v2 {n}/2] mm/readahead:\n two words\n\n{body}\n")
        };
        let text = [msg("0", "cover letter"), msg("1", DIFF), msg("2", DIFF)].concat();
        let mail = parse(text.as_bytes()).unwrap();
        assert_eq!(mail.patches.len(), 2);
        assert_eq!(mail.subject, "[PATCH v2 0/2] mm/readahead: two words");
        assert_eq!(mail.patches[1].subject, "[PATCH v2 2/2] mm/readahead: two words");
        assert_eq!(mail.name, "two-words-v2");
        assert_eq!(mail.thread.message_id.as_deref(), Some("<0@b>"), "a reply answers the cover letter");
        assert!(mail.patches[1].raw.starts_with(b"From 0123456789abcdef"), "each message kept whole");
    }

    #[test]
    fn a_mail_without_a_diff_says_so() {
        let err = parse(b"Subject: [PATCH] x\n\nno diff here\n> --- a/x\n> +++ b/x\n").unwrap_err();
        assert!(err.starts_with("it has no diff"), "{err}");
    }

    #[test]
    fn names_are_short_and_safe() {
        assert_eq!(
            variant_name("[RFC PATCH] f2fs: adjust readahead window based on extent length").as_deref(),
            Some("adjust-readahead-window-based-on-extent")
        );
        assert_eq!(variant_name("???"), None);
        assert!(variant_name(&"word ".repeat(30)).unwrap().len() <= 40);
    }

    #[test]
    fn a_mail_without_a_subject_is_named_after_its_first_file_and_function() {
        let mail = parse(format!("From: A <a@b>\n\n{DIFF}").as_bytes()).unwrap();
        assert_eq!(mail.subject, "mm/readahead.c: page_cache_sync_ra()");
        assert_eq!(mail.name, "mm-readahead-page-cache-sync-ra");
        let wordless = parse(format!("Subject: ???\n\n{DIFF}").as_bytes()).unwrap();
        assert_eq!(wordless.name, "mm-readahead-page-cache-sync-ra", "never `patch`");
    }

    #[test]
    fn quoted_printable_base64_and_attached_copies_of_seed_001_decode_to_its_patch() {
        let plain = parse(SEED_001.as_bytes()).unwrap();
        assert_eq!(plain.patches[0].text, SEED_001);
        for (how, raw) in crate::testing::encoded_copies(SEED_001) {
            let text = String::from_utf8_lossy(&raw);
            // The copies are encoded where it matters: `=` and long lines, bytes, a part.
            let encoded = match how {
                "quoted-printable" => text.contains("=3D") && text.contains("=\r\n") && text.contains("\r\n"),
                "base64" => !text.contains("diff --git"),
                _ => text.contains("multipart/mixed") && !text.contains("diff --git"),
            };
            assert!(encoded, "{how}: the copy is not encoded:\n{text}");
            let mail = parse(&raw).unwrap_or_else(|e| panic!("{how}: {e}"));
            assert_eq!(mail.patches.len(), 1, "{how}");
            assert_eq!(mail.patches[0].diff(), plain.patches[0].diff(), "{how}: the same diff");
            assert!(mail.patches[0].text.ends_with(SEED_001), "{how}: the decoded body is the plain mail");
            assert_eq!(mail.subject, plain.subject, "{how}");
            assert_eq!(mail.name, "improve-randread-performance-with", "{how}");
            assert_eq!(mail.thread.message_id.as_deref(), Some("<copy@example.org>"), "{how}");
            assert_eq!(patch_text(&raw).unwrap(), mail.patches[0].text, "{how}: what patch -p1 gets");
        }
    }

    #[test]
    fn an_mbox_from_escape_and_crlf_come_out_as_sent() {
        let raw = format!(
            "From abc Mon Sep 17 00:00:00 2001\r\nSubject: [PATCH] mm: x\r\n\r\n>From here on\r\n>>From there\r\n---\r\n{}",
            DIFF.replace('\n', "\r\n")
        );
        let mail = parse(raw.as_bytes()).unwrap();
        let text = &mail.patches[0].text;
        assert!(text.contains("\nFrom here on\n>From there\n"), "{text}");
        assert!(!text.contains('\r'), "{text:?}");
        assert_eq!(mail.patches[0].diff(), parse(DIFF.as_bytes()).unwrap().patches[0].diff());
    }

    #[test]
    fn headers_that_run_into_the_diff_are_taken_as_they_are() {
        let text = format!(
            "Subject: [PATCH] mm: by hand\n---\n{}",
            DIFF.replace("diff --git a/mm/readahead.c b/mm/readahead.c\nindex 1..2 100644\n", "")
        );
        let mail = parse(text.as_bytes()).unwrap();
        assert_eq!(mail.subject, "[PATCH] mm: by hand");
        assert_eq!(mail.patches[0].text, text);
    }

    #[test]
    fn a_base64_body_that_does_not_decode_is_an_error() {
        let err = parse(b"Subject: [PATCH] x\nContent-Transfer-Encoding: base64\n\n!!!not base64!!!\n").unwrap_err();
        assert!(err.contains("does not decode"), "{err}");
    }

    #[test]
    fn a_patch_touches_the_b_side_of_its_headers() {
        let p = "Subject: x\n---\ndiff --git a/mm/readahead.c b/mm/readahead.c\n--- a/mm/readahead.c\n+++ b/mm/readahead.c\t2026-01-01\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/mm/new.c\n";
        assert_eq!(touched_files(p), ["mm/readahead.c", "mm/new.c"]);
        assert_eq!(outside_the_tree(p), None);
    }

    #[test]
    fn a_patch_naming_a_file_outside_the_tree_is_found_with_its_line() {
        for bad in ["+++ b/../../etc/x", "--- a/mm/../../x", "+++ /etc/passwd2"] {
            let p = format!("Subject: x\n---\n--- a/mm/readahead.c\n{bad}\n@@ -1 +1 @@\n");
            let found = outside_the_tree(&p);
            let (line, why) = found.unwrap_or_else(|| panic!("{bad} was taken"));
            assert!(line >= 3 && why.contains(bad), "{line}: {why}");
        }
        // `--- ` inside a mail's text (a signature dash line) is no file.
        assert_eq!(outside_the_tree("Subject: x\n-- \nme\n"), None);
    }
}
