//! What a file looked like when it was read, in 24 bytes.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use xxhash_rust::xxh3::{Xxh3, xxh3_128};

use super::StaleReason;
use crate::workspace::read_no_follow;

/// The length and a 128-bit hash of a file's content: enough to tell whether the file changed
/// since it was read, without keeping the content itself.
///
/// The hash is xxh3-128 rather than a cryptographic hash on purpose: it guards against
/// *accidental* change (an editor, a formatter, another agent writing the file between preview
/// and apply), not against an adversary forging a collision — whoever can write files in the
/// workspace can do anything anyway. At 128 bits an accidental collision is out of reach, and
/// xxh3 hashes at memory speed, an order of magnitude faster than SHA-256, which matters when
/// an apply re-reads a thousand files. The length is compared first, which settles most
/// changes without hashing at all.
///
/// ```
/// use xcsh_tools::changeset::Fingerprint;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("a.txt");
/// std::fs::write(&path, "hello\n")?;
///
/// let fp = Fingerprint::of(b"hello\n");
/// assert_eq!(fp, Fingerprint::of_file(&path)?);
/// assert_eq!(fp.len(), 6);
/// assert_ne!(fp, Fingerprint::of(b"hello!\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    len: u64,
    hash: u128,
}

impl Fingerprint {
    /// Its length and hash, for the apply journal.
    pub(crate) fn parts(&self) -> (u64, u128) {
        (self.len, self.hash)
    }

    /// The inverse of [`parts`](Self::parts).
    pub(crate) fn from_parts(len: u64, hash: u128) -> Self {
        Self { len, hash }
    }

    /// The fingerprint of `bytes`.
    ///
    /// ```
    /// # use xcsh_tools::changeset::Fingerprint;
    /// assert_eq!(Fingerprint::of("abc"), Fingerprint::of(b"abc".to_vec()));
    /// ```
    pub fn of(bytes: impl AsRef<[u8]>) -> Self {
        let bytes = bytes.as_ref();
        Self {
            len: bytes.len() as u64,
            hash: xxh3_128(bytes),
        }
    }

    /// The fingerprint of the file at `path`, read in chunks (the file is never held whole in
    /// memory). Symbolic links are followed.
    ///
    /// ```
    /// # use xcsh_tools::changeset::Fingerprint;
    /// # let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("b.txt");
    /// std::fs::write(&path, vec![7u8; 100_000])?;
    /// assert_eq!(Fingerprint::of_file(&path)?, Fingerprint::of(vec![7u8; 100_000]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of_file(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::of_reader(File::open(path)?)
    }

    /// The fingerprint of everything `reader` yields.
    ///
    /// ```
    /// # use xcsh_tools::changeset::Fingerprint;
    /// assert_eq!(Fingerprint::of_reader(&b"xyz"[..])?, Fingerprint::of("xyz"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn of_reader(mut reader: impl Read) -> io::Result<Self> {
        let mut hasher = Xxh3::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut len = 0u64;
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    hasher.update(&buf[..n]);
                    len += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Self {
            len,
            hash: hasher.digest128(),
        })
    }

    /// The content's length in bytes.
    ///
    /// ```
    /// # use xcsh_tools::changeset::Fingerprint;
    /// assert_eq!(Fingerprint::of("four").len(), 4);
    /// ```
    #[allow(clippy::len_without_is_empty)] // a fingerprint is not a container
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Reads the regular file at `path` (a link in its place is not followed) if it still
    /// holds what this fingerprints, with its metadata as opened; otherwise why it is stale.
    /// The one stale-checked read behind previews and apply.
    pub(crate) fn read_unchanged(
        &self,
        path: &Path,
    ) -> Result<(Vec<u8>, std::fs::Metadata), StaleReason> {
        let (bytes, meta) =
            read_no_follow(path, Some(self.len)).map_err(|e| StaleReason::unreadable(path, &e))?;
        if Self::of(&bytes) != *self {
            return Err(StaleReason::Modified);
        }
        Ok((bytes, meta))
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({} bytes, {:032x})", self.len, self.hash)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:032x}", self.len, self.hash)
    }
}
