//! The reply's place in the patch's thread: its mail headers and the line above its quotes.
//! Pure: the review's thread in, text out.

use std::fmt::Write as _;

use super::reply::Review;

/// `Subject:`, and where the mail answered says it: `To:` its sender, `Cc:` its `To:` and
/// `Cc:`, `In-Reply-To:` its Message-ID, `References:` its References and its Message-ID
/// (one id a line), so that the reply joins its thread.
pub(super) fn headers(r: &Review) -> String {
    let t = &r.thread;
    let mut s = format!("Subject: Re: {}\n", r.subject.trim_start_matches("Re: "));
    if let Some(from) = &t.from {
        let _ = writeln!(s, "To: {from}");
    }
    let cc: Vec<&str> = [&t.to, &t.cc].into_iter().flatten().map(String::as_str).collect();
    if !cc.is_empty() {
        let _ = writeln!(s, "Cc: {}", cc.join(", "));
    }
    if let Some(id) = &t.message_id {
        let _ = writeln!(s, "In-Reply-To: {id}");
        let ids: Vec<&str> = t.references.iter().map(String::as_str).chain([id.as_str()]).collect();
        let _ = writeln!(s, "References: {}", ids.join("\n "));
    }
    s
}

/// The usual line above a quote of the mail: `On DATE, NAME wrote:` (without the date
/// where the mail has none); `None` when it names no sender.
pub(super) fn attribution(t: &crate::mail::Thread) -> Option<String> {
    let name = t.author()?;
    Some(match &t.date {
        Some(date) => format!("On {date}, {name} wrote:"),
        None => format!("{name} wrote:"),
    })
}
