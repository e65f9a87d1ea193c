//! [`WatchedIdentity`]: a client identity read from two PEM files and read again when they
//! change, so that a short-lived certificate is rotated without a restart.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{ClientIdentity, IdentityError};

/// A [`ClientIdentity`] read from a PEM certificate-chain file and a PEM key file, and read
/// again when they change (how: below): new connections present the newest
/// pair that makes a valid identity; pooled connections keep the one they shook hands with until
/// they close.
///
/// **How changes are noticed: polling, at connection time.** Each new connection asks for the
/// current identity; at most once per poll interval that looks at both files' metadata (size,
/// modification and change times, device and inode), two `stat` calls. When either differs from
/// the last read, both files are read and checked as [`ClientIdentity::from_pem`] checks them.
/// No thread and no file-watching crate: a client that makes no connections does no work, the
/// outcome depends only on the files at the moment a connection starts (which makes it testable
/// without timing assumptions), and it sees every way files get replaced: rewritten in place,
/// renamed over, or a symlink swapped (as Kubernetes updates a mounted secret).
///
/// **A pair that does not make an identity** (half written: a new certificate with the old key,
/// an empty or truncated file, a missing file) keeps the previous identity; the error is logged
/// once through `tracing` (warn) and kept for [`WatchedIdentity::last_error`], and the pair is
/// read again when the files change again.
///
/// Hand it to [`Builder::watched_client_identity`](crate::Builder::watched_client_identity).
/// Clones share one watch; two are equal when one is a clone of the other.
///
/// ```no_run
/// use std::time::Duration;
/// use smithy_default_tls::{configure_default, WatchedIdentity};
///
/// // Read now (an unusable pair is an error here), then looked at again at most once a second.
/// let identity = WatchedIdentity::from_pem_files("/run/secrets/client.pem", "/run/secrets/client.key", Duration::from_secs(1))
///     .expect("usable client identity");
/// configure_default(move |builder| builder.watched_client_identity(identity.clone())).expect("first call");
/// ```
#[derive(Clone)]
pub struct WatchedIdentity {
    inner: Arc<Watch>,
}

struct Watch {
    cert: PathBuf,
    key: PathBuf,
    poll_interval: Duration,
    state: Mutex<State>,
}

struct State {
    current: ClientIdentity,
    /// How many pairs have been loaded: 0 for the one read at construction.
    generation: u64,
    /// The files' metadata when they were last read (whether that read made an identity or not).
    read_at: Stamp,
    checked_at: Instant,
    /// Why the files as they are now do not make an identity, if they do not.
    error: Option<IdentityError>,
}

/// What is compared to notice a change of one file: `None` when its metadata cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    /// The inode change time and the file's identity, where the platform has them: a file
    /// replaced by another of the same size within the modification time's resolution still
    /// differs here.
    #[cfg(unix)]
    changed: (i64, i64, u64, u64),
}

type Stamp = [Option<FileStamp>; 2];

fn stamp(path: &Path) -> Option<FileStamp> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let changed = {
        use std::os::unix::fs::MetadataExt;
        (meta.ctime(), meta.ctime_nsec(), meta.dev(), meta.ino())
    };
    Some(FileStamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        #[cfg(unix)]
        changed,
    })
}

impl WatchedIdentity {
    /// Reads and checks the pair now, as [`ClientIdentity::from_pem_files`] does, then looks at
    /// the files again at most once per `poll_interval`, when a connection starts (zero: at
    /// every new connection).
    ///
    /// # Errors
    /// As [`ClientIdentity::from_pem_files`]: a client never starts without a valid identity.
    pub fn from_pem_files(
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
        poll_interval: Duration,
    ) -> Result<Self, IdentityError> {
        let (cert, key) = (cert_chain.as_ref().to_owned(), key.as_ref().to_owned());
        let read_at = [stamp(&cert), stamp(&key)];
        let current = ClientIdentity::from_pem_files(&cert, &key)?;
        let state = State { current, generation: 0, read_at, checked_at: Instant::now(), error: None };
        Ok(WatchedIdentity { inner: Arc::new(Watch { cert, key, poll_interval, state: Mutex::new(state) }) })
    }

    /// The identity new connections present now, after looking at the files if the poll
    /// interval has passed.
    pub fn current(&self) -> ClientIdentity {
        self.refresh().0
    }

    /// How many times the pair has been read into a new identity since construction (0: still
    /// the first), without looking at the files.
    pub fn generation(&self) -> u64 {
        self.state().generation
    }

    /// Why the files, as last read, do not make an identity (the previous one is still
    /// presented); `None` once a read succeeds. Does not look at the files.
    pub fn last_error(&self) -> Option<IdentityError> {
        self.state().error.clone()
    }

    /// The certificate chain's and the key's paths.
    pub fn paths(&self) -> (&Path, &Path) {
        (&self.inner.cert, &self.inner.key)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The current identity and its generation, reading the files first when the poll interval
    /// has passed and their metadata changed.
    pub(crate) fn refresh(&self) -> (ClientIdentity, u64) {
        let watch = &self.inner;
        let mut state = self.state();
        if state.checked_at.elapsed() >= watch.poll_interval {
            state.checked_at = Instant::now();
            let now = [stamp(&watch.cert), stamp(&watch.key)];
            if now != state.read_at {
                state.read_at = now;
                match ClientIdentity::from_pem_files(&watch.cert, &watch.key) {
                    Ok(identity) => {
                        state.current = identity;
                        state.generation += 1;
                        state.error = None;
                        tracing::info!(
                            cert = %watch.cert.display(),
                            key = %watch.key.display(),
                            generation = state.generation,
                            key_type = %state.current.key_type(),
                            "client identity files changed: new connections present the new identity"
                        );
                    }
                    Err(error) => {
                        tracing::warn!(
                            cert = %watch.cert.display(),
                            key = %watch.key.display(),
                            %error,
                            "client identity files changed but do not make a usable identity: new connections keep presenting the previous one"
                        );
                        state.error = Some(error);
                    }
                }
            }
        }
        (state.current.clone(), state.generation)
    }
}

impl fmt::Debug for WatchedIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state();
        f.debug_struct("WatchedIdentity")
            .field("cert", &self.inner.cert)
            .field("key", &self.inner.key)
            .field("poll_interval", &self.inner.poll_interval)
            .field("current", &state.current)
            .field("generation", &state.generation)
            .finish_non_exhaustive()
    }
}

impl PartialEq for WatchedIdentity {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for WatchedIdentity {}

impl std::hash::Hash for WatchedIdentity {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.inner), state);
    }
}

#[cfg(test)]
mod tests {
    use rustls_pki_types::pem::PemObject;

    use super::*;

    /// A self-signed certificate and its key, as PEM.
    fn pair(name: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().expect("key");
        let cert =
            rcgen::CertificateParams::new(vec![name.to_owned()]).expect("params").self_signed(&key).expect("cert");
        (cert.pem(), key.serialize_pem())
    }

    struct Files(PathBuf);

    impl Files {
        fn new(label: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("smithy-tls-watched-{label}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("temp dir");
            Files(dir)
        }
        fn cert(&self) -> PathBuf {
            self.0.join("client.pem")
        }
        fn key(&self) -> PathBuf {
            self.0.join("client.key")
        }
        /// Replaces `path` the way deployment tools do: written beside it, then renamed over it.
        fn replace(&self, path: &Path, text: &str) {
            let staged = path.with_extension("new");
            std::fs::write(&staged, text).expect("write staged file");
            std::fs::rename(&staged, path).expect("rename over");
        }
    }

    impl Drop for Files {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_new_pair_is_read_and_a_half_written_one_keeps_the_old() {
        let files = Files::new("rotate");
        let (cert_a, key_a) = pair("a");
        std::fs::write(files.cert(), &cert_a).expect("cert");
        std::fs::write(files.key(), &key_a).expect("key");
        let watched = WatchedIdentity::from_pem_files(files.cert(), files.key(), Duration::ZERO).expect("identity");
        let first = watched.current();
        assert_eq!(watched.generation(), 0);
        assert_eq!(watched.current(), first, "unchanged files are not read again");

        // The certificate is replaced first: it does not match the old key yet.
        let (cert_b, key_b) = pair("b");
        files.replace(&files.cert(), &cert_b);
        assert_eq!(watched.current(), first, "a mismatched pair keeps the old identity");
        assert!(matches!(watched.last_error(), Some(IdentityError::KeyMismatch)), "{:?}", watched.last_error());
        assert_eq!(watched.generation(), 0);

        files.replace(&files.key(), &key_b);
        let second = watched.current();
        assert_ne!(second, first);
        assert_eq!(watched.generation(), 1);
        assert!(watched.last_error().is_none());
        assert_eq!(
            second.certificate_chain()[0].as_ref(),
            rustls_pki_types::CertificateDer::from_pem_slice(cert_b.as_bytes()).expect("pem").as_ref()
        );

        // A key file rewritten in place, truncated, then a vanished certificate: both kept out.
        std::fs::write(files.key(), &key_b[..key_b.len() / 2]).expect("truncate key");
        assert_eq!(watched.current(), second);
        assert!(
            matches!(watched.last_error(), Some(IdentityError::MalformedPem { .. } | IdentityError::NoPrivateKey)),
            "{:?}",
            watched.last_error()
        );
        std::fs::write(files.key(), &key_b).expect("restore key");
        std::fs::remove_file(files.cert()).expect("remove cert");
        assert_eq!(watched.current(), second);
        assert!(matches!(watched.last_error(), Some(IdentityError::Unreadable { .. })), "{:?}", watched.last_error());
        assert_eq!(watched.generation(), 1);
    }

    #[test]
    fn files_are_looked_at_once_per_poll_interval() {
        let files = Files::new("interval");
        let (cert_a, key_a) = pair("a");
        std::fs::write(files.cert(), &cert_a).expect("cert");
        std::fs::write(files.key(), &key_a).expect("key");
        let watched =
            WatchedIdentity::from_pem_files(files.cert(), files.key(), Duration::from_secs(3600)).expect("identity");
        let first = watched.current();
        let (cert_b, key_b) = pair("b");
        files.replace(&files.cert(), &cert_b);
        files.replace(&files.key(), &key_b);
        assert_eq!(watched.current(), first, "not looked at again within the interval");
        assert_eq!(watched.generation(), 0);
    }

    #[test]
    fn debug_names_the_files_and_not_the_key() {
        let files = Files::new("debug");
        let (cert, key) = pair("a");
        std::fs::write(files.cert(), &cert).expect("cert");
        std::fs::write(files.key(), &key).expect("key");
        let watched = WatchedIdentity::from_pem_files(files.cert(), files.key(), Duration::ZERO).expect("identity");
        let debug = format!("{watched:?}");
        assert!(debug.contains("client.key") && debug.contains("generation: 0"), "{debug}");
        let body: String = key.lines().filter(|l| !l.starts_with("-----")).collect();
        assert!(!debug.contains(&body[..20]), "{debug}");
    }
}
