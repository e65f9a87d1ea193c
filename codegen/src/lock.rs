//! One run at a time per crate: `apply` and `revert` take every crate they write exclusively,
//! `check` and `diff` share them, so two applies never interleave their writes (also when one was given a
//! tree and the other a crate inside it) and a check never reads a crate half-way through
//! another run's commit. The lock is an advisory file lock (`flock`/`LockFileEx`) on a file in
//! the system's temporary directory named after the directory's canonical path: nothing is
//! added to the tree, and the operating system releases it if the process dies. The lock file
//! is opened read-only, so runs by different users can share it.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// A held lock on one directory (a crate, or any directory); released on drop.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
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
        let canonical = tree.canonicalize().unwrap_or_else(|_| tree.to_path_buf());
        let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
        let name = format!("smithy-tls-{}.lock", digest.iter().take(8).map(|b| format!("{b:02x}")).collect::<String>());
        let lock = std::env::temp_dir().join(name);
        let io_error = |source| LockError::Io { tree: tree.to_path_buf(), lock: lock.clone(), source };
        // Read-only, so that a lock file another user created (mode 0644) can be locked too.
        let file = match File::open(&lock) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                OpenOptions::new().create(true).truncate(false).write(true).open(&lock).map_err(io_error)?;
                File::open(&lock).map_err(io_error)?
            }
            Err(e) => return Err(io_error(e)),
        };
        let taken = match access {
            Access::Read => file.try_lock_shared(),
            Access::Write => file.try_lock(),
        };
        match taken {
            Ok(()) => Ok(DirLock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(LockError::Busy { tree: tree.to_path_buf(), lock }),
            Err(TryLockError::Error(e)) => Err(io_error(e)),
        }
    }
}
