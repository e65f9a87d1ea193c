//! Diagnostics that point into a user's file: a stable code, the file, line and column, the
//! offending line with a marker under the span, and what to do about it.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// How bad a diagnostic is. Every diagnostic today is an error (the input cannot be used); the
/// level is part of the rendering and of the JSON so that tools can filter when there are others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The input cannot be used.
    Error,
}

/// One finding about a file, with its location.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// A stable identifier, e.g. `P004`, for documentation and for tools that filter.
    pub code: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The file the span points into.
    pub file: PathBuf,
    /// 1-based line of the span start.
    pub line: usize,
    /// 1-based column (in characters) of the span start.
    pub column: usize,
    /// The full text of that line.
    #[serde(skip)]
    pub source_line: String,
    /// How many characters to underline on that line (at least 1).
    #[serde(skip)]
    pub width: usize,
    /// What to do about it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// Builds an error diagnostic for `span` (byte offsets) in `text`, read from `file`.
    pub fn error(code: &'static str, message: impl Into<String>, file: &Path, text: &str, span: Range<usize>) -> Self {
        let (line, column, source_line, width) = locate(text, span);
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            file: file.to_path_buf(),
            line,
            column,
            source_line,
            width,
            help: None,
        }
    }

    /// Adds what to do about it.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Byte span → (line, column, that line's text, underline width), all 1-based, in characters.
pub fn locate(text: &str, span: Range<usize>) -> (usize, usize, String, usize) {
    let start = span.start.min(text.len());
    let end = span.end.clamp(start, text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[..start].matches('\n').count() + 1;
    let column = text[line_start..start].chars().count() + 1;
    let width = text[start..end.min(line_end)].chars().count().max(1);
    (line, column, text[line_start..line_end].trim_end_matches('\r').to_owned(), width)
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
        };
        writeln!(f, "{level}[{}]: {}", self.code, self.message)?;
        let gutter = self.line.to_string().len();
        writeln!(f, "{:gutter$}--> {}:{}:{}", "", self.file.display(), self.line, self.column)?;
        writeln!(f, "{:gutter$} |", "")?;
        writeln!(f, "{} | {}", self.line, self.source_line)?;
        write!(f, "{:gutter$} | {}{}", "", " ".repeat(self.column - 1), "^".repeat(self.width))?;
        if let Some(help) = &self.help {
            write!(f, "\n{:gutter$} = help: {help}", "")?;
        }
        Ok(())
    }
}

/// Several diagnostics, shown one after another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Whether any is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_file_line_column_snippet_and_help() {
        let text = "a = 1\nprovider = \"openssl\"\n";
        let start = text.find("\"openssl\"").unwrap();
        let d =
            Diagnostic::error("P003", "unknown provider `openssl`", Path::new("policy.toml"), text, start..start + 9)
                .with_help("use one of: rustls-aws-lc, rustls-ring, s2n-tls, none");
        assert_eq!(
            d.to_string(),
            "error[P003]: unknown provider `openssl`\n --> policy.toml:2:12\n  |\n2 | provider = \"openssl\"\n  |            ^^^^^^^^^\n  = help: use one of: rustls-aws-lc, rustls-ring, s2n-tls, none"
        );
    }
}
