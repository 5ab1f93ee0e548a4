//! A server's answer as a tool result: its text, structured content and resources, bounded like
//! every tool result; images and audio listed, never sent to a text model; an `isError` answer
//! as a tool error the model reads.

use crate::connection::CallFailure;
use lantern_core::error::{ErrorType, ToolError};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{json, Value};

/// The most characters of text a result keeps.
const MAX_TEXT_CHARS: usize = 16_000;

/// The result of `tool` of `server`, with Lantern's `note` (a restart) when there is one.
pub fn result_of(
    server: &str,
    tool: &str,
    result: CallToolResult,
    note: Option<String>,
) -> Result<Value, ToolError> {
    let mut texts: Vec<String> = Vec::new();
    let mut attachments: Vec<Value> = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => texts.push(t.text.clone()),
            ContentBlock::Image(i) => attachments.push(json!({
                "kind": "image", "mime_type": i.mime_type, "base64_chars": i.data.len(),
            })),
            ContentBlock::Audio(a) => attachments.push(json!({
                "kind": "audio", "mime_type": a.mime_type, "base64_chars": a.data.len(),
            })),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    texts.push(format!("[{uri}]\n{text}"))
                }
                ResourceContents::BlobResourceContents { uri, mime_type, .. } => attachments
                    .push(json!({"kind": "resource", "uri": uri, "mime_type": mime_type})),
                _ => {}
            },
            ContentBlock::ResourceLink(link) => attachments.push(json!({
                "kind": "link", "uri": link.uri, "name": link.name,
            })),
            _ => attachments.push(json!({"kind": "other"})),
        }
    }
    let (text, cut) = bounded(&texts.join("\n"));
    if result.is_error == Some(true) {
        return Err(ToolError::new(
            ErrorType::InternalError,
            format!("{server}.{tool} reported an error: {text}"),
        )
        .with_hint("Read the error; fix the arguments or answer without this tool."));
    }
    let mut data = json!({ "text": text });
    if let Some(structured) = result.structured_content {
        data["structured"] = structured;
    }
    if !attachments.is_empty() {
        data["attachments"] = Value::Array(attachments);
    }
    if cut > 0 {
        data["truncated"] = json!(format!("{cut} more characters were left out"));
    }
    if let Some(note) = note {
        data["note"] = json!(note);
    }
    Ok(data)
}

/// A call that gave no result, as an error for the model and the user.
pub fn failure_of(server: &str, tool: &str, failure: CallFailure) -> ToolError {
    match failure {
        CallFailure::Timeout(seconds) => ToolError::new(
            ErrorType::Timeout,
            format!("{server}.{tool} did not answer within {seconds} s; the call was cancelled"),
        ),
        CallFailure::Cancelled => ToolError::new(
            ErrorType::Timeout,
            format!("{server}.{tool} was stopped by the user"),
        ),
        CallFailure::Gone(why) => ToolError::io(format!(
            "the MCP server {server} stopped during {tool} ({why}); it is started again on the next call"
        )),
        CallFailure::Refused(why) => {
            ToolError::invalid(format!("{server} refused the call of {tool}: {why}"))
        }
    }
}

/// `text` cut to [`MAX_TEXT_CHARS`], and how many characters were left out.
fn bounded(text: &str) -> (String, usize) {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        None => (text.to_string(), 0),
        Some((cut, _)) => (text[..cut].to_string(), text[cut..].chars().count()),
    }
}
