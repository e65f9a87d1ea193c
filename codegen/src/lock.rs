//! One run at a time per crate: `apply` and `revert` take every crate they write exclusively,
//! `check` and `diff` share them, so two applies never interleave their writes (also when one was given a
//! tree and the other a crate inside it) and a check never reads a crate half-way through
//! another run's commit. The lock is an advisory file lock (`flock`/`LockFileEx`) on a file in
//! the system's temporary directory named after the directory's canonical path: nothing is
//! added to the tree, and the operating system releases it if the process dies. The lock file
//! is opened read-only, so runs by different users can share it.
//!
//! On Unix the last holder removes the lock file when it lets go (it takes the lock
//! exclusively for that, so it never removes a file another run holds), and a run that locked
//! a file which was removed meanwhile starts over with a fresh one: a temporary directory does
//! not collect one file per crate ever worked on. Where the last holder cannot remove it (a
//! file another user created in a sticky `/tmp`), the file stays and is reused. On Windows an
//! open file cannot be removed, and the file stays.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// A held lock on one directory (a crate, or any directory); released on drop.
#[derive(Debug)]
pub struct DirLock {
    file: Option<File>,
    lock: PathBuf,
}

/// Why a directory could not be locked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another run holds the directory.
    #[error(
        "{tree}: another smithy-tls run is working on this crate (lock file {lock}); wait for it to finish and re-run"
    )]
    Busy {
        /// The directory.
        tree: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// The lock file could not be opened or locked.
    #[error("{tree}: cannot take the run lock {lock}: {source}")]
    Io {
        /// The directory.
        tree: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// How a run uses the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only (`check`, `diff`): shared with other readers.
    Read,
    /// Writes (`apply`): alone.
    Write,
}

/// How many times [`DirLock::acquire`] starts over when the file it locked was removed by the
/// run that held it before: each round means another run let go in between, so this bounds a
/// pathological race, not a normal wait.
const ATTEMPTS: usize = 64;

impl DirLock {
    /// Locks `tree` (a directory) for `access`, without waiting.
    ///
    /// ```
    /// use smithy_tls_codegen::lock::{Access, DirLock};
    /// let tree = std::env::temp_dir();
    /// let reader = DirLock::acquire(&tree, Access::Read).unwrap();
    /// let second_reader = DirLock::acquire(&tree, Access::Read).unwrap();
    /// assert!(DirLock::acquire(&tree, Access::Write).is_err());
    /// drop((reader, second_reader));
    /// assert!(DirLock::acquire(&tree, Access::Write).is_ok());
    /// ```
    pub fn acquire(tree: &Path, access: Access) -> Result<DirLock, LockError> {
        let lock = lock_file(tree);
        let io_error = |source| LockError::Io { tree: tree.to_path_buf(), lock: lock.clone(), source };
        for _ in 0..ATTEMPTS {
            // Read-only, so that a lock file another user created (mode 0644) can be locked too.
            let file = match File::open(&lock) {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    match OpenOptions::new().create(true).truncate(false).write(true).open(&lock) {
                        Ok(_) => {}
                        // Removed again between the two calls: start over.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(io_error(e)),
                    }
                    match File::open(&lock) {
                        Ok(file) => file,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(io_error(e)),
                    }
                }
                Err(e) => return Err(io_error(e)),
            };
            let taken = match access {
                Access::Read => file.try_lock_shared(),
                Access::Write => file.try_lock(),
            };
            match taken {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Err(LockError::Busy { tree: tree.to_path_buf(), lock }),
                Err(TryLockError::Error(e)) => return Err(io_error(e)),
            }
            // The run that held the file may have removed it between our open and our lock:
            // then the lock guards nothing anyone else can find, and we start over.
            if still_named(&file, &lock) {
                return Ok(DirLock { file: Some(file), lock });
            }
        }
        Err(io_error(std::io::Error::other(format!(
            "the lock file was replaced {ATTEMPTS} times while being locked; re-run"
        ))))
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let Some(file) = self.file.take() else { return };
        // Only a holder that can have the file alone removes it: no other run holds it then, and
        // any run that opened it meanwhile finds it gone once it has locked it, and starts over.
        // (Turning a shared lock into an exclusive one may let go of the shared one first; this
        // holder is letting go anyway.)
        if cfg!(unix) && file.try_lock().is_ok() {
            // Best effort: another user's file in a sticky /tmp cannot be removed, and stays.
            let _ = std::fs::remove_file(&self.lock);
        }
        drop(file);
    }
}

/// The lock file for `tree`: in the temporary directory, named after its canonical path.
fn lock_file(tree: &Path) -> PathBuf {
    let canonical = tree.canonicalize().unwrap_or_else(|_| tree.to_path_buf());
    let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
    let name = format!("smithy-tls-{}.lock", digest.iter().take(8).map(|b| format!("{b:02x}")).collect::<String>());
    std::env::temp_dir().join(name)
}

/// Whether `path` still names the file `file` has open.
#[cfg(unix)]
fn still_named(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// Lock files are never removed on Windows (an open file cannot be), so the name cannot move.
#[cfg(not(unix))]
fn still_named(_file: &File, _path: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_last_holder_removes_the_lock_file() {
        let tree = tempfile::tempdir().unwrap();
        let path = lock_file(tree.path());
        let writer = DirLock::acquire(tree.path(), Access::Write).unwrap();
        assert!(path.exists());
        drop(writer);
        assert!(!path.exists(), "a released write lock leaves {} behind", path.display());

        let first = DirLock::acquire(tree.path(), Access::Read).unwrap();
        let second = DirLock::acquire(tree.path(), Access::Read).unwrap();
        drop(first);
        assert!(path.exists(), "removed while another reader holds it");
        assert!(
            DirLock::acquire(tree.path(), Access::Write).is_err(),
            "the remaining reader must still exclude writers"
        );
        drop(second);
        assert!(!path.exists(), "the last reader leaves {} behind", path.display());
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_on_a_file_removed_meanwhile_starts_over() {
        let tree = tempfile::tempdir().unwrap();
        let path = lock_file(tree.path());
        // What a run that opened the file just before the holder removed it has: an open,
        // unlocked file that no name leads to any more.
        let stale = {
            let _holder = DirLock::acquire(tree.path(), Access::Write).unwrap();
            File::open(&path).unwrap()
        };
        assert!(!path.exists());
        assert!(!still_named(&stale, &path));
        // A lock on the stale file guards nothing: a new run must not be excluded by it, and
        // must get the file the name leads to.
        stale.try_lock().unwrap();
        let fresh = DirLock::acquire(tree.path(), Access::Write).unwrap();
        assert!(still_named(fresh.file.as_ref().unwrap(), &path));
        assert!(DirLock::acquire(tree.path(), Access::Read).is_err(), "the fresh lock must exclude others");
    }

    #[test]
    fn writers_racing_to_create_and_remove_the_file_exclude_each_other() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let tree = tempfile::tempdir().unwrap();
        let inside = AtomicUsize::new(0);
        let held = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..300 {
                        match DirLock::acquire(tree.path(), Access::Write) {
                            Ok(lock) => {
                                assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two writers hold the lock");
                                held.fetch_add(1, Ordering::SeqCst);
                                std::thread::yield_now();
                                inside.fetch_sub(1, Ordering::SeqCst);
                                drop(lock);
                            }
                            Err(LockError::Busy { .. }) => std::thread::yield_now(),
                            Err(e) => panic!("{e}"),
                        }
                    }
                });
            }
        });
        assert!(held.load(Ordering::SeqCst) > 0);
        assert!(!lock_file(tree.path()).exists());
    }
}
