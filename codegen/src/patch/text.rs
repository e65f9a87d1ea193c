//! The text being patched: byte offsets from spans, a line table, and insertions.

use std::path::Path;

use proc_macro2::{LineColumn, Span};

use super::PatchError;
/// An insertion of `text` at byte offset `at` of the original text.
#[derive(Debug)]
pub(super) struct Edit {
    pub(super) at: usize,
    pub(super) text: String,
}

/// Applies insertions (offsets refer to the original text).
pub(super) fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| e.at);
    let mut out = String::with_capacity(text.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut pos = 0;
    for edit in edits {
        let at = edit.at.clamp(pos, text.len());
        out.push_str(text.get(pos..at).unwrap_or_default());
        out.push_str(&edit.text);
        pos = at;
    }
    out.push_str(text.get(pos..).unwrap_or_default());
    out
}

/// The text being patched, with a line table for turning spans into byte offsets.
pub(super) struct Source<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
    /// Bytes skipped before parsing (a UTF-8 byte-order mark).
    pub(super) base: usize,
    /// Byte offset (into `text`) of the start of each line; line `n` (1-based) starts at
    /// `line_starts[n - 1]`.
    pub(super) line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    pub(super) fn new(path: &'a Path, text: &'a str) -> Self {
        let base = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
        let mut line_starts = vec![base];
        line_starts.extend(text.char_indices().filter(|&(_, c)| c == '\n').map(|(i, _)| i + 1));
        Source { path, text, base, line_starts }
    }

    pub(super) fn parse(&self) -> Result<syn::File, PatchError> {
        syn::parse_file(&self.text[self.base..]).map_err(|e| {
            let at = e.span().start();
            let (line, column) = if at.line == 0 { (self.line_starts.len(), 1) } else { (at.line, at.column + 1) };
            let lexes = self.text[self.base..].parse::<proc_macro2::TokenStream>().is_ok();
            let message = if lexes {
                e.to_string()
            } else {
                "cannot split the file into tokens (unbalanced delimiter, or unterminated string, \
                 character or block comment)"
                    .to_owned()
            };
            PatchError::Parse { path: self.path.to_owned(), line, column, message }
        })
    }

    /// Parses the patched text, mapping failure to [`PatchError::InvalidResult`].
    pub(super) fn reparse(&self, out: &str) -> Result<syn::File, PatchError> {
        syn::parse_file(out).map_err(|e| {
            let at = e.span().start();
            self.invalid(format!("line {}, column {}: {e}", at.line, at.column + 1))
        })
    }

    pub(super) fn invalid(&self, message: String) -> PatchError {
        PatchError::InvalidResult { path: self.path.to_owned(), message }
    }

    /// `"\r\n"` if the file uses CRLF line endings, else `"\n"`.
    pub(super) fn newline(&self) -> &'static str {
        if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        }
    }

    /// Byte offset of a proc-macro2 position (1-based line, 0-based column in `char`s).
    pub(super) fn offset(&self, at: LineColumn) -> Result<usize, PatchError> {
        let found = at.line.checked_sub(1).and_then(|idx| {
            let start = *self.line_starts.get(idx)?;
            let end = self.line_starts.get(idx + 1).copied().unwrap_or(self.text.len());
            let line = self.text.get(start..end)?;
            match line.char_indices().nth(at.column) {
                Some((i, _)) => Some(start + i),
                None if line.chars().count() == at.column => Some(end),
                None => None,
            }
        });
        found.ok_or_else(|| {
            self.invalid(format!(
                "internal error: source position line {}, column {} is outside the file",
                at.line,
                at.column + 1
            ))
        })
    }

    pub(super) fn start_of(&self, span: Span) -> Result<usize, PatchError> {
        self.offset(span.start())
    }

    pub(super) fn end_of(&self, span: Span) -> Result<usize, PatchError> {
        self.offset(span.end())
    }

    /// Byte offset of the start of the line containing `offset`.
    pub(super) fn line_start(&self, offset: usize) -> usize {
        let idx = self.line_starts.partition_point(|&start| start <= offset);
        self.line_starts.get(idx.saturating_sub(1)).copied().unwrap_or(self.base)
    }

    /// Byte offset of the `\n` ending the line containing `offset`, if any.
    pub(super) fn newline_after(&self, offset: usize) -> Option<usize> {
        self.text.get(offset..)?.find('\n').map(|i| offset + i)
    }

    /// The leading spaces and tabs of the line containing `offset`.
    pub(super) fn indent_of_line_at(&self, offset: usize) -> &'a str {
        let start = self.line_start(offset);
        let line = self.text.get(start..).unwrap_or_default();
        let len = line.len() - line.trim_start_matches([' ', '\t']).len();
        &line[..len]
    }

    /// Whether only whitespace precedes `offset` on its line.
    pub(super) fn starts_its_line(&self, offset: usize) -> bool {
        self.text
            .get(self.line_start(offset)..offset)
            .is_some_and(|before| before.chars().all(|c| c == ' ' || c == '\t'))
    }

    /// Whether the rest of the line after `offset` is blank or a plain `//` comment (not a doc
    /// comment, which would attach to what follows), so that whole lines may go after it.
    pub(super) fn rest_is_ignorable(&self, offset: usize) -> bool {
        let end = self.newline_after(offset).unwrap_or(self.text.len());
        let rest = self.text.get(offset..end).unwrap_or_default().trim();
        rest.is_empty() || (rest.starts_with("//") && !rest.starts_with("///") && !rest.starts_with("//!"))
    }

    /// An edit inserting `lines` as whole lines after the line containing `offset`.
    pub(super) fn lines_after_line_of(&self, offset: usize, lines: &[String]) -> Edit {
        let nl = self.newline();
        match self.newline_after(offset) {
            Some(newline) => {
                let mut text = String::new();
                for line in lines {
                    text.push_str(line);
                    text.push_str(nl);
                }
                Edit { at: newline + 1, text }
            }
            None => {
                let mut text = String::new();
                for line in lines {
                    text.push_str(nl);
                    text.push_str(line);
                }
                Edit { at: self.text.len(), text }
            }
        }
    }
}
