//! PEM sections read without copies left behind: a section's base64 text and its DER go only
//! into buffers sized once and zeroed on drop, and sections nobody asked for are skipped
//! unread. (rustls-pki-types' PEM iterator keeps the text in a buffer of its own, freed
//! unzeroed, and decodes every section it passes, a key in a chain file included.)

use rustls_pki_types::pem::Error;
use zeroize::Zeroizing;

/// One `-----BEGIN label-----` … `-----END label-----` section, borrowed from the input.
pub(super) struct Section<'a> {
    /// The label between the markers (`CERTIFICATE`, `PRIVATE KEY`, …).
    pub(super) label: &'a [u8],
    /// The lines between the markers: the base64 text.
    body: &'a [u8],
}

impl Section<'_> {
    /// The section's DER: base64 decoded in constant time (base64ct), whitespace and line
    /// breaks anywhere, as PEM writers differ in line width.
    pub(super) fn decode(&self) -> Result<Zeroizing<Vec<u8>>, Error> {
        let mut text = Zeroizing::new(Vec::with_capacity(self.body.len()));
        text.extend(self.body.iter().copied().filter(|b| !b.is_ascii_whitespace()));
        let mut der = Zeroizing::new(vec![0u8; text.len() / 4 * 3 + 3]);
        let len = <base64ct::Base64 as base64ct::Encoding>::decode(&*text, &mut der[..])
            .map_err(|e: base64ct::Error| Error::Base64Decode(e.to_string()))?
            .len();
        der.truncate(len);
        Ok(der)
    }
}

/// The PEM sections of `input`, in order; text outside sections is ignored (OpenSSL writes
/// `Bag Attributes` before them, say). A `BEGIN` line that is not one, or a section without its
/// `END` line, is an error, and the iteration ends there.
pub(super) fn sections(input: &[u8]) -> impl Iterator<Item = Result<Section<'_>, Error>> {
    let mut rest = input;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        loop {
            let (line, after) = next_line(rest)?;
            rest = after;
            let Some(marker) = line.strip_prefix(b"-----BEGIN ") else { continue };
            let Some(label) = marker.strip_suffix(b"-----") else {
                failed = true;
                return Some(Err(Error::IllegalSectionStart { line: line.to_vec() }));
            };
            let end = [&b"-----END "[..], label, b"-----"].concat();
            let body_start = rest;
            loop {
                let Some((line, after)) = next_line(rest) else {
                    failed = true;
                    return Some(Err(Error::MissingSectionEnd { end_marker: end }));
                };
                if line == end.as_slice() {
                    let body = &body_start[..body_start.len() - rest.len()];
                    rest = after;
                    return Some(Ok(Section { label, body }));
                }
                rest = after;
            }
        }
    })
}

/// The first line of `text` without its line break and trailing whitespace, and what follows
/// it; `None` at the end.
fn next_line(text: &[u8]) -> Option<(&[u8], &[u8])> {
    if text.is_empty() {
        return None;
    }
    let (line, rest) = match text.iter().position(|&b| b == b'\n') {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, &text[text.len()..]),
    };
    Some((line.trim_ascii_end(), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(input: &str) -> Vec<Result<(String, Vec<u8>), String>> {
        sections(input.as_bytes())
            .map(|s| {
                s.map_err(|e| e.to_string()).and_then(|s| {
                    let der = s.decode().map_err(|e| e.to_string())?;
                    Ok((String::from_utf8_lossy(s.label).into_owned(), der.to_vec()))
                })
            })
            .collect()
    }

    #[test]
    fn sections_are_read_whatever_the_line_width_and_the_line_breaks() {
        // "hello world" in base64, wrapped three ways.
        let expected = Ok(("X".to_owned(), b"hello world".to_vec()));
        for body in ["aGVsbG8gd29ybGQ=", "aGVs\nbG8g\nd29y\nbGQ=", "aGVsbG8g\r\nd29ybGQ=\r"] {
            let input = format!("Bag Attributes: ignored\n-----BEGIN X-----\n{body}\n-----END X-----  \n");
            assert_eq!(labels(&input), vec![expected.clone()], "{body:?}");
        }
        let two = "-----BEGIN A-----\naGk=\n-----END A-----\n-----BEGIN B-----\nYnll\n-----END B-----";
        assert_eq!(labels(two), vec![Ok(("A".to_owned(), b"hi".to_vec())), Ok(("B".to_owned(), b"bye".to_vec()))]);
    }

    #[test]
    fn malformed_sections_are_errors() {
        let unterminated = labels("-----BEGIN X-----\naGk=\n-----END Y-----\n");
        assert!(matches!(&unterminated[..], [Err(e)] if e.contains("missing section end")), "{unterminated:?}");
        let illegal = labels("-----BEGIN X--\naGk=\n");
        assert!(matches!(&illegal[..], [Err(e)] if e.contains("illegal section start")), "{illegal:?}");
        let bad = labels("-----BEGIN X-----\na*k=\n-----END X-----\n");
        assert!(matches!(&bad[..], [Err(e)] if e.contains("base64")), "{bad:?}");
        assert!(labels("no sections here\n").is_empty());
    }
}
