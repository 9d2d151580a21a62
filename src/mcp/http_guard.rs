//! The checks every HTTP request passes before rmcp sees it, in this order: its `Host`
//! (DNS rebinding), its `Origin` (a browser page of another site), its bearer token, and the
//! size of its body. Each refusal says what was wrong and what to send instead, and nothing
//! behind it runs.
//!
//! A refusal is plain text, except to an MCP client's POST (its `Accept` names
//! `application/json`): that one gets the same sentence as a JSON-RPC error (`id: null`) with
//! the same status. MCP clients show such an error's message; a plain-text body they replace
//! with a message of their own (the Python SDK says "Server returned an error response"), and
//! the person would never learn that a token was missing.

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, Response, StatusCode};
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
    pub(crate) fn new(status: StatusCode, text: String) -> Self {
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

    pub(crate) fn into_response(self, form: Form) -> HttpResponse {
        let mut response = match form {
            Form::Plain => plain(self.status, self.text),
            Form::JsonRpc => json_rpc_error(self.status, self.text),
        };
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

/// How a refusal is written, for the client that sent the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Plain,
    /// A JSON-RPC error, for an MCP client's POST.
    JsonRpc,
}

impl Form {
    pub(crate) fn of<B>(request: &Request<B>) -> Form {
        let accepts_json = request
            .headers()
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|media| {
                media
                    .split(';')
                    .next()
                    .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
            });
        if request.method() == hyper::Method::POST && accepts_json {
            Form::JsonRpc
        } else {
            Form::Plain
        }
    }
}

/// `text` as a JSON-RPC error answering a request whose id was not read, with `status`.
fn json_rpc_error(status: StatusCode, text: String) -> HttpResponse {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": INVALID_REQUEST,
            "message": text,
            "data": {"httpStatus": status.as_u16()},
        },
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// JSON-RPC's "Invalid Request": the request was refused before it was read.
const INVALID_REQUEST: i32 = -32600;

/// A header value as quoted back in an answer: at most 100 characters, controls replaced.
fn shown(text: &str) -> String {
    text.chars()
        .take(100)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}
