//! `smithy-tls-codegen`: rewrites Smithy-generated Rust SDK crates so that each target platform
//! gets the TLS stack a policy picks for it.
#![warn(missing_docs)]
#![forbid(unsafe_code)]
// Short functions: clippy's count of code lines, threshold in the workspace's clippy.toml.
#![warn(clippy::too_many_lines)]

pub mod cfg;
pub mod cfg_values;
pub mod change;
pub mod cli;
pub mod compile;
pub mod diag;
pub mod discover;
pub mod emit;
pub mod explain;
pub mod lock;
pub mod manifest;
pub mod matrix;
pub mod model;
pub mod native_build;
pub mod pairing;
pub mod patch;
pub mod plan;
pub mod platforms;
pub mod policy;
pub mod presets;
pub mod read;
pub mod report;
pub mod suite_runs;
pub mod targets;
pub mod transfer_manager;
pub mod write;
