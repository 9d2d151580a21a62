//! Diagnostics through `tracing`, filtered by `RUST_LOG`, always on stderr: in `serve` mode
//! stdout carries the MCP protocol and nothing else.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the subscriber: `RUST_LOG` when set (e.g. `RUST_LOG=debug`), warnings otherwise.
pub(crate) fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    // Another subscriber may already be set (never in this binary); logging is best-effort.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .try_init();
}
