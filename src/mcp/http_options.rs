//! What an MCP server over HTTP lets in: [`HttpOptions`] (a bearer token, the allowed
//! `Origin`s and `Host`s, body and session limits, TLS), set with
//! [`McpServer::with_http_options`](super::McpServer::with_http_options) and applied by
//! [`serve_http`](super::McpServer::serve_http) and
//! [`serve_http_with_state`](super::McpServer::serve_http_with_state).
//!
//! The defaults suit a server on loopback for one person's clients: no token, loopback
//! origins, 4 MiB bodies, 256 live MCP sessions. A listener on any other address is refused
//! unless a token is set ([`HttpOptions::check_exposure`]). `docs/HTTP.md` says how to expose
//! a server safely.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use hyper::http::uri::{Authority, Uri};
use sha2::{Digest, Sha256};

/// The largest request body accepted by default: 4 MiB (a JSON-RPC request is a few KiB).
///
/// ```
/// assert_eq!(xcsh::mcp::DEFAULT_MAX_BODY_BYTES, 4 << 20);
/// ```
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How many MCP sessions of the `initialize` lifecycle may be live at once by default.
///
/// ```
/// assert_eq!(xcsh::mcp::DEFAULT_MAX_SESSIONS, 256);
/// ```
pub const DEFAULT_MAX_SESSIONS: usize = 256;

/// The shortest bearer token accepted, in characters.
const MIN_TOKEN_LEN: usize = 16;

/// How to make a token, for the errors that refuse one.
const MAKE_TOKEN: &str =
    "make one with `head -c 32 /dev/urandom | base64 > token` (and `chmod 600 token`)";

/// Who may use an MCP server over HTTP, and how much.
///
/// ```
/// use xcsh::mcp::{HttpOptions, McpServer};
///
/// let options = HttpOptions::new()
///     .auth_token("c2VjcmV0LXRva2VuLWZvci10ZXN0cw==")?
///     .allow_origin("https://app.example.com")?
///     .allow_host("mcp.example.com")?
///     .max_body_bytes(1 << 20)
///     .max_sessions(32);
/// assert!(options.has_auth_token());
/// let registry = xcsh::Session::builder().build_registry()?;
/// let server = McpServer::new(registry).with_http_options(options);
/// # let _ = server;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// SHA-256 of the token: what a request's token is compared with (the token itself is
    /// not kept, so it cannot be logged or printed by accident).
    pub(crate) token: Option<[u8; 32]>,
    /// Origins allowed besides the loopback ones.
    pub(crate) origins: Vec<OriginPattern>,
    /// Hosts allowed besides `localhost` and IP addresses.
    pub(crate) hosts: Vec<HostPattern>,
    pub(crate) any_host: bool,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_sessions: usize,
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<super::tls::TlsIdentity>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            token: None,
            origins: Vec::new(),
            hosts: Vec::new(),
            any_host: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_sessions: DEFAULT_MAX_SESSIONS,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("HttpOptions");
        debug
            .field("auth_token", &self.token.map(|_| "<set>"))
            .field("allowed_origins", &self.origins)
            .field("allowed_hosts", &self.hosts)
            .field("any_host", &self.any_host)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_sessions", &self.max_sessions);
        #[cfg(feature = "tls")]
        debug.field("tls", &self.tls.is_some());
        debug.finish()
    }
}

impl HttpOptions {
    /// The defaults: no token, loopback origins, `localhost` and IP-address hosts,
    /// [`DEFAULT_MAX_BODY_BYTES`], [`DEFAULT_MAX_SESSIONS`], plain HTTP.
    ///
    /// ```
    /// let options = xcsh::mcp::HttpOptions::new();
    /// assert!(!options.has_auth_token());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Every request must carry `Authorization: Bearer <token>`; a missing or wrong token is
    /// answered `401 Unauthorized`. The token is compared in constant time (as SHA-256
    /// digests) and is never logged. Surrounding whitespace is trimmed; what is left must be
    /// at least 16 printable ASCII characters without spaces.
    ///
    /// ```
    /// use xcsh::mcp::{HttpOptions, HttpOptionsErrorKind};
    /// let short = HttpOptions::new().auth_token("hunter2").unwrap_err();
    /// assert_eq!(short.kind(), HttpOptionsErrorKind::Token);
    /// assert!(short.to_string().contains("/dev/urandom"));
    /// assert!(HttpOptions::new().auth_token("  c2VjcmV0LXRva2VuLWZvci10ZXN0cw==\n").is_ok());
    /// ```
    pub fn auth_token(mut self, token: &str) -> Result<Self, HttpOptionsError> {
        self.token = Some(token_digest(token, "the bearer token")?);
        Ok(self)
    }

    /// [`auth_token`](Self::auth_token) with the content of `path` (trimmed), e.g. a file made
    /// with `head -c 32 /dev/urandom | base64 > token`.
    ///
    /// ```
    /// use xcsh::mcp::HttpOptions;
    /// let dir = tempfile::tempdir()?;
    /// let file = dir.path().join("token");
    /// std::fs::write(&file, "c2VjcmV0LXRva2VuLWZvci10ZXN0cw==\n")?;
    /// assert!(HttpOptions::new().auth_token_file(&file)?.has_auth_token());
    /// let missing = HttpOptions::new().auth_token_file(dir.path().join("nope")).unwrap_err();
    /// assert!(missing.to_string().contains("cannot read"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn auth_token_file(self, path: impl AsRef<Path>) -> Result<Self, HttpOptionsError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            HttpOptionsError::new(
                HttpOptionsErrorKind::Token,
                format!(
                    "cannot read the token file `{}`: {e}; {MAKE_TOKEN}",
                    path.display()
                ),
            )
        })?;
        let what = format!("the token in `{}`", path.display());
        let digest = token_digest(&text, &what)?;
        Ok(HttpOptions {
            token: Some(digest),
            ..self
        })
    }

    /// Whether requests must carry a bearer token.
    ///
    /// ```
    /// use xcsh::mcp::HttpOptions;
    /// assert!(!HttpOptions::new().has_auth_token());
    /// assert!(HttpOptions::new().auth_token("0123456789abcdef")?.has_auth_token());
    /// # Ok::<(), xcsh::mcp::HttpOptionsError>(())
    /// ```
    pub fn has_auth_token(&self) -> bool {
        self.token.is_some()
    }

    /// Also accepts requests whose `Origin` is `origin`: `scheme://host`, `scheme://host:port`,
    /// `scheme://host:*` (any port) or `null`. Without a port, the scheme's default (80 for
    /// `http`, 443 for `https`). The loopback origins (`http` and `https` on `localhost`,
    /// `127.0.0.1` and `[::1]`, any port) are always accepted; a request without `Origin` (any
    /// client that is not a browser) is not affected. Any other `Origin` is answered `403`.
    ///
    /// ```
    /// use xcsh::mcp::HttpOptions;
    /// assert!(HttpOptions::new().allow_origin("https://app.example.com:*").is_ok());
    /// let err = HttpOptions::new().allow_origin("app.example.com").unwrap_err();
    /// assert!(err.to_string().contains("scheme://host"));
    /// ```
    pub fn allow_origin(mut self, origin: &str) -> Result<Self, HttpOptionsError> {
        let pattern = OriginPattern::parse(origin).ok_or_else(|| {
            HttpOptionsError::new(
                HttpOptionsErrorKind::Origin,
                format!(
                    "`{origin}` is not an origin: write `scheme://host`, `scheme://host:port`, `scheme://host:*` (any port) or `null`, e.g. `https://app.example.com`"
                ),
            )
        })?;
        self.origins.push(pattern);
        Ok(self)
    }

    /// Also accepts requests whose `Host` is `host` (`name` on any port, or `name:port`), or
    /// any `Host` at all for `*`. `localhost` and IP addresses are always accepted: the `Host`
    /// check stops DNS rebinding, where a web page's own domain name is made to resolve to
    /// this server, and such a request always names that domain. A server reached by a name
    /// (`mcp.example.com`, or through a reverse proxy that passes the name on) needs that
    /// name here; any other name is answered `403`.
    ///
    /// ```
    /// use xcsh::mcp::HttpOptions;
    /// assert!(HttpOptions::new().allow_host("mcp.example.com:8443").is_ok());
    /// assert!(HttpOptions::new().allow_host("*").is_ok());
    /// assert!(HttpOptions::new().allow_host("https://mcp.example.com").is_err());
    /// ```
    pub fn allow_host(mut self, host: &str) -> Result<Self, HttpOptionsError> {
        if host.trim() == "*" {
            self.any_host = true;
            return Ok(self);
        }
        let pattern = HostPattern::parse(host).ok_or_else(|| {
            HttpOptionsError::new(
                HttpOptionsErrorKind::Host,
                format!(
                    "`{host}` is not a host: write `name` (any port) or `name:port`, e.g. `mcp.example.com`, or `*` for any"
                ),
            )
        })?;
        self.hosts.push(pattern);
        Ok(self)
    }

    /// The largest request body accepted, in bytes (default [`DEFAULT_MAX_BODY_BYTES`]); a
    /// larger one, by `Content-Length` or while a chunked body streams in, is answered
    /// `413 Payload Too Large` and never reaches a tool.
    ///
    /// ```
    /// let options = xcsh::mcp::HttpOptions::new().max_body_bytes(64 * 1024);
    /// # let _ = options;
    /// ```
    #[must_use]
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// How many MCP sessions of the `initialize` lifecycle may be live at once (default
    /// [`DEFAULT_MAX_SESSIONS`]). An `initialize` beyond it (or a `--state` session restored
    /// beyond it) is answered `503 Service Unavailable` saying so; a session ends with its
    /// client's DELETE or after 5 minutes unused. Requests that negotiate protocol 2026-07-28
    /// per request have no session and are not counted here. 0 serves only those.
    ///
    /// ```
    /// let options = xcsh::mcp::HttpOptions::new().max_sessions(16);
    /// # let _ = options;
    /// ```
    #[must_use]
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Serves HTTPS with `identity` (a certificate chain and its key) instead of plain HTTP.
    ///
    /// ```no_run
    /// use xcsh::mcp::{HttpOptions, TlsIdentity};
    /// let identity = TlsIdentity::from_pem_files("cert.pem", "key.pem")?;
    /// let options = HttpOptions::new().tls(identity);
    /// # let _ = options;
    /// # Ok::<(), xcsh::mcp::HttpOptionsError>(())
    /// ```
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn tls(mut self, identity: super::tls::TlsIdentity) -> Self {
        self.tls = Some(identity);
        self
    }

    /// Whether the server speaks HTTPS.
    ///
    /// ```
    /// assert!(!xcsh::mcp::HttpOptions::new().is_tls());
    /// ```
    pub fn is_tls(&self) -> bool {
        #[cfg(feature = "tls")]
        return self.tls.is_some();
        #[cfg(not(feature = "tls"))]
        false
    }

    /// Refuses to serve on `addr` when it is reachable from other machines (not a loopback
    /// address) and no token is set: anyone who can reach it could apply edits to the
    /// workspace. The serve functions check their listener with it; a program can call it
    /// before binding.
    ///
    /// ```
    /// use xcsh::mcp::{HttpOptions, HttpOptionsErrorKind};
    /// let open = HttpOptions::new();
    /// assert!(open.check_exposure("127.0.0.1:8931".parse()?).is_ok());
    /// let err = open.check_exposure("0.0.0.0:8931".parse()?).unwrap_err();
    /// assert_eq!(err.kind(), HttpOptionsErrorKind::Exposed);
    /// let guarded = HttpOptions::new().auth_token("c2VjcmV0LXRva2VuLWZvci10ZXN0cw==")?;
    /// assert!(guarded.check_exposure("0.0.0.0:8931".parse()?).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_exposure(&self, addr: SocketAddr) -> Result<(), HttpOptionsError> {
        if self.token.is_some() || addr.ip().to_canonical().is_loopback() {
            return Ok(());
        }
        Err(HttpOptionsError::new(
            HttpOptionsErrorKind::Exposed,
            format!(
                "refusing to serve MCP on {addr} without a bearer token: that address can be reached from other machines, and anyone who reaches it could apply edits to the workspace. Set a token (`--auth-token-file FILE`, or `HttpOptions::auth_token_file`; {MAKE_TOKEN}), or bind a loopback address such as 127.0.0.1:{}",
                addr.port()
            ),
        ))
    }
}

/// The SHA-256 of `raw` trimmed, if it is a token worth having.
fn token_digest(raw: &str, what: &str) -> Result<[u8; 32], HttpOptionsError> {
    let token = raw.trim();
    let refuse = |why: String| {
        Err(HttpOptionsError::new(
            HttpOptionsErrorKind::Token,
            format!("{what} {why}; {MAKE_TOKEN}"),
        ))
    };
    if token.is_empty() {
        return refuse("is empty".to_owned());
    }
    if let Some(bad) = token.chars().find(|c| !c.is_ascii_graphic()) {
        return refuse(format!(
            "holds {bad:?}, which an `Authorization` header cannot carry as is (printable ASCII without spaces only)"
        ));
    }
    if token.len() < MIN_TOKEN_LEN {
        return refuse(format!(
            "is {} characters long; at least {MIN_TOKEN_LEN} are needed",
            token.len()
        ));
    }
    Ok(Sha256::digest(token.as_bytes()).into())
}

/// Why [`HttpOptions`] (or a `TlsIdentity`, feature `tls`) refused a setting; its
/// message says what was wrong and what to do, its [`kind`](Self::kind) which setting.
///
/// ```
/// use xcsh::mcp::{HttpOptions, HttpOptionsErrorKind};
/// let err = HttpOptions::new().allow_host("").unwrap_err();
/// assert_eq!(err.kind(), HttpOptionsErrorKind::Host);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptionsError {
    kind: HttpOptionsErrorKind,
    message: String,
}

/// Which setting an [`HttpOptionsError`] is about.
///
/// ```
/// use xcsh::mcp::{HttpOptions, HttpOptionsErrorKind};
/// let err = HttpOptions::new().check_exposure("[::]:8931".parse()?).unwrap_err();
/// assert_eq!(err.kind(), HttpOptionsErrorKind::Exposed);
/// # Ok::<(), std::net::AddrParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpOptionsErrorKind {
    /// The bearer token: empty, too short, unprintable, or its file unreadable.
    Token,
    /// An allowed origin that is not one.
    Origin,
    /// An allowed host that is not one.
    Host,
    /// The TLS certificate or key.
    Tls,
    /// A listener reachable from other machines, without a token.
    Exposed,
}

impl HttpOptionsError {
    pub(crate) fn new(kind: HttpOptionsErrorKind, message: String) -> Self {
        HttpOptionsError { kind, message }
    }

    /// Which setting was refused.
    ///
    /// ```
    /// use xcsh::mcp::{HttpOptions, HttpOptionsErrorKind};
    /// let err = HttpOptions::new().allow_origin("nowhere").unwrap_err();
    /// assert_eq!(err.kind(), HttpOptionsErrorKind::Origin);
    /// ```
    pub fn kind(&self) -> HttpOptionsErrorKind {
        self.kind
    }
}

impl fmt::Display for HttpOptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HttpOptionsError {}

impl From<HttpOptionsError> for std::io::Error {
    fn from(error: HttpOptionsError) -> Self {
        let kind = match error.kind {
            HttpOptionsErrorKind::Exposed => std::io::ErrorKind::PermissionDenied,
            _ => std::io::ErrorKind::InvalidInput,
        };
        std::io::Error::new(kind, error)
    }
}

/// A port an allowed origin or host accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PortPattern {
    Any,
    Exact(u16),
}

impl PortPattern {
    fn matches(self, port: u16) -> bool {
        match self {
            PortPattern::Any => true,
            PortPattern::Exact(allowed) => allowed == port,
        }
    }
}

/// An allowed `Origin`: `null`, or a scheme, a host and a port (RFC 6454).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OriginPattern {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: PortPattern,
    },
}

impl OriginPattern {
    /// `scheme://host`, `scheme://host:port`, `scheme://host:*` or `null`.
    fn parse(text: &str) -> Option<OriginPattern> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("null") {
            return Some(OriginPattern::Null);
        }
        let (base, any_port) = match text.strip_suffix(":*") {
            Some(base) => (base, true),
            None => (text, false),
        };
        let Origin::Tuple { scheme, host, port } = Origin::parse(base)? else {
            return None;
        };
        let port = match (any_port, port) {
            (true, None) => PortPattern::Any,
            (true, Some(_)) => return None,
            (false, Some(port)) => PortPattern::Exact(port),
            (false, None) => PortPattern::Exact(default_port(&scheme)?),
        };
        Some(OriginPattern::Tuple { scheme, host, port })
    }

    /// `http` and `https` on `localhost`, `127.0.0.1` and `[::1]`, any port.
    pub(crate) fn loopback() -> impl Iterator<Item = OriginPattern> {
        ["http", "https"].into_iter().flat_map(|scheme| {
            ["localhost", "127.0.0.1", "::1"]
                .into_iter()
                .map(move |host| OriginPattern::Tuple {
                    scheme: scheme.to_owned(),
                    host: host.to_owned(),
                    port: PortPattern::Any,
                })
        })
    }

    pub(crate) fn matches(&self, origin: &Origin) -> bool {
        match (self, origin) {
            (OriginPattern::Null, Origin::Null) => true,
            (
                OriginPattern::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: o_scheme,
                    host: o_host,
                    port: o_port,
                },
            ) => {
                scheme == o_scheme
                    && host == o_host
                    && o_port
                        .or_else(|| default_port(o_scheme))
                        .is_some_and(|p| port.matches(p))
            }
            _ => false,
        }
    }
}

/// A request's `Origin`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Origin {
    /// `null` or `scheme://host[:port]`, with nothing after the authority (an origin has no
    /// path, query or user).
    pub(crate) fn parse(text: &str) -> Option<Origin> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("null") {
            return Some(Origin::Null);
        }
        let (_, after_scheme) = text.split_once("://")?;
        if after_scheme.contains(['/', '?', '#', '@']) {
            return None;
        }
        let uri: Uri = text.parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        if authority.host().is_empty() {
            return None;
        }
        Some(Origin::Tuple {
            scheme,
            host: normalize_host(authority.host()),
            port: authority.port_u16(),
        })
    }
}

/// An allowed `Host`: a name and a port (or any port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostPattern {
    host: String,
    port: PortPattern,
}

impl HostPattern {
    fn parse(text: &str) -> Option<HostPattern> {
        let authority = parse_authority(text)?;
        Some(HostPattern {
            host: normalize_host(authority.host()),
            port: authority
                .port_u16()
                .map_or(PortPattern::Any, PortPattern::Exact),
        })
    }

    pub(crate) fn matches(&self, host: &str, port: Option<u16>) -> bool {
        self.host == host
            && match self.port {
                PortPattern::Any => true,
                PortPattern::Exact(allowed) => port == Some(allowed),
            }
    }
}

/// `host[:port]` with nothing else (no scheme, path or user).
pub(crate) fn parse_authority(text: &str) -> Option<Authority> {
    let text = text.trim();
    let authority: Authority = text.parse().ok()?;
    (!authority.host().is_empty() && !authority.as_str().contains('@')).then_some(authority)
}

/// A host as compared: lowercase, an IPv6 address without its brackets.
pub(crate) fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// Whether a normalized host is an IP address (which DNS rebinding cannot forge).
pub(crate) fn is_ip_address(host: &str) -> bool {
    host.parse::<IpAddr>().is_ok()
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(text: &str) -> Origin {
        Origin::parse(text).unwrap_or_else(|| panic!("{text} parses"))
    }

    #[test]
    fn loopback_origins_match_any_port_and_both_schemes_only() {
        let allowed: Vec<_> = OriginPattern::loopback().collect();
        let ok = |o: &str| allowed.iter().any(|p| p.matches(&origin(o)));
        assert!(ok("http://localhost:3000"));
        assert!(ok("https://127.0.0.1"));
        assert!(ok("http://[::1]:8080"));
        assert!(ok("HTTP://LOCALHOST"));
        assert!(!ok("http://localhost.evil.example"));
        assert!(!ok("http://127.0.0.2"));
        assert!(!ok("null"));
        assert!(!ok("file://localhost"));
    }

    #[test]
    fn an_origin_without_a_port_means_the_scheme_default() {
        let pattern = OriginPattern::parse("https://app.example.com").expect("parses");
        assert!(pattern.matches(&origin("https://app.example.com")));
        assert!(pattern.matches(&origin("https://app.example.com:443")));
        assert!(!pattern.matches(&origin("https://app.example.com:8443")));
        assert!(!pattern.matches(&origin("http://app.example.com")));
        let any = OriginPattern::parse("https://app.example.com:*").expect("parses");
        assert!(any.matches(&origin("https://app.example.com:8443")));
    }

    #[test]
    fn what_is_not_an_origin_is_refused() {
        for bad in [
            "app.example.com",
            "https://app.example.com/path",
            "https://user@app.example.com",
            "https://app.example.com:443:*",
            "ftp://files.example.com",
            "",
        ] {
            assert!(OriginPattern::parse(bad).is_none(), "{bad}");
        }
        assert!(Origin::parse("https://a.example/x").is_none());
    }

    #[test]
    fn host_patterns_match_name_and_port() {
        let any_port = HostPattern::parse("MCP.example.com").expect("parses");
        assert!(any_port.matches("mcp.example.com", Some(8931)));
        assert!(any_port.matches("mcp.example.com", None));
        let exact = HostPattern::parse("mcp.example.com:8443").expect("parses");
        assert!(exact.matches("mcp.example.com", Some(8443)));
        assert!(!exact.matches("mcp.example.com", None));
        assert!(HostPattern::parse("https://mcp.example.com").is_none());
        assert!(HostPattern::parse("mcp.example.com/x").is_none());
    }

    #[test]
    fn a_token_is_trimmed_and_must_be_long_and_printable() {
        assert_eq!(
            token_digest(" 0123456789abcdef\n", "t"),
            token_digest("0123456789abcdef", "t")
        );
        for bad in [
            "",
            "   ",
            "0123456789abcde",
            "0123456789 abcdef",
            "0123456789abcdéf",
        ] {
            let err = token_digest(bad, "the token").expect_err(bad);
            assert_eq!(err.kind(), HttpOptionsErrorKind::Token);
            assert!(err.to_string().contains("head -c 32 /dev/urandom"), "{err}");
        }
    }

    #[test]
    fn debug_never_shows_the_token() {
        let options = HttpOptions::new()
            .auth_token("verysecret-0123456789")
            .expect("token");
        let shown = format!("{options:?}");
        assert!(!shown.contains("verysecret"), "{shown}");
        assert!(shown.contains("<set>"), "{shown}");
    }
}
