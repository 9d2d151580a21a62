//! The fuzz targets' entry points, in a module of their own so that the main workspace's
//! tests run them too (`xcsh-tools/tests/reliability_fuzz.rs` includes `entry.rs`).
pub mod entry;
