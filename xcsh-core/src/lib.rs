//! Core runtime.
