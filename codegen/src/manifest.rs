//! Cargo.toml edits (in progress).
