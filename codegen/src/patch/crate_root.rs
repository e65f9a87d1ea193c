//! The crate root (`src/lib.rs`): the `mod default_http_client;` line.

use std::path::Path;

use super::text::{apply, Edit, Source};
use super::{PatchError, CRATE_ROOT_NOTE, MARKER, MODULE_NAME};
/// Adds `pub mod default_http_client;`, preceded by a one-line `// smithy-tls:` comment, to a
/// crate root (`src/lib.rs`).
///
/// The declaration goes right after the last top-level `mod` item (inline or not, whatever its
/// visibility) if there is one, else at the end of the file; either way it lands after the inner
/// attributes (`#![...]`) and inner doc comments (`//!`), which must open the file. Returns the
/// input unchanged when a top-level `mod default_http_client` already exists.
///
/// # Errors
/// [`PatchError::Parse`] if `text` is not valid Rust, [`PatchError::InvalidResult`] if the
/// patched text fails validation (a bug).
pub fn patch_crate_root(path: &Path, text: &str) -> Result<String, PatchError> {
    let src = Source::new(path, text);
    let file = src.parse()?;
    if count_module_decls(&file) > 0 {
        return Ok(text.to_owned());
    }
    let nl = src.newline();
    let last_mod = file.items.iter().rev().find_map(|item| match item {
        syn::Item::Mod(m) => Some(m),
        _ => None,
    });
    let edit = match last_mod {
        Some(m) => {
            let end_span = match (&m.semi, &m.content) {
                (Some(semi), _) => semi.spans[0],
                (None, Some((brace, _))) => brace.span.close(),
                // syn never produces this; fall back to the `mod` keyword's line.
                (None, None) => m.ident.span(),
            };
            let end = src.end_of(end_span)?;
            let indent = src.indent_of_line_at(src.start_of(m.mod_token.span)?);
            let lines = [format!("{indent}// {MARKER} {CRATE_ROOT_NOTE}"), format!("{indent}pub mod {MODULE_NAME};")];
            if src.rest_is_ignorable(end) {
                src.lines_after_line_of(end, &lines)
            } else {
                // Code follows on the same line: break the line after the `mod` item.
                let mut insert = String::new();
                for line in &lines {
                    insert.push_str(nl);
                    insert.push_str(line);
                }
                insert.push_str(nl);
                Edit { at: end, text: insert }
            }
        }
        None => {
            let mut insert = String::new();
            if !text.is_empty() && !text.ends_with('\n') {
                insert.push_str(nl);
            }
            insert.push_str(&format!("// {MARKER} {CRATE_ROOT_NOTE}{nl}pub mod {MODULE_NAME};{nl}"));
            Edit { at: text.len(), text: insert }
        }
    };
    let out = apply(text, vec![edit]);
    let patched = src.reparse(&out)?;
    let count = count_module_decls(&patched);
    if count != 1 {
        return Err(
            src.invalid(format!("expected exactly one top-level `mod {MODULE_NAME}` after patching, found {count}"))
        );
    }
    Ok(out)
}

/// Number of top-level `mod default_http_client` items.
fn count_module_decls(file: &syn::File) -> usize {
    file.items.iter().filter(|item| matches!(item, syn::Item::Mod(m) if m.ident == MODULE_NAME)).count()
}
