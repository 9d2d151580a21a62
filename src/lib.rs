//! xcsh: the framework for the tools LLM coding agents call.
//!
//! Annotate a struct with [`custom_tool`](macro@custom_tool) and get its JSON parameter
//! schema, argument decoding and registration. Destructive tools compute a preview and push a
//! [`PendingAction`] (write one with [`pending`](macro@pending)); the hidden `resolve` tool
//! applies or discards it, and while anything is pending [`Session::tool_choice`] forces
//! `resolve` in each provider's own format.
//!
//! The root holds what a tool author names in a normal program; the rest lives in modules
//! named after their concept:
//!
//! | module | holds |
//! |---|---|
//! | [`pending`](mod@pending) | the pending-action stack, `resolve` and its exact strings |
//! | [`approval`] | approval policies, approvers, rules and the audit log |
//! | [`session`] | sessions, registries, call options, extensions, progress; `Session::turn`: a provider's response in, the messages answering its tool calls out |
//! | [`tool`] | the tool traits, results, errors, suites and schemas |
//! | [`dialect`] | provider dialects: definitions, schema lowering, argument restoring |
//! | [`tools`] | the built-in `ast_edit`, `ast_grep` and `undo` (feature `tools`) |
//! | [`changeset`] | stale-safe, all-or-nothing multi-file edits (feature `tools`) |
//! | [`mcp`] | serving tools over the Model Context Protocol (feature `mcp`) |
//! | `rig` | rig agents with xcsh tools, `resolve` forced while pending (feature `rig`) |
//! | `testing` | fault injection and dialect validators for tests (feature `testing`) |
//!
//! # Features
//!
//! | feature | default | brings |
//! |---|---|---|
//! | `macros` | yes | `#[custom_tool]`, `#[pending]`, `#[tool_param]`, `suite!` |
//! | `tools` | yes | [`tools`] and [`changeset`] (ast-grep and its tree-sitter grammars) |
//! | `mcp` | yes | [`mcp`] over stdio or any rmcp transport (rmcp; no HTTP stack) |
//! | `http` | yes | [`mcp`] over Streamable HTTP (`McpServer::serve_http`, `mcp::HttpOptions`: hyper) |
//! | `tls` | yes | HTTPS for [`mcp`]'s HTTP server (`mcp::TlsIdentity`: rustls on `ring`) |
//! | `cli` | yes | the `xcsh` binary (clap), with `tools`, `mcp`, `http` and `tls` |
//! | `rig` | no | `rig`: a session's tools as rig tools, and the hook forcing `resolve` |
//! | `testing` | no | `testing`: fault plans and dialect validators |
//!
//! A crate that only defines tools needs
//! `xcsh = { version = "0.1", default-features = false, features = ["macros"] }`: it builds
//! the runtime and the macros, and none of rmcp, hyper, clap or tree-sitter.

#![cfg_attr(docsrs, feature(doc_auto_cfg))]
#![forbid(unsafe_code)]

#[cfg(feature = "macros")]
#[doc(inline)]
pub use xcsh_macros::{custom_tool, pending, suite, tool_param};

#[doc(inline)]
pub use xcsh_core::{
    AgentToolResult, CustomTool, Dialect, ErrorKind, PendingAction, ResolveAction, Session, Tool,
    ToolContext, ToolError, ToolSuite,
};

/// serde_json, for building arguments and reading results without a direct dependency.
pub use serde_json;

/// The pending-action stack and `resolve`: what waits for a decision, and the only way to
/// take it off ([`resolve()`](pending::resolve) or [`Session::resolve`]).
pub mod pending {
    #[doc(inline)]
    pub use xcsh_core::{
        APPLY_FAILED_PREFIX, DEFAULT_SOURCE_TOOL_NAME, Effect, EffectKind, EffectSource,
        FileEffect, NOTHING_PENDING, PendingAction, PendingActionStore, PendingEvent, PendingFn,
        PendingId, PendingSummary, RESOLVE_REMINDER, RESOLVE_TOOL_LABEL, RESOLVE_TOOL_NAME,
        Reminders, Resolution, ResolutionView, ResolveAction, ResolveArgs, ResolveError,
        ResolveTool, STORE_UNAVAILABLE, describe_with_stack, resolve, resolve_files,
    };
    /// Durable pending stacks: kept in a state directory across restarts
    /// ([`Registry::durable_session`](crate::session::Registry::durable_session),
    /// `#[pending(durable)]`).
    pub mod durable {
        #[doc(inline)]
        pub use xcsh_core::durable::{DurableState, StateError};
    }
}

/// Approval policies: who may let `resolve` apply an action (the model, a person through an
/// [`Approver`](approval::Approver), or rules on the effect), and an audit trail of every
/// decision. See `docs/APPROVALS.md`.
pub mod approval {
    #[doc(inline)]
    pub use xcsh_core::approval::{
        ApprovalAnswer, ApprovalPolicy, ApprovalPrompt, ApprovalRequest, Approver, AuditLog,
        ChannelApprover, Decision, EffectFacts, PolicyError, Rule, RuleMatch, RulePolicy,
        TerminalApprover, default_effect_digest, sha256_hex,
    };
}

/// Sessions and the registries they share: building, calling, tool choice, extensions,
/// progress and cancellation; and the agent loop's other half, [`Session::turn`]: a
/// provider's response in, its tool calls run (read-only ones concurrently), the messages
/// answering them out in that provider's request format, with the next tool choice.
pub mod session {
    #[doc(inline)]
    pub use xcsh_core::turn::{
        AnsweredCall, ToolCall, Turn, TurnError, parse_calls, render_results,
    };
    #[doc(inline)]
    pub use xcsh_core::{
        BuildError, CallOptions, CancellationToken, DialectNotEnabled, Extensions,
        MAX_ARGUMENT_DEPTH, Progress, ProgressSink, Registry, ResolveBias, Session, SessionBuilder,
    };
}

/// Tools: the traits, what they return, how they fail, suites, and parameter schemas.
pub mod tool {
    #[doc(inline)]
    pub use xcsh_core::schema::{cached_schema_for, schema_for};
    /// Path confinement for tools that touch files: paths a model gives, resolved inside the
    /// workspace root (no `..`, absolute paths or links out), with the `macros` feature alone.
    #[doc(inline)]
    pub use xcsh_core::workspace::{PathError, Workspace, WorkspaceError, is_temp_artifact};
    #[doc(inline)]
    pub use xcsh_core::{
        AgentToolResult, BoxFuture, Content, CustomTool, ErrorKind, IntoToolResult, JsonObject,
        Suite, Tool, ToolAnnotations, ToolContext, ToolError, ToolSuite, decode_arguments,
        registered_suite, validate_tool_name,
    };
    #[doc(inline)]
    pub use xcsh_core::{
        RESOURCE_SCHEME, Resource, ResourceBody, ResourceContents, ResourceError, ResourceInfo,
        resource_part_uri,
    };
}

/// Provider dialects: tool definitions in each provider's request shape, schema lowering,
/// and restoring arguments sent in a dialect's strict form.
pub mod dialect {
    #[doc(inline)]
    pub use xcsh_core::dialect::{
        Dialect, FieldPath, LowerError, LowerErrorKind, ParseDialectError, PathSegment, Provider,
        ToolMeta, gemini_tools, lower_schema, restore_arguments, tool_definition,
    };
}

/// The built-in tools: `ast_edit`, `ast_grep`, `apply_patch`, `edit`, `write_file` and
/// `undo`, their structured outputs, the syntax guard on their changes, and the ast-grep
/// engine they share (their path confinement is [`tool::Workspace`]).
#[cfg(feature = "tools")]
pub mod tools {
    #[doc(inline)]
    pub use xcsh_tools::{
        APPLY_PATCH, AST_EDIT, AST_GREP, ApplyPatch, AstEdit, AstEditOp, AstGrep, AstToolsConfig,
        EDIT, Edit, UNDO, UndoLast, WRITE_FILE, WriteFile, builtin_suite, preview_notes,
        render_matches, render_near_misses, render_preview, summary,
    };

    /// The syntax guard: whether each file a change set writes still parses, and where a
    /// change introduces a syntax error.
    pub mod syntax {
        #[doc(inline)]
        pub use xcsh_tools::syntax::{
            FileSyntax, SyntaxError, SyntaxGuard, SyntaxProblem, SyntaxReport, SyntaxVerdict,
        };
    }
    #[doc(inline)]
    pub use xcsh_tools::{
        CaptureSummary, ChangeOutput, ChangeStatus, ChangeTotals, FileChange, MAX_OUTPUT_BYTES,
        MatchSummary, SearchOutput, SearchTotals, preview_resource,
    };

    /// The ast-grep engine `ast_edit` and `ast_grep` share: plan an edit or a search over a
    /// [`Scope`](engine::Scope) of the workspace, preview it, find near misses.
    pub mod engine {
        #[doc(inline)]
        pub use xcsh_tools::engine::{
            CacheStats, CancelFlag, Capture, Control, DEFAULT_CACHE_BYTES, EditPlan, EditRequest,
            EditTotals, EngineError, FileEdit, Lang, LimitReport, MAX_NEAR_MISSES, Match, NearMiss,
            Op, ParseCache, Progress, Replacement, Scope, SearchRequest, SearchResult,
            SearchTotals, Skipped, SyntaxErrorNode, WalkOptions, Within, near_misses, plan_edits,
            search, syntax_errors,
        };

        /// Showing a plan: unified diffs for people and models, its details for interfaces.
        pub mod preview {
            #[doc(inline)]
            pub use xcsh_tools::engine::preview::{
                Details, FileDetails, FilePreview, ReplacementDetail, details, file_previews,
                try_unified_diff, unified_diff,
            };
        }
    }
}

/// Stale-safe, all-or-nothing multi-file edits: what `ast_edit` applies, and what any tool
/// can use for its own preview and apply; [`recover`](changeset::recover) finishes or undoes
/// an apply a crash interrupted; [`Undo`](changeset::Undo) reverts the most recent apply.
#[cfg(feature = "tools")]
pub mod changeset {
    #[doc(inline)]
    pub use xcsh_tools::changeset::{
        ApplyError, ApplyReport, Attention, ChangeSet, ChangeSetError, Fingerprint, Recovered,
        RecoveryError, RecoveryReport, Splice, StaleFile, StaleReason, Undo, UndoEntry, UndoError,
        UndoLimits, recover,
    };
}

#[cfg(feature = "mcp")]
pub mod mcp;

#[cfg(feature = "rig")]
pub mod rig;

/// Machinery for tests: fault plans that fail a [`ChangeSet`](crate::changeset::ChangeSet)
/// apply at a chosen step, and validators that check definitions against each provider's
/// rules.
#[cfg(feature = "testing")]
pub mod testing {
    #[doc(inline)]
    pub use xcsh_core::dialect::validate;
    #[cfg(feature = "tools")]
    #[doc(inline)]
    pub use xcsh_tools::changeset::FaultPlan;
}

// Keeps the README's examples compiling: they run as doc tests.
#[cfg(all(doctest, feature = "macros", feature = "tools"))]
#[doc = include_str!("../README.md")]
#[doc(hidden)]
pub struct ReadmeDoctests;

/// Paths the macros' generated code uses, so a user's crate needs only `xcsh` (under any
/// name) as a dependency. Not public API.
// Shorter paths in the diagnostics of generated code (`xcsh::__macro_support::…`).
#[doc(hidden)]
pub use xcsh_core::__macro_support;

#[doc(hidden)]
pub mod __private {
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use xcsh_core;
}
