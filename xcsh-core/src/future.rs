//! [`BoxFuture`]: what object-safe async methods return. A leaf: the tool, approval and
//! pending-action traits all name it, and it names nothing of theirs.

use std::future::Future;
use std::pin::Pin;

/// A boxed, `Send` future: what object-safe async methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
