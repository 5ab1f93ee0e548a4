//! What the user attaches to a message with `@`: a file of the workspace (`@src/cart.ts`) or a
//! definition the code index knows (`@Cart`, `@Cart.total`, `@parse_args`). Each is given to the
//! model before the message, bounded, and reported so the window shows what was given.
//!
//! Only what the tools could read is attached: a file the walk lists (not ignored, not in a
//! version-control folder, not Lantern's own), read through the sandbox. A mention that names
//! neither a file nor a definition is left in the message as it is, and said so.

use crate::code_index::ProjectIndex;
use crate::model::KnownPaths;
use crate::sandbox::Workspace;
use crate::tools::current_content;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The most attachments one message takes; more are said to be left out.
pub const MAX_ATTACHMENTS: usize = 4;

/// The most characters of one attachment given to the model.
pub const MAX_ATTACHED_CHARS: usize = 6_000;

/// What a mention attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttachmentKind {
    File,
    Definition,
}

/// One thing the user attached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Attachment {
    /// As the message wrote it, without the `@`.
    pub mention: String,
    pub kind: AttachmentKind,
    /// The file it comes from, relative to the workspace.
    pub path: String,
    /// The lines given (1-based, inclusive).
    pub start_line: u32,
    pub end_line: u32,
    /// The text given to the model.
    pub text: String,
    /// Whether the text was cut to [`MAX_ATTACHED_CHARS`].
    pub cut: bool,
}

/// The `@` mentions of a message, in order, without the `@` and trailing punctuation: a word
/// that starts with `@` (after an opening bracket or quote, if any), never an `@` inside a
/// word (`name@example.com` is no mention).
pub fn mentions_in(message: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    for word in message.split_whitespace() {
        let word = word.trim_start_matches(|c: char| "([{\"'`".contains(c));
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let mention = rest.trim_end_matches(|c: char| ".,;:!?)]}\"'`".contains(c));
        if !mention.is_empty() && !found.contains(&mention) {
            found.push(mention);
        }
    }
    found
}

/// The attachments of `message`, and what could not be attached, in words.
pub fn attach(
    message: &str,
    workspace: &Workspace,
    known: &KnownPaths,
    index: &ProjectIndex,
) -> (Vec<Attachment>, Vec<String>) {
    let mut attached = Vec::new();
    let mut problems = Vec::new();
    for mention in mentions_in(message) {
        if attached.len() == MAX_ATTACHMENTS {
            problems.push(format!(
                "@{mention} was not attached: a message takes at most {MAX_ATTACHMENTS}"
            ));
            continue;
        }
        match attachment_of(mention, workspace, known, index) {
            Some(attachment) => attached.push(attachment),
            None => problems.push(format!(
                "@{mention} names no file of the project and nothing its code defines"
            )),
        }
    }
    (attached, problems)
}

fn attachment_of(
    mention: &str,
    workspace: &Workspace,
    known: &KnownPaths,
    index: &ProjectIndex,
) -> Option<Attachment> {
    if known.has_file(mention) {
        let text = text_of(workspace, mention)?;
        let lines = text.lines().count().max(1) as u32;
        return Some(bounded(
            mention,
            AttachmentKind::File,
            mention,
            1,
            lines,
            &text,
        ));
    }
    let place = index
        .places_of(workspace, mention)
        .ok()?
        .into_iter()
        .next()?;
    let text = text_of(workspace, &place.path)?;
    let body: Vec<&str> = text
        .lines()
        .skip(place.start_line.saturating_sub(1) as usize)
        .take((place.end_line + 1).saturating_sub(place.start_line) as usize)
        .collect();
    Some(bounded(
        mention,
        AttachmentKind::Definition,
        &place.path,
        place.start_line,
        place.end_line,
        &body.join("\n"),
    ))
}

fn text_of(workspace: &Workspace, rel: &str) -> Option<String> {
    let path = workspace.resolve(rel).ok()?;
    let bytes = current_content(workspace, &path).ok()??;
    String::from_utf8(bytes).ok()
}

fn bounded(
    mention: &str,
    kind: AttachmentKind,
    path: &str,
    start_line: u32,
    end_line: u32,
    text: &str,
) -> Attachment {
    let (text, cut) = match text.char_indices().nth(MAX_ATTACHED_CHARS) {
        Some((at, _)) => (text[..at].to_string(), true),
        None => (text.to_string(), false),
    };
    Attachment {
        mention: mention.to_string(),
        kind,
        path: path.to_string(),
        start_line,
        end_line,
        text,
        cut,
    }
}

/// The attachments as the model is given them, before the message they came with.
pub fn message_of(attachments: &[Attachment]) -> String {
    let mut message = String::from("THE USER ATTACHED THIS TO THEIR NEXT MESSAGE:\n");
    for a in attachments {
        let what = match a.kind {
            AttachmentKind::File => a.path.clone(),
            AttachmentKind::Definition => format!("{} in {}", a.mention, a.path),
        };
        message.push_str(&format!(
            "\n--- {what} (lines {}-{}{}) ---\n{}\n--- end of {what} ---\n",
            a.start_line,
            a.end_line,
            if a.cut { ", cut" } else { "" },
            a.text.trim_end()
        ));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_is_a_word_that_starts_with_an_at_sign() {
        assert_eq!(
            mentions_in(
                "Why does @src/cart.ts call @withTax? Mail me@example.com (@Cart), @src/cart.ts."
            ),
            ["src/cart.ts", "withTax", "Cart"]
        );
        assert!(mentions_in("No mentions @ all").is_empty());
    }
}
