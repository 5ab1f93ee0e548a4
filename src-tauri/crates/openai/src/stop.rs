//! Putting back the stop sequence the server took away.
//!
//! An OpenAI-compatible server ends a reply at a stop sequence and leaves the sequence out of the
//! text it sends. Lantern's stop sequences are the closing tags of tool calls (see
//! [`lantern_core::protocol::STOP_SEQUENCES`]), and its parser needs the closing tag to see a
//! complete call. The API does not say which sequence matched, and reports the same `"stop"` when
//! the model simply ended its reply, so the match is inferred from the text: if it ends inside an
//! opened tag whose closing tag is a stop sequence, that closing tag is what stopped it.
//!
//! When the model really ended inside an open tag, appending the closer turns an unfinished call
//! into a finished one; the parser then judges it like any call (a cut-off argument object is
//! still invalid and the model is told so), so the guess costs little either way.

/// The closing tag to append to `text`, if the text ends inside a tag whose closing tag is one
/// of `stop`. With several open tags, the innermost (the one opened last) is closed.
pub(crate) fn unclosed_tag<'s>(text: &str, stop: &[&'s str]) -> Option<&'s str> {
    stop.iter()
        .filter_map(|closer| {
            let name = closer.strip_prefix("</")?.strip_suffix('>')?;
            let opened = last_opening(text, name)?;
            (!text[opened..].contains(closer)).then_some((opened, *closer))
        })
        .max_by_key(|(opened, _)| *opened)
        .map(|(_, closer)| closer)
}

/// Where the last opening tag `<name>` or `<name=…>` (Llama 3's `<function=read_file>`) begins.
/// `<tool` followed by `_call>` is not an opening `<tool>` tag, hence the check of what follows.
fn last_opening(text: &str, name: &str) -> Option<usize> {
    let tag = format!("<{name}");
    text.rmatch_indices(&tag)
        .map(|(at, _)| at)
        .find(|&at| matches!(text[at + tag.len()..].chars().next(), Some('>' | '=')))
}

#[cfg(test)]
mod tests {
    use super::unclosed_tag;
    use lantern_core::protocol::STOP_SEQUENCES;

    #[test]
    fn an_open_native_call_gets_its_closing_tag() {
        let text =
            "Let me look.\n<TOOL_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"a\"}}\n";
        assert_eq!(unclosed_tag(text, STOP_SEQUENCES), Some("</TOOL_CALL>"));
    }

    #[test]
    fn every_dialect_with_a_closing_tag_is_recognised() {
        let cases = [
            ("<tool_call>{\"name\": \"x\"}", "</tool_call>"),
            ("<function=read_file>{\"path\": \"a\"}", "</function>"),
            ("<tool>{\"name\": \"x\"}", "</tool>"),
        ];
        for (text, closer) in cases {
            assert_eq!(unclosed_tag(text, STOP_SEQUENCES), Some(closer), "{text}");
        }
    }

    #[test]
    fn plain_text_and_closed_calls_get_nothing() {
        assert_eq!(unclosed_tag("The version is 2.4.1.", STOP_SEQUENCES), None);
        let closed = "<TOOL_CALL>{\"tool\": \"x\"}</TOOL_CALL> and more";
        assert_eq!(unclosed_tag(closed, STOP_SEQUENCES), None);
        // A prefix of another tag's name is not an opening tag.
        assert_eq!(unclosed_tag("<tool_calls> <toolbox>", &["</tool>"]), None);
    }

    #[test]
    fn the_innermost_open_tag_is_closed() {
        let text = "<tool_call>\n<function=read_file>{\"path\": \"a\"}";
        assert_eq!(unclosed_tag(text, STOP_SEQUENCES), Some("</function>"));
    }

    #[test]
    fn a_call_opened_again_after_a_closed_one_counts() {
        let text = "<TOOL_CALL>{}</TOOL_CALL>\n<TOOL_CALL>{\"tool\": \"x\"}";
        assert_eq!(unclosed_tag(text, STOP_SEQUENCES), Some("</TOOL_CALL>"));
    }
}
