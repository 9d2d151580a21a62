//! Running the engine from an async tool call: off the async threads, cancellable, with
//! progress forwarded to the call's listener.

use std::sync::atomic::{AtomicUsize, Ordering};

use xcsh_core::{ToolContext, ToolError};

use crate::engine::{CancelFlag, Control, Lang, ParseCache, Progress, Scope};
use crate::workspace::Workspace;

/// Progress is reported at most once per this many scanned files: per-file notifications
/// would flood an MCP client on a large tree.
const PROGRESS_EVERY: usize = 256;

/// The workspace of a call, or an error the model can act on.
pub(crate) fn workspace(ctx: &ToolContext) -> Result<Workspace, ToolError> {
    Workspace::new(ctx.workspace_root()).map_err(|e| {
        ToolError::new(format!(
            "the workspace root is not usable: {e}; start the session with an existing directory as its root"
        ))
    })
}

/// The part of the workspace a call covers: its optional `path` and `glob` parameters.
pub(crate) fn scope<'a>(
    ws: &'a Workspace,
    path: Option<&'a str>,
    glob: Option<&'a str>,
) -> Scope<'a> {
    let mut scope = Scope::root(ws);
    if let Some(path) = path {
        scope = scope.with_path(path);
    }
    if let Some(glob) = glob {
        scope = scope.with_glob(glob);
    }
    scope
}

/// The schema's description of `lang`: the compiled languages, from [`Lang::ALL`].
pub(crate) fn lang_description(what: &str) -> String {
    let names: Vec<&str> = Lang::ALL.iter().map(|l| l.name()).collect();
    let list = match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("Language of the {what}: {list}. Inferred from each file's extension when omitted.")
}

/// Parses the optional `lang` parameter; the error lists the supported languages.
pub(crate) fn parse_lang(lang: Option<&str>) -> Result<Option<Lang>, ToolError> {
    lang.map(|name| {
        // The engine's message already names the field.
        name.parse::<Lang>()
            .map_err(|e| ToolError::new(e.to_string()))
    })
    .transpose()
}

/// Checks the optional `limit` parameter (≥ 1) and makes it a count.
pub(crate) fn parse_limit(limit: Option<u64>) -> Result<Option<usize>, ToolError> {
    match limit {
        None => Ok(None),
        Some(0) => Err(ToolError::new(
            "limit: must be at least 1; leave it out for no limit",
        )),
        Some(n) => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
    }
}

/// Runs `work` on the blocking pool with a [`Control`] wired to the call: the call's
/// cancellation stops the walk at the next file, and progress reaches the call's listener.
pub(crate) async fn run_engine<T, F>(ctx: &ToolContext, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&Control<'_>) -> T + Send + 'static,
{
    let flag = CancelFlag::default();
    let watcher = {
        let flag = flag.clone();
        let token = ctx.cancellation().clone();
        tokio::spawn(async move {
            token.cancelled().await;
            flag.cancel();
        })
    };
    let ctx_for_progress = ctx.clone();
    let wants_progress = ctx.wants_progress();
    let outcome = tokio::task::spawn_blocking(move || {
        let last = AtomicUsize::new(0);
        let report = |p: Progress| {
            let previous = last.load(Ordering::Relaxed);
            if p.files_scanned >= previous + PROGRESS_EVERY
                && last
                    .compare_exchange(
                        previous,
                        p.files_scanned,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    )
                    .is_ok()
            {
                ctx_for_progress.report_progress(
                    p.files_scanned as f64,
                    None,
                    Some(format!(
                        "{} files scanned, {} with matches",
                        p.files_scanned, p.files_matched
                    )),
                );
            }
        };
        let control = Control {
            cancel: Some(&flag),
            progress: if wants_progress { Some(&report) } else { None },
        };
        work(&control)
    })
    .await;
    watcher.abort();
    outcome.map_err(|join| {
        if join.is_panic() {
            ToolError::new(format!(
                "the search failed unexpectedly ({join}); nothing was changed"
            ))
        } else {
            ToolError::cancelled()
        }
    })
}

/// `n thing` / `n things`.
pub(crate) fn plural(n: usize, singular: &str) -> String {
    if n == 1 {
        format!("{n} {singular}")
    } else {
        format!("{n} {singular}s")
    }
}

/// Files named per note (skipped files, parse errors) before the rest are only counted.
const NAMED_PER_NOTE: usize = 20;

/// Names the first entries of a list and counts the rest.
pub(crate) fn first_of(list: &[String]) -> String {
    let max = NAMED_PER_NOTE;
    let shown = list
        .iter()
        .take(max)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > max {
        format!("{shown} and {} more", list.len() - max)
    } else {
        shown
    }
}

/// For an answer that found nothing with an explicit language: what each pattern parsed as,
/// so a model can see why it matched nothing (`None` without a language: a pattern is read
/// in every language then, and one line each would say little).
pub(crate) fn no_match_note(patterns: &[String], lang: Option<Lang>) -> Option<String> {
    let lang = lang?;
    let shapes: Vec<String> = patterns
        .iter()
        .filter_map(|p| crate::engine::pattern_shape(p, lang))
        .collect();
    (!shapes.is_empty()).then(|| {
        format!(
            "{}. A pattern is code: it matches nodes of the same kind and shape, so write it as the code appears (a metavariable `$X` for one node, `$$$X` for a list).",
            shapes.join(". ")
        )
    })
}

/// The session's [`ParseCache`] (registered as an extension), else the process-wide one.
pub(crate) fn parse_cache(ctx: &ToolContext) -> ParseCache {
    ctx.extension::<ParseCache>()
        .unwrap_or_else(|| ParseCache::global())
        .clone()
}
