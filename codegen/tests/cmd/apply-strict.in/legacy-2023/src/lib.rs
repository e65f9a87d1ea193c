//! An old client.
pub mod config;
