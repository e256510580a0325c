//! Making untrusted text safe to put on a terminal.
//!
//! Job payloads, error messages, job names and queue names all come from
//! whoever wrote to Redis. Printed as they are, an escape sequence in a
//! payload could move the cursor, retitle the window or worse. Everything the
//! console shows from Redis goes through [`inert`] first: control characters
//! become visible escapes (`\u{1b}` shows as `\x1b`), so they are readable and
//! harmless. So do the characters that show nothing but change what a line
//! appears to say ([`is_hidden`]): bidirectional controls that reorder it,
//! zero-width and invisible format characters, soft hyphens, byte order
//! marks, and the line and paragraph separators some terminals and editors
//! break lines at.

use std::fmt::Write;

/// `text` with every control character (C0, DEL, C1) replaced by a visible
/// escape. Newlines and tabs are escaped too: a table cell is one line.
pub fn inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_inert(&mut out, c, false);
    }
    out
}

/// Like [`inert`], but keeps newlines (for multi-line detail views, where
/// each line is then drawn separately).
pub fn inert_multiline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_inert(&mut out, c, true);
    }
    out
}

fn push_inert(out: &mut String, c: char, keep_newlines: bool) {
    match c {
        '\n' if keep_newlines => out.push('\n'),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_control() => {
            let code = c as u32;
            if code <= 0xff {
                let _ = write!(out, "\\x{code:02x}");
            } else {
                let _ = write!(out, "\\u{{{code:x}}}");
            }
        }
        c if is_hidden(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// Whether `c` shows nothing yet changes what text around it appears to
/// say: every format character (Unicode general category Cf: the
/// bidirectional marks, embeddings, overrides and isolates U+200E/F,
/// U+202A–U+202E, U+2066–U+2069, U+061C; zero-width spaces and joiners
/// U+200B–U+200D, U+2060–U+2064; the soft hyphen U+00AD; the byte order
/// mark U+FEFF; the rest of Cf, tags and interlinear annotations among
/// them), and the line and paragraph separators U+2028/U+2029. [`inert`]
/// shows them as escapes, and the CLI's JSON as `\u` escapes, so a payload
/// cannot hide text or reorder a line. The cost is that an emoji joined by
/// U+200D shows as its parts with the joiner escaped.
pub fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{600}'..='\u{605}'
            | '\u{61c}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{890}'..='\u{891}'
            | '\u{8e2}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0001}'
            | '\u{e0020}'..='\u{e007f}'
    )
}

/// At most `width` characters of `text`, with `…` marking a cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// At most `width` characters of `text`, cut in the middle with `…`, so
/// names that differ only at the end (`tenant-acme-…-invoices`, `…-refunds`)
/// stay told apart. The tail keeps the extra character of an odd split.
pub fn truncate_middle(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_owned();
    }
    if width <= 2 {
        return truncate(text, width);
    }
    let head = (width - 1) / 2;
    let tail = width - 1 - head;
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(n - tail));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible_text() {
        let cases = [
            ("plain", "plain"),
            ("\u{1b}[2J\u{1b}]0;pwned\u{7}", "\\x1b[2J\\x1b]0;pwned\\x07"),
            ("a\nb\tc\r", "a\\nb\\tc\\r"),
            ("\u{9b}31m", "\\x9b31m"),
            ("\u{7f}", "\\x7f"),
            ("rtl\u{202e}txt", "rtl\\u{202e}txt"),
            ("naïve ✓", "naïve ✓"),
        ];
        for (input, want) in cases {
            assert_eq!(inert(input), want, "input {input:?}");
            assert!(!inert(input).chars().any(|c| c.is_control()));
        }
    }

    #[test]
    fn invisible_and_bidi_format_characters_become_visible_text() {
        // A payload {"n":"\u2028x\u00ad\ufeff"} showed as "n": "x".
        assert_eq!(
            inert("\u{2028}x\u{ad}\u{feff}"),
            "\\u{2028}x\\u{ad}\\u{feff}"
        );
        for c in [
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{200e}',
            '\u{200f}',
            '\u{202a}',
            '\u{202e}',
            '\u{2029}',
            '\u{2060}',
            '\u{2066}',
            '\u{2069}',
            '\u{61c}',
            '\u{e0041}',
        ] {
            assert_eq!(inert(&c.to_string()), format!("\\u{{{:x}}}", c as u32));
            assert_eq!(inert_multiline(&c.to_string()), inert(&c.to_string()));
        }
        // Letters, accents and emoji without joiners stay as they are.
        assert_eq!(inert("café ü 日本 🙂"), "café ü 日本 🙂");
    }

    #[test]
    fn multiline_keeps_only_newlines() {
        assert_eq!(inert_multiline("a\n\u{1b}b"), "a\n\\x1bb");
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("abc", 0), "");
    }

    #[test]
    fn truncate_middle_keeps_both_ends() {
        let invoices = "tenant-acme-production-eu-west-1-invoices";
        let refunds = "tenant-acme-production-eu-west-1-refunds";
        assert_eq!(truncate_middle(invoices, 21), "tenant-acm…1-invoices");
        assert_ne!(truncate_middle(invoices, 12), truncate_middle(refunds, 12));
        assert_eq!(truncate_middle(invoices, 12).chars().count(), 12);
        assert_eq!(truncate_middle("billing", 7), "billing");
        assert_eq!(truncate_middle("billing", 2), "b…");
    }
}
