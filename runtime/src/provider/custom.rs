//! `rustls-custom`: rustls with the application's own `CryptoProvider`.

use std::sync::{Arc, OnceLock};

use rustls::crypto::CryptoProvider;

static CUSTOM: OnceLock<Arc<CryptoProvider>> = OnceLock::new();

/// Hands the runtime the rustls `CryptoProvider` that `TlsProvider::RustlsCustom` clients use
/// (the application's `--cfg smithy_tls="rustls-custom"`, or the `rustls-custom` feature). Call
/// it before the first connection; the first call wins, and a later one gets its provider back.
/// Without it those clients use rustls's process-wide default
/// (`CryptoProvider::install_default`), which rustls 0.24 no longer has.
///
/// ```
/// # #[cfg(feature = "rustls-aws-lc")] {
/// let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
/// assert!(smithy_default_tls::set_custom_crypto_provider(provider).is_ok());
/// # }
/// ```
pub fn set_custom_crypto_provider(provider: Arc<CryptoProvider>) -> Result<(), Arc<CryptoProvider>> {
    CUSTOM.set(provider)
}

/// The provider for a `rustls-custom` client: the one handed over, else rustls's process-wide
/// default; `None` before the application installed either.
pub(crate) fn crypto_provider() -> Option<Arc<CryptoProvider>> {
    CUSTOM.get().cloned().or_else(|| CryptoProvider::get_default().cloned())
}
