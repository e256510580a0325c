//! Renaming the uses of a lazy module's locals in Lua text (see
//! `compose.rs`): `hold(` becomes `flow__.hold(`, on the same line, outside
//! strings and comments, and never a field (`t.hold`, `t:hold`). The same
//! scan of a text's names serves the binding of its keys (`queue_keys.rs`).

/// `text` with every use of a name in `renames` (name, table) written as
/// `table.name`. A declaration of such a name (`local hold`) is renamed as
/// well and fails to compile: loud, as it should be, since it would shadow the
/// module's.
pub fn rename(text: &str, renames: &[(String, String)]) -> String {
    if renames.is_empty() {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut copied = 0;
    for (start, end) in code_words(text) {
        let word = &text[start..end];
        if let Some((_, table)) = renames.iter().find(|(name, _)| *name == word) {
            if !is_field(bytes, start) && !is_key(bytes, end) {
                out.push_str(&text[copied..start]);
                out.push_str(table);
                out.push('.');
                copied = start;
            }
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The names in `text` (each as its byte range), in order: every word that
/// is not in a comment or a string and is not part of a number.
pub fn code_words(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut words = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let c = bytes[at];
        if c == b'-' && bytes.get(at + 1) == Some(&b'-') {
            at = match long_bracket(bytes, at + 2) {
                Some(level) => close_long(bytes, at + 2, level),
                None => line_end(bytes, at),
            };
        } else if c == b'\'' || c == b'"' {
            at = string_end(bytes, at);
        } else if c == b'[' && long_bracket(bytes, at).is_some() {
            at = close_long(bytes, at, long_bracket(bytes, at).unwrap_or(0));
        } else if c.is_ascii_digit() {
            while at < bytes.len()
                && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'.' || bytes[at] == b'_')
            {
                at += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = at;
            while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                at += 1;
            }
            words.push((start, at));
        } else {
            at += 1;
        }
    }
    words
}

/// Whether the word ending before `end` is followed by `=` (not `==`): a
/// table constructor's key (`{ hold = true }`). An assignment would be the
/// other case, and no file assigns a lazy module's local (a unit test of
/// compose.rs).
pub fn is_key(bytes: &[u8], end: usize) -> bool {
    let rest = &bytes[end..];
    let skip = rest
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    rest.get(skip) == Some(&b'=') && rest.get(skip + 1) != Some(&b'=')
}

/// Whether the word at `start` follows `.` (not `..`) or `:`: a field or method.
pub fn is_field(bytes: &[u8], start: usize) -> bool {
    let mut i = start;
    while i > 0 && (bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') {
        i -= 1;
    }
    match i.checked_sub(1).map(|j| bytes[j]) {
        Some(b':') => true,
        Some(b'.') => !(i >= 2 && bytes[i - 2] == b'.'),
        _ => false,
    }
}

fn line_end(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && bytes[at] != b'\n' {
        at += 1;
    }
    at
}

/// The end (past the closing quote) of the quoted string starting at `at`.
fn string_end(bytes: &[u8], at: usize) -> usize {
    let quote = bytes[at];
    let mut i = at + 1;
    while i < bytes.len() && bytes[i] != quote {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    (i + 1).min(bytes.len())
}

/// The level of a long bracket `[[`, `[=[`, ... opening at `at`, if one does.
fn long_bracket(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    let mut level = 0;
    while bytes.get(at + 1 + level) == Some(&b'=') {
        level += 1;
    }
    (bytes.get(at + 1 + level) == Some(&b'[')).then_some(level)
}

/// The end (past `]=*]`) of the long bracket of `level` opening at `at`.
fn close_long(bytes: &[u8], at: usize, level: usize) -> usize {
    let mut i = at + 2 + level;
    while i < bytes.len() {
        if bytes[i] == b']'
            && bytes[i + 1..].iter().take(level).all(|b| *b == b'=')
            && bytes.get(i + 1 + level) == Some(&b']')
        {
            return i + 2 + level;
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_are_renamed_and_fields_strings_and_comments_are_not() {
        let renames = [
            ("hold".to_owned(), "flow__".to_owned()),
            ("M".to_owned(), "job_record__".to_owned()),
        ];
        let text = "if hold(id, m[M.limit_key]) then t.hold = 'hold' .. hold end -- hold\n\
                    k = { hold = hold, M == 1 }\n\
                    x = a:hold() .. \"hold\" .. [[hold]] --[[ hold ]] y = holding + hold2";
        assert_eq!(
            rename(text, &renames),
            "if flow__.hold(id, m[job_record__.M.limit_key]) then t.hold = 'hold' .. flow__.hold end -- hold\n\
             k = { hold = flow__.hold, job_record__.M == 1 }\n\
             x = a:hold() .. \"hold\" .. [[hold]] --[[ hold ]] y = holding + hold2"
        );
    }

    #[test]
    fn lines_do_not_move() {
        let renames = [("hold".to_owned(), "flow__".to_owned())];
        let text = "a\n  hold(1)\n--[[\nhold\n]]\nhold 'x'\n";
        assert_eq!(rename(text, &renames).lines().count(), text.lines().count());
    }
}
