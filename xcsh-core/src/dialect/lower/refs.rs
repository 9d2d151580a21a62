//! `$ref`s: resolving a pointer, finding the references a schema makes, keeping the ones
//! on a cycle as references and inlining the rest.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::merge::merge_into;
use super::{ANNOTATIONS, DOCUMENT_KEYWORDS, FieldPath, LowerError, LowerErrorKind, Lowerer};
use crate::dialect::SINGLE_SUBSCHEMA_KEYWORDS;
use crate::schema::JsonObject;

/// Where a `$ref` points.
fn resolve_pointer<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Err("it points outside this schema".into());
    };
    let fragment = percent_decode(fragment);
    if fragment.is_empty() {
        return Ok(root);
    }
    let Some(pointer) = fragment.strip_prefix('/') else {
        return Err("anchors (`#name`) are not supported".into());
    };
    let mut at = root;
    for raw in pointer.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Object(map) => map.get(&token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        }
        .ok_or_else(|| format!("nothing at `{fragment}`"))?;
    }
    Ok(at)
}

/// Decodes `%XX` escapes (URI fragments may carry them); anything malformed stays as is.
fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

/// Calls `f` on every direct subschema of `schema`, in keyword order. Definitions
/// (`$defs`) are not subschemas: they are reached only through references.
fn for_each_subschema<'a>(schema: &'a JsonObject, mut f: impl FnMut(&'a Value)) {
    for (key, value) in schema {
        match key.as_str() {
            "properties" | "patternProperties" | "dependentSchemas" => {
                if let Value::Object(map) = value {
                    map.values().for_each(&mut f);
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let Value::Array(items) = value {
                    items.iter().for_each(&mut f);
                }
            }
            "items" => match value {
                Value::Array(items) => items.iter().for_each(&mut f),
                other => f(other),
            },
            k if SINGLE_SUBSCHEMA_KEYWORDS.contains(&k) => f(value),
            _ => {}
        }
    }
}

/// The `$ref`s that appear in `schema` itself or its subschemas (not through other refs).
fn refs_in(schema: &Value, out: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::String(r)) = map.get("$ref") {
        out.push(r.clone());
    }
    for_each_subschema(map, |sub| refs_in(sub, out));
}

/// The reference targets to keep as `$ref` so that no reference cycle is inlined: the
/// targets of back edges of a depth-first walk from the root. Every cycle has at least one
/// back edge in any depth-first walk, so cutting those cuts every cycle; acyclic targets
/// (the vast majority) are still inlined. Linear in the size of the schema.
pub(super) fn recursive_targets(root: &Value) -> HashSet<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Open,
        Done,
    }
    let mut state: HashMap<String, State> = HashMap::new();
    let mut keep = HashSet::new();
    // Explicit stack: a long chain of definitions must not overflow the thread's stack.
    let mut stack: Vec<(String, Vec<String>, usize)> = Vec::new();
    let mut first = Vec::new();
    refs_in(root, &mut first);
    state.insert("#".into(), State::Open);
    stack.push(("#".into(), first, 0));
    while let Some((_, children, next)) = stack.last_mut() {
        let Some(child) = children.get(*next).cloned() else {
            if let Some((done, _, _)) = stack.pop() {
                state.insert(done, State::Done);
            }
            continue;
        };
        *next += 1;
        match state.get(&child) {
            Some(State::Open) => {
                keep.insert(child);
            }
            Some(State::Done) => {}
            None => {
                let mut grand = Vec::new();
                if let Ok(target) = resolve_pointer(root, &child) {
                    refs_in(target, &mut grand);
                }
                state.insert(child.clone(), State::Open);
                stack.push((child, grand, 0));
            }
        }
    }
    keep
}

/// A readable name for a reference target: `Tree` for `#/$defs/Tree`.
fn type_name_of(reference: &str) -> String {
    if reference == "#" {
        return "the root type".into();
    }
    percent_decode(reference)
        .rsplit('/')
        .next()
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| reference.to_owned())
}

fn escape_pointer_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

impl Lowerer<'_> {
    /// The object a reference points to, for inlining.
    pub(super) fn resolve_object(
        &self,
        reference: &str,
        path: &FieldPath,
    ) -> Result<JsonObject, LowerError> {
        let bad = |reason: String| {
            self.err(
                path,
                LowerErrorKind::BadRef {
                    reference: reference.to_owned(),
                    reason,
                },
            )
        };
        match resolve_pointer(self.root, reference).map_err(bad)? {
            Value::Object(map) => Ok(map
                .iter()
                .filter(|(k, _)| !DOCUMENT_KEYWORDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()),
            Value::Bool(true) => Ok(Map::new()),
            Value::Bool(false) => Ok(Map::from_iter([("not".to_owned(), json!({}))])),
            _ => Err(bad("the target is not a schema".into())),
        }
    }

    pub(super) fn lower_ref(
        &mut self,
        reference: &str,
        schema: &JsonObject,
        path: &FieldPath,
        depth: usize,
    ) -> Result<Value, LowerError> {
        let siblings: JsonObject = schema
            .iter()
            .filter(|(k, _)| k.as_str() != "$ref" && !DOCUMENT_KEYWORDS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if self.keep.contains(reference) {
            let target = self.keep_target(reference, path, depth)?;
            if siblings.is_empty() {
                return Ok(json!({"$ref": target}));
            }
            if self.strict() {
                // OpenAI refuses keywords beside `$ref` (its own SDK unravels such refs, which
                // a recursive one cannot be); a one-branch anyOf carries the field's
                // description instead.
                if !siblings.keys().all(|k| ANNOTATIONS.contains(&k.as_str())) {
                    return Err(self.err(path, LowerErrorKind::RefWithKeywords));
                }
                let mut out = siblings;
                let notes = Self::default_note(&out).into_iter().collect();
                Self::restate(&mut out, notes);
                out.retain(|k, _| k == "description");
                out.insert("anyOf".into(), json!([{"$ref": target}]));
                return Ok(Value::Object(out));
            }
            // JSON Schema 2020-12 applies keywords beside `$ref` together with it.
            let Value::Object(mut rest) = self.lower_keywords(&siblings, path, depth)? else {
                return Err(self.err(path, LowerErrorKind::RefWithKeywords));
            };
            rest.insert("$ref".into(), Value::String(target));
            return Ok(Value::Object(rest));
        }
        if self.stack.iter().any(|r| r == reference) {
            return Err(self.err(
                path,
                LowerErrorKind::Recursive {
                    type_name: type_name_of(reference),
                },
            ));
        }
        let mut merged = self.resolve_object(reference, path)?;
        merge_into(&mut merged, &siblings)
            .map_err(|detail| self.err(path, LowerErrorKind::Contradiction { detail }))?;
        self.stack.push(reference.to_owned());
        // The inlined body stands where the `$ref` stood: same path, same depth.
        self.nodes -= 1;
        let result = self.lower_map(&merged, path, depth);
        self.stack.pop();
        result
    }

    /// Lowers a kept (recursive) definition once, and returns the reference to use for it.
    fn keep_target(
        &mut self,
        reference: &str,
        path: &FieldPath,
        depth: usize,
    ) -> Result<String, LowerError> {
        if reference == "#" {
            return Ok("#".into());
        }
        if let Some(name) = self.kept_names.get(reference) {
            return Ok(format!("#/$defs/{}", escape_pointer_token(name)));
        }
        let base = type_name_of(reference);
        let mut name = base.clone();
        let mut n = 2;
        while self.kept_names.values().any(|taken| taken == &name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.kept_names.insert(reference.to_owned(), name.clone());
        let mut body = self.resolve_object(reference, path)?;
        body.remove("title");
        // Inline-cycle detection starts afresh inside a definition: its own refs to kept
        // targets stay references.
        let saved = std::mem::take(&mut self.stack);
        let lowered = self.lower_map(&body, path, depth + 1);
        self.stack = saved;
        self.kept.push((name.clone(), lowered?));
        Ok(format!("#/$defs/{}", escape_pointer_token(&name)))
    }
}
