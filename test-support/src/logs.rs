//! A tracing subscriber that keeps what the process logs, as text, for tests that assert on it
//! (that a key is never logged, that an event was emitted so many times).

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Every event, and every span's fields, that its filter lets through, each with its level as
/// ` name=value` text. Clones share what is kept: install one with
/// `tracing::subscriber::set_global_default` and read another.
///
/// ```
/// use smithy_tls_test_support::logs::Capture;
/// let capture = Capture::only(|metadata| metadata.target() == "example");
/// tracing::subscriber::with_default(capture.clone(), || {
///     tracing::info!(target: "example", "kept");
///     tracing::info!(target: "elsewhere", "not kept");
/// });
/// assert_eq!(capture.count("kept"), 1);
/// assert_eq!(capture.lines()[0].0, tracing::Level::INFO);
/// ```
#[derive(Clone)]
pub struct Capture {
    lines: Arc<Mutex<Vec<(Level, String)>>>,
    filter: fn(&Metadata<'_>) -> bool,
}

impl Capture {
    /// Keeps everything, at every level.
    pub fn all() -> Capture {
        Capture::only(|_| true)
    }

    /// Keeps what `filter` lets through (a target, a level).
    pub fn only(filter: fn(&Metadata<'_>) -> bool) -> Capture {
        Capture { lines: Arc::default(), filter }
    }

    /// What was kept so far, in order.
    pub fn lines(&self) -> Vec<(Level, String)> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// How many kept lines contain `text`.
    pub fn count(&self, text: &str) -> usize {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner).iter().filter(|(_, l)| l.contains(text)).count()
    }

    fn keep(&self, level: Level, text: String) {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner).push((level, text));
    }
}

/// Writes each field as ` name=value`.
struct Text<'a>(&'a mut String);

impl Visit for Text<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        (self.filter)(metadata)
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut text = String::new();
        span.record(&mut Text(&mut text));
        self.keep(*span.metadata().level(), text);
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut text = String::new();
        values.record(&mut Text(&mut text));
        self.keep(Level::TRACE, text);
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut text = String::new();
        event.record(&mut Text(&mut text));
        self.keep(*event.metadata().level(), text);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
