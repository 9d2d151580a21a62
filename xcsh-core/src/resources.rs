//! Resources a session serves: content too large to put in a tool result (a whole preview,
//! every match of a search), published by a tool and linked from its result with a
//! [`Content::ResourceLink`]. An MCP client reads them with `resources/read`; a host with
//! [`Session::read_resource`](crate::Session::read_resource).
//!
//! A resource is read when it is asked for, not when it is published: its reader computes the
//! content then (a preview's diff is made from the files as they are now, checked against what
//! the preview read). A resource published for a pending action
//! ([`Resource::while_pending`]) lives as long as the action is pending; others are kept, a
//! bounded number per session, oldest dropped first.
//!
//! A resource's URI is `xcsh://<stack>/<n>`, where `<stack>` is the session's handle when it
//! has one (an unguessable capability, see [`Session::with_handle`](crate::Session::with_handle))
//! or its id, and `<n>` counts the session's resources. A resource may have parts, read at
//! `xcsh://<stack>/<n>/<part>` (a preview's files, say); its reader gets the part (`""` for
//! the resource itself).

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::pending::{PendingActionStore, PendingId};
use crate::result::Content;

/// How many resources a session keeps beside those of pending actions.
const KEPT: usize = 64;

/// The URI scheme of xcsh's resources.
pub const RESOURCE_SCHEME: &str = "xcsh://";

/// What reading a resource gives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceBody {
    /// Text (UTF-8).
    Text(String),
    /// Bytes that are not text.
    Blob(Vec<u8>),
}

impl ResourceBody {
    /// The bytes, whichever kind.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            ResourceBody::Text(text) => text.as_bytes(),
            ResourceBody::Blob(bytes) => bytes,
        }
    }

    /// Text when the bytes are UTF-8, a blob otherwise.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        match String::from_utf8(bytes) {
            Ok(text) => ResourceBody::Text(text),
            Err(e) => ResourceBody::Blob(e.into_bytes()),
        }
    }
}

type Reader = dyn Fn(&str) -> Result<ResourceBody, String> + Send + Sync;

/// A resource to publish: a name, a MIME type and a reader.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use xcsh_core::{Content, CustomTool, Resource, ResourceBody, Session, ToolContext, ToolError, AgentToolResult};
///
/// /// Lists every file (many).
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ListAll {}
///
/// impl CustomTool for ListAll {
///     const NAME: &'static str = "list_all";
///     const DESCRIPTION: &'static str = "Lists every file.";
///     async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
///         let listing = (0..10_000).map(|n| format!("file{n}.rs\n")).collect::<String>();
///         let link = ctx.publish_resource(Resource::text("listing.txt", "text/plain", listing))?;
///         Ok(AgentToolResult::from(vec![Content::text("10000 files; the list is linked."), link]))
///     }
/// }
///
/// let session = Session::builder().custom::<ListAll>().build().unwrap();
/// let result = session.call("list_all", serde_json::json!({})).await;
/// let (uri, name) = result.resource_links().next().unwrap();
/// assert_eq!(name, "listing.txt");
/// let read = session.read_resource(uri).unwrap();
/// assert!(matches!(read.body, ResourceBody::Text(t) if t.starts_with("file0.rs\n")));
/// # });
/// ```
#[derive(Clone)]
pub struct Resource {
    name: String,
    description: Option<String>,
    mime_type: Option<String>,
    part_mime_type: Option<String>,
    while_pending: Option<PendingId>,
    read: Arc<Reader>,
}

impl Resource {
    /// A resource whose content `read` computes when it is read; `read` gets the part asked
    /// for (`""` for the resource itself) and says why it cannot, in words for a model.
    pub fn new(
        name: impl Into<String>,
        mime_type: impl Into<String>,
        read: impl Fn(&str) -> Result<ResourceBody, String> + Send + Sync + 'static,
    ) -> Self {
        Resource {
            name: name.into(),
            description: None,
            mime_type: Some(mime_type.into()),
            part_mime_type: None,
            while_pending: None,
            read: Arc::new(read),
        }
    }

    /// A resource holding `text`, with no parts.
    pub fn text(
        name: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        let text: Arc<str> = Arc::from(text.into());
        Resource::new(name, mime_type, move |part| match part {
            "" => Ok(ResourceBody::Text(text.to_string())),
            other => Err(format!("this resource has no part `{other}`")),
        })
    }

    /// What it holds, for a person or the model (the link's `description`).
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The MIME type of its parts (default: `text/plain` for text, `application/octet-stream`
    /// for bytes), when they are not what the resource itself is (a preview's files are not
    /// diffs).
    #[must_use]
    pub fn with_part_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.part_mime_type = Some(mime_type.into());
        self
    }

    /// Ties it to a pending action: it is served while the action is pending, and goes when
    /// the action is applied or discarded (it describes a preview that is no more).
    #[must_use]
    pub fn while_pending(mut self, id: PendingId) -> Self {
        self.while_pending = Some(id);
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("name", &self.name)
            .field("mime_type", &self.mime_type)
            .field("while_pending", &self.while_pending)
            .finish_non_exhaustive()
    }
}

/// A resource as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceInfo {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// What it holds.
    pub description: Option<String>,
    /// Its MIME type.
    pub mime_type: Option<String>,
}

/// What [`Session::read_resource`](crate::Session::read_resource) gives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceContents {
    /// The URI read.
    pub uri: String,
    /// The MIME type: the resource's, or its parts' (see [`Resource::with_part_mime_type`]).
    pub mime_type: Option<String>,
    /// The content.
    pub body: ResourceBody,
}

/// Why a resource could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceError {
    /// No resource of this conversation has this URI: never published here, or gone with the
    /// preview it described (applied or discarded), or dropped to make room.
    Unknown {
        /// The URI asked for.
        uri: String,
    },
    /// The resource exists but cannot give its content now (a file of a preview changed on
    /// disk since it was read, say).
    Unavailable {
        /// The URI asked for.
        uri: String,
        /// Why.
        why: String,
    },
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceError::Unknown { uri } => write!(
                f,
                "`{uri}` is not a resource of this conversation: it was never published here, or the preview it described was applied or discarded; call the tool again for a fresh one"
            ),
            ResourceError::Unavailable { uri, why } => {
                write!(f, "`{uri}` cannot be read now: {why}")
            }
        }
    }
}

impl std::error::Error for ResourceError {}

struct Entry {
    n: u64,
    resource: Resource,
}

struct Table {
    next: u64,
    entries: VecDeque<Entry>,
}

/// A session's published resources (see the [module](self)). Shared by the session's clones.
pub struct Resources {
    /// `xcsh://<stack>/`.
    prefix: String,
    table: Mutex<Table>,
}

impl fmt::Debug for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resources")
            .field("len", &self.table().entries.len())
            .finish_non_exhaustive()
    }
}

impl Resources {
    /// The resources of the stack named `key` (a handle or a session id).
    pub(crate) fn new(key: &str) -> Self {
        Resources {
            prefix: format!("{RESOURCE_SCHEME}{key}/"),
            table: Mutex::new(Table {
                next: 1,
                entries: VecDeque::new(),
            }),
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Publishes `resource` and returns the link to put in a result. Resources of actions no
    /// longer pending go first, then the oldest beyond the session's budget.
    pub(crate) fn publish(&self, resource: Resource, store: &PendingActionStore) -> Content {
        let mut table = self.table();
        let n = table.next;
        table.next += 1;
        let link = Content::ResourceLink {
            uri: format!("{}{n}", self.prefix),
            name: resource.name.clone(),
            mime_type: resource.mime_type.clone(),
            description: resource.description.clone(),
        };
        table.entries.push_back(Entry { n, resource });
        prune(&mut table, store);
        link
    }

    /// The resources served now, oldest first.
    pub(crate) fn list(&self, store: &PendingActionStore) -> Vec<ResourceInfo> {
        let mut table = self.table();
        prune(&mut table, store);
        table
            .entries
            .iter()
            .map(|entry| ResourceInfo {
                uri: format!("{}{}", self.prefix, entry.n),
                name: entry.resource.name.clone(),
                description: entry.resource.description.clone(),
                mime_type: entry.resource.mime_type.clone(),
            })
            .collect()
    }

    /// Reads `uri` (a resource, or one of its parts).
    pub(crate) fn read(
        &self,
        uri: &str,
        store: &PendingActionStore,
    ) -> Result<ResourceContents, ResourceError> {
        let unknown = || ResourceError::Unknown {
            uri: uri.to_owned(),
        };
        let rest = uri.strip_prefix(&self.prefix).ok_or_else(unknown)?;
        let (number, part) = rest.split_once('/').unwrap_or((rest, ""));
        let n: u64 = number.parse().map_err(|_| unknown())?;
        let resource = {
            let mut table = self.table();
            prune(&mut table, store);
            table
                .entries
                .iter()
                .find(|entry| entry.n == n)
                .map(|entry| entry.resource.clone())
                .ok_or_else(unknown)?
        };
        let part = percent_decode(part).ok_or_else(unknown)?;
        // Outside the lock: a reader may read files.
        let body = (resource.read)(&part).map_err(|why| ResourceError::Unavailable {
            uri: uri.to_owned(),
            why,
        })?;
        let mime_type = match (part.is_empty(), &body) {
            (true, _) => resource.mime_type.clone(),
            (false, ResourceBody::Text(_)) => Some(
                resource
                    .part_mime_type
                    .clone()
                    .unwrap_or_else(|| "text/plain".to_owned()),
            ),
            (false, _) => Some(
                resource
                    .part_mime_type
                    .clone()
                    .unwrap_or_else(|| "application/octet-stream".to_owned()),
            ),
        };
        Ok(ResourceContents {
            uri: uri.to_owned(),
            mime_type,
            body,
        })
    }
}

/// Drops the resources of actions no longer pending, then the oldest others beyond [`KEPT`].
fn prune(table: &mut Table, store: &PendingActionStore) {
    table.entries.retain(|entry| {
        entry
            .resource
            .while_pending
            .is_none_or(|id| store.contains(id))
    });
    let mut others = table
        .entries
        .iter()
        .filter(|e| e.resource.while_pending.is_none())
        .count();
    while others > KEPT {
        if let Some(oldest) = table
            .entries
            .iter()
            .position(|e| e.resource.while_pending.is_none())
        {
            table.entries.remove(oldest);
        }
        others -= 1;
    }
}

/// The URI of part `part` (e.g. a file's path) of the resource at `uri`, percent-encoding
/// what a URI path cannot hold as is.
///
/// ```
/// assert_eq!(
///     xcsh_core::resource_part_uri("xcsh://h/3", "after/src/a b.rs"),
///     "xcsh://h/3/after/src/a%20b.rs"
/// );
/// ```
pub fn resource_part_uri(uri: &str, part: &str) -> String {
    let mut out = String::with_capacity(uri.len() + 1 + part.len());
    out.push_str(uri);
    out.push('/');
    for byte in part.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(byte as char)
            }
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AgentToolResult, PendingAction, ToolError};

    struct Step;
    impl PendingAction for Step {
        fn label(&self) -> String {
            "Step".into()
        }
        async fn apply(&mut self, _: &str) -> Result<AgentToolResult, ToolError> {
            Ok(().into())
        }
    }

    fn uri_of(link: &Content) -> String {
        match link {
            Content::ResourceLink { uri, .. } => uri.clone(),
            other => panic!("not a link: {other:?}"),
        }
    }

    #[test]
    fn parts_are_read_through_the_reader_and_round_trip_their_encoding() {
        let store = PendingActionStore::new();
        let resources = Resources::new("h");
        let link = resources.publish(
            Resource::new("p", "text/plain", |part| {
                Ok(ResourceBody::Text(part.into()))
            }),
            &store,
        );
        let uri = uri_of(&link);
        assert_eq!(uri, "xcsh://h/1");
        let part = resource_part_uri(&uri, "after/ü dir/a%b.rs");
        let read = resources.read(&part, &store).unwrap();
        assert_eq!(read.body, ResourceBody::Text("after/ü dir/a%b.rs".into()));
        assert_eq!(
            read.mime_type.as_deref(),
            Some("text/plain"),
            "a part is not the whole"
        );
        assert_eq!(
            resources.read(&uri, &store).unwrap().mime_type.as_deref(),
            Some("text/plain")
        );
        assert!(matches!(
            resources.read("xcsh://other/1", &store),
            Err(ResourceError::Unknown { .. })
        ));
        assert!(matches!(
            resources.read("xcsh://h/1x", &store),
            Err(ResourceError::Unknown { .. })
        ));
    }

    #[test]
    fn a_pending_actions_resource_goes_with_it_and_others_are_bounded() {
        let store = PendingActionStore::new();
        let resources = Resources::new("s");
        let id = store.push(Step);
        let tied = uri_of(&resources.publish(
            Resource::text("d", "text/x-diff", "x").while_pending(id),
            &store,
        ));
        for n in 0..KEPT + 5 {
            resources.publish(Resource::text(format!("r{n}"), "text/plain", "y"), &store);
        }
        let listed = resources.list(&store);
        assert_eq!(listed.len(), KEPT + 1);
        assert_eq!(listed[0].uri, tied, "the pending action's resource is kept");
        assert!(resources.read(&tied, &store).is_ok());
        let (_, entry) = store.pop().unwrap();
        assert!(
            resources.read(&tied, &store).is_ok(),
            "still pending while it is applied"
        );
        store.resolved(entry.summary().id);
        assert!(matches!(
            resources.read(&tied, &store),
            Err(ResourceError::Unknown { .. })
        ));
    }
}
