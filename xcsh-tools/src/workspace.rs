//! The workspace root and path confinement.
