//! Where a byte offset of the config file is, as people count: lines from
//! 1, columns from 1 in characters.

/// The file being read: its name for messages, its text for positions.
pub(super) struct Source<'a> {
    pub(super) path: &'a str,
    pub(super) text: &'a str,
}

impl Source<'_> {
    /// `path line N` for the byte offset `at`.
    pub(super) fn line(&self, at: usize) -> String {
        let (start, _) = self.line_bounds(at);
        let number = self.text.as_bytes()[..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        format!("{} line {number}", self.path)
    }

    /// `path line N column C` for the byte offset `at`.
    pub(super) fn line_and_column(&self, at: usize) -> String {
        let at = at.min(self.text.len());
        let (start, _) = self.line_bounds(at);
        let column = match self.text.get(start..at) {
            Some(before) => before.chars().count() + 1,
            None => at - start + 1,
        };
        format!("{} column {column}", self.line(at))
    }

    /// The text of the line holding the byte offset `at`.
    pub(super) fn line_text(&self, at: usize) -> &str {
        let (start, end) = self.line_bounds(at);
        self.text.get(start..end).unwrap_or("")
    }

    /// The byte range of the line holding `at`, without its newline.
    pub(super) fn line_bounds(&self, at: usize) -> (usize, usize) {
        let bytes = self.text.as_bytes();
        let at = at.min(bytes.len());
        let start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |newline| newline + 1);
        let end = bytes[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |n| at + n);
        (start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let file = Source {
            path: "redq.toml",
            text: "a = 1\nnamespace = \"é\" x\n",
        };
        assert_eq!(file.line(0), "redq.toml line 1");
        assert_eq!(file.line(5), "redq.toml line 1");
        assert_eq!(file.line(6), "redq.toml line 2");
        // The x after the two-byte é is the 17th character of line 2 (its
        // 18th byte).
        let x = file.text.find('x').unwrap();
        assert_eq!(file.line_and_column(x), "redq.toml line 2 column 17");
        assert_eq!(file.line_text(x), "namespace = \"é\" x");
        // The end of the file is on the last line, which is empty.
        assert_eq!(file.line_and_column(99), "redq.toml line 3 column 1");
    }
}
