//! One reply written token by token, once the step is decided to be a call or an answer:
//! what a call opens is grounded first (a tool name, a path, a quote, a file's text, an
//! edit's new text; see `grounding`, `spans`, `replacing`), then each token is chosen — by
//! the file's text, by a closing the grammar allows, or by the sampler under the grammar (an
//! answer steered to copy the results, never the prompt's made-up values) — and the reply
//! ends at a stop sequence, the call's end, a loop, the budget or Stop.

use super::grounding::{self, Grounded};
use super::*;

/// A reply being written: its text and tokens so far, the grammar that holds a call, and
/// what steers the next token.
pub(super) struct Reply {
    pub text: String,
    logits: Vec<f32>,
    grammar: Option<LlamaSampler>,
    /// The step was decided to be a call (its opening tag is written).
    call: bool,
    pub generated: usize,
    tokens: Vec<LlamaToken>,
    chain: Option<LlamaSampler>,
    utf8: Utf8Stream,
    longest_stop: usize,
    /// A call must end well-formed even when the model loops inside it or its budget runs
    /// low: from `closing_from` tokens on, the grammar-allowed token that closes something is
    /// preferred.
    closing_from: usize,
    closing: bool,
    /// Where in the text grounding was last tried, so it is tried once per position.
    grounded_at: usize,
    /// An argument being written as a piece of a file's text, while it is.
    span: Option<spans::FileSpan>,
    /// An edit's new text being written, and where in the text it began.
    replacing: Option<(replacing::Replacement, usize)>,
    /// The last results' text an answer is steered to copy from.
    evidence: Option<copying::Evidence>,
    /// The prompt's made-up values an answer may not write.
    made_up: Option<made_up::MadeUp>,
}

/// What grounding did at one position.
enum Ground {
    /// Nothing was chosen whole: the next token is sampled.
    Nothing,
    /// A whole value was written.
    Wrote,
    /// A whole value was written and the listener asked to stop.
    Stopped,
}

impl LocalModel {
    /// The state of a reply that starts with `text` (a call's opening tag, or nothing).
    pub(super) fn start_reply(
        &self,
        request: &GenerateRequest<'_>,
        text: String,
        logits: Vec<f32>,
        grammar: Option<LlamaSampler>,
        call: bool,
    ) -> Reply {
        Reply {
            text,
            logits,
            grammar,
            call,
            generated: 0,
            tokens: Vec::new(),
            chain: self.sampling_chain(),
            utf8: Utf8Stream::default(),
            longest_stop: request.stop.iter().map(|s| s.len()).max().unwrap_or(0),
            closing_from: request.max_tokens.saturating_sub(CLOSING_RESERVE),
            closing: false,
            grounded_at: usize::MAX,
            span: None,
            replacing: None,
            evidence: (!call && self.settings.options.copy_spans)
                .then(|| {
                    copying::Evidence::of_last_results(
                        request.this_turn(),
                        &request.question(),
                        self.settings.options.asked_values,
                    )
                })
                .flatten(),
            made_up: (!call && self.settings.options.shun_examples)
                .then(|| made_up::MadeUp::of(request.messages, request.tools))
                .flatten(),
        }
    }

    /// Writes the reply to its end, streaming its text to `on_text`; why it ended.
    pub(super) fn write_reply(
        &mut self,
        reply: &mut Reply,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
        stats: &mut StepStats,
        started: Instant,
    ) -> Result<FinishReason, ModelError> {
        let finish = loop {
            if request.cancel.is_cancelled() {
                break FinishReason::Cancelled;
            }
            if reply.generated >= request.max_tokens {
                break FinishReason::Length;
            }
            match self.ground_next(reply, request, on_text, stats)? {
                Ground::Wrote => continue,
                Ground::Stopped => break FinishReason::Stop,
                Ground::Nothing => {}
            }
            // Greedy decoding of a tiny model can fall into a loop; outside a call (the
            // grammar bounds those) a reply that only repeats itself is ended.
            let looping = !reply.closing && is_looping(&reply.tokens);
            let repeating = !reply.call && repeats_itself(&reply.tokens);
            if reply.grammar.is_none() && (looping || repeating) {
                stats.stopped_looping = true;
                break FinishReason::Repeating;
            }
            if reply.grammar.is_some()
                && !reply.closing
                && (looping || reply.generated >= reply.closing_from)
            {
                reply.closing = true;
                stats.stopped_looping |= looping;
                if self.closers.is_none() {
                    self.closers = Some(closer_tokens(&self.model));
                }
            }
            let Some(token) = self.choose_next(reply) else {
                break FinishReason::EndOfText;
            };
            if reply.generated == 0 {
                stats.first_token_ms = started.elapsed().as_secs_f64() * 1000.0;
            }
            if let Some(finish) = self.take_token(reply, token, request, on_text)? {
                break finish;
            }
        };
        let rest = reply.utf8.finish();
        if !rest.is_empty() && finish != FinishReason::Stop {
            reply.text.push_str(&rest);
            on_text(&rest);
        }
        Ok(finish)
    }

    /// A tool name or a grounded argument the call has just opened, chosen whole (see
    /// `grounding`), once per position.
    fn ground_next(
        &mut self,
        reply: &mut Reply,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
        stats: &mut StepStats,
    ) -> Result<Ground, ModelError> {
        let Some(g) = reply.grammar.as_mut() else {
            return Ok(Ground::Nothing);
        };
        if reply.closing || reply.grounded_at == reply.text.len() {
            return Ok(Ground::Nothing);
        }
        let call_text = &reply.text[self.syntax.json_start()..];
        let name_key = self.syntax.name_key;
        // What the text has just opened, read once for every kind of grounding.
        let opened = grounding::open_grounded_argument(call_text, name_key, request.tools);
        if reply.replacing.is_none() {
            reply.replacing = self
                .open_replacement(opened.as_ref(), call_text, request)
                .map(|r| (r, reply.text.len()));
        }
        let logits = &reply.logits;
        let grounded: Option<Grounded> = if reply.span.is_some() {
            None
        } else if grounding::grounded_value_opens_next(call_text, name_key, request.tools) {
            let quotes = match call_text.ends_with(':') {
                true => vec![("\"".to_string(), 0.0), (" \"".to_string(), 0.0)],
                false => vec![("\"".to_string(), 0.0)],
            };
            self.write_best(&quotes, logits, g, request.cancel)?
        } else if let Some((started, file)) = self.open_span(opened.as_ref(), call_text, request) {
            let (after, written) = self.start_span(started, &file, request, logits, g)?;
            reply.span = after;
            written
        } else {
            self.ground_what_opened(opened, call_text, request, logits, g, stats)?
        };
        reply.grounded_at = reply.text.len();
        let Some(grounded) = grounded else {
            return Ok(Ground::Nothing);
        };
        reply.generated += grounded.tokens.len();
        reply.text.push_str(&grounded.text);
        reply.tokens.extend_from_slice(&grounded.tokens);
        reply.logits = grounded.logits;
        Ok(match on_text(&grounded.text) {
            Flow::Stop => Ground::Stopped,
            Flow::Continue => Ground::Wrote,
        })
    }

    /// The next token: the file's text while an edit's old text is written, a closing once
    /// the call must end, else the sampler's choice under the grammar (an answer steered
    /// towards the results' text and kept from opening a call). `None` when nothing can
    /// follow.
    fn choose_next(&self, reply: &mut Reply) -> Option<LlamaToken> {
        let closing = reply.closing;
        let spans_open = reply.span.as_ref();
        match (closing, reply.grammar.as_mut(), &self.closers, spans_open) {
            // An edit's old text goes on with the file's text (see `spans`).
            (_, Some(g), _, Some(open)) => {
                match self.choose_in_span(&reply.logits, g, open, closing) {
                    Some((token, fed)) => {
                        reply.span = match fed {
                            spans::Fed::Continues(next) => Some(next),
                            spans::Fed::Closes | spans::Fed::Refused => None,
                        };
                        Some(token)
                    }
                    // Nothing in the file can follow (it cannot happen while a place is left):
                    // decoding goes on as the grammar alone allows.
                    None => {
                        reply.span = None;
                        choose(&reply.logits, Some(g), &mut reply.chain, &mut |_| false)
                    }
                }
            }
            (true, Some(g), Some(closers), None) => {
                let in_string = inside_json_string(&reply.text[self.syntax.json_start()..]);
                pick_closing(&reply.logits, g, closers.for_position(in_string))
            }
            (_, grammar, _, _) => {
                let vocab = self.model.vocab();
                let piece_of = |t: LlamaToken| {
                    String::from_utf8_lossy(&vocab.token_to_piece(t, false, None)).into_owned()
                };
                let text = &reply.text;
                if let (Some(evidence), None) = (&reply.evidence, &grammar) {
                    evidence.favour(text, &mut reply.logits, &mut |t| piece_of(t));
                }
                // The new text ends with its string; until then it is steered.
                if reply
                    .replacing
                    .as_ref()
                    .is_some_and(|(_, start)| !inside_json_string(&text[*start - 1..]))
                {
                    reply.replacing = None;
                }
                let new_text = reply
                    .replacing
                    .as_ref()
                    .map(|(r, start)| (r, &text[*start..]));
                if let Some((replacement, written)) = new_text {
                    let mut tokenize = |text: &str| vocab.tokenize(text.as_bytes(), false, false);
                    replacement.favour(
                        written,
                        &mut reply.logits,
                        &mut |t| piece_of(t),
                        &mut tokenize,
                    );
                }
                // An answer is an answer: once the step is decided (or forced) to be one, the
                // model cannot open a call after all.
                let ban_openers = !reply.call;
                let made_up = reply.made_up.as_ref();
                let mut banned = |t: LlamaToken| {
                    let ends_equal = new_text
                        .is_some_and(|(r, written)| r.would_end_unchanged(written, &piece_of(t)));
                    ends_equal
                        || ban_openers && !vocab.is_eog(t) && would_open_a_call(text, &piece_of(t))
                        || made_up.is_some_and(|m| m.refuses(text, &piece_of(t)))
                };
                choose(&reply.logits, grammar, &mut reply.chain, &mut banned)
            }
        }
    }

    /// Takes `token` into the reply: the grammar, the text and the cache. `Some` when the
    /// reply ends with it — its end of text, a stop sequence (the reply ends right after it;
    /// a constrained call ends only where its grammar does, as a closing tag inside a string
    /// argument is content), or the listener's Stop.
    fn take_token(
        &mut self,
        reply: &mut Reply,
        token: LlamaToken,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Option<FinishReason>, ModelError> {
        reply.generated += 1;
        if let Some(g) = reply.grammar.as_mut() {
            g.accept(token);
        }
        if self.model.vocab().is_eog(token) {
            return Ok(Some(FinishReason::EndOfText));
        }
        let piece = reply
            .utf8
            .push(&self.model.vocab().token_to_piece(token, false, None));
        let before = reply.text.len();
        reply.text.push_str(&piece);
        let search_from = before.saturating_sub(reply.longest_stop);
        let stop_end = if reply.grammar.is_some() {
            closed_call_end(&reply.text, search_from, &self.syntax)
        } else {
            stop_sequence_end(&reply.text, search_from, before, request.stop)
        };
        if let Some(end) = stop_end {
            reply.text.truncate(end);
            if end > before {
                on_text(&reply.text[before..]);
            }
            return Ok(Some(FinishReason::Stop));
        }
        if !piece.is_empty() && on_text(&piece) == Flow::Stop {
            return Ok(Some(FinishReason::Stop));
        }
        reply.logits = self.append(&[token])?;
        reply.tokens.push(token);
        Ok(None)
    }
}
