//! The checks every HTTP request passes before rmcp sees it, in this order: its `Host`
//! (DNS rebinding), its `Origin` (a browser page of another site), its bearer token, and the
//! size of its body. Each refusal is a plain-text answer that says what was wrong and what
//! to send instead; nothing behind it runs.

use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, StatusCode};
use subtle::ConstantTimeEq;

use super::http::{HttpResponse, plain};
use super::http_options::{
    HttpOptions, Origin, OriginPattern, is_ip_address, normalize_host, parse_authority,
};

/// [`HttpOptions`] made ready to check requests with.
#[derive(Debug)]
pub(crate) struct Guard {
    token: Option<[u8; 32]>,
    origins: Vec<OriginPattern>,
    options: HttpOptions,
}

impl Guard {
    pub(crate) fn new(options: HttpOptions) -> Self {
        let origins = OriginPattern::loopback()
            .chain(options.origins.iter().cloned())
            .collect();
        Guard {
            token: options.token,
            origins,
            options,
        }
    }

    pub(crate) fn max_body_bytes(&self) -> usize {
        self.options.max_body_bytes
    }

    /// Everything but the body: `Host`, `Origin`, the token, a `Content-Length` over the limit.
    pub(crate) fn check<B>(&self, request: &Request<B>) -> Result<(), Refusal> {
        self.check_host(request)?;
        self.check_origin(request.headers())?;
        self.check_token(request.headers())?;
        self.check_length(request.headers())
    }

    fn check_host<B>(&self, request: &Request<B>) -> Result<(), Refusal> {
        let raw = match request.headers().get(header::HOST) {
            Some(value) => value.to_str().ok(),
            None => request.uri().authority().map(|a| a.as_str()),
        };
        let Some(raw) = raw else {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "Bad Request: the request has no readable `Host` header; send the host and port you connected to, e.g. `Host: 127.0.0.1:8931`".to_owned(),
            ));
        };
        let Some(authority) = parse_authority(raw) else {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "Bad Request: `Host: {}` is not a host and port; send the one you connected to",
                    shown(raw)
                ),
            ));
        };
        let host = normalize_host(authority.host());
        let allowed = self.options.any_host
            || host == "localhost"
            || is_ip_address(&host)
            || self
                .options
                .hosts
                .iter()
                .any(|p| p.matches(&host, authority.port_u16()));
        if allowed {
            return Ok(());
        }
        tracing::warn!(host = %shown(raw), "refused a request for a host name not allowed (DNS rebinding?)");
        Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!(
                "Forbidden: this MCP server does not answer to the host name `{}` (only `localhost`, IP addresses and the names it is started with), which keeps web pages from reaching it by DNS rebinding. Nothing was done. If that name is this server's, start it with `--allow-host {}` (`HttpOptions::allow_host`)",
                shown(raw),
                shown(&host)
            ),
        ))
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let Some(value) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let text = String::from_utf8_lossy(value.as_bytes());
        let allowed = Origin::parse(&text)
            .is_some_and(|origin| self.origins.iter().any(|pattern| pattern.matches(&origin)));
        if allowed {
            return Ok(());
        }
        tracing::warn!(origin = %shown(&text), "refused a request from a web page of another origin");
        Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!(
                "Forbidden: requests from web pages of origin `{0}` are not allowed on this MCP server (only loopback origins and those it is started with). Nothing was done. If that page is yours, start the server with `--allow-origin {0}` (`HttpOptions::allow_origin`)",
                shown(&text)
            ),
        ))
    }

    fn check_token(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let Some(expected) = &self.token else {
            return Ok(());
        };
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (first, second) = (values.next(), values.next());
        if second.is_some() {
            return Err(Refusal::unauthorized(
                StatusCode::BAD_REQUEST,
                Some("invalid_request"),
                "Bad Request: the request has more than one `Authorization` header; send exactly one, `Authorization: Bearer <token>`",
            ));
        }
        let presented = first
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let Some(presented) = presented else {
            tracing::debug!("refused a request without a bearer token");
            return Err(Refusal::unauthorized(
                StatusCode::UNAUTHORIZED,
                None,
                "Unauthorized: this MCP server needs `Authorization: Bearer <token>` on every request, with the token it was started with (the content of its --auth-token-file). Nothing was done",
            ));
        };
        let digest: [u8; 32] = <sha2::Sha256 as sha2::Digest>::digest(presented.as_bytes()).into();
        if bool::from(digest.ct_eq(expected)) {
            return Ok(());
        }
        tracing::warn!("refused a request with a wrong bearer token");
        Err(Refusal::unauthorized(
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
            "Unauthorized: the bearer token is not this server's. Send `Authorization: Bearer <token>` with exactly the content of the server's --auth-token-file (surrounding whitespace trimmed). Nothing was done",
        ))
    }

    fn check_length(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let Some(value) = headers.get(header::CONTENT_LENGTH) else {
            return Ok(());
        };
        let Some(length) = value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        else {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                "Bad Request: `Content-Length` is not a number of bytes".to_owned(),
            ));
        };
        if length > self.max_body_bytes() as u64 {
            return Err(Refusal::too_large(Some(length), self.max_body_bytes()));
        }
        Ok(())
    }
}

/// Why a request was refused: its status and the text that says what to send instead.
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    text: String,
    /// The `WWW-Authenticate` challenge, for a refused token: its `error`, if any.
    challenge: Option<Option<&'static str>>,
    /// The rest of the body is not read, so the connection cannot carry another request.
    close: bool,
}

impl Refusal {
    fn new(status: StatusCode, text: String) -> Self {
        Refusal {
            status,
            text,
            challenge: None,
            close: false,
        }
    }

    fn unauthorized(status: StatusCode, error: Option<&'static str>, text: &str) -> Self {
        Refusal {
            challenge: Some(error),
            ..Refusal::new(status, text.to_owned())
        }
    }

    /// A `413` for a body of `length` bytes (or unknown, for one that streamed past) over
    /// `max`.
    pub(crate) fn too_large(length: Option<u64>, max: usize) -> Self {
        let size = length.map_or_else(
            || "streams past".to_owned(),
            |length| format!("is {length} bytes, over"),
        );
        Refusal {
            close: true,
            ..Refusal::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "Payload Too Large: the request body {size} this server's limit of {max} bytes (`--max-body-bytes`, `HttpOptions::max_body_bytes`). Nothing was done. Send a smaller request (fewer or shorter arguments), or ask whoever runs the server to raise the limit"
                ),
            )
        }
    }

    pub(crate) fn into_response(self) -> HttpResponse {
        let mut response = plain(self.status, self.text);
        let headers = response.headers_mut();
        if let Some(error) = self.challenge {
            let challenge = match error {
                Some(error) => format!("Bearer realm=\"xcsh\", error=\"{error}\""),
                None => "Bearer realm=\"xcsh\"".to_owned(),
            };
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                headers.insert(header::WWW_AUTHENTICATE, value);
            }
        }
        if self.close {
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// A header value as quoted back in an answer: at most 100 characters, controls replaced.
fn shown(text: &str) -> String {
    text.chars()
        .take(100)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}
