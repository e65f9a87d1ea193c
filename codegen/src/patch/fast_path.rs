//! Cutting one function out of a large file without parsing it: a small lexer that knows
//! comments, strings, raw strings and character literals well enough to match braces. A
//! generated config.rs runs to thousands of lines and the function patched is a few dozen;
//! parsing only that function is what keeps a 400-crate run fast. Anything it is unsure of
//! returns `None`, and the caller parses the whole file.

/// The byte range of the item `fn name` (from the start of its line to its closing brace), found
/// without parsing the file; `None` unless the name occurs exactly once as `fn name` and its body
/// braces balance under a lexer that skips comments, strings and character literals.
pub(super) fn function_extent(text: &str, name: &str) -> Option<std::ops::Range<usize>> {
    let (start, mut i) = unique_fn(text, name)?;
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut opened = false;
    while i < bytes.len() {
        if let Lexed::Skipped(end) = lex_at(text, i)? {
            i = end;
            continue;
        }
        match bytes[i] {
            b'{' => {
                depth += 1;
                opened = true;
            }
            b'}' => {
                depth = depth.checked_sub(1)?;
                if opened && depth == 0 {
                    return Some(start..i + 1);
                }
            }
            b';' if !opened => return None, // a declaration without a body
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the one `fn name` of `text` is: the start of its line and the offset right after the
/// name; `None` when the name occurs as `fn name` other than once.
fn unique_fn(text: &str, name: &str) -> Option<(usize, usize)> {
    let needle = format!("fn {name}");
    let mut hits = text.match_indices(&needle).filter(|(i, _)| {
        let after = text[i + needle.len()..].chars().next();
        !matches!(after, Some(c) if c.is_alphanumeric() || c == '_')
    });
    let (at, _) = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    Some((start, at + needle.len()))
}

/// What the lexer finds at a byte.
enum Lexed {
    /// A comment or a literal, which ends at this offset.
    Skipped(usize),
    /// Code: the byte counts.
    Code,
}

/// What starts at byte `i` of `text`; `None` when the lexer is unsure (a raw string or character
/// literal that does not end).
fn lex_at(text: &str, i: usize) -> Option<Lexed> {
    let bytes = text.as_bytes();
    let end = match bytes[i] {
        b'/' if bytes.get(i + 1) == Some(&b'/') => text[i..].find('\n').map_or(bytes.len(), |n| i + n),
        b'/' if bytes.get(i + 1) == Some(&b'*') => block_comment_end(bytes, i),
        b'r' if matches!(bytes.get(i + 1), Some(b'"') | Some(b'#'))
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) =>
        {
            return raw_string(text, i);
        }
        b'"' => string_end(bytes, i),
        b'\'' => return char_literal(text, i),
        _ => return Some(Lexed::Code),
    };
    Some(Lexed::Skipped(end))
}

/// The end of the block comment (nested ones included) starting at `i`.
fn block_comment_end(bytes: &[u8], mut i: usize) -> usize {
    let mut nesting = 1;
    i += 2;
    while i < bytes.len() && nesting > 0 {
        if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
            nesting += 1;
            i += 2;
        } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
            nesting -= 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    i
}

/// The raw string (`r"..."`, `r#"..."#`) the `r` at `i` may start: code when it starts none,
/// `None` when it does not end.
fn raw_string(text: &str, i: usize) -> Option<Lexed> {
    let bytes = text.as_bytes();
    let hashes = bytes[i + 1..].iter().take_while(|&&b| b == b'#').count();
    if bytes.get(i + 1 + hashes) != Some(&b'"') {
        return Some(Lexed::Code);
    }
    let close = format!("\"{}", "#".repeat(hashes));
    let body = i + 2 + hashes;
    text[body..].find(&close).map(|n| Lexed::Skipped(body + n + close.len()))
}

/// The end of the string literal starting at `i` (past its closing quote).
fn string_end(bytes: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < bytes.len() && bytes[i] != b'"' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    i + 1
}

/// The character literal (`'x'`, `'\n'`, `'\u{..}'`) the quote at `i` may start: code for a
/// lifetime (`'a`), `None` when the lexer is unsure.
fn char_literal(text: &str, i: usize) -> Option<Lexed> {
    if text.as_bytes().get(i + 1) == Some(&b'\\') {
        return text[i + 2..].find('\'').map(|n| Lexed::Skipped(i + 2 + n + 1));
    }
    let next = text[i + 1..].chars().next()?;
    let end = i + 2 + next.len_utf8();
    Some(if text[i + 1 + next.len_utf8()..].starts_with('\'') { Lexed::Skipped(end) } else { Lexed::Code })
}

#[cfg(test)]
mod tests {
    use super::function_extent;

    #[test]
    fn function_extent_skips_braces_in_strings_comments_and_chars() {
        let text = "// fn other() {\nconst A: &str = \"}\";\npub(crate) fn base_client_runtime_plugins(x: u8) -> u8 {\n    let s = \"{ not a brace\";\n    let r = r#\"}}\"#;\n    let c = '}';\n    let l: &'static str = \"x\";\n    /* } /* nested } */ */\n    if x > 0 { x } else { 0 }\n}\nfn after() {}\n";
        let range = function_extent(text, "base_client_runtime_plugins").expect("found");
        let item = &text[range];
        assert!(item.starts_with("pub(crate) fn base_client_runtime_plugins"), "{item}");
        assert!(item.ends_with("else { 0 }\n}"), "{item}");
        syn::parse_file(item).expect("the extent is a whole item");
        assert_eq!(function_extent("fn base_client_runtime_plugins();", "base_client_runtime_plugins"), None);
        assert_eq!(
            function_extent(
                "fn base_client_runtime_plugins() {} fn base_client_runtime_plugins() {}",
                "base_client_runtime_plugins"
            ),
            None
        );
        assert_eq!(function_extent("fn base_client_runtime_plugins_x() {}", "base_client_runtime_plugins"), None);
    }
}
