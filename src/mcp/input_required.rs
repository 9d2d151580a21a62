//! Asking a person on protocol 2026-07-28: `resolve` answers with an input-required result
//! (SEP-2322) instead of sending `elicitation/create`, which that revision removed.
//!
//! 1. The model's `resolve apply` needs a person (policy `human`, or a rule that asks). The
//!    call runs with an [`Asking`] approver, which records what the person would be asked
//!    and answers [`ApprovalAnswer::Deferred`]: nothing is written, the action stays pending.
//!    The server answers the call with an `InputRequiredResult`: the elicitation form under
//!    [`INPUT_KEY`], and a `requestState` sealed by the server ([`RequestStateCodec`],
//!    HMAC-SHA256) that names the stack, the action and its effect digest, with a nonce, and
//!    expires with the question ([`ANSWER_WAIT`]).
//! 2. The client asks its user and retries the same call with the answer and the state.
//!    [`Approvals::answered`] opens the state (refusing a forged, altered, expired, replayed
//!    or other stack's one) and the call runs with an [`Answering`] approver, which gives
//!    the person's answer only for that action with that digest; for anything else it is no
//!    answer. The apply's own digest check still stands after it.
//!
//! Decline, cancel and a missing answer behave as on the `initialize` lifecycle.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{
    ElicitRequest, ElicitResult, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    RequestStateCodec, RequestStateError, SealOptions,
};
use serde::{Deserialize, Serialize};
use xcsh_core::BoxFuture;
use xcsh_core::approval::{ApprovalAnswer, ApprovalRequest, Approver};

use super::elicitation;

/// The key of the approval form among an input-required result's requests.
pub(crate) const INPUT_KEY: &str = "approval";

/// How long a person has to answer: the sealed state expires then.
pub(crate) const ANSWER_WAIT: Duration = Duration::from_secs(15 * 60);

/// The key file under a state directory, so that a restarted server still opens the
/// states it sealed.
const KEY_FILE: &str = "request-state.key";

/// Beside it, the nonces of the states answered, so that one is not answered twice across a
/// restart either: a line of `<nonce> <expiry, unix ms>` each.
const USED_FILE: &str = "request-state.used";

/// What a sealed request state holds.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sealed {
    /// The pending action's id.
    id: u64,
    /// Its effect digest when the person was asked.
    digest: String,
    /// Single use.
    nonce: String,
}

/// The server's approvals on protocol 2026-07-28: its sealing key and the nonces used.
pub(crate) struct Approvals {
    codec: RequestStateCodec,
    /// Nonces answered, with when they stop mattering (the state expires then).
    used: Mutex<HashMap<String, SystemTime>>,
    /// Where they are kept, under `--state`.
    used_file: Option<PathBuf>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").finish_non_exhaustive()
    }
}

/// `len` random bytes from the operating system.
pub(crate) fn random_bytes(len: usize) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0; len];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("no randomness: {e}")))?;
    Ok(bytes)
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Approvals {
    /// A fresh key for this process: states it seals open only here.
    pub(crate) fn new() -> io::Result<Self> {
        Self::with_key(random_bytes(32)?, None)
    }

    /// The key kept in `dir` (made there, readable by its owner only, when missing): states
    /// sealed before a restart still open after it.
    pub(crate) fn kept_in(dir: &Path) -> io::Result<Self> {
        let path = dir.join(KEY_FILE);
        let key = match std::fs::read(&path) {
            Ok(key) if key.len() >= RequestStateCodec::MIN_KEY_LENGTH => key,
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "`{}` is too short to be a sealing key; remove it (a new one is made) and restart",
                    path.display()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let key = random_bytes(32)?;
                write_private(&path, &key)?;
                key
            }
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot read `{}`: {e}", path.display()),
                ));
            }
        };
        Self::with_key(key, Some(dir.join(USED_FILE)))
    }

    fn with_key(key: Vec<u8>, used_file: Option<PathBuf>) -> io::Result<Self> {
        let codec = RequestStateCodec::try_new(key).map_err(io::Error::other)?;
        let used = match &used_file {
            Some(path) => read_used(path)?,
            None => HashMap::new(),
        };
        Ok(Approvals {
            codec,
            used: Mutex::new(used),
            used_file,
        })
    }

    /// The input-required answer asking about `request` on the stack named `stack`.
    pub(crate) fn input_required(
        &self,
        stack: &str,
        request: &ApprovalRequest,
    ) -> io::Result<InputRequiredResult> {
        let sealed = Sealed {
            id: request.summary.id.get(),
            digest: request.effect_digest.clone(),
            nonce: hex(&random_bytes(16)?),
        };
        let options = SealOptions::new()
            .associated_data(stack.as_bytes())
            .ttl(ANSWER_WAIT);
        let state = self
            .codec
            .seal_json_with(&sealed, &options)
            .map_err(io::Error::other)?;
        let mut requests = InputRequests::new();
        requests.insert(
            INPUT_KEY.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(elicitation::form_params(request))),
        );
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// The approver for the retry that carries `state` and `responses`, on the stack named
    /// `stack`, and the id of the action it answers for; or why the state is refused (the
    /// message for the model: nothing was written, ask again).
    pub(crate) fn answered(
        &self,
        stack: &str,
        state: &str,
        responses: Option<&InputResponses>,
    ) -> Result<Answering, String> {
        let refused = |why: &str| {
            format!(
                "Not approved: the answer to the approval question cannot be used: {why}. Nothing was written, and the action is still pending. Call `resolve` with action \"apply\" again to ask the person anew, or \"discard\" it."
            )
        };
        let sealed: Sealed = self
            .codec
            .open_json_with(state, stack.as_bytes())
            .map_err(|e| {
                refused(match e {
                    RequestStateError::Expired => "the question expired before the answer came",
                    _ => {
                        "its request state is not one this server issued for this conversation (altered, forged, from another conversation, or from a server restarted without --state)"
                    }
                })
            })?;
        {
            let now = SystemTime::now();
            let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
            used.retain(|_, until| *until > now);
            if used.contains_key(&sealed.nonce) {
                return Err(refused("that answer was used already"));
            }
            let until = now + ANSWER_WAIT;
            // On disk before it counts: a restart must not make it usable again.
            if let Some(path) = &self.used_file {
                append_used(path, &sealed.nonce, until)
                    .map_err(|e| refused(&format!("it cannot be recorded as used ({e})")))?;
            }
            used.insert(sealed.nonce.clone(), until);
        }
        let answer = match responses.and_then(|r| r.get(INPUT_KEY)) {
            None => None,
            Some(value) => Some(
                serde_json::from_value::<ElicitResult>(value.clone()).map_err(|e| {
                    refused(&format!(
                        "the client's answer is not an elicitation result ({e})"
                    ))
                })?,
            ),
        };
        Ok(Answering {
            id: sealed.id,
            digest: sealed.digest,
            answer,
        })
    }
}

/// The unexpired nonces recorded in `path` (none when it is missing); rewritten without the
/// expired ones.
fn read_used(path: &Path) -> io::Result<HashMap<String, SystemTime>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot read `{}`: {e}", path.display()),
            ));
        }
    };
    let now = SystemTime::now();
    let used: HashMap<String, SystemTime> = text
        .lines()
        .filter_map(|line| {
            let (nonce, until) = line.split_once(' ')?;
            let until = UNIX_EPOCH + Duration::from_millis(until.trim().parse().ok()?);
            (until > now).then(|| (nonce.to_owned(), until))
        })
        .collect();
    let kept: String = used
        .iter()
        .map(|(nonce, until)| format!("{nonce} {}\n", millis(*until)))
        .collect();
    let fresh = path.with_extension("used.new");
    std::fs::write(&fresh, kept).and_then(|()| std::fs::rename(&fresh, path))?;
    Ok(used)
}

fn millis(time: SystemTime) -> u128 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis())
}

/// Records `nonce` as used until `until`, synced.
fn append_used(path: &Path, nonce: &str, until: SystemTime) -> io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::File::options();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(format!("{nonce} {}\n", millis(until)).as_bytes())?;
    file.sync_data()
}

/// Writes `bytes` to a new file at `path`, readable and writable by its owner only.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| {
        io::Error::new(e.kind(), format!("cannot create `{}`: {e}", path.display()))
    })?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// The first round's approver: records what the person is to be asked, and defers. A client
/// that cannot show a form makes it answer that nobody can be asked.
pub(crate) struct Asking {
    pub(crate) can_ask: bool,
    pub(crate) asked: Arc<Mutex<Option<ApprovalRequest>>>,
}

impl Approver for Asking {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            if !self.can_ask {
                return elicitation::unavailable();
            }
            *self.asked.lock().unwrap_or_else(PoisonError::into_inner) = Some(request.clone());
            ApprovalAnswer::Deferred
        })
    }
}

/// The retry's approver: the person's answer, for the action and effect it was given for.
#[derive(Debug)]
pub(crate) struct Answering {
    /// The action the person was asked about.
    pub(crate) id: u64,
    digest: String,
    answer: Option<ElicitResult>,
}

impl Approver for Answering {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            // An answer about another action, or the same one with another effect, is none.
            if request.summary.id.get() != self.id || request.effect_digest != self.digest {
                return ApprovalAnswer::Cancel;
            }
            match &self.answer {
                Some(result) => elicitation::answer(request, result.clone()),
                None => ApprovalAnswer::Cancel,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use xcsh_core::{AgentToolResult, PendingAction, PendingActionStore, ToolError};

    fn request(digest: &str) -> ApprovalRequest {
        struct Edit;
        impl PendingAction for Edit {
            fn label(&self) -> String {
                "Edit".into()
            }
            async fn apply(&mut self, _: &str) -> Result<AgentToolResult, ToolError> {
                Ok(().into())
            }
        }
        let store = PendingActionStore::new();
        store.push(Edit);
        ApprovalRequest {
            summary: store.peek().expect("pushed"),
            reason: "r".into(),
            effect_digest: digest.into(),
            rule: None,
        }
    }

    fn accept() -> InputResponses {
        let mut responses = InputResponses::new();
        responses.insert(INPUT_KEY.into(), json!({"action": "accept", "content": {}}));
        responses
    }

    #[tokio::test]
    async fn a_sealed_state_answers_once_for_its_stack_action_and_effect() {
        let approvals = Approvals::new().unwrap();
        let asked = request("sha256:a");
        let result = approvals.input_required("stack-1", &asked).unwrap();
        let state = result.request_state.clone().unwrap();
        let form = serde_json::to_value(&result.input_requests.unwrap()[INPUT_KEY]).unwrap();
        assert_eq!(form["method"], "elicitation/create");
        assert_eq!(form["params"]["mode"], "form");

        // Another stack's, or an altered state: refused.
        let err = approvals
            .answered("stack-2", &state, Some(&accept()))
            .unwrap_err();
        assert!(err.contains("not one this server issued"), "{err}");
        let mut altered = state.clone();
        altered.replace_range(altered.len() - 2.., "AA");
        assert!(
            approvals
                .answered("stack-1", &altered, Some(&accept()))
                .is_err()
        );
        // Another server's key: refused.
        let other = Approvals::new().unwrap();
        assert!(other.answered("stack-1", &state, Some(&accept())).is_err());

        let answering = approvals
            .answered("stack-1", &state, Some(&accept()))
            .unwrap();
        assert_eq!(answering.ask(&asked).await, ApprovalAnswer::accept(&asked));
        // Only for that effect.
        assert_eq!(
            answering.ask(&request("sha256:b")).await,
            ApprovalAnswer::Cancel
        );
        // Once.
        let err = approvals
            .answered("stack-1", &state, Some(&accept()))
            .unwrap_err();
        assert!(err.contains("used already"), "{err}");
    }

    #[tokio::test]
    async fn a_missing_answer_is_no_decision_and_a_decline_is_no() {
        let approvals = Approvals::new().unwrap();
        let asked = request("sha256:a");
        let state = |a: &Approvals| {
            a.input_required("s", &asked)
                .unwrap()
                .request_state
                .unwrap()
        };
        let none = approvals.answered("s", &state(&approvals), None).unwrap();
        assert_eq!(none.ask(&asked).await, ApprovalAnswer::Cancel);
        let mut declined = InputResponses::new();
        declined.insert(
            INPUT_KEY.into(),
            json!({"action": "decline", "content": {"comment": "no"}}),
        );
        let no = approvals
            .answered("s", &state(&approvals), Some(&declined))
            .unwrap();
        assert_eq!(
            no.ask(&asked).await,
            ApprovalAnswer::Decline {
                message: Some("no".into())
            }
        );
    }

    #[test]
    fn a_kept_key_opens_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let asked = request("sha256:a");
        let state = Approvals::kept_in(dir.path())
            .unwrap()
            .input_required("s", &asked)
            .unwrap()
            .request_state
            .unwrap();
        let again = Approvals::kept_in(dir.path()).unwrap();
        assert!(again.answered("s", &state, None).is_ok());
        // Answered once, it stays answered after another restart.
        let third = Approvals::kept_in(dir.path()).unwrap();
        let err = third.answered("s", &state, None).unwrap_err();
        assert!(err.contains("used already"), "{err}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(dir.path().join(KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
