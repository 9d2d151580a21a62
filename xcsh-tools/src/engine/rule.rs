//! ast-grep YAML rules: the `rule` parameter of `ast_edit` and `ast_grep`.
//!
//! A rule is read and compiled by `ast-grep-config`, the CLI's own code, and is matched and
//! fixed through its `CombinedScan` as `ast-grep scan --rule FILE` does (see `rewrite` and
//! `search`): every node in pre-order, `ast-grep-ignore` comments honoured, and for a rewrite
//! each match's first fix kept unless it starts inside one kept before it. What xcsh adds is
//! in the errors: each names the YAML line and the key, with a did-you-mean, and every
//! `pattern` in the rule is checked as strictly as `pat` (ast-grep accepts `foo(` and then
//! matches nothing).
//!
//! `language` may be left out of the rule when the call gives `lang`; a text may hold several
//! rules as YAML documents separated by `---`, as a rule file can.

use ast_grep_config::{GlobalRules, RuleConfig, SerializableRuleConfig};
use ast_grep_core::tree_sitter::LanguageExt as _;
use ast_grep_language::SupportLang;
use serde_json::Value;

use super::pattern::{compile_pattern, shorten};
use super::prefilter::{Literal, Shape, leaf_literals, shape_of};
use super::{EngineError, Lang};

/// A rule compiled by ast-grep-config.
pub(crate) type Rule = RuleConfig<SupportLang>;

/// One document of a rule text, compiled.
pub(crate) struct CompiledRule {
    pub lang: Lang,
    pub config: Rule,
    /// Literal text that every file with a match contains: the leaves of the `pattern`s a
    /// match needs (not those under `not`, `any` or `matches`).
    pub literals: Vec<Literal>,
    /// The shapes of those same `pattern`s ([`Shape`]): a file in which one of them cannot
    /// match holds no match of the rule.
    pub shapes: Vec<Shape>,
}

/// Reads and compiles the rules in `text` (the field `field` of the call). `lang` is the
/// call's language, used where a rule has no `language`; `edit` requires a `fix`.
pub(crate) fn compile_rules(
    text: &str,
    field: &str,
    lang: Option<Lang>,
    edit: bool,
) -> Result<Vec<CompiledRule>, EngineError> {
    let fail = |detail: String| EngineError::InvalidRule {
        field: field.to_owned(),
        detail,
    };
    if text.trim().is_empty() {
        return Err(fail(
            "the rule is empty; give an ast-grep rule as YAML, e.g. `rule: {pattern: $X.unwrap()}` with `fix: $X?`".to_owned(),
        ));
    }
    let docs: Vec<Value> =
        ast_grep_config::from_multiple(text).map_err(|e| fail(yaml_error(text, &e.to_string())))?;
    if docs.is_empty() {
        return Err(fail(
            "holds no rule (only comments or empty documents); give an ast-grep rule as YAML"
                .to_owned(),
        ));
    }
    let several = docs.len() > 1;
    let mut out = Vec::with_capacity(docs.len());
    for (index, mut doc) in docs.into_iter().enumerate() {
        let field = if several {
            format!("{field} (document {})", index + 1)
        } else {
            field.to_owned()
        };
        let fail = |detail: String| EngineError::InvalidRule {
            field: field.clone(),
            detail,
        };
        let Some(map) = doc.as_object_mut() else {
            return Err(fail(
                "is not a YAML mapping; a rule has keys such as `rule`, `fix`, `language`, `constraints`".to_owned(),
            ));
        };
        let rule_lang = rule_language(text, map, lang).map_err(&fail)?;
        // ast-grep-config wants the language as its own name for it.
        map.insert(
            "language".to_owned(),
            Value::String(rule_lang.name().to_owned()),
        );
        check_patterns(text, map, rule_lang).map_err(&fail)?;
        let literals = map
            .get("rule")
            .map(|rule| rule_literals(rule, rule_lang))
            .unwrap_or_default();
        let mut shapes = Vec::new();
        if let Some(rule) = map.get("rule") {
            rule_shapes(rule, rule_lang, &mut shapes);
        }
        let serial: SerializableRuleConfig<SupportLang> =
            serde_json::from_value(doc).map_err(|e| fail(yaml_error(text, &e.to_string())))?;
        let config = RuleConfig::try_from(serial, &GlobalRules::default())
            .map_err(|e| fail(config_error(text, &e, rule_lang)))?;
        if edit && config.fixer.is_empty() {
            return Err(fail(
                "has no `fix`: ast_edit writes what `fix` says for each match; add `fix: <template>` (it may use the rule's metavariables), or search with ast_grep".to_owned(),
            ));
        }
        out.push(CompiledRule {
            lang: rule_lang,
            config,
            literals,
            shapes,
        });
    }
    Ok(out)
}

/// The language of one rule: its own `language`, which must agree with `lang` when both are
/// given, or `lang`.
fn rule_language(
    text: &str,
    map: &serde_json::Map<String, Value>,
    lang: Option<Lang>,
) -> Result<Lang, String> {
    let Some(given) = map.get("language") else {
        return lang.ok_or_else(|| {
            "says no `language`; add `language: <name>` to the rule or pass lang".to_owned()
        });
    };
    let line = at_line(text, "language");
    let Some(name) = given.as_str() else {
        return Err(format!(
            "{line}`language` must be a name, such as `rust`; use one of: {}",
            Lang::supported_list()
        ));
    };
    let own: Lang = name.parse().map_err(|e: EngineError| {
        format!("{line}{}", e.to_string().trim_start_matches("lang: "))
    })?;
    match lang {
        Some(lang) if lang != own => Err(format!(
            "{line}`language: {name}` disagrees with lang `{lang}`; omit lang or make them the same"
        )),
        _ => Ok(own),
    }
}

/// `line N: ` for the first line holding `key:` (as a mapping key), or nothing.
fn at_line(text: &str, key: &str) -> String {
    line_of_key(text, key, 1)
        .map(|n| format!("line {n}: "))
        .unwrap_or_default()
}

/// The first line (1-based, from `from` on) where `key` is a mapping key: `key:` at the start
/// of the line, after a `- ` list marker or after a `{`/`,` of a flow mapping.
fn line_of_key(text: &str, key: &str, from: usize) -> Option<usize> {
    let is_key_at = |rest: &str| {
        rest.strip_prefix(key)
            .is_some_and(|after| after.trim_start().starts_with(':'))
    };
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, line)| {
            let t = line.trim_start().trim_start_matches("- ").trim_start();
            let unquoted = |q: char| {
                t.strip_prefix(q)
                    .and_then(|r| r.strip_prefix(key))
                    .is_some_and(|r| r.starts_with(q))
            };
            is_key_at(t)
                || unquoted('"')
                || unquoted('\'')
                || line
                    .match_indices(['{', ','])
                    .any(|(i, _)| is_key_at(line[i + 1..].trim_start()))
        })
        .map(|(n, _)| n + 1)
}

/// The first line (1-based) holding `needle`, or none.
fn line_of_text(text: &str, needle: &str) -> Option<usize> {
    let first = needle.lines().next().unwrap_or(needle).trim();
    if first.is_empty() {
        return None;
    }
    text.lines()
        .position(|line| line.contains(first))
        .map(|n| n + 1)
}

/// A YAML or shape error as a model can act on it: `line N: unknown key `K` (expected one of
/// …); did you mean `J`?`, the line found for the key itself rather than for the mapping that
/// holds it (where serde's flattening reports it).
fn yaml_error(text: &str, message: &str) -> String {
    let first = message.lines().next().unwrap_or(message).trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // `line 3 column 1: rest` (serde-saphyr) or `rest` (from a value).
    let (line, rest) = match first.strip_prefix("line ").and_then(|r| r.split_once(": ")) {
        Some((position, rest)) => {
            let line = position
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<usize>().ok());
            (line, rest)
        }
        None => (None, first),
    };
    if let Some(after) = rest.strip_prefix("unknown field `")
        && let Some((key, expected)) = after.split_once('`')
    {
        let expected: Vec<String> = expected
            .trim_start_matches(", expected one of ")
            .trim_start_matches(", expected ")
            .split(", ")
            .map(|k| k.trim_matches('`').to_owned())
            .filter(|k| !k.is_empty())
            .collect();
        let line = line_of_key(text, key, line.unwrap_or(1)).or(line);
        let at = line.map(|n| format!("line {n}: ")).unwrap_or_default();
        let hint = closest(key, expected.iter().map(String::as_str))
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        return format!(
            "{at}unknown key `{key}` (expected one of {}){hint}",
            expected.join(", ")
        );
    }
    match line {
        Some(n) => format!("line {n}: {rest}"),
        None => rest.to_owned(),
    }
}

use xcsh_names::closest;

/// An error of ast-grep-config's compiler, with the line of what it names and, for an
/// unknown `kind`, the closest kinds of the grammar.
fn config_error(text: &str, error: &ast_grep_config::RuleConfigError, lang: Lang) -> String {
    // The chain reads "Fail to parse yaml as Rule." / "`rule` is not configured correctly." /
    // … / the actual problem: keep the section and the problem.
    let mut parts = vec![error.to_string()];
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        parts.push(e.to_string());
        source = e.source();
    }
    parts.retain(|p| !p.starts_with("Fail to parse yaml"));
    let detail = parts.join(": ").replace(".:", ":");
    let detail = detail.trim_end_matches('.').to_owned();
    if detail.starts_with("Rule must specify a set of AST kinds") {
        return "can match no node kind as written (ast-grep needs the rule's top level to say which kinds it matches: a `pattern`, a `kind`, or an `all`/`any` of them; `not`, `inside`, `has`, `regex` alone match anything); add a `kind` or `pattern`".to_owned();
    }
    if let Some(kind) = detail
        .split("Kind `")
        .nth(1)
        .and_then(|r| r.split('`').next())
    {
        let ts = lang.support_lang().get_ts_language();
        let kinds = (0..ts.node_kind_count() as u16)
            .filter(|&id| ts.node_kind_is_named(id) && ts.node_kind_is_visible(id))
            .filter_map(|id| ts.node_kind_for_id(id));
        let hint = closest(kind, kinds)
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        let at = line_of_text(text, &format!("kind: {kind}"))
            .map(|n| format!("line {n}: "))
            .unwrap_or_default();
        return format!(
            "{at}`kind: {kind}` is not a node kind of the {lang} grammar, so the rule can never match{hint}"
        );
    }
    if let Some(var) = detail
        .split("Undefined meta var `")
        .nth(1)
        .and_then(|r| r.split('`').next())
    {
        return format!(
            "{detail}: ${var} is not captured by the rule's patterns; capture it in `rule` (or `constraints`) or use one the rule captures"
        );
    }
    detail
}

/// Checks every `pattern` string under `rule`, `constraints` and `utils` as strictly as a
/// `pat`: ast-grep-config would take `foo(` (with an ERROR node) and match nothing.
fn check_patterns(
    text: &str,
    map: &serde_json::Map<String, Value>,
    lang: Lang,
) -> Result<(), String> {
    let mut patterns = Vec::new();
    for key in ["rule", "constraints", "utils"] {
        if let Some(value) = map.get(key) {
            collect_patterns(value, &mut patterns);
        }
    }
    for pat in patterns {
        if let Err(detail) = compile_pattern(pat, lang) {
            let at = line_of_text(text, pat)
                .map(|n| format!("line {n}: "))
                .unwrap_or_default();
            return Err(format!(
                "{at}pattern `{}` is not a valid {lang} pattern: {detail}; write it as one complete expression, statement or item, with $NAME for one node and $$$NAME for a list",
                shorten(pat, 80)
            ));
        }
    }
    Ok(())
}

/// Every `pattern: <string>` anywhere under `value`.
fn collect_patterns<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("pattern", Value::String(pat)) => out.push(pat),
                    _ => collect_patterns(value, out),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                collect_patterns(item, out);
            }
        }
        _ => {}
    }
}

/// The literals a match of `rule` needs in its file: those of a plain-string `pattern` (an
/// object pattern may change strictness, so it gives none), and of every sub-rule that must
/// match too (`all` items, `has`, `inside`, `precedes`, `follows`). `not`, `any` and `matches`
/// give none. They are only tested against the whole file, never used to narrow the search
/// within it: an `inside` pattern's text lies outside the match.
fn rule_literals(rule: &Value, lang: Lang) -> Vec<Literal> {
    let mut out = Vec::new();
    let Value::Object(map) = rule else {
        return out;
    };
    if let Some(Value::String(pat)) = map.get("pattern")
        && let Ok(pattern) = compile_pattern(pat, lang)
    {
        out.extend(leaf_literals(&pattern, lang));
    }
    if let Some(Value::Array(items)) = map.get("all") {
        for item in items {
            out.extend(rule_literals(item, lang));
        }
    }
    for relation in ["has", "inside", "precedes", "follows"] {
        if let Some(sub) = map.get(relation) {
            out.extend(rule_literals(sub, lang));
        }
    }
    out.sort_by_key(|lit| std::cmp::Reverse(lit.text.len()));
    out.dedup();
    out
}

/// The shapes of the patterns [`rule_literals`] reads: each must match somewhere in a file
/// that holds a match (the rule's node, or the node a relation reaches).
fn rule_shapes(rule: &Value, lang: Lang, out: &mut Vec<Shape>) {
    let Value::Object(map) = rule else {
        return;
    };
    if let Some(Value::String(pat)) = map.get("pattern")
        && let Ok(pattern) = compile_pattern(pat, lang)
    {
        out.extend(shape_of(&pattern, lang));
    }
    if let Some(Value::Array(items)) = map.get("all") {
        for item in items {
            rule_shapes(item, lang, out);
        }
    }
    for relation in ["has", "inside", "precedes", "follows"] {
        if let Some(sub) = map.get(relation) {
            rule_shapes(sub, lang, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str, lang: Option<Lang>, edit: bool) -> String {
        match compile_rules(text, "rule", lang, edit) {
            Ok(_) => panic!("expected an error for {text:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_rule_compiles_with_its_language_or_the_calls() {
        let rules = compile_rules(
            "id: x\nlanguage: rust\nrule:\n  pattern: $X.unwrap()\nfix: $X?\n",
            "rule",
            None,
            true,
        )
        .unwrap();
        assert_eq!(rules[0].lang, Lang::Rust);
        assert!(rules[0].literals.iter().any(|l| l.text == "unwrap"));
        let rules = compile_rules(
            "rule:\n  kind: call_expression\n",
            "rule",
            Some(Lang::Rust),
            false,
        )
        .unwrap();
        assert_eq!(rules[0].lang, Lang::Rust);
        assert!(rules[0].literals.is_empty());
    }

    #[test]
    fn unknown_keys_name_their_line_and_the_closest_key() {
        let msg = err(
            "language: rust\nrule:\n  pattern: foo($A)\n  hass:\n    kind: identifier\n",
            None,
            false,
        );
        assert!(
            msg.starts_with("rule: line 4: unknown key `hass` (expected one of pattern, kind,"),
            "{msg}"
        );
        assert!(msg.ends_with("did you mean `has`?"), "{msg}");
        let msg = err(
            "language: rust\nrule:\n  pattern: a\nfixx: b\n",
            None,
            false,
        );
        assert!(msg.starts_with("rule: line 4: unknown key `fixx`"), "{msg}");
        assert!(msg.ends_with("did you mean `fix`?"), "{msg}");
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let msg = err("language: rust\nrule:\n  has: {kind: 3\n", None, false);
        assert!(msg.starts_with("rule: line 3: "), "{msg}");
    }

    #[test]
    fn an_unknown_kind_says_the_rule_cannot_match() {
        let msg = err(
            "language: rust\nrule:\n  kind: call_expresion\n",
            None,
            false,
        );
        assert_eq!(
            msg,
            "rule: line 3: `kind: call_expresion` is not a node kind of the rust grammar, so the rule can never match; did you mean `call_expression`?"
        );
    }

    #[test]
    fn a_broken_pattern_inside_a_rule_is_refused() {
        let msg = err(
            "language: rust\nrule:\n  kind: call_expression\n  has:\n    pattern: foo(\n",
            None,
            false,
        );
        assert!(
            msg.starts_with("rule: line 5: pattern `foo(` is not a valid rust pattern"),
            "{msg}"
        );
    }

    #[test]
    fn language_must_be_known_and_agree() {
        let msg = err("rule:\n  pattern: a\n", None, false);
        assert!(msg.contains("says no `language`"), "{msg}");
        let msg = err("language: cobol\nrule:\n  pattern: a\n", None, false);
        assert!(
            msg.starts_with("rule: line 1: `cobol` is not a supported language"),
            "{msg}"
        );
        let msg = err(
            "language: python\nrule:\n  pattern: a\n",
            Some(Lang::Rust),
            false,
        );
        assert!(msg.contains("disagrees with lang `rust`"), "{msg}");
    }

    #[test]
    fn an_edit_needs_a_fix_and_known_metavariables() {
        let msg = err("language: rust\nrule:\n  pattern: a\n", None, true);
        assert!(msg.starts_with("rule: has no `fix`"), "{msg}");
        let msg = err(
            "language: rust\nrule:\n  pattern: foo($A)\nfix: bar($B)\n",
            None,
            true,
        );
        assert!(
            msg.contains("Undefined meta var `B` used in `fix`"),
            "{msg}"
        );
    }

    #[test]
    fn a_rule_without_kinds_is_explained() {
        let msg = err(
            "language: rust\nrule:\n  not:\n    pattern: a\n",
            None,
            false,
        );
        assert!(
            msg.starts_with("rule: can match no node kind as written"),
            "{msg}"
        );
    }

    #[test]
    fn the_shapes_of_the_patterns_a_match_needs() {
        let shapes = |text: &str| {
            compile_rules(text, "rule", Some(Lang::Rust), false).unwrap()[0]
                .shapes
                .len()
        };
        assert_eq!(shapes("rule: {pattern: 'fn $F() { $$$B }'}\n"), 1);
        assert_eq!(
            shapes(
                "rule:\n  all:\n    - pattern: $X?\n    - inside: {pattern: 'fn $F() { $$$B }', stopBy: end}\n"
            ),
            2
        );
        // Not under `not` or `any`; not for a pattern of one token.
        assert_eq!(
            shapes("rule:\n  pattern: $X?\n  not: {inside: {pattern: 'impl $T { $$$B }'}}\n"),
            1
        );
        assert_eq!(
            shapes("rule:\n  any:\n    - pattern: 'fn $F() {}'\n    - pattern: x\n"),
            0
        );
    }

    #[test]
    fn several_documents_are_several_rules() {
        let rules = compile_rules(
            "rule: {pattern: a()}\n---\nrule: {pattern: b()}\n",
            "rule",
            Some(Lang::Rust),
            false,
        )
        .unwrap();
        assert_eq!(rules.len(), 2);
        let msg = err(
            "rule: {pattern: a()}\n---\nrule: {kind: nope}\n",
            Some(Lang::Rust),
            false,
        );
        assert!(
            msg.starts_with("rule (document 2): line 3: `kind: nope`"),
            "{msg}"
        );
    }

    #[test]
    fn literals_skip_what_need_not_occur() {
        let rules = compile_rules(
            "rule:\n  pattern: foo($A)\n  inside:\n    pattern: fn bar() { $$$B }\n    stopBy: end\n  not:\n    has:\n      pattern: baz\n",
            "rule",
            Some(Lang::Rust),
            false,
        )
        .unwrap();
        let texts: Vec<&str> = rules[0].literals.iter().map(|l| l.text.as_str()).collect();
        assert!(
            texts.contains(&"foo") && texts.contains(&"bar"),
            "{texts:?}"
        );
        assert!(!texts.contains(&"baz"), "{texts:?}");
    }
}
