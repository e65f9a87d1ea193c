//! Comparing texts the way a reviewer of a patch does.

/// If `after` is `before` with whole lines inserted (and nothing else changed), the inserted
/// lines, in order; `None` when a line of `before` is missing or changed. Lines keep their `\r`,
/// so a CRLF file must get CRLF insertions.
///
/// ```
/// use smithy_tls_test_support::text::inserted_lines;
/// assert_eq!(inserted_lines("a\nb\n", "a\nnew\nb\n"), Some(vec!["new"]));
/// assert_eq!(inserted_lines("a\nb\n", "a\nB\n"), None);
/// ```
pub fn inserted_lines<'a>(before: &str, after: &'a str) -> Option<Vec<&'a str>> {
    let mut old = before.split('\n').peekable();
    let mut inserted = Vec::new();
    for line in after.split('\n') {
        if old.peek() == Some(&line) {
            old.next();
        } else {
            inserted.push(line);
        }
    }
    old.peek().is_none().then_some(inserted)
}
