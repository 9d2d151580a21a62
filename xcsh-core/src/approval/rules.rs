//! The rules of [`ApprovalPolicy::Rules`](super::ApprovalPolicy::Rules): a TOML file of
//! allow / ask / deny rules, judged on the effect, first match wins.

use std::fmt;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::action::PendingSummary;

/// What a rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Apply without asking.
    Allow,
    /// Ask a person (the session's approver).
    Ask,
    /// Do not apply: the action is discarded and the model told which rule denied it.
    Deny,
}

impl Decision {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// What the rules look at, read from an action's declared [`Effect`](crate::Effect) (never from
/// its details): the tool that pushed it, every path it touches (move targets included), the
/// changed lines when known, and whether the action declared its effect at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectFacts {
    /// The source tool name.
    pub tool: String,
    /// Root-relative paths of the files the effect touches.
    pub files: Vec<String>,
    /// Changed lines, when known for every file.
    pub changed_lines: Option<usize>,
    /// Whether the action declared its effect. An undeclared one touches unknown files: no
    /// `paths` rule can allow it, and the approval gate asks (or denies when nobody can be
    /// asked) rather than allow it.
    pub known: bool,
}

impl EffectFacts {
    /// Reads the facts of an action.
    ///
    /// ```
    /// use xcsh_core::approval::EffectFacts;
    /// use xcsh_core::{AgentToolResult, Effect, FileEffect, PendingAction, PendingActionStore, ToolError};
    ///
    /// struct Rotate;
    /// impl PendingAction for Rotate {
    ///     fn label(&self) -> String { "Rotate".into() }
    ///     async fn apply(&mut self, _: &str) -> Result<AgentToolResult, ToolError> { Ok(().into()) }
    ///     // Details named anything: the rules do not read them.
    ///     fn details(&self) -> Option<serde_json::Value> { Some(serde_json::json!(["secrets/key"])) }
    ///     fn effect(&self) -> Effect { Effect::files([FileEffect::modify("secrets/key")]) }
    /// }
    /// let store = PendingActionStore::new();
    /// store.push(Rotate);
    /// let facts = EffectFacts::of(&store.peek().unwrap());
    /// assert_eq!(facts.files, ["secrets/key"]);
    /// assert!(facts.known);
    /// ```
    pub fn of(summary: &PendingSummary) -> Self {
        EffectFacts {
            tool: summary.source_tool_name.clone(),
            files: summary.effect.paths().map(str::to_owned).collect(),
            changed_lines: summary.effect.changed_lines(),
            known: summary.effect.is_known(),
        }
    }
}

/// One rule: a decision and the conditions under which it applies (all of them; a rule with
/// none matches everything).
#[derive(Debug, Clone)]
pub struct Rule {
    name: String,
    decision: Decision,
    tools: Option<Vec<String>>,
    paths: Option<GlobSet>,
    min_files: Option<usize>,
    max_files: Option<usize>,
    min_lines: Option<usize>,
    max_lines: Option<usize>,
}

impl Rule {
    /// The rule's name, as reported.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it decides.
    pub fn decision(&self) -> Decision {
        self.decision
    }

    /// Whether the rule applies to an effect. `paths` must match *every* file for an `allow`
    /// rule (one file outside the globs is not allowed by it) and *any* file for `ask` and
    /// `deny`; an effect that names no files matches no `paths` condition. `min_lines` and
    /// `max_lines` do not match an effect whose changed lines are unknown.
    pub fn matches(&self, facts: &EffectFacts) -> bool {
        if let Some(tools) = &self.tools
            && !tools.iter().any(|t| t == &facts.tool)
        {
            return false;
        }
        if let Some(globs) = &self.paths {
            let hit = |f: &String| globs.is_match(f.trim_start_matches("./"));
            let ok = match self.decision {
                Decision::Allow => !facts.files.is_empty() && facts.files.iter().all(hit),
                Decision::Ask | Decision::Deny => facts.files.iter().any(hit),
            };
            if !ok {
                return false;
            }
        }
        let files = facts.files.len();
        if self.min_files.is_some_and(|min| files < min)
            || self.max_files.is_some_and(|max| files > max)
        {
            return false;
        }
        if self.min_lines.is_some() || self.max_lines.is_some() {
            let Some(lines) = facts.changed_lines else {
                return false;
            };
            if self.min_lines.is_some_and(|min| lines < min)
                || self.max_lines.is_some_and(|max| lines > max)
            {
                return false;
            }
        }
        true
    }
}

/// What the rules decided about an effect, and which rule decided it (`default` when none
/// matched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleMatch {
    /// The decision.
    pub decision: Decision,
    /// The rule's name.
    pub rule: String,
}

/// The rules of a policy file, in order, and the decision when none matches.
///
/// ```
/// use xcsh_core::approval::{Decision, EffectFacts, RulePolicy};
///
/// let policy = RulePolicy::parse(r#"
/// default = "ask"
///
/// [[rule]]
/// name = "no-secrets"
/// decision = "deny"
/// paths = ["**/.env", "secrets/**"]
///
/// [[rule]]
/// name = "small-edits"
/// decision = "allow"
/// tools = ["ast_edit"]
/// max_files = 2
/// max_lines = 10
/// "#, "policy.toml").unwrap();
///
/// let facts = EffectFacts { tool: "ast_edit".into(), files: vec!["src/a.rs".into()], changed_lines: Some(3), known: true };
/// assert_eq!(policy.decide(&facts).rule, "small-edits");
/// let secret = EffectFacts { files: vec!["secrets/key".into()], ..facts.clone() };
/// assert_eq!(policy.decide(&secret).decision, Decision::Deny);
///
/// let err = RulePolicy::parse("[[rule]]\nname = \"x\"\ndecision = \"maybe\"\n", "p.toml").unwrap_err();
/// assert_eq!(err.line(), Some(3));
/// ```
#[derive(Debug, Clone)]
pub struct RulePolicy {
    rules: Vec<Rule>,
    default: Decision,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    #[serde(default)]
    default: Option<Decision>,
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    name: toml::Spanned<String>,
    decision: Decision,
    #[serde(default, alias = "tool")]
    tools: Option<OneOrMany>,
    #[serde(default)]
    paths: Option<Vec<toml::Spanned<String>>>,
    min_files: Option<usize>,
    max_files: Option<usize>,
    min_lines: Option<usize>,
    max_lines: Option<usize>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl RulePolicy {
    /// Parses a policy file's text; `origin` names it in errors (a path).
    pub fn parse(text: &str, origin: &str) -> Result<Self, PolicyError> {
        let at = |span: std::ops::Range<usize>, message: String| {
            PolicyError::at(origin, text, span.start, message)
        };
        let spec: FileSpec = toml::from_str(text).map_err(|e| match e.span() {
            Some(span) => at(span, e.message().trim().to_owned()),
            None => PolicyError {
                origin: origin.to_owned(),
                line: None,
                column: None,
                message: e.message().trim().to_owned(),
            },
        })?;
        let mut rules = Vec::with_capacity(spec.rule.len());
        for rule in spec.rule {
            let name = rule.name.get_ref().trim().to_owned();
            if name.is_empty() {
                return Err(at(
                    rule.name.span(),
                    "a rule's `name` must not be empty".into(),
                ));
            }
            if rules.iter().any(|r: &Rule| r.name == name) {
                return Err(at(
                    rule.name.span(),
                    format!(
                        "two rules are named `{name}`; names must be unique, they are what is reported"
                    ),
                ));
            }
            let paths = match rule.paths {
                None => None,
                Some(globs) => {
                    let mut set = GlobSetBuilder::new();
                    for glob in globs {
                        let built = GlobBuilder::new(glob.get_ref())
                            .literal_separator(true)
                            .build()
                            .map_err(|e| {
                                at(glob.span(), format!("bad glob `{}`: {e}", glob.get_ref()))
                            })?;
                        set.add(built);
                    }
                    Some(
                        set.build()
                            .map_err(|e| at(rule.name.span(), e.to_string()))?,
                    )
                }
            };
            rules.push(Rule {
                name,
                decision: rule.decision,
                tools: rule.tools.map(|t| match t {
                    OneOrMany::One(one) => vec![one],
                    OneOrMany::Many(many) => many,
                }),
                paths,
                min_files: rule.min_files,
                max_files: rule.max_files,
                min_lines: rule.min_lines,
                max_lines: rule.max_lines,
            });
        }
        Ok(RulePolicy {
            rules,
            default: spec.default.unwrap_or(Decision::Ask),
        })
    }

    /// Reads and parses a policy file.
    pub fn load(path: &Path) -> Result<Self, PolicyError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| PolicyError {
            origin: origin.clone(),
            line: None,
            column: None,
            message: format!("cannot read it: {e}"),
        })?;
        Self::parse(&text, &origin)
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The first rule that matches decides; `default` when none does.
    pub fn decide(&self, facts: &EffectFacts) -> RuleMatch {
        self.rules
            .iter()
            .find(|rule| rule.matches(facts))
            .map_or_else(
                || RuleMatch {
                    decision: self.default,
                    rule: "default".into(),
                },
                |rule| RuleMatch {
                    decision: rule.decision,
                    rule: rule.name.clone(),
                },
            )
    }
}

/// A policy file that cannot be used: where and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    origin: String,
    line: Option<usize>,
    column: Option<usize>,
    message: String,
}

impl PolicyError {
    fn at(origin: &str, text: &str, offset: usize, message: String) -> Self {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        PolicyError {
            origin: origin.to_owned(),
            line: Some(line),
            column: Some(column),
            message,
        }
    }

    /// The 1-based line of the problem, when known.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(
                f,
                "policy file {}, line {line}, column {column}: {}",
                self.origin, self.message
            ),
            _ => write!(f, "policy file {}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for PolicyError {}
