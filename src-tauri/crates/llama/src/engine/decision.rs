//! The call decision: the model's own score for starting a call, its calibration per prompt,
//! and the confidence recorded with a call.

use super::sampling::log_softmax_at;
use super::*;
use lantern_core::intent::{first_step_must_call, FirstStepRules};
use lantern_core::protocol::{CLOSE_TAG, OPEN_TAG};
use lantern_core::tool_result::ShownResult;

impl LocalModel {
    /// Call or answer? Forced by the tool choice, or decided from the model's own score for
    /// starting a call (calibrated when `rules` are trusted, the word-based rule otherwise).
    /// Records the decision and why in `stats`.
    pub(super) fn decide_call(
        &mut self,
        request: &GenerateRequest<'_>,
        rules: Option<&DecisionRules>,
        logits: &[f32],
        stats: &mut StepStats,
    ) -> Result<bool, ModelError> {
        let (call, why) = match request.tool_choice {
            ToolChoice::Required => (true, "required".to_string()),
            ToolChoice::None => (false, "tools off".to_string()),
            ToolChoice::Auto => {
                let confidence = self.call_confidence(logits)?;
                stats.call_confidence = Some(confidence);
                let last = request.messages.last();
                let after_result = last.is_some_and(Message::is_tool_result);
                let after_nothing = after_result
                    && self.settings.options.call_after_nothing
                    && last
                        .and_then(Message::result)
                        .is_some_and(ShownResult::found_nothing);
                let question = request.question();
                let named = FirstStepRules::of(&self.settings.options);
                let must_call = (!after_result)
                    .then(|| first_step_must_call(request, &question, named))
                    .flatten();
                match (rules, after_result) {
                    (_, false) if must_call.is_some() => {
                        (true, must_call.unwrap_or_default().to_string())
                    }
                    (Some(r), false) if r.first_step.trusted => {
                        r.first_step.decide_first_step(confidence, &question)
                    }
                    (_, true) if after_nothing => {
                        (true, "the last result found nothing".to_string())
                    }
                    (Some(r), true) if r.follow_up.trusted => (
                        confidence >= r.follow_up.threshold,
                        format!("follow-up threshold {:.2}", r.follow_up.threshold),
                    ),
                    // Small models repeat their call once they see its result: answer.
                    (_, true) => (false, "after a tool result".to_string()),
                    (_, false) => (
                        question.sounds_about_the_project,
                        "lexical prior".to_string(),
                    ),
                }
            }
        };
        stats.decision = format!("{} ({why})", if call { "call" } else { "answer" });
        Ok(call)
    }

    /// Keeps calibrations in this JSON file (per model), so a new process need not redo them.
    pub fn with_calibration_file(mut self, path: PathBuf) -> Self {
        if let Ok(bytes) = lantern_core::paths::read_state_file(&path) {
            if let Ok(saved) = serde_json::from_slice::<HashMap<String, DecisionRules>>(&bytes) {
                self.calibrations = saved;
            }
        }
        self.calibration_file = Some(path);
        self
    }

    /// log P(the reply starts with `tag`), given the logits after the prompt. The tag's tokens
    /// are decoded in one batch; they stay in the cache (the caller keeps or drops them).
    pub(super) fn score(
        &mut self,
        first_logits: &[f32],
        tag: &[LlamaToken],
    ) -> Result<f64, ModelError> {
        let mut total = log_softmax_at(first_logits, tag[0]);
        if tag.len() > 1 {
            let start = self.cached.len();
            let mut batch = LlamaBatch::new(tag.len(), 1);
            for (i, token) in tag[..tag.len() - 1].iter().enumerate() {
                batch
                    .add(*token, (start + i) as i32, &[0], true)
                    .map_err(|e| ModelError(format!("batch: {e}")))?;
            }
            self.ctx.decode(&mut batch).map_err(|e| {
                ModelError(format!("llama.cpp could not score the reply start: {e}"))
            })?;
            self.cached.extend_from_slice(&tag[..tag.len() - 1]);
            for (i, next) in tag[1..].iter().enumerate() {
                total += log_softmax_at(self.ctx.get_logits_ith(i as i32), *next);
            }
        }
        Ok(total)
    }

    /// The model's confidence that the reply is a call: log P(starts with the tag, with or
    /// without a newline first). Leaves the plain tag (all but its last token) in the cache.
    pub(super) fn call_confidence(&mut self, first_logits: &[f32]) -> Result<f64, ModelError> {
        let base = self.cached.len();
        let tag_after_newline = self.tag_after_newline.clone();
        let with_newline = self.score(first_logits, &tag_after_newline)?;
        self.rewind_to(base, &CancelToken::new())?;
        let tag = self.tag.clone();
        let plain = self.score(first_logits, &tag)?;
        Ok(log_add(plain, with_newline))
    }

    /// The calibration for a system prompt and the tools it offers: from memory, from the
    /// calibration file, or measured now on the probe questions and the tools' follow-ups.
    pub fn calibration(
        &mut self,
        system_prompt: &str,
        tools: &[ToolSpec],
        cancel: &CancelToken,
    ) -> Result<DecisionRules, ModelError> {
        // The probes are part of the key: a new probe set must be measured again.
        let key = lantern_core::paths::sha256_hex(
            format!("{system_prompt}\n{}", probe_set_fingerprint(tools)).as_bytes(),
        );
        if let Some(c) = self.calibrations.get(&key) {
            return Ok(c.clone());
        }
        let system = Message::new(Role::System, system_prompt);
        // Every probe opens with the system prompt: held (or loaded) once for all of them.
        let first = [system.clone(), Message::new(Role::User, TOOL_PROBES[0])];
        let whole = self.tokenize(&self.render(&first)?);
        self.hold_opening(&first, &whole, cancel)?;
        let started = Instant::now();
        let mut first = [Vec::new(), Vec::new()];
        for (class, probes) in [TOOL_PROBES, ANSWER_PROBES].iter().enumerate() {
            for probe in *probes {
                let messages = [system.clone(), Message::new(Role::User, *probe)];
                let score = self.confidence_for(&messages, cancel)?;
                first[class].push((score, Question::read(probe).sounds_about_the_project));
            }
        }
        let first_step =
            Calibration::with_prior(&first[0], &first[1], started.elapsed().as_secs_f64());
        let started = Instant::now();
        let mut follow = [Vec::new(), Vec::new()];
        // The offered tools' own examples of how their results are followed.
        for probe in follow_up_probes(tools) {
            let result = ShownResult::from_json(probe.example.result).map_err(|e| {
                ModelError(format!(
                    "The example result of {} is not JSON ({e}): {}",
                    probe.tool, probe.example.result
                ))
            })?;
            let messages = [
                system.clone(),
                Message::new(Role::User, probe.example.question),
                Message::assistant_call(
                    "probe",
                    format!("{OPEN_TAG}\n{}\n{CLOSE_TAG}", probe.call()),
                    probe.made_call(),
                ),
                Message::tool_result("probe", result),
            ];
            let class = usize::from(!probe.example.needs_call);
            follow[class].push(self.confidence_for(&messages, cancel)?);
        }
        let follow_up =
            Calibration::from_scores(&follow[0], &follow[1], started.elapsed().as_secs_f64());
        let rules = DecisionRules {
            first_step,
            follow_up,
        };
        self.calibrations.insert(key, rules.clone());
        if let Some(path) = &self.calibration_file {
            if let Ok(text) = serde_json::to_string_pretty(&self.calibrations) {
                // Best effort: a cache that cannot be written is measured again next time.
                let _ = lantern_core::paths::write_state_file(path, text.as_bytes());
            }
        }
        Ok(rules)
    }

    /// The call confidence at the start of the reply to `messages`, leaving the cache as it
    /// was after the prompt.
    fn confidence_for(
        &mut self,
        messages: &[Message],
        cancel: &CancelToken,
    ) -> Result<f64, ModelError> {
        let tokens = self.tokenize(&self.render(messages)?);
        let (logits, _) = self.evaluate(&tokens, cancel)?;
        let base = self.cached.len();
        let confidence = self.call_confidence(&logits)?;
        self.rewind_to(base, cancel)?;
        Ok(confidence)
    }
}
