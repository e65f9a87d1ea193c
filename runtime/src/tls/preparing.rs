//! Steps every backend's preparation shares: seeding aws-lc meanwhile, and saying when the
//! native store fell back to the bundled roots.

#[cfg(native_or_webpki)]
use crate::provider::TlsProvider;

/// Runs `work` here while `seed` runs on a second thread, and returns what `work` returned once
/// both are done; if no thread can be started, `seed` runs after `work`. `seed` is aws-lc's
/// first draw from its random generator, which seeds it from CPU-jitter entropy (tens of
/// milliseconds, once per process): the backends overlap it with the system trust store's
/// loading instead of doing one after the other.
#[cfg(any(rustls, s2n))]
pub(super) fn seeding_meanwhile<T>(seed: impl Fn() + Sync, work: impl FnOnce() -> T) -> T {
    std::thread::scope(|scope| {
        let seeding = std::thread::Builder::new().name("smithy-tls-seed".into()).spawn_scoped(scope, &seed);
        let done = work();
        match seeding {
            Ok(seeding) => {
                let _ = seeding.join();
            }
            Err(_) => seed(),
        }
        done
    })
}

/// Says, once per backend prepared, that the native store yielded nothing and the bundled
/// roots stand in for it (`TrustRoots::NativeOrWebpki`).
#[cfg(native_or_webpki)]
pub(super) fn warn_native_fallback(provider: TlsProvider, why: &crate::roots::RootsError, roots: usize) {
    tracing::warn!(
        %provider,
        reason = %why,
        fallback = "webpki",
        roots,
        "no usable certificate in the native trust store: using the bundled webpki roots instead \
         (native-or-webpki roots, a policy's empty-store = \"webpki\")"
    );
}
