//! Provider dialects: how each LLM API wants tool definitions, schemas and tool choice.

use serde::{Deserialize, Serialize};

/// An LLM API (or protocol) whose tool-definition format xcsh can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions API.
    OpenAiChat,
    /// OpenAI Responses API.
    OpenAiResponses,
    /// Google Gemini `generateContent` API.
    Gemini,
    /// Amazon Bedrock Converse API.
    Bedrock,
    /// Model Context Protocol (`tools/list`).
    Mcp,
}
