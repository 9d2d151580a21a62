//! The workspace root and path confinement.
//!
//! Every path a model or a user hands to a tool goes through [`Workspace::resolve`] before
//! anything is read or written: it follows `..` and symbolic links the way the kernel would,
//! and refuses any path whose final location is outside the root. Nothing outside the root is
//! ever read or written by the built-in tools.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// How many symbolic links one resolution may follow before it is called a loop.
///
/// Same limit as Linux's `MAXSYMLINKS`, so a path that works in a shell also works here.
const MAX_SYMLINK_HOPS: usize = 40;

/// The directory a session works in, canonicalised once.
///
/// Cheap to clone (the root is shared).
///
/// ```
/// use xcsh_core::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::create_dir(dir.path().join("src"))?;
/// let ws = Workspace::new(dir.path())?;
///
/// // Relative paths are taken from the root; `..` that stays inside is fine.
/// let p = ws.resolve("src/../src/new.rs")?;
/// assert_eq!(p, ws.root().join("src/new.rs"));
/// assert_eq!(ws.display(&p), "src/new.rs");
///
/// // Leaving the root is refused with a message that says what to do.
/// let err = ws.resolve("../etc/passwd").unwrap_err();
/// assert!(err.to_string().contains("leaves the workspace root"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    root: Arc<Path>,
}

/// Why a directory cannot be used as a workspace root.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The root does not exist.
    #[error(
        "workspace root `{}` does not exist; create it or give an existing directory",
        path.display()
    )]
    NotFound {
        /// The root as given.
        path: PathBuf,
    },
    /// The root exists but is not a directory.
    #[error(
        "workspace root `{}` is not a directory; give the directory that holds the project",
        path.display()
    )]
    NotADirectory {
        /// The root as given.
        path: PathBuf,
    },
    /// The root could not be inspected.
    #[error(
        "cannot open the workspace root `{}`: {source}; check that it exists and is readable",
        path.display()
    )]
    Io {
        /// The root as given.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// Why a path given by a model or a user was refused.
///
/// Paths in messages are shown as given (`path`) and the root in full, so the reader can see
/// both what they asked for and where it had to stay.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path was empty.
    #[error("the path is empty; give a path relative to the workspace root `{}` (`.` is the root itself)", root.display())]
    Empty {
        /// The workspace root.
        root: PathBuf,
    },
    /// The path leads outside the root (through `..`, as an absolute path, or through a
    /// symbolic link).
    #[error("path `{path}` leaves the workspace root `{}`{}; give a path inside it", root.display(), Via(link.as_ref()))]
    OutsideRoot {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
        /// The symbolic link that led out, if one did, and its target.
        link: Option<(String, String)>,
    },
    /// Following the path's symbolic links never ends.
    #[error(
        "path `{path}` runs into a symbolic-link loop (more than {MAX_SYMLINK_HOPS} links followed); fix or remove the link"
    )]
    SymlinkLoop {
        /// The path as given.
        path: String,
    },
    /// A component in the middle of the path is a file, not a directory.
    #[error("path `{path}` goes through `{component}`, which is not a directory; check the path")]
    NotADirectory {
        /// The path as given.
        path: String,
        /// The component that is not a directory, root-relative.
        component: String,
    },
    /// The path does not exist (from [`Workspace::resolve_existing`]).
    #[error("path `{path}` does not exist under the workspace root `{}`; check the spelling or list the directory first", root.display())]
    NotFound {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// The file system refused to tell us about a component of the path.
    #[error(
        "cannot inspect `{component}` while resolving path `{path}`: {source}; check that it is readable"
    )]
    Io {
        /// The path as given.
        path: String,
        /// The component that could not be inspected.
        component: String,
        /// The underlying error.
        source: io::Error,
    },
}

/// Renders " through the symbolic link `l` (-> `t`)" when a link led out.
struct Via<'a>(Option<&'a (String, String)>);

impl fmt::Display for Via<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((link, target)) => {
                write!(f, " through the symbolic link `{link}` (-> `{target}`)")
            }
            None => Ok(()),
        }
    }
}

/// What [`Workspace::resolve_entry`] found at a path, without following its last component.
#[derive(Clone, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub struct Entry {
    /// The path with every directory resolved but its last component kept as named: for a
    /// symbolic link, the link itself.
    pub named: PathBuf,
    /// Where the path finally leads (links followed); inside the root.
    pub target: PathBuf,
    /// Whether the last component is a symbolic link.
    pub is_symlink: bool,
    /// Whether `target` exists.
    pub exists: bool,
}

/// One piece still to walk during resolution.
enum Piece {
    Root(PathBuf),
    Parent,
    Name(OsString),
}

/// Result of a walk.
struct Walked {
    path: PathBuf,
    exists: bool,
}

impl Workspace {
    /// Opens `root` as a workspace: it must exist and be a directory; it is canonicalised
    /// (symbolic links and `..` resolved) once, here. It only reads: an apply a crash
    /// interrupted in this root is finished or undone by the next apply (or by
    /// `xcsh_tools::changeset::recover`, `xcsh recover`), not by opening it.
    ///
    /// ```
    /// use xcsh_core::workspace::Workspace;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let ws = Workspace::new(dir.path())?;
    /// assert_eq!(ws.root(), dir.path().canonicalize()?);
    /// assert!(Workspace::new(dir.path().join("missing")).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        let given = root.as_ref();
        let canonical = std::fs::canonicalize(given).map_err(|source| {
            if source.kind() == io::ErrorKind::NotFound {
                WorkspaceError::NotFound {
                    path: given.to_path_buf(),
                }
            } else {
                WorkspaceError::Io {
                    path: given.to_path_buf(),
                    source,
                }
            }
        })?;
        let meta = std::fs::metadata(&canonical).map_err(|source| WorkspaceError::Io {
            path: given.to_path_buf(),
            source,
        })?;
        if !meta.is_dir() {
            return Err(WorkspaceError::NotADirectory {
                path: given.to_path_buf(),
            });
        }
        Ok(Self {
            root: Arc::from(canonical),
        })
    }

    /// The canonical root.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let ws = xcsh_core::workspace::Workspace::new(dir.path())?;
    /// assert!(ws.root().is_absolute());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path given by a model or a user (relative to the root, or absolute) to an
    /// absolute path inside the root, following `..` and symbolic links as the kernel would.
    ///
    /// The path need not exist (so it can name a file to create): the deepest existing
    /// ancestor is resolved and checked, and the missing rest is appended. It is refused when
    /// its final location is outside the root (`..` climbing out, an absolute path elsewhere,
    /// a symbolic link leading out), when its links loop, when a middle component is a file,
    /// or when it is empty.
    ///
    /// ```
    /// use xcsh_core::workspace::{PathError, Workspace};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let ws = Workspace::new(dir.path())?;
    /// let inside = ws.root().join("a.txt");
    /// assert_eq!(ws.resolve(&inside)?, inside);          // absolute inside: fine
    /// assert!(matches!(ws.resolve("/etc/passwd"), Err(PathError::OutsideRoot { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve(&self, user_path: impl AsRef<Path>) -> Result<PathBuf, PathError> {
        let user = user_path.as_ref();
        Ok(self.walk(user, self.start(user)?)?.path)
    }

    /// Like [`resolve`](Self::resolve), but the path must exist.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let ws = xcsh_core::workspace::Workspace::new(dir.path())?;
    /// let err = ws.resolve_existing("nope.rs").unwrap_err();
    /// assert!(err.to_string().starts_with("path `nope.rs` does not exist under the workspace root"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve_existing(&self, user_path: impl AsRef<Path>) -> Result<PathBuf, PathError> {
        let user = user_path.as_ref();
        let walked = self.walk(user, self.start(user)?)?;
        if walked.exists {
            Ok(walked.path)
        } else {
            Err(PathError::NotFound {
                path: user.to_string_lossy().into_owned(),
                root: self.root.to_path_buf(),
            })
        }
    }

    /// Resolves `user_path` without following its last component, and then follows it.
    ///
    /// `ChangeSet` needs both: a symbolic link is edited at its target, but deleting or
    /// renaming must know it is looking at a link.
    #[doc(hidden)]
    pub fn resolve_entry(&self, user_path: &Path) -> Result<Entry, PathError> {
        let mut pieces = self.start(user_path)?;
        let last = match pieces.back() {
            Some(Piece::Name(name)) => Some(name.clone()),
            _ => None,
        };
        let Some(last) = last else {
            // `.`, `..`, `/`: these name directories; resolve fully and let the caller decide.
            let walked = self.walk(user_path, pieces)?;
            return Ok(Entry {
                named: walked.path.clone(),
                target: walked.path,
                is_symlink: false,
                exists: walked.exists,
            });
        };
        pieces.pop_back();
        let parent = self.walk(user_path, pieces)?;
        let named = parent.path.join(&last);
        let meta = if parent.exists {
            match std::fs::symlink_metadata(&named) {
                Ok(m) => Some(m),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                    return Err(PathError::NotADirectory {
                        path: user_path.to_string_lossy().into_owned(),
                        component: self.display(&parent.path),
                    });
                }
                Err(source) => {
                    return Err(self.io_error(user_path, &named, source));
                }
            }
        } else {
            None
        };
        let is_symlink = meta.as_ref().is_some_and(|m| m.file_type().is_symlink());
        if !is_symlink {
            self.check_inside(user_path, &named, None)?;
            return Ok(Entry {
                target: named.clone(),
                named,
                is_symlink: false,
                exists: meta.is_some(),
            });
        }
        // Follow the link (and any chain behind it) with the same walker.
        let mut rest = VecDeque::new();
        rest.push_back(Piece::Root(parent.path));
        rest.push_back(Piece::Name(last));
        let walked = self.walk(user_path, rest)?;
        Ok(Entry {
            named,
            target: walked.path,
            is_symlink: true,
            exists: walked.exists,
        })
    }

    /// Renders an absolute path for messages: root-relative with `/` separators (`.` for the
    /// root itself); a path outside the root is shown in full.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let ws = xcsh_core::workspace::Workspace::new(dir.path())?;
    /// assert_eq!(ws.display(&ws.root().join("src").join("lib.rs")), "src/lib.rs");
    /// assert_eq!(ws.display(ws.root()), ".");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn display(&self, abs: &Path) -> String {
        match abs.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => abs.to_string_lossy().into_owned(),
        }
    }

    /// Splits the user path into pieces to walk, starting at the root (relative) or at `/`.
    fn start(&self, user: &Path) -> Result<VecDeque<Piece>, PathError> {
        if user.as_os_str().is_empty() {
            return Err(PathError::Empty {
                root: self.root.to_path_buf(),
            });
        }
        let mut pieces = VecDeque::new();
        // The root is canonical (no links in it), so a path below it is walked from the root
        // rather than from `/`: the same answer, without looking at every ancestor again (a
        // preview stages hundreds of absolute paths).
        let below_root = user.strip_prefix(&self.root).ok();
        if !user.has_root() || below_root.is_some() {
            pieces.push_back(Piece::Root(self.root.to_path_buf()));
        }
        pieces.extend(Self::pieces_of(below_root.unwrap_or(user)));
        Ok(pieces)
    }

    fn pieces_of(path: &Path) -> impl Iterator<Item = Piece> + '_ {
        let mut prefix: Option<PathBuf> = None;
        path.components().filter_map(move |c| match c {
            // On Windows a prefix (`C:`) precedes the root; keep it for the root piece.
            Component::Prefix(p) => {
                prefix = Some(PathBuf::from(p.as_os_str()));
                None
            }
            Component::RootDir => {
                let mut r = prefix.take().unwrap_or_default();
                r.push(Component::RootDir.as_os_str());
                Some(Piece::Root(r))
            }
            Component::CurDir => None,
            Component::ParentDir => Some(Piece::Parent),
            Component::Normal(n) => Some(Piece::Name(n.to_os_string())),
        })
    }

    /// Walks `pieces` like the kernel's path lookup, but in user space so every symbolic link
    /// is seen and counted. Once a component is missing, the rest is applied lexically (a
    /// missing directory cannot hold links). The final location must be inside the root.
    fn walk(&self, user: &Path, mut pieces: VecDeque<Piece>) -> Result<Walked, PathError> {
        let mut cur = self.root.to_path_buf();
        // How many trailing components of `cur` are known not to exist.
        let mut missing = 0usize;
        let mut hops = 0usize;
        // The last link followed that pointed outside the root, for the error message.
        let mut last_link: Option<(String, String)> = None;
        while let Some(piece) = pieces.pop_front() {
            match piece {
                Piece::Root(r) => {
                    cur = r;
                    missing = 0;
                }
                Piece::Parent => {
                    // `cur` has no links in it (they are expanded as met), so popping is the
                    // real parent. At `/`, `..` stays at `/`, as in the kernel.
                    cur.pop();
                    missing = missing.saturating_sub(1);
                }
                Piece::Name(name) => {
                    cur.push(&name);
                    if missing > 0 {
                        missing += 1;
                        continue;
                    }
                    match std::fs::symlink_metadata(&cur) {
                        Ok(meta) if meta.file_type().is_symlink() => {
                            hops += 1;
                            if hops > MAX_SYMLINK_HOPS {
                                return Err(PathError::SymlinkLoop {
                                    path: user.to_string_lossy().into_owned(),
                                });
                            }
                            let target = std::fs::read_link(&cur)
                                .map_err(|source| self.io_error(user, &cur, source))?;
                            let link_shown = self.display(&cur);
                            last_link = Some((link_shown, target.to_string_lossy().into_owned()));
                            cur.pop();
                            // The link's pieces go first, then what was left of the path.
                            for p in Self::pieces_of(&target)
                                .collect::<Vec<_>>()
                                .into_iter()
                                .rev()
                            {
                                pieces.push_front(p);
                            }
                        }
                        Ok(meta) => {
                            if !meta.is_dir() && has_more_names(&pieces) {
                                if !cur.starts_with(&self.root) {
                                    return Err(self.outside(user, last_link));
                                }
                                return Err(PathError::NotADirectory {
                                    path: user.to_string_lossy().into_owned(),
                                    component: self.display(&cur),
                                });
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::NotFound => missing = 1,
                        // Outside the root, say only that: what exists out there is none of
                        // the caller's business.
                        Err(_) if !cur.starts_with(&self.root) => {
                            return Err(self.outside(user, last_link));
                        }
                        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                            cur.pop();
                            return Err(PathError::NotADirectory {
                                path: user.to_string_lossy().into_owned(),
                                component: self.display(&cur),
                            });
                        }
                        Err(source) => return Err(self.io_error(user, &cur, source)),
                    }
                }
            }
        }
        let link = last_link.filter(|_| !cur.starts_with(&self.root));
        self.check_inside(user, &cur, link)?;
        Ok(Walked {
            path: cur,
            exists: missing == 0,
        })
    }

    fn check_inside(
        &self,
        user: &Path,
        abs: &Path,
        link: Option<(String, String)>,
    ) -> Result<(), PathError> {
        // `starts_with` compares whole components, so `/w2` is not inside `/w`.
        if abs.starts_with(&self.root) {
            Ok(())
        } else {
            Err(self.outside(user, link))
        }
    }

    fn outside(&self, user: &Path, link: Option<(String, String)>) -> PathError {
        PathError::OutsideRoot {
            path: user.to_string_lossy().into_owned(),
            root: self.root.to_path_buf(),
            link,
        }
    }

    fn io_error(&self, user: &Path, at: &Path, source: io::Error) -> PathError {
        PathError::Io {
            path: user.to_string_lossy().into_owned(),
            component: self.display(at),
            source,
        }
    }
}

/// Whether a name still follows in `pieces` (a `..` right after a file fails in the kernel
/// too, so any further piece counts).
fn has_more_names(pieces: &VecDeque<Piece>) -> bool {
    pieces
        .iter()
        .any(|p| matches!(p, Piece::Name(_) | Piece::Parent))
}

/// Reads the regular file at `path`, refusing a symbolic link in its place (the last
/// component is not followed) and anything but a regular file — a FIFO swapped in must not
/// hang the open. With `max`, reads at most `max + 1` bytes: enough to tell that the file is
/// longer than expected without holding whatever now stands there. Returns the metadata the
/// file had when it was opened, too.
#[doc(hidden)]
pub fn read_no_follow(path: &Path, max: Option<u64>) -> io::Result<(Vec<u8>, std::fs::Metadata)> {
    let (file, meta) = open_no_follow(path)?;
    let cap = max.map_or(meta.len(), |m| m.min(meta.len()));
    Ok((read_at_most(&file, cap, max)?, meta))
}

/// Opens the regular file at `path` for reading as [`read_no_follow`] does, with the metadata
/// of what was opened (taken from the open file, not the path).
#[doc(hidden)]
pub fn open_no_follow(path: &Path) -> io::Result<(std::fs::File, std::fs::Metadata)> {
    #[cfg(unix)]
    let file = {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        std::fs::File::from(rustix::fs::open(path, flags, Mode::empty())?)
    };
    #[cfg(not(unix))]
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file any more"));
    }
    Ok((file, meta))
}

/// Reads `file` to its end, or `max + 1` bytes at most; `expected` sizes the buffer.
#[doc(hidden)]
pub fn read_at_most(file: &std::fs::File, expected: u64, max: Option<u64>) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0).saturating_add(1));
    match max {
        Some(max) => file.take(max.saturating_add(1)).read_to_end(&mut bytes)?,
        None => (&*file).read_to_end(&mut bytes)?,
    };
    Ok(bytes)
}

/// The marker `ChangeSet` puts in the names of its temporary files.
#[doc(hidden)]
pub const TEMP_MARKER: &str = ".xcsh-tmp.";
/// The marker `ChangeSet` puts in the names of its backups.
#[doc(hidden)]
pub const BACKUP_MARKER: &str = ".xcsh-bak.";
/// Hex digits of the random token that ends every temp or backup name.
#[doc(hidden)]
pub const TOKEN_LEN: usize = 16;

/// Whether `path` is the lock or journal of an apply (`<root>/.xcsh/apply.*`), which no
/// search or edit should see.
#[doc(hidden)]
pub fn is_apply_state(ws: &Workspace, path: &Path) -> bool {
    path.parent() == Some(&ws.root().join(".xcsh"))
        && path
            .file_name()
            .is_some_and(|n| n.as_encoded_bytes().starts_with(b"apply."))
}

/// Whether `name` (a file name, not a path) is a temporary or backup file that
/// `ChangeSet::apply` (xcsh-tools) creates next to the files it
/// edits.
///
/// After a successful apply none remain; after a crash (SIGKILL, power loss) some may. Walkers
/// should skip them — a staging directory, too, with everything in it — and they can be
/// deleted once no apply is running. The pattern is `.{original name}.xcsh-tmp.{16 hex
/// digits}` (new content, or a new directory being built) or `.{original name}.xcsh-bak.{16
/// hex digits}` (an original kept for rollback).
///
/// ```
/// use xcsh_core::workspace::is_temp_artifact;
///
/// assert!(is_temp_artifact(".lib.rs.xcsh-tmp.0123456789abcdef"));
/// assert!(is_temp_artifact(".lib.rs.xcsh-bak.0123456789abcdef"));
/// assert!(!is_temp_artifact("lib.rs"));
/// assert!(!is_temp_artifact(".lib.rs.xcsh-tmp.notes"));
/// ```
pub fn is_temp_artifact(name: impl AsRef<OsStr>) -> bool {
    // Compare bytes: the original name embedded in the middle may be any encoding.
    let name = name.as_ref().as_encoded_bytes();
    if !name.starts_with(b".") || name.len() < TOKEN_LEN {
        return false;
    }
    let (head, token) = name.split_at(name.len() - TOKEN_LEN);
    token
        .iter()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        && (head.ends_with(TEMP_MARKER.as_bytes()) || head.ends_with(BACKUP_MARKER.as_bytes()))
}
