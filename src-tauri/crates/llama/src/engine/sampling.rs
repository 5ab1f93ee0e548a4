//! Choosing the next token: greedy or sampled, checked against the call grammar best
//! candidates first, and closing a call that loops or runs out of budget.

use super::*;

/// The last tokens of a reply's budget are kept for closing a call that is still open.
pub(super) const CLOSING_RESERVE: usize = 48;

/// Picks the next token: sample without the grammar, check only that token against it, and
/// run the full grammar pass over the vocabulary only when the token is rejected (a full pass
/// every token costs a large vocabulary much of its speed). Greedy decoding goes further and
/// checks the next-best tokens one by one first (see [`greedy_allowed`]). Tokens `banned`
/// rejects are never picked.
pub(super) fn choose(
    logits: &[f32],
    mut grammar: Option<&mut LlamaSampler>,
    chain: &mut Option<LlamaSampler>,
    banned: &mut dyn FnMut(LlamaToken) -> bool,
) -> Option<LlamaToken> {
    let mut excluded: Vec<LlamaToken> = Vec::new();
    for _ in 0..16 {
        let token = match (grammar.as_deref_mut(), chain.is_none()) {
            (Some(g), true) => greedy_allowed(logits, &excluded, g)?,
            (Some(g), false) => {
                let sampled = pick(logits, &excluded, None, chain)?;
                if grammar_allows(g, sampled, logits[sampled.0 as usize]) {
                    sampled
                } else {
                    pick(logits, &excluded, Some(g), chain)?
                }
            }
            (None, _) => pick(logits, &excluded, None, chain)?,
        };
        if banned(token) {
            excluded.push(token);
            continue;
        }
        return Some(token);
    }
    // The likeliest picks were all banned: leave out every banned token among the likeliest
    // few hundred at once, so a reply does not end just because its likeliest starts are banned.
    let excluded: Vec<LlamaToken> = best_by_logit(logits, &[], 512)
        .into_iter()
        .filter(|t| banned(*t))
        .collect();
    pick(logits, &excluded, grammar, chain).filter(|t| !banned(*t))
}

/// How many of the best tokens [`greedy_allowed`] checks one by one before it falls back to a
/// full grammar pass.
const GRAMMAR_CANDIDATES: usize = 16;

/// The greedy pick under the grammar: the best token by logit that the grammar allows, the
/// token a full grammar pass and then a greedy pick would give. The best few candidates are
/// checked one at a time, best first, and the full pass (costly for a large vocabulary) runs
/// only when none of them is allowed.
fn greedy_allowed(
    logits: &[f32],
    excluded: &[LlamaToken],
    grammar: &mut LlamaSampler,
) -> Option<LlamaToken> {
    best_by_logit(logits, excluded, GRAMMAR_CANDIDATES)
        .into_iter()
        .find(|t| grammar_allows(grammar, *t, logits[t.0 as usize]))
        .or_else(|| pick(logits, excluded, Some(grammar), &mut None))
}

/// The `k` tokens with the highest finite logits, best first, leaving out `excluded`. Of equal
/// logits the later token comes first, as with the last maximum the greedy pick takes.
pub(super) fn best_by_logit(logits: &[f32], excluded: &[LlamaToken], k: usize) -> Vec<LlamaToken> {
    // Later tokens win ties, so (logit, index) pairs compare as a whole.
    let beats = |a: (f32, usize), b: (f32, usize)| a.0 > b.0 || (a.0 == b.0 && a.1 > b.1);
    let mut best: Vec<(f32, usize)> = Vec::with_capacity(k + 1);
    for (i, &logit) in logits.iter().enumerate() {
        if !logit.is_finite() || (best.len() == k && !beats((logit, i), best[k - 1])) {
            continue;
        }
        if excluded.contains(&LlamaToken(i as i32)) {
            continue;
        }
        let at = best.partition_point(|&b| beats(b, (logit, i)));
        best.insert(at, (logit, i));
        best.truncate(k);
    }
    best.into_iter()
        .map(|(_, i)| LlamaToken(i as i32))
        .collect()
}

/// Picks a token from `logits`, never one in `excluded`: greedy when `chain` is `None`.
pub(super) fn pick(
    logits: &[f32],
    excluded: &[LlamaToken],
    grammar: Option<&mut LlamaSampler>,
    chain: &mut Option<LlamaSampler>,
) -> Option<LlamaToken> {
    if grammar.is_none() && chain.is_none() {
        // The hot path: greedy, no allocation.
        return logits
            .iter()
            .enumerate()
            .filter(|(i, l)| l.is_finite() && !excluded.contains(&LlamaToken(*i as i32)))
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| LlamaToken(i as i32));
    }
    let mut data = LlamaTokenDataArray::from_iter(
        logits.iter().enumerate().map(|(i, l)| {
            let token = LlamaToken(i as i32);
            let logit = if excluded.contains(&token) {
                f32::NEG_INFINITY
            } else {
                *l
            };
            LlamaTokenData::new(token, logit, 0.0)
        }),
        false,
    );
    if let Some(g) = grammar {
        data.apply_sampler(g);
    }
    match chain {
        Some(chain) => {
            data.apply_sampler(chain);
            data.selected_token()
        }
        None => data
            .data
            .iter()
            .filter(|d| d.logit().is_finite())
            .max_by(|a, b| a.logit().total_cmp(&b.logit()))
            .map(|d| d.id()),
    }
}

/// Where a constrained call (`text` starts with the opening tag of `syntax`) ends: just after
/// its closing tag, found at or after `from`, that follows a complete JSON object.
pub(super) fn closed_call_end(text: &str, from: usize, syntax: &CallSyntax) -> Option<usize> {
    let parses = |body: &str| serde_json::from_str::<serde_json::Value>(body).is_ok();
    if syntax.close.is_empty() {
        return parses(&text[syntax.json_start()..]).then_some(text.len());
    }
    let from = (from..=text.len()).find(|i| text.is_char_boundary(*i))?;
    let mut at = from;
    while let Some(i) = text[at..].find(syntax.close) {
        let tag = at + i;
        let body = text.get(syntax.json_start()..tag).unwrap_or("");
        if parses(body) {
            return Some(tag + syntax.close.len());
        }
        at = tag + 1;
    }
    None
}

/// The tokens that close what is open in a call: inside a string only a quote does (a brace
/// there is content); outside one, a closing brace or bracket. Once the JSON is complete the
/// grammar allows nothing but the closing tag, so that needs no preference.
pub(super) struct Closers {
    pub(super) quote: Vec<bool>,
    pub(super) bracket: Vec<bool>,
}

impl Closers {
    pub(super) fn for_position(&self, in_string: bool) -> &[bool] {
        if in_string {
            &self.quote
        } else {
            &self.bracket
        }
    }
}

/// Marks the tokens whose text, after leading spaces, begins with a quote, or with `}` or `]`.
pub(super) fn closer_tokens(model: &LlamaModel) -> Closers {
    let (mut quote, mut bracket) = (Vec::new(), Vec::new());
    for i in 0..model.n_vocab() {
        let piece = model.vocab().token_to_piece(LlamaToken(i), false, None);
        let text = String::from_utf8_lossy(&piece);
        let text = text.trim_start();
        quote.push(text.starts_with('"'));
        bracket.push(text.starts_with(['}', ']']));
    }
    Closers { quote, bracket }
}

/// Does this JSON text end inside a string?
pub(super) fn inside_json_string(json: &str) -> bool {
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => in_string = !in_string,
            _ => {}
        }
    }
    in_string
}

/// The grammar-allowed token to close an open call with: the likeliest closer, else the
/// likeliest allowed token (when the grammar requires more first, such as a missing field).
pub(super) fn pick_closing(
    logits: &[f32],
    grammar: &mut LlamaSampler,
    closers: &[bool],
) -> Option<LlamaToken> {
    const PREFERENCE: f32 = 1.0e4;
    let preferred: Vec<f32> = logits
        .iter()
        .zip(closers)
        .map(|(l, c)| if *c { l + PREFERENCE } else { *l })
        .collect();
    greedy_allowed(&preferred, &[], grammar)
}

/// Does the reply end in the same run of one to 32 tokens repeated over and over (at least
/// four times, and over at least 16 tokens, so "----" or a blank line or two are not loops)?
pub(super) fn is_looping(tokens: &[LlamaToken]) -> bool {
    (1..=32).any(|period| {
        let span = (period * 4).max(16);
        tokens.len() >= span && {
            let tail = &tokens[tokens.len() - span..];
            tail.iter().zip(&tail[period..]).all(|(a, b)| a == b)
        }
    })
}

/// Have the last 12 tokens of an answer already stood twice before in it? That is a loop
/// whose lines differ only in a counter ("47. The function …", "48. The function …"), which
/// [`is_looping`] does not see. Only for answers: a file's content in a call may well repeat
/// a line of code three times.
pub(super) fn repeats_itself(tokens: &[LlamaToken]) -> bool {
    const WINDOW: usize = 12;
    tokens.len() > WINDOW && {
        let (before, tail) = tokens.split_at(tokens.len() - WINDOW);
        before.windows(WINDOW).filter(|w| *w == tail).count() >= 2
    }
}

/// Would the grammar accept `token` next? Checks that one candidate only.
pub(super) fn grammar_allows(grammar: &mut LlamaSampler, token: LlamaToken, logit: f32) -> bool {
    let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, logit, 0.0)], false);
    one.apply_sampler(grammar);
    one.data[0].logit().is_finite()
}

pub(super) fn log_softmax_at(logits: &[f32], token: LlamaToken) -> f64 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let sum: f64 = logits.iter().map(|l| (*l as f64 - max).exp()).sum();
    logits[token.0 as usize] as f64 - max - sum.ln()
}

impl LocalModel {
    /// The call grammar for `tools` and a question that names globs or not, built once for
    /// each.
    pub(super) fn new_grammar(
        &mut self,
        tools: &[ToolSpec],
        question: &Question,
    ) -> Result<LlamaSampler, ModelError> {
        let shape = CallShape {
            // A native call has the form the model was trained on, which holds no reasoning.
            reasoning: self.settings.options.call_reasoning && self.native.is_none(),
            lean: self.settings.options.lean_calls,
            globs: self.settings.options.question_globs && !question.globs.is_empty(),
        };
        let key = tools_fingerprint(tools)
            ^ u64::from(shape.reasoning)
            ^ (u64::from(shape.lean) << 1)
            ^ (u64::from(shape.globs) << 2);
        if self.grammar.as_ref().is_none_or(|(k, _)| *k != key) {
            let specs: Vec<&ToolSpec> = tools.iter().collect();
            let gbnf = call_grammar(&specs, shape, &self.syntax).map_err(ModelError)?;
            self.grammar = Some((key, gbnf));
        }
        let (_, gbnf) = self.grammar.as_ref().expect("built above");
        LlamaSampler::grammar(&self.model, gbnf, "root")
            .map_err(|e| ModelError(format!("The call grammar could not be loaded: {e}")))
    }

    pub(super) fn sampling_chain(&self) -> Option<LlamaSampler> {
        let s = &self.settings;
        if s.options.temperature <= 0.0 {
            return None;
        }
        Some(LlamaSampler::chain_simple([
            LlamaSampler::top_p(s.top_p, 1),
            LlamaSampler::min_p(s.min_p, 1),
            LlamaSampler::temp(s.options.temperature),
            LlamaSampler::dist(s.options.seed),
        ]))
    }
}

/// Tells sets of tools apart: their names and schemas, in order.
fn tools_fingerprint(tools: &[ToolSpec]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for tool in tools {
        tool.name.hash(&mut hasher);
        tool.input_schema.to_string().hash(&mut hasher);
    }
    hasher.finish()
}

/// Whether `piece`, written after `so_far`, would begin what an answer never contains: a call
/// opener of any dialect, a protocol prefix, a tag shaped like the protocol's (`<TOML_`), a
/// protocol word in its capitals with any ending (`TOOL_RESULT>`), a call's `"tool"` key
/// (`{"tool": …`, `{"tool"=…`), or a `<` at the very start of the answer (`<TOoolRef>`, `<
/// TOOL_RESULT>`: after a result a tiny model begins a mangled call far more often than an
/// answer that opens with markup). Only the last 16 characters of `so_far` are looked at: no
/// banned form is longer.
pub(super) fn would_open_a_call(so_far: &str, piece: &str) -> bool {
    let tail_start = so_far.char_indices().rev().nth(15).map_or(0, |(i, _)| i);
    let joined = format!("{}{piece}", &so_far[tail_start..]);
    let lower = joined.to_lowercase();
    let opens_with_tag = tail_start == 0 && joined.trim_start().starts_with('<');
    NOT_IN_ANSWERS
        .iter()
        .any(|banned| lower.contains(&banned.to_lowercase()))
        || protocol_tag_start(&joined).is_some()
        || lower.contains(CALL_KEY)
        || PROTOCOL_WORDS.iter().any(|word| joined.contains(word))
        || opens_with_tag
}

/// Where the earliest stop sequence ends in `text`, looking from `search_from` (moved forward
/// to a character boundary, and no later than `before`, where the newest piece began).
pub(super) fn stop_sequence_end(
    text: &str,
    search_from: usize,
    before: usize,
    stops: &[&str],
) -> Option<usize> {
    let from = (search_from..=before)
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(before);
    stops
        .iter()
        .filter_map(|s| text[from..].find(s).map(|i| from + i + s.len()))
        .min()
}
