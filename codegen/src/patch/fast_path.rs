//! Cutting one function out of a large file without parsing it: a small lexer that knows
//! comments, strings, raw strings and character literals well enough to match braces. A
//! generated config.rs runs to thousands of lines and the function patched is a few dozen;
//! parsing only that function is what keeps a 400-crate run fast. Anything it is unsure of
//! returns `None`, and the caller parses the whole file.

/// The byte range of the item `fn name` (from the start of its line to its closing brace), found
/// without parsing the file; `None` unless the name occurs exactly once as `fn name` and its body
/// braces balance under a lexer that skips comments, strings and character literals.
pub(super) fn function_extent(text: &str, name: &str) -> Option<std::ops::Range<usize>> {
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
    let bytes = text.as_bytes();
    let mut i = at + needle.len();
    let mut depth = 0usize;
    let mut opened = false;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
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
                continue;
            }
            b'r' if matches!(bytes.get(i + 1), Some(b'"') | Some(b'#'))
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) =>
            {
                let hashes = bytes[i + 1..].iter().take_while(|&&b| b == b'#').count();
                if bytes.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + 2 + hashes;
                i = text[body..].find(&close).map(|n| body + n + close.len())?;
                continue;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                continue;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}') or a lifetime ('a): skip only the former.
                if bytes.get(i + 1) == Some(&b'\\') {
                    i = text[i + 2..].find('\'').map(|n| i + 2 + n + 1)?;
                    continue;
                }
                let next = text[i + 1..].chars().next()?;
                if text[i + 1 + next.len_utf8()..].starts_with('\'') {
                    i += 2 + next.len_utf8();
                    continue;
                }
            }
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
