//! Ops (`{pat, out}`) validated and compiled once per language.
//!
//! A pattern is compiled into an ast-grep [`Pattern`] once for every language it will be
//! matched in and reused for every file: a `&str` used as a matcher would be re-parsed at every
//! node. Each compiled pattern also carries the literal text its matches need, for the
//! [prefilter](super::prefilter).

use std::collections::BTreeSet;

use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::{Language, Pattern};
use serde::{Deserialize, Serialize};

use super::prefilter::{Literal, Prefilter, Shape, leaf_literals, required_literals, shape_of};
use super::rule::{Rule, compile_rules};
use super::{EngineError, Lang};

/// One structural search-and-replace operation: every match of `pat` is replaced by `out`.
///
/// `pat` is code in the target language where `$NAME` matches one node and `$$$NAME` a
/// (possibly empty) list of nodes; `out` is the replacement text, in which the same
/// metavariables are substituted.
///
/// ```
/// use xcsh_tools::engine::Op;
///
/// let op = Op::new("$X.unwrap()", "$X.expect(\"checked\")");
/// assert_eq!(op.pat, "$X.unwrap()");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Op {
    /// Pattern to match, e.g. `$X.unwrap()`: `$NAME` matches one node, `$$$NAME` a list.
    pub pat: String,
    /// Replacement for each match; the pattern's metavariables are substituted.
    pub out: String,
}

impl Op {
    /// An op replacing matches of `pat` with `out`.
    pub fn new(pat: impl Into<String>, out: impl Into<String>) -> Self {
        Self {
            pat: pat.into(),
            out: out.into(),
        }
    }
}

/// One op compiled for one language.
pub(crate) struct CompiledOp {
    /// Index of the op in the request (`ops[index]`, or the rule's document).
    pub index: usize,
    pub kind: OpKind,
}

/// What an op matches with: a pattern, or a YAML rule.
pub(crate) enum OpKind {
    Pattern {
        pattern: Pattern,
        /// The pattern's named metavariables, each once, in order of first appearance.
        captures: Vec<MetaVariable>,
        /// `None` for a search (no rewrite).
        fix: Option<TemplateFix>,
    },
    /// A rule, matched and fixed as `ast-grep scan` does (see `rule`).
    Rule(Box<Rule>),
}

impl CompiledOp {
    /// The rule, for an op that is one.
    pub(crate) fn rule(&self) -> Option<&Rule> {
        match &self.kind {
            OpKind::Rule(rule) => Some(rule),
            OpKind::Pattern { .. } => None,
        }
    }
}

/// The ops that apply to files of one language, and the prefilter that decides which files
/// are worth parsing for them.
pub(crate) struct LangOps {
    pub ops: Vec<CompiledOp>,
    pub prefilter: Prefilter,
}

/// What a file must hold for a rule to match in it: literals, and the shapes of its patterns.
type RuleNeeds = (Vec<Literal>, Vec<Shape>);

/// A validated set of ops (or search patterns), compiled once for each language it applies to.
///
/// With an explicit language every op must be valid in it. Without one (the language is
/// inferred per file) each op is compiled for every supported language and applies to the
/// languages where its pattern is valid; it must be valid in at least one.
///
/// ```
/// use xcsh_tools::engine::{CompiledOps, Lang, Op};
///
/// let ops = CompiledOps::for_edit(&[Op::new("$X.unwrap()", "$X?")], Some(Lang::Rust))?;
/// assert_eq!(ops.len(), 1);
///
/// let err = CompiledOps::for_edit(&[Op::new("foo(", "bar")], Some(Lang::Rust)).unwrap_err();
/// assert!(err.to_string().starts_with("ops[0].pat: `foo(` is not a valid rust pattern"));
/// # Ok::<(), xcsh_tools::engine::EngineError>(())
/// ```
pub struct CompiledOps {
    /// Indexed by `Lang as usize`; `None` where no op applies (or the language was not asked for).
    by_lang: [Option<LangOps>; Lang::COUNT],
    explicit: Option<Lang>,
    len: usize,
    /// `(op index, language)` pairs where an op's pattern is not valid, with inferred languages.
    inapplicable: Vec<(usize, Lang)>,
    /// The field each pattern came from (`ops[0].pat`, `pat`), for messages.
    pat_fields: Vec<String>,
    /// Ops whose Go pattern is a type conversion (see [`is_go_conversion`]).
    go_conversions: Vec<usize>,
}

impl std::fmt::Debug for CompiledOps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let langs: Vec<Lang> = Lang::ALL
            .iter()
            .copied()
            .filter(|l| self.by_lang[*l as usize].is_some())
            .collect();
        f.debug_struct("CompiledOps")
            .field("patterns", &self.pat_fields)
            .field("lang", &self.explicit)
            .field("compiled_for", &langs)
            .finish()
    }
}

/// What the compiler needs to know about one item: where it came from and what it says.
struct Item<'a> {
    pat_field: String,
    pat: &'a str,
    out: Option<(String, &'a str)>,
}

impl CompiledOps {
    /// Validates and compiles the ops of an edit (`ast_edit`).
    ///
    /// Errors name the offending op: no ops, an empty, invalid or duplicate pattern, or a
    /// rewrite that uses a metavariable its pattern does not capture.
    pub fn for_edit(ops: &[Op], lang: Option<Lang>) -> Result<Self, EngineError> {
        if ops.is_empty() {
            return Err(EngineError::NoOps);
        }
        let items = ops
            .iter()
            .enumerate()
            .map(|(i, op)| Item {
                pat_field: format!("ops[{i}].pat"),
                pat: &op.pat,
                out: Some((format!("ops[{i}].out"), &op.out)),
            })
            .collect();
        Self::compile(items, lang)
    }

    /// Validates and compiles search patterns (`ast_grep`). A single pattern is reported as
    /// field `pat`, several as `pat[i]`.
    pub fn for_search(patterns: &[String], lang: Option<Lang>) -> Result<Self, EngineError> {
        if patterns.is_empty() {
            return Err(EngineError::EmptyPattern {
                field: "pat".to_owned(),
            });
        }
        let single = patterns.len() == 1;
        let items = patterns
            .iter()
            .enumerate()
            .map(|(i, pat)| Item {
                pat_field: if single {
                    "pat".to_owned()
                } else {
                    format!("pat[{i}]")
                },
                pat,
                out: None,
            })
            .collect();
        Self::compile(items, lang)
    }

    /// Reads and compiles ast-grep YAML rules (`rule`), one per YAML document, as
    /// `ast-grep scan --rule` reads a rule file. A rule's `language` may be left out when
    /// `lang` is given; an `edit` needs each rule to have a `fix`. Errors name the YAML line
    /// and key.
    ///
    /// ```
    /// use xcsh_tools::engine::{CompiledOps, Lang};
    ///
    /// let rule = "language: rust\nrule:\n  pattern: $X.unwrap()\n  inside:\n    kind: closure_expression\n    stopBy: end\nfix: $X?\n";
    /// let ops = CompiledOps::for_rules(rule, None, true)?;
    /// assert_eq!(ops.lang(), Some(Lang::Rust));
    ///
    /// let typo = CompiledOps::for_rules("rule:\n  patern: a\n", Some(Lang::Rust), false).unwrap_err();
    /// assert!(typo.to_string().starts_with("rule: line 2: unknown key `patern`"));
    /// # Ok::<(), xcsh_tools::engine::EngineError>(())
    /// ```
    pub fn for_rules(text: &str, lang: Option<Lang>, edit: bool) -> Result<Self, EngineError> {
        let rules = compile_rules(text, "rule", lang, edit)?;
        let several = rules.len() > 1;
        let first_lang = rules[0].lang;
        let explicit = rules
            .iter()
            .all(|r| r.lang == first_lang)
            .then_some(first_lang);
        let mut per_lang: [Vec<(CompiledOp, RuleNeeds)>; Lang::COUNT] = Default::default();
        let len = rules.len();
        for (index, rule) in rules.into_iter().enumerate() {
            per_lang[rule.lang as usize].push((
                CompiledOp {
                    index,
                    kind: OpKind::Rule(Box::new(rule.config)),
                },
                (rule.literals, rule.shapes),
            ));
        }
        let mut by_lang: [Option<LangOps>; Lang::COUNT] = Default::default();
        for lang in Lang::KNOWN {
            let entries = std::mem::take(&mut per_lang[lang as usize]);
            if entries.is_empty() {
                continue;
            }
            let (ops, needs): (Vec<_>, Vec<_>) = entries.into_iter().unzip();
            let (literals, shapes): (Vec<_>, Vec<_>) = needs.into_iter().unzip();
            let prefilter = Prefilter::new(lang, literals).with_shapes(shapes);
            by_lang[lang as usize] = Some(LangOps { ops, prefilter });
        }
        Ok(Self {
            by_lang,
            explicit,
            len,
            inapplicable: Vec::new(),
            pat_fields: (0..len)
                .map(|i| {
                    if several {
                        format!("rule (document {})", i + 1)
                    } else {
                        "rule".to_owned()
                    }
                })
                .collect(),
            go_conversions: Vec::new(),
        })
    }

    /// Search patterns compiled for the near-miss pass: a file is worth parsing when it holds
    /// any one of a pattern's literal leaves, not all of them. `None` when that lets through
    /// no file [`for_search`](Self::for_search) does not: every pattern needs at most one
    /// literal, the same for both (a misspelt `frobnicate($A)`), so the files holding any of
    /// them are the files holding all of them, which the pass has already looked at.
    /// The same ops, their prefilters without shapes: files are ruled in or out by their
    /// literals alone (the near-miss pass looks where a shape does not match).
    pub(crate) fn without_shapes(mut self) -> Self {
        for lang_ops in self.by_lang.iter_mut().flatten() {
            lang_ops.prefilter.clear_shapes();
        }
        self
    }

    pub(crate) fn for_near_misses(
        patterns: &[String],
        lang: Option<Lang>,
    ) -> Result<Option<Self>, EngineError> {
        let mut ops = Self::for_search(patterns, lang)?;
        let mut adds_files = false;
        for &lang in Lang::ALL {
            if let Some(lang_ops) = ops.by_lang[lang as usize].as_mut() {
                let literals: Vec<Vec<Literal>> = lang_ops
                    .ops
                    .iter()
                    .map(|op| match &op.kind {
                        OpKind::Pattern { pattern, .. } => {
                            let leaves = leaf_literals(pattern, lang);
                            adds_files |=
                                leaves.len() > 1 || leaves != required_literals(pattern, lang);
                            leaves
                        }
                        OpKind::Rule(_) => Vec::new(),
                    })
                    .collect();
                lang_ops.prefilter = Prefilter::any_of(lang, literals);
            }
        }
        Ok(adds_files.then_some(ops))
    }

    fn compile(items: Vec<Item<'_>>, explicit: Option<Lang>) -> Result<Self, EngineError> {
        let langs: Vec<Lang> = match explicit {
            Some(lang) => vec![lang],
            None => Lang::ALL.to_vec(),
        };
        let mut per_lang: Vec<Vec<CompiledOp>> = langs.iter().map(|_| Vec::new()).collect();
        let mut inapplicable = Vec::new();
        let mut go_conversions = Vec::new();

        for (index, item) in items.iter().enumerate() {
            let trimmed = item.pat.trim();
            if trimmed.is_empty() {
                return Err(EngineError::EmptyPattern {
                    field: item.pat_field.clone(),
                });
            }
            if let Some(first) = items[..index]
                .iter()
                .find(|earlier| earlier.pat.trim() == trimmed)
            {
                return Err(EngineError::DuplicatePattern {
                    field: item.pat_field.clone(),
                    first: first.pat_field.clone(),
                });
            }

            let mut first_failure: Option<(Lang, String)> = None;
            let mut first_rewrite_error: Option<EngineError> = None;
            let mut compiled_somewhere = false;
            for (slot, &lang) in langs.iter().enumerate() {
                match compile_pattern(item.pat, lang) {
                    Ok(pattern) => {
                        let captures = named_metavars(&pattern);
                        let fix = match &item.out {
                            Some((field, out)) => {
                                match compile_rewrite(field, &item.pat_field, out, &captures, lang)
                                {
                                    Ok(fix) => Some(fix),
                                    // Inferring, a pattern that also parses in another language
                                    // (often as plain text, in Markdown or YAML) may capture
                                    // nothing there: that language is simply not searched.
                                    Err(e) if explicit.is_none() => {
                                        inapplicable.push((index, lang));
                                        first_rewrite_error.get_or_insert(e);
                                        continue;
                                    }
                                    Err(e) => return Err(e),
                                }
                            }
                            None => None,
                        };
                        compiled_somewhere = true;
                        if lang == Lang::Go && is_go_conversion(&pattern) {
                            go_conversions.push(index);
                        }
                        per_lang[slot].push(CompiledOp {
                            index,
                            kind: OpKind::Pattern {
                                pattern,
                                captures,
                                fix,
                            },
                        });
                    }
                    Err(detail) => {
                        inapplicable.push((index, lang));
                        first_failure.get_or_insert((lang, detail));
                    }
                }
            }
            if !compiled_somewhere {
                if let Some(e) = first_rewrite_error {
                    return Err(e);
                }
                let (lang, detail) = first_failure.unwrap_or((Lang::Rust, String::new()));
                let langs = match explicit {
                    Some(lang) => lang.name().to_owned(),
                    None => format!("{} (nor any other supported language)", lang.name()),
                };
                return Err(EngineError::InvalidPattern {
                    field: item.pat_field.clone(),
                    pattern: item.pat.to_owned(),
                    langs,
                    detail,
                });
            }
        }

        let mut by_lang: [Option<LangOps>; Lang::COUNT] = Default::default();
        for (lang, ops) in langs.into_iter().zip(per_lang) {
            if ops.is_empty() {
                continue;
            }
            let prefilter = Prefilter::new(
                lang,
                ops.iter()
                    .map(|op| match &op.kind {
                        OpKind::Pattern { pattern, .. } => required_literals(pattern, lang),
                        OpKind::Rule(_) => Vec::new(),
                    })
                    .collect(),
            )
            .with_shapes(
                ops.iter()
                    .map(|op| match &op.kind {
                        OpKind::Pattern { pattern, .. } => {
                            shape_of(pattern, lang).into_iter().collect()
                        }
                        OpKind::Rule(_) => Vec::new(),
                    })
                    .collect(),
            );
            by_lang[lang as usize] = Some(LangOps { ops, prefilter });
        }
        Ok(Self {
            by_lang,
            explicit,
            len: items.len(),
            inapplicable,
            pat_fields: items.into_iter().map(|item| item.pat_field).collect(),
            go_conversions,
        })
    }

    /// How many ops (or search patterns) there are.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: an empty set of ops is refused when compiling.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The language given explicitly, if any (otherwise it is inferred per file).
    pub fn lang(&self) -> Option<Lang> {
        self.explicit
    }

    /// The prefilter's verdict: whether a file of `lang` holding `bytes` could match any op.
    /// `false` means no op can match it, so it is not parsed.
    ///
    /// ```
    /// use xcsh_tools::engine::{CompiledOps, Lang, Op};
    ///
    /// let ops = CompiledOps::for_edit(&[Op::new("$X.unwrap()", "$X?")], None)?;
    /// assert!(ops.may_match(Lang::Rust, b"let v = x.unwrap();"));
    /// assert!(!ops.may_match(Lang::Rust, b"let v = x.unwrap_or(0);"));
    /// # Ok::<(), xcsh_tools::engine::EngineError>(())
    /// ```
    pub fn may_match(&self, lang: Lang, bytes: &[u8]) -> bool {
        self.for_lang(lang).is_some_and(|ops| {
            (0..ops.ops.len()).any(|i| ops.prefilter.op_may_match(i, bytes, None))
        })
    }

    /// The field op `i`'s pattern came from (`ops[1].pat`, `pat`), for messages.
    pub(crate) fn pat_field(&self, i: usize) -> &str {
        self.pat_fields.get(i).map_or("pat", String::as_str)
    }

    /// Hints for ops that matched nothing (`matches[i]` is op `i`'s count), about pattern
    /// shapes that cannot match what they seem to say.
    pub(crate) fn hints_for_unmatched(&self, matches: &[usize]) -> Vec<String> {
        self.go_conversions
            .iter()
            .filter(|&&op| matches.get(op) == Some(&0))
            .map(|&op| {
                format!(
                    "{} matched nothing: Go parses a call with one argument or only `$$$ARGS`, like `fmt.Println($$$ARGS)`, as a type conversion `T(x)`, which matches no call; write at least two arguments (`fmt.Println($A, $$$REST)`) or match any callee with `$F($$$ARGS)`",
                    self.pat_field(op)
                )
            })
            .collect()
    }

    /// The ops compiled for `lang`, or `None` when no op applies to it.
    pub(crate) fn for_lang(&self, lang: Lang) -> Option<&LangOps> {
        self.by_lang[lang as usize].as_ref()
    }

    /// With inferred languages: the ops whose pattern is not valid in `lang` (so files of that
    /// language are not searched for them).
    pub(crate) fn inapplicable_in(&self, lang: Lang) -> impl Iterator<Item = usize> + '_ {
        self.inapplicable
            .iter()
            .filter(move |(_, l)| *l == lang)
            .map(|(op, _)| *op)
    }
}

/// Compiles `src` for `lang`, refusing what ast-grep would accept with a syntax error in it:
/// `Pattern::try_new("foo(")` returns `Ok`.
///
/// ast-grep itself only checks the pattern's root. Inside, an ERROR node is normal where a
/// metavariable stands in a place the grammar does not expect an identifier
/// (`match $E { $$$ARMS }`), so an ERROR is refused only when it holds no metavariable, and a
/// MISSING token (one the parser invented to recover, dropped from the pattern tree, so the
/// pattern would match something other than what was written) is refused, unless it follows
/// a lone metavariable (`$$$B` as a statement, whose `;` is the statements' own).
pub(crate) fn compile_pattern(src: &str, lang: Lang) -> Result<Pattern, String> {
    let sg = lang.support_lang();
    let pattern = Pattern::try_new(src, sg).map_err(|e| e.to_string())?;
    if pattern.has_error() {
        return Err(syntax_error_detail(src, lang, None));
    }
    // MISSING nodes are only visible in the parse of the pattern's own source. Check the node
    // the pattern was taken from, picked as ast-grep picks it: descend while there is a single
    // child (a trailing MISSING or empty second child does not count).
    let processed = sg.pre_process_pattern(src);
    let root = sg.ast_grep(processed.as_ref());
    let mut node = root.root();
    loop {
        let count = node.get_inner_node().child_count();
        let second_is_trivial = count == 2
            && node
                .child(1)
                .is_some_and(|c| c.is_missing() || c.kind().is_empty());
        if count != 1 && !second_is_trivial {
            break;
        }
        let Some(child) = node.child(0) else { break };
        node = child;
    }
    if !node.get_inner_node().has_error() {
        return Ok(pattern);
    }
    // Look for a MISSING node, or an ERROR node without a metavariable, under `node`.
    let has_metavar = |n: &SgNode<'_>| {
        n.dfs()
            .any(|leaf| leaf.is_leaf() && sg.extract_meta_var(&leaf.text()).is_some())
    };
    // A MISSING token right after a lone metavariable is what a statement-level `$$$B` or `$S`
    // looks like in grammars whose statements end in `;` (C's `if ($C) { $$$B }`): the
    // metavariable stands for whole statements, `;` included, so nothing is lost.
    let after_lone_metavar = |n: &SgNode<'_>| {
        n.prev()
            .is_some_and(|p| sg.extract_meta_var(&p.text()).is_some())
    };
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if (n.is_missing() && !after_lone_metavar(&n)) || (n.is_error() && !has_metavar(&n)) {
            let offset = n.range().start;
            return Err(syntax_error_detail(
                src,
                lang,
                Some((offset, n.is_missing())),
            ));
        }
        if n.get_inner_node().has_error() {
            stack.extend(n.children());
        }
    }
    Ok(pattern)
}

/// What a pattern parsed as in `lang`, for an answer that found nothing: the kind of node it
/// matches, with the grammar's own name, and an ERROR inside it (a metavariable where the
/// grammar wants something else), which often explains why nothing matched. `None` when the
/// pattern does not compile in `lang`, or is longer than 4 KiB (parsing it again would cost
/// more than the note is worth).
///
/// ```
/// use xcsh_tools::engine::{Lang, pattern_shape};
///
/// assert_eq!(
///     pattern_shape("$X.unwrap()", Lang::Rust).unwrap(),
///     "`$X.unwrap()` parsed as a `call_expression` (rust): it matches call_expression nodes of that shape only"
/// );
/// assert_eq!(
///     pattern_shape("$A", Lang::Rust).unwrap(),
///     "`$A` is a lone metavariable (rust): it matches any single node"
/// );
/// assert!(pattern_shape("foo(", Lang::Rust).is_none());
/// // A long pattern is quoted shortened; a huge one is not parsed again.
/// let long = format!("f({})", "a".repeat(500));
/// assert!(pattern_shape(&long, Lang::Rust).unwrap().len() < 300);
/// assert!(pattern_shape(&"a".repeat(5000), Lang::Rust).is_none());
/// ```
pub fn pattern_shape(pat: &str, lang: Lang) -> Option<String> {
    if pat.len() > 4096 {
        return None;
    }
    let pattern = compile_pattern(pat, lang).ok()?;
    let src = pat;
    // Quoted, but bounded: a pattern can be megabytes long.
    let shown_pat = shorten(pat, 80);
    let pat = shown_pat.as_str();
    let ts = lang.support_lang().get_ts_language();
    let kind = match &pattern.node {
        PatternNode::MetaVar { .. } => {
            return Some(format!(
                "`{pat}` is a lone metavariable ({lang}): it matches any single node"
            ));
        }
        PatternNode::Terminal { kind_id, .. } | PatternNode::Internal { kind_id, .. } => {
            ts.node_kind_for_id(*kind_id).unwrap_or("node")
        }
    };
    let mut text = format!(
        "`{pat}` parsed as a `{kind}` ({lang}): it matches {kind} nodes of that shape only"
    );
    let sg = lang.support_lang();
    let processed = sg.pre_process_pattern(src);
    let root = sg.ast_grep(processed.as_ref());
    if let Some(error) = root.root().dfs().find(|n| n.is_error()) {
        // The pre-processed text carries the grammar's stand-in for `$`: shown as written.
        let shown = processed
            .get(error.range())
            .map(|t| t.trim().replace(sg.expando_char(), "$"))
            .filter(|t| !t.is_empty() && t.chars().count() <= 60)
            .map(|t| format!(" at `{t}`"))
            .unwrap_or_default();
        text.push_str(&format!(
            "; it has a syntax error{shown}, so code that reads the same may parse differently"
        ));
    }
    Some(text)
}

/// Whether a Go pattern's root is a type conversion: tree-sitter-go reads `pkg.F($A)` and
/// `pkg.F($$$A)` on their own as conversions `T(x)`, which never match a call expression.
fn is_go_conversion(pattern: &Pattern) -> bool {
    let kind = match &pattern.node {
        PatternNode::Internal { kind_id, .. } => *kind_id,
        _ => return false,
    };
    let ts = Lang::Go.support_lang().get_ts_language();
    ts.node_kind_for_id(kind) == Some("type_conversion_expression")
}

type SgNode<'r> =
    ast_grep_core::Node<'r, ast_grep_core::tree_sitter::StrDoc<ast_grep_language::SupportLang>>;

/// Describes where the pattern's syntax breaks: at `at` (byte offset in the pre-processed
/// pattern, and whether a token is missing there) or at its first ERROR or MISSING node.
fn syntax_error_detail(src: &str, lang: Lang, at: Option<(usize, bool)>) -> String {
    let sg = lang.support_lang();
    let processed = sg.pre_process_pattern(src);
    let root = sg.ast_grep(processed.as_ref());
    let found = root.root().dfs().find(|n| {
        at.map_or(n.is_missing() || n.is_error(), |(o, _)| {
            n.range().start == o && (n.is_missing() || n.is_error())
        })
    });
    let Some(node) = found else {
        return "it does not parse".to_owned();
    };
    // Columns count characters of the pattern as written (`$` and the expando char are both
    // one character).
    let column = processed
        .get(..node.range().start)
        .unwrap_or_default()
        .chars()
        .rev()
        .take_while(|c| *c != '\n')
        .count()
        + 1;
    if node.is_missing() {
        return format!(
            "it is incomplete: `{}` is missing at column {column}",
            node.kind()
        );
    }
    let text = node.text().replace(sg.expando_char(), "$");
    format!("syntax error at `{}` (column {column})", shorten(&text, 40))
}

/// Checks a rewrite template against its pattern and compiles it.
///
/// `TemplateFix::try_new` cannot fail, but a template naming a metavariable the pattern does
/// not capture (a typo, or `$ARGS` for a `$$$ARGS` list) silently substitutes nothing and
/// deletes code: that is refused here.
fn compile_rewrite(
    field: &str,
    pat_field: &str,
    out: &str,
    captures: &[MetaVariable],
    lang: Lang,
) -> Result<TemplateFix, EngineError> {
    let (singles, multis) = captured_vars(captures);
    for used in template_vars(out) {
        let (name, multi) = (used.name.as_str(), used.multi);
        let problem = if multi && singles.contains(name) {
            format!(
                "uses $$${name}, but {pat_field} captures ${name} (one node); write ${name} instead"
            )
        } else if !multi && multis.contains(name) {
            format!(
                "uses ${name}, but {pat_field} captures $$${name} (a list of nodes); write $$${name} instead"
            )
        } else if !singles.contains(name) && !multis.contains(name) {
            let defined: Vec<String> = singles
                .iter()
                .map(|n| format!("${n}"))
                .chain(multis.iter().map(|n| format!("$$${n}")))
                .collect();
            let defined = if defined.is_empty() {
                "it captures none".to_owned()
            } else {
                format!("it captures {}", defined.join(", "))
            };
            let sigil = if multi { "$$$" } else { "$" };
            format!(
                "uses {sigil}{name}, which {pat_field} does not capture ({defined}); use one of those, or add {sigil}{name} to the pattern"
            )
        } else {
            continue;
        };
        return Err(EngineError::InvalidRewrite {
            field: field.to_owned(),
            detail: problem,
        });
    }
    TemplateFix::try_new(out, &lang.support_lang()).map_err(|e| EngineError::InvalidRewrite {
        field: field.to_owned(),
        detail: e.to_string(),
    })
}

/// Names captured by the pattern (`captures`): single-node and list metavariables. `$_` and
/// `$$$` capture nothing.
fn captured_vars(captures: &[MetaVariable]) -> (BTreeSet<&str>, BTreeSet<&str>) {
    let mut singles = BTreeSet::new();
    let mut multis = BTreeSet::new();
    for mv in captures {
        match mv {
            MetaVariable::Capture(name, _) => {
                singles.insert(name.as_str());
            }
            MetaVariable::MultiCapture(name) => {
                multis.insert(name.as_str());
            }
            MetaVariable::Dropped(_) | MetaVariable::Multiple => {}
        }
    }
    (singles, multis)
}

/// The pattern's named metavariables (`$A`, `$$$A`), each once, in order of first appearance:
/// computed once per compiled op, for rewrite checks and for search captures.
fn named_metavars(pattern: &Pattern) -> Vec<MetaVariable> {
    fn walk(node: &PatternNode, out: &mut Vec<MetaVariable>) {
        match node {
            PatternNode::MetaVar { meta_var } => {
                let named = matches!(
                    meta_var,
                    MetaVariable::Capture(..) | MetaVariable::MultiCapture(_)
                );
                if named && !out.contains(meta_var) {
                    out.push(meta_var.clone());
                }
            }
            PatternNode::Terminal { .. } => {}
            PatternNode::Internal { children, .. } => {
                for child in children {
                    walk(child, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&pattern.node, &mut out);
    out
}

struct TemplateVar {
    name: String,
    multi: bool,
}

/// The metavariables a template refers to, read exactly as ast-grep's template compiler does:
/// one to three `$`, then a name of `A-Z`, `_` and digits not starting with a digit; three `$`
/// make it a list. `$5` or a lone `$` is literal text.
fn template_vars(template: &str) -> Vec<TemplateVar> {
    let bytes = template.as_bytes();
    let mut vars = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let mut dollars = 1;
        while dollars < 3 && bytes.get(i + dollars) == Some(&b'$') {
            dollars += 1;
        }
        let name_start = i + dollars;
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_uppercase() || **b == b'_' || b.is_ascii_digit())
            .count();
        let first_ok = bytes
            .get(name_start)
            .is_some_and(|b| b.is_ascii_uppercase() || *b == b'_');
        if name_len == 0 || !first_ok {
            // Not a metavariable: ast-grep moves on by one character.
            i += 1;
            continue;
        }
        vars.push(TemplateVar {
            name: template[name_start..name_start + name_len].to_owned(),
            multi: dollars == 3,
        });
        i = name_start + name_len;
    }
    vars
}

/// `text` cut to at most `max` characters, with `…` when cut (messages quote patterns,
/// notes and lines this way).
pub(crate) fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(ops: &[(&str, &str)], lang: Option<Lang>) -> Result<CompiledOps, EngineError> {
        let ops: Vec<Op> = ops.iter().map(|(p, o)| Op::new(*p, *o)).collect();
        CompiledOps::for_edit(&ops, lang)
    }

    fn err(ops: &[(&str, &str)], lang: Option<Lang>) -> String {
        match edit(ops, lang) {
            Ok(_) => panic!("expected an error for {ops:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_near_miss_pass_widens_the_search_only_where_that_adds_files() {
        let widens = |pats: &[&str]| {
            let pats: Vec<String> = pats.iter().map(|p| (*p).to_owned()).collect();
            CompiledOps::for_near_misses(&pats, Some(Lang::Rust))
                .unwrap()
                .is_some()
        };
        // One literal, required as it is: the files holding any are those holding all.
        assert!(!widens(&["frobnicate($A)"]));
        assert!(!widens(&["$X.frobnicate()", "match $E { $$$A }"]));
        // Two literals, or one the search requires in another form (`+` as an operator
        // whose leaf is not a literal at all): more files hold some than all.
        assert!(widens(&["Arc::new($A)"]));
        assert!(widens(&["$A + $B"]));
        assert!(widens(&["frobnicate($A)", "Arc::new($A)"]));
    }

    #[test]
    fn common_patterns_compile_in_their_language() {
        let cases: &[(Lang, &[&str])] = &[
            (
                Lang::Rust,
                &[
                    "$X.unwrap()",
                    "Arc::new($A)",
                    "match $E { $$$ARMS }",
                    "fn $F($$$ARGS) { $$$BODY }",
                    "let $A = $B;",
                    "$A",
                    "println!($$$A)",
                    "impl $T for $U { $$$B }",
                    "use $A;",
                    "#[derive($$$D)]",
                    "if let Some($A) = $B { $$$C }",
                ],
            ),
            (
                Lang::Python,
                &[
                    "print($$$A)",
                    "def $F($$$A): $$$B",
                    "$A == None",
                    "import $M",
                    "for $X in $Y: $$$B",
                    "with open($F) as $H: $$$B",
                    "lambda $X: $Y",
                ],
            ),
            (
                Lang::TypeScript,
                &[
                    "console.log($$$A)",
                    "const $A: $T = $B",
                    "interface $I { $$$M }",
                    "$A as any",
                ],
            ),
            (
                Lang::Tsx,
                &["<div>$$$C</div>", "<$T $$$P />", "useState<$T>($A)"],
            ),
            (
                Lang::JavaScript,
                &[
                    "var $A = $B",
                    "require($M)",
                    "$A === undefined",
                    "async function $F($$$A) { $$$B }",
                ],
            ),
            (
                Lang::Go,
                &[
                    "fmt.Println($$$A)",
                    "if err != nil { return $$$R }",
                    "func $F($$$A) $R { $$$B }",
                    "$A := $B",
                    "errors.New($M)",
                ],
            ),
        ];
        for (lang, pats) in cases {
            for pat in *pats {
                let compiled = CompiledOps::for_search(&[pat.to_string()], Some(*lang));
                assert!(compiled.is_ok(), "{lang} `{pat}`: {:?}", compiled.err());
            }
        }
    }

    /// `if ($C) { $$$B }` in C: `$$$B` parses as a statement missing its `;`, which the
    /// statements it stands for bring (the ast-grep CLI accepts it; see oracle_corpora).
    #[cfg(feature = "lang-c")]
    #[test]
    fn a_statement_metavariable_needs_no_semicolon_in_c() {
        for pat in ["if ($C) { $$$B }", "while ($C) { $$$B }", "{ $$$B }"] {
            let compiled = CompiledOps::for_search(&[pat.to_string()], Some(Lang::C));
            assert!(compiled.is_ok(), "`{pat}`: {:?}", compiled.err());
        }
    }

    #[test]
    fn no_ops_is_an_error() {
        assert_eq!(
            err(&[], None),
            "ops: at least one op is required; pass ops: [{\"pat\": \"<code to match>\", \"out\": \"<replacement>\"}] (or an ast-grep YAML rule with a `fix` in `rule`)"
        );
    }

    #[test]
    fn empty_pattern_names_the_op() {
        let msg = err(&[("a()", "b()"), ("  \n", "x")], Some(Lang::Rust));
        assert!(msg.starts_with("ops[1].pat: the pattern is empty"), "{msg}");
    }

    #[test]
    fn broken_patterns_name_the_op_and_the_language() {
        for (pat, lang) in [
            ("foo(", Lang::Rust),
            ("let = ;", Lang::Rust),
            ("def (:", Lang::Python),
            ("a +", Lang::TypeScript),
            ("func (", Lang::Go),
            ("const = 1", Lang::Tsx),
        ] {
            let msg = err(&[("ok()", "ok()"), (pat, "x")], Some(lang));
            assert!(
                msg.starts_with(&format!(
                    "ops[1].pat: `{pat}` is not a valid {lang} pattern"
                )),
                "{msg}"
            );
            assert!(msg.contains("$$$NAME"), "says what to do: {msg}");
        }
    }

    #[test]
    fn multiple_nodes_are_refused() {
        let msg = err(&[("a(); b();", "c()")], Some(Lang::Rust));
        assert!(msg.contains("Multiple AST nodes"), "{msg}");
    }

    // HTML, Markdown and YAML parse any text, so with them nothing is invalid everywhere.
    #[cfg(not(any(
        feature = "lang-html",
        feature = "lang-markdown",
        feature = "lang-yaml"
    )))]
    #[test]
    fn a_pattern_invalid_everywhere_is_refused_when_inferring() {
        let msg = err(&[("foo(", "x")], None);
        assert!(
            msg.contains("is not a valid rust (nor any other supported language) pattern"),
            "{msg}"
        );
    }

    #[test]
    fn a_pattern_invalid_in_a_language_is_not_searched_there() {
        if let Ok(ops) = edit(&[("foo(", "x")], None) {
            assert!(ops.for_lang(Lang::Rust).is_none());
            assert_eq!(ops.inapplicable_in(Lang::Rust).collect::<Vec<_>>(), [0]);
        }
    }

    #[test]
    fn a_pattern_valid_somewhere_applies_only_there() {
        // `fn` items exist in Rust only.
        let ops = edit(&[("fn $F() {}", "fn $F() { todo!() }")], None).unwrap();
        assert!(ops.for_lang(Lang::Rust).is_some());
        assert!(ops.for_lang(Lang::Python).is_none());
        assert_eq!(ops.inapplicable_in(Lang::Python).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn duplicates_name_both_ops() {
        let msg = err(
            &[("a($X)", "b($X)"), ("c()", "d()"), (" a($X) ", "e($X)")],
            Some(Lang::Rust),
        );
        assert!(
            msg.starts_with("ops[2].pat: the same pattern as ops[0].pat"),
            "{msg}"
        );
    }

    #[test]
    fn rewrite_with_an_unknown_metavariable_is_refused() {
        let msg = err(&[("foo($A)", "bar($B)")], Some(Lang::Rust));
        assert_eq!(
            msg,
            "ops[0].out: uses $B, which ops[0].pat does not capture (it captures $A); use one of those, or add $B to the pattern"
        );
    }

    #[test]
    fn rewrite_with_the_wrong_arity_is_refused() {
        let msg = err(&[("foo($$$ARGS)", "bar($ARGS)")], Some(Lang::Rust));
        assert!(msg.starts_with("ops[0].out: uses $ARGS, but ops[0].pat captures $$$ARGS"));
        let msg = err(&[("foo($A)", "bar($$$A)")], Some(Lang::Rust));
        assert!(msg.starts_with("ops[0].out: uses $$$A, but ops[0].pat captures $A"));
    }

    #[test]
    fn literal_dollars_in_a_rewrite_are_fine() {
        edit(
            &[("foo($A)", "bar($A, \"$5\", $, $a, $$$)")],
            Some(Lang::Rust),
        )
        .unwrap();
    }

    #[test]
    fn template_vars_follow_ast_grep() {
        let vars: Vec<(String, bool)> = template_vars("$A $$B $$$C $$$$D $_E $5 $x $")
            .into_iter()
            .map(|v| (v.name, v.multi))
            .collect();
        assert_eq!(
            vars,
            [
                ("A".to_owned(), false),
                ("B".to_owned(), false),
                ("C".to_owned(), true),
                ("D".to_owned(), true),
                ("_E".to_owned(), false),
            ]
        );
    }
}
