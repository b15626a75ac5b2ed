//! Group commit for a directory's entries: the renames that commit artifacts of many delegations
//! into one directory share its fsyncs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The fsyncs of one directory, shared by everyone who renames into it.
///
/// [`DirSync::sync`] returns once an fsync of the directory that *started after the call*
/// has succeeded: whatever the caller renamed before calling is durable. Callers that arrive
/// while an fsync runs wait for it to end and are all covered by the next one, so a thousand
/// commits at once cost a handful of directory fsyncs instead of a thousand.
#[derive(Debug)]
pub struct DirSync {
    dir: PathBuf,
    /// Tickets handed out: one per call of [`DirSync::sync`].
    asked: AtomicU64,
    /// The highest ticket an fsync that succeeded covered (it started after that ticket was
    /// handed out). Guarded by the lock, which is held across each fsync.
    covered: tokio::sync::Mutex<u64>,
}

impl DirSync {
    /// Group commit for `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        DirSync {
            dir: dir.into(),
            asked: AtomicU64::new(0),
            covered: tokio::sync::Mutex::new(0),
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Create the directory if it is missing and make its entry in its parent durable
    /// (blocking: call it on a blocking thread, once, before the first commit).
    pub fn create(&self) -> std::io::Result<()> {
        if !self.dir.is_dir() {
            std::fs::create_dir_all(&self.dir)?;
            if let Some(parent) = self.dir.parent() {
                sync_dir(parent)?;
            }
        }
        Ok(())
    }

    /// Everything renamed into the directory before this call is durable once this returns
    /// `Ok` (see the type's documentation).
    pub async fn sync(&self) -> std::io::Result<()> {
        let ticket = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        let mut covered = self.covered.lock().await;
        if *covered >= ticket {
            return Ok(());
        }
        // Every ticket handed out so far was handed out before this fsync starts.
        let upto = self.asked.load(Ordering::SeqCst);
        let dir = self.dir.clone();
        tokio::task::spawn_blocking(move || sync_dir(&dir))
            .await
            .map_err(std::io::Error::other)??;
        *covered = upto;
        Ok(())
    }
}

/// fsync a directory. A file system that cannot sync a directory (`EINVAL`, unsupported) has
/// nothing more to make durable: that is not an error.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::File::open(dir)?.sync_all() {
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported
            ) =>
        {
            Ok(())
        }
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn many_callers_at_once_share_fsyncs_and_each_is_covered() {
        let dir = tempfile::tempdir().unwrap();
        let sync = Arc::new(DirSync::new(dir.path()));
        let calls = (0..64).map(|_| {
            let s = sync.clone();
            tokio::spawn(async move { s.sync().await })
        });
        for r in futures::future::join_all(calls).await {
            r.unwrap().unwrap();
        }
        // Every ticket is covered by an fsync that started after it.
        assert_eq!(*sync.covered.lock().await, 64);
        assert_eq!(sync.asked.load(Ordering::SeqCst), 64);
    }

    #[tokio::test]
    async fn a_later_call_is_not_covered_by_an_earlier_fsync() {
        let dir = tempfile::tempdir().unwrap();
        let sync = DirSync::new(dir.path());
        sync.sync().await.unwrap();
        assert_eq!(*sync.covered.lock().await, 1);
        sync.sync().await.unwrap();
        assert_eq!(*sync.covered.lock().await, 2);
    }

    #[test]
    fn create_makes_the_directory_and_leaves_an_existing_one_alone() {
        let dir = tempfile::tempdir().unwrap();
        let sync = DirSync::new(dir.path().join("a/b"));
        sync.create().unwrap();
        assert!(dir.path().join("a/b").is_dir());
        std::fs::write(dir.path().join("a/b/kept"), b"x").unwrap();
        sync.create().unwrap();
        assert!(dir.path().join("a/b/kept").exists());
    }

    #[tokio::test]
    async fn a_missing_directory_is_an_error_and_covers_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let sync = DirSync::new(dir.path().join("gone"));
        assert!(sync.sync().await.is_err());
        assert_eq!(*sync.covered.lock().await, 0);
    }
}
