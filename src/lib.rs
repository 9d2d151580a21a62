//! xcsh facade.
