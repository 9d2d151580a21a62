//! Bounds on what a call's arguments and error texts may be: a model can send anything, and
//! neither a 10 MB string echoed back nor a 10,000-level nesting may hurt the session.

use serde_json::Value;

use crate::result::{AgentToolResult, Content};

/// A value quoted in an error text (between backticks or double quotes) longer than this
/// many characters is shortened: errors name what the model sent, they must not echo 10 MB.
const MAX_QUOTED_CHARS: usize = 200;
/// An error text still longer than this keeps only its start and its end.
const MAX_ERROR_CHARS: usize = 8 * 1024;

/// Shortens long quoted values in an error result's texts, then over-long texts.
pub(crate) fn shorten_error_texts(result: &mut AgentToolResult) {
    for content in &mut result.content {
        if let Content::Text { text } = content
            && text.len() > MAX_QUOTED_CHARS
        {
            let mut short = shorten_quotes(text);
            if short.len() > MAX_ERROR_CHARS {
                short = keep_ends(&short, MAX_ERROR_CHARS / 2);
            }
            *text = short;
        }
    }
}

/// `text` with every backtick- or double-quoted span longer than [`MAX_QUOTED_CHARS`]
/// shortened to its start and a count of what was left out.
fn shorten_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_ERROR_CHARS));
    let mut rest = text;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().unwrap_or('`');
        let inner_start = open + quote.len_utf8();
        let Some(len) = rest[inner_start..].find(quote) else {
            break;
        };
        let inner = &rest[inner_start..inner_start + len];
        out.push_str(&rest[..inner_start]);
        let chars = inner.chars().count();
        if chars > MAX_QUOTED_CHARS {
            out.extend(inner.chars().take(MAX_QUOTED_CHARS / 2));
            out.push_str(&format!(
                "… ({} more characters)",
                chars - MAX_QUOTED_CHARS / 2
            ));
        } else {
            out.push_str(inner);
        }
        out.push(quote);
        rest = &rest[inner_start + len + quote.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// The first and last `keep` bytes of `text` (on character boundaries) around a note.
fn keep_ends(text: &str, keep: usize) -> String {
    let mut head = keep.min(text.len());
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len().saturating_sub(keep).max(head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{} … ({} bytes left out) … {}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// How deeply a call's arguments may nest arrays and objects: serde_json's parser refuses
/// deeper JSON text, so only a `Value` built in code can exceed it — and dropping or
/// decoding one 10,000 levels deep recursively overflows a thread's stack.
pub const MAX_ARGUMENT_DEPTH: usize = 128;

/// Whether `value` nests arrays and objects more than `max` levels deep.
pub(crate) fn nests_deeper_than(value: &Value, max: usize) -> bool {
    // Recursion stops at `max` levels, so it cannot overflow the stack, and the common
    // shallow case allocates nothing.
    match value {
        Value::Array(items) => max == 0 || items.iter().any(|c| nests_deeper_than(c, max - 1)),
        Value::Object(fields) => max == 0 || fields.values().any(|c| nests_deeper_than(c, max - 1)),
        _ => false,
    }
}

/// Drops `value` one level at a time, so its depth cannot overflow the stack.
pub(crate) fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(fields) => stack.extend(fields.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}
