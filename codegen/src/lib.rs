//! `smithy-tls-codegen`: rewrites Smithy-generated Rust SDK crates so that each target platform
//! gets the TLS stack a policy picks for it.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod diag;
pub mod emit;
pub mod manifest;
pub mod model;
pub mod patch;
pub mod policy;
pub mod presets;
pub mod targets;
