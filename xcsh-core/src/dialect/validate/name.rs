//! Tool names: each provider's allowed characters and length.

use serde_json::Value;

use super::Checker;
use crate::dialect::Dialect;

/// One provider's tool-name rule.
struct NameRule {
    max: usize,
    punctuation: &'static str,
    first_letter_or_underscore: bool,
    text: &'static str,
}

fn name_rule(dialect: Dialect) -> NameRule {
    match dialect {
        Dialect::Anthropic | Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Bedrock => {
            NameRule {
                max: 64,
                punctuation: "_-",
                first_letter_or_underscore: false,
                text: "1–64 characters of A-Z, a-z, 0-9, `_` and `-`",
            }
        }
        Dialect::Gemini => NameRule {
            max: 64,
            punctuation: "_.:-",
            first_letter_or_underscore: true,
            text: "a letter or `_`, then A-Z, a-z, 0-9, `_`, `.`, `:` and `-`, at most 64 characters",
        },
        Dialect::Mcp => NameRule {
            max: 128,
            punctuation: "_.-",
            first_letter_or_underscore: false,
            text: "1–128 characters of A-Z, a-z, 0-9, `_`, `-` and `.`",
        },
    }
}

impl Checker {
    pub(super) fn name_at(&mut self, dialect: Dialect, value: Option<&Value>, pointer: &str) {
        match value {
            Some(Value::String(name)) => self.name(dialect, name, pointer),
            Some(_) => self.push(pointer, "the tool name must be a string"),
            None => self.push(pointer, "the tool name is required"),
        }
    }

    pub(super) fn name(&mut self, dialect: Dialect, name: &str, pointer: &str) {
        let rule = name_rule(dialect);
        let len = name.chars().count();
        let bad_char = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || rule.punctuation.contains(*c)));
        let bad_first = rule.first_letter_or_underscore
            && !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        let problem = if len == 0 {
            Some("is empty".to_owned())
        } else if len > rule.max {
            Some(format!("is {len} characters long"))
        } else if let Some(c) = bad_char {
            Some(format!("contains {c:?}"))
        } else if bad_first {
            Some("does not start with a letter or `_`".to_owned())
        } else {
            None
        };
        if let Some(problem) = problem {
            self.push(
                pointer,
                format!(
                    "tool name `{name}` {problem}; {dialect} requires {}",
                    rule.text
                ),
            );
        }
    }
}
