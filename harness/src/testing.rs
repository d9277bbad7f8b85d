//! What the repository's own tests share (tests/*.rs and the unit tests): no radiff
//! command calls it.

use radiff_model::Input;

/// A 4 KiB read, then sixteen 1 MiB reads of a 64 MiB XFS file on QEMU NVMe with
/// read_ahead_kb 128: a stream whose async windows the alignment of
/// page_cache_async_ra() decides, for examples and tests of explaining.
pub fn example_stream() -> Input {
    use radiff_model::Op;
    let mut ops = vec![Op::Read { fd: 0, offset: 0, len: 4096 }];
    ops.extend((0..16).map(|i| Op::Read { fd: 0, offset: 4096 + (i << 20), len: 1 << 20 }));
    Input::xfs_on_nvme(64 << 20, ops)
}

/// `plain` (a raw mail as lore shows it: `[PATCH] ...` first, no headers) as mail clients
/// and archives send it, each a whole mail with headers and a Message-ID: `quoted-printable`
/// (CRLF line ends, `=3D`, soft line breaks), `base64`, and `attached` (multipart/mixed, a
/// line of prose, then the mail as a base64 `text/x-patch` attachment). Each decodes to
/// `plain`'s own diff.
pub fn encoded_copies(plain: &str) -> [(&'static str, Vec<u8>); 3] {
    let subject = plain.lines().next().unwrap_or_default().trim();
    let head = |extra: &str| {
        format!("From: A Developer <dev@example.org>\nTo: linux-mm@kvack.org\nSubject: {subject}\nDate: Mon, 3 Aug 2026 10:00:00 +0000\nMessage-ID: <copy@example.org>\nMIME-Version: 1.0\n{extra}\n")
    };
    let base64 = |text: &str| {
        let one_line = data_encoding::BASE64.encode(text.as_bytes());
        let lines: Vec<&str> =
            one_line.as_bytes().chunks(76).map(|c| std::str::from_utf8(c).expect("base64 is ASCII")).collect();
        lines.join("\n") + "\n"
    };
    let qp = head("Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n")
        .replace('\n', "\r\n")
        + &quoted_printable::encode_to_str(plain);
    let b64 = head("Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n") + &base64(plain);
    let attached = head("Content-Type: multipart/mixed; boundary=\"radiff-part\"\n")
        + "This is a multi-part message in MIME format.\n--radiff-part\nContent-Type: text/plain; charset=utf-8\n\nThe patch is attached.\n--radiff-part\nContent-Type: text/x-patch; charset=utf-8; name=\"0001.patch\"\nContent-Disposition: attachment; filename=\"0001.patch\"\nContent-Transfer-Encoding: base64\n\n"
        + &base64(plain)
        + "--radiff-part--\n";
    [("quoted-printable", qp.into_bytes()), ("base64", b64.into_bytes()), ("attached", attached.into_bytes())]
}
