//! Reading the text files of an SDK tree, with errors a user can act on.

use std::io;
use std::path::Path;

/// Reads `path` as UTF-8 text. A file that is not UTF-8 is an `InvalidData` error that says where
/// the first bad byte is and what to do, rather than the standard library's "stream did not
/// contain valid UTF-8".
///
/// ```
/// let dir = std::env::temp_dir().join(format!("read-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let file = dir.join("Cargo.toml");
/// std::fs::write(&file, b"[package]\nname = \"x\xff\"\n").unwrap();
/// let err = smithy_tls_codegen::read::read_text(&file).unwrap_err();
/// assert!(err.to_string().starts_with("not valid UTF-8 at line 2, column 10"), "{err}");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read_text(path: &Path) -> io::Result<String> {
    String::from_utf8(std::fs::read(path)?).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&valid[line_start..]).chars().count() + 1;
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not valid UTF-8 at line {line}, column {column}: Cargo manifests and Rust sources must be \
                 UTF-8; fix the file's encoding (or leave its crate out of the tree) and run again"
            ),
        )
    })
}
