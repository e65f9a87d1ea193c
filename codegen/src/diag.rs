//! Diagnostics that point into a user's file: a stable code, the file, line and column when
//! there is one, the offending line with a marker under the span, and what to do about it.
//! Rendered the way rustc and cargo render theirs (annotate-snippets), plain or in colour.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

/// How bad a diagnostic is: part of the rendering and of the JSON, so that tools can filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The input cannot be used.
    Error,
    /// Advice about input that can be used (it never fails a command).
    Note,
}

/// Where in its file a diagnostic points.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Location {
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
}

impl Location {
    /// The location of byte span `span` in `text`.
    pub fn of_span(text: &str, span: Range<usize>) -> Location {
        let (line, column, source_line, width) = locate(text, span);
        Location { line, column, source_line, width }
    }

    /// The location of 1-based `line` and `column` (in characters) in `text`, underlining one
    /// character; `None` when `text` has no such line.
    pub fn at(text: &str, line: usize, column: usize) -> Option<Location> {
        let source_line = text.lines().nth(line.checked_sub(1)?)?.trim_end_matches('\r').to_owned();
        let column = column.clamp(1, source_line.chars().count() + 1);
        Some(Location { line, column, source_line, width: 1 })
    }

    /// The underlined span as byte offsets into [`Location::source_line`].
    fn byte_span(&self) -> Range<usize> {
        let offset =
            |chars: usize| self.source_line.char_indices().nth(chars).map_or(self.source_line.len(), |(i, _)| i);
        offset(self.column - 1)..offset(self.column - 1 + self.width)
    }
}

/// One finding about a file, with its location when it has one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Diagnostic {
    /// A stable identifier, e.g. `P004`, listed with its fix in docs/DIAGNOSTICS.md.
    pub code: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The file it is about.
    pub file: PathBuf,
    /// Where in the file, when the problem has a place (`line` and `column` in the JSON).
    #[serde(flatten)]
    pub location: Option<Location>,
    /// What to do about it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// Builds an error diagnostic for `span` (byte offsets) in `text`, read from `file`.
    ///
    /// ```
    /// use smithy_tls_codegen::diag::Diagnostic;
    /// let text = "[runtime]\npackage = 3\n";
    /// let d = Diagnostic::error("P002", "`package` must be a string", "policy.toml".as_ref(), text, 20..21);
    /// assert_eq!(d.location.as_ref().map(|l| (l.line, l.column)), Some((2, 11)));
    /// ```
    pub fn error(code: &'static str, message: impl Into<String>, file: &Path, text: &str, span: Range<usize>) -> Self {
        Diagnostic::in_file(code, message, file, Some(Location::of_span(text, span)))
    }

    /// Builds an error diagnostic about `file`, at `location` when the problem has a place.
    pub fn in_file(code: &'static str, message: impl Into<String>, file: &Path, location: Option<Location>) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            file: file.to_path_buf(),
            location,
            help: None,
        }
    }

    /// The same diagnostic at another severity.
    ///
    /// ```
    /// use smithy_tls_codegen::diag::{Diagnostic, Severity};
    /// let d = Diagnostic::in_file("P020", "a rule needs cmake", "p.toml".as_ref(), None).with_severity(Severity::Note);
    /// assert!(d.to_string().starts_with("note[P020]: a rule needs cmake"));
    /// ```
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Adds what to do about it.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The 1-based line it points at, when it has a place.
    pub fn line(&self) -> Option<usize> {
        self.location.as_ref().map(|l| l.line)
    }

    /// Renders it as rustc does, with ANSI colour when `color` (strip it, or print through
    /// `anstream`, where colour is not wanted).
    pub fn render(&self, color: bool) -> String {
        let renderer = if color { Renderer::styled() } else { Renderer::plain() };
        renderer.render(&self.groups()).to_string()
    }

    fn groups(&self) -> Vec<Group<'_>> {
        let level = match self.severity {
            Severity::Error => Level::ERROR,
            Severity::Note => Level::NOTE,
        };
        let path = self.file.display().to_string();
        let title = level.primary_title(self.message.as_str()).id(self.code);
        let mut group = match &self.location {
            Some(location) => title.element(
                Snippet::source(location.source_line.as_str())
                    .line_start(location.line)
                    .path(path)
                    .annotation(AnnotationKind::Primary.span(location.byte_span())),
            ),
            None => title.element(Origin::path(path)),
        };
        if let Some(help) = &self.help {
            group = group.element(Level::HELP.message(help.as_str()));
        }
        vec![group]
    }
}

/// F001: a file of a crate cannot be read (`message` says why).
pub fn unreadable(path: &Path, message: String) -> Diagnostic {
    Diagnostic::in_file("F001", message, path, None).with_help("check that the file exists and this user can read it")
}

/// The place at 1-based `line` and `column` of the file at `path`, read again to show the line
/// (`None` when it cannot be read or has no such line). For errors found before a diagnostic
/// was wanted, which carry only the line and column.
pub fn place_in_file(path: &Path, line: usize, column: usize) -> Option<Location> {
    crate::read::read_text(path).ok().and_then(|text| Location::at(&text, line, column))
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
        f.write_str(self.render(false).trim_end())
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

    /// Renders them one after another, separated by a blank line (see [`Diagnostic::render`]).
    pub fn render(&self, color: bool) -> String {
        self.0.iter().map(|d| d.render(color).trim_end().to_owned()).collect::<Vec<_>>().join("\n\n")
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(false))
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    fn p003() -> Diagnostic {
        let text = "a = 1\nprovider = \"gnutls\"\n";
        let value = "\"gnutls\"";
        let start = text.find(value).unwrap();
        Diagnostic::error(
            "P003",
            "unknown provider `gnutls`",
            Path::new("policy.toml"),
            text,
            start..start + value.len(),
        )
        .with_help("use one of: rustls-aws-lc, rustls-ring, s2n-tls, none")
    }

    #[test]
    fn renders_file_line_column_snippet_and_help() {
        assert_eq!(
            p003().to_string(),
            "error[P003]: unknown provider `gnutls`\n --> policy.toml:2:12\n  |\n2 | provider = \"gnutls\"\n  |            ^^^^^^^^\n  |\n  = help: use one of: rustls-aws-lc, rustls-ring, s2n-tls, none"
        );
    }

    #[test]
    fn colour_is_ansi_styling_of_the_same_text() {
        let styled = p003().render(true);
        assert!(styled.contains("\x1b["), "{styled:?}");
        assert_eq!(anstream::adapter::strip_str(&styled).to_string().trim_end(), p003().to_string());
    }

    #[test]
    fn a_diagnostic_without_a_place_names_the_file() {
        let d = Diagnostic::in_file("S002", "cannot find the hook's place", Path::new("src/config.rs"), None)
            .with_help("add the hook by hand");
        assert_eq!(
            d.to_string(),
            "error[S002]: cannot find the hook's place\n--> src/config.rs\n = help: add the hook by hand"
        );
    }

    #[test]
    fn a_wide_character_before_the_span_keeps_the_marker_under_it() {
        let text = "name = \"é\" bad\n";
        let start = text.find("bad").unwrap();
        let d = Diagnostic::error("P002", "x", Path::new("p.toml"), text, start..start + 3);
        let location = d.location.as_ref().unwrap();
        assert_eq!((location.line, location.column, location.width), (1, 12, 3));
        assert!(d.to_string().contains("  |            ^^^"), "{d}");
    }
}
