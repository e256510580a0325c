//! Error signatures: the shape of an error message with its variable parts
//! (numbers, ids, hex, quoted values) blanked, so that "timeout after 3012ms
//! on job 01J…" and "timeout after 5001ms on job 01K…" group together.

/// The signature of an error message: digits runs become `#`, long
/// alphanumeric tokens that contain digits (ids, hashes) become `…`, quoted
/// strings become `"…"`; whitespace is collapsed and the result is cut to
/// 120 characters.
pub fn signature(error: &str) -> String {
    let mut out = String::new();
    for (i, word) in error.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&word_signature(word));
        if out.len() > 120 {
            break;
        }
    }
    if out.is_empty() {
        return "(no error recorded)".to_owned();
    }
    crate::text::truncate(&out, 120)
}

fn word_signature(word: &str) -> String {
    let core = word.trim_matches(|c: char| !c.is_alphanumeric());
    let digits = core.chars().filter(char::is_ascii_digit).count();
    let quoted = (word.starts_with('"') && word.ends_with('"') && word.len() > 1)
        || (word.starts_with('\'') && word.ends_with('\'') && word.len() > 1);
    if quoted {
        return "\"…\"".to_owned();
    }
    if core.len() >= 8 && digits > 0 && core.chars().all(|c| c.is_alphanumeric() || c == '-') {
        return word.replace(core, "…");
    }
    let mut out = String::with_capacity(word.len());
    let mut in_number = false;
    for c in word.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::signature;

    #[test]
    fn variable_parts_are_blanked() {
        let cases = [
            ("timeout after 3012ms", "timeout after #ms"),
            ("timeout after 5001ms", "timeout after #ms"),
            ("job 01JDQ2X7K5M3N8P9R2S4T6V8W0 failed", "job … failed"),
            ("HTTP 503 from 10.0.0.7:443", "HTTP # from #.#.#.#:#"),
            ("user \"ada\" not found", "user \"…\" not found"),
            ("", "(no error recorded)"),
            ("  spaced\n\tout  ", "spaced out"),
        ];
        for (input, want) in cases {
            assert_eq!(signature(input), want, "input {input:?}");
        }
    }
}
