//! The crypto features that [smithy-default-tls](https://docs.rs/smithy-default-tls)'s providers
//! turn on in rustls and s2n-tls, carried by a crate of their own.
//!
//! smithy-default-tls depends on this crate only when the application sets no `--cfg smithy_tls`
//! override, so the provider a generated SDK crate asked for compiles its crypto, and an
//! application that overrides it compiles only the crypto of the provider it chose. There is
//! nothing here to call.
#![no_std]
