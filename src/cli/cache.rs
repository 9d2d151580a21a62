//! `--cache-mb`: how much a long-running command keeps of the files it parsed.

use xcsh::tools::engine::{DEFAULT_CACHE_BYTES, ParseCache};

#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct CacheArgs {
    /// Keep up to this many MiB of parsed files between calls (default 256; 0 keeps
    /// nothing): a later search or preview over unchanged files neither reads nor parses
    /// them again (a file no call parsed is kept from its second read). Every reuse is
    /// checked against the file as it is now.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_CACHE_BYTES >> 20)]
    cache_mb: usize,
}

impl CacheArgs {
    /// The cache the session's tools share.
    pub(crate) fn cache(&self) -> ParseCache {
        ParseCache::new(self.cache_mb.saturating_mul(1 << 20))
    }
}
