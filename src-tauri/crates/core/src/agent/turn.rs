//! One turn's phases: begin (the system prompt for this model, the project map, the user's
//! message), each step (generate → report the reply → act on it: an answer ends the turn, an
//! invalid call is refused with feedback, a call runs), and finish (the `turn_finished` event).

use super::calls::{self, Author, Confirmer};
use super::live::LiveText;
use super::texts::{code_map, VisibleTexts};
use super::{compaction, Session};
use crate::attachments;
use crate::event::{Event, FinishedReason, RefusedServerCall, NO_ANSWER};
use crate::mentions::{named_paths, NamedPaths};
use crate::model::{
    CallPath, CancelToken, Flow, GenerateRequest, Generation, MadeCall, Message, Model, Role,
};
use crate::project_map::project_map;
use crate::project_rules::ProjectRules;
use crate::protocol::markers::is_protocol_shaped_text;
use crate::protocol::{
    interpret, with_api_calls, Dialect, InvalidCall, Outcome, ParsedCall, ProblemKind, RawCall,
    Turn, TurnParser, STOP_SEQUENCES,
};
use crate::question::Question;
use serde_json::Value;

/// How a turn ends: why, and the text it finishes with.
type TurnEnd = (FinishedReason, String);

/// What a turn keeps from step to step.
pub(super) struct TurnState {
    /// Where the turn's messages begin in the history (moves when earlier steps are
    /// summarised).
    turn_start: usize,
    /// The calls made so far, to stop a model that makes the same one again and again.
    last_calls: Vec<(String, Value)>,
    /// Invalid replies in a row.
    protocol_errors: usize,
    pub(super) steps: usize,
    /// The user's message, read once.
    question: Question,
}

impl TurnState {
    /// Records a call of `tool` with `args`: is it the same call `max` times in a row now?
    fn repeats(&mut self, tool: &str, args: &Value, max: usize) -> bool {
        self.last_calls.push((tool.to_string(), args.clone()));
        let same = self.last_calls.iter().rev();
        same.take_while(|c| c.0 == tool && c.1 == *args).count() >= max
    }
}

/// What of `text` (the reply's text for the user) was not yet sent as `streamed`, if anything.
fn unsent_rest<'t>(streamed: &str, text: &'t str) -> Option<&'t str> {
    text.strip_prefix(streamed.trim_start())
        .filter(|rest| !rest.is_empty())
}

/// The id the server gave the call it made through its API, if it gave one.
fn server_id(generation: &Generation) -> Option<&str> {
    generation.api_calls.first().and_then(|c| c.id.as_deref())
}

/// A step's reply as the backend gave it and the parser read it.
struct Reply {
    turn: Turn,
    generation: Generation,
    /// The text already sent as `text_delta` events.
    streamed: String,
}

/// A step's reply as it streams: read by the parser, its settled text sent as `text_delta`
/// events in pieces worth an event.
struct StepStream {
    step: usize,
    parser: TurnParser,
    /// The text already sent.
    streamed: String,
    live: LiveText,
}

impl StepStream {
    fn new(step: usize) -> Self {
        StepStream {
            step,
            parser: TurnParser::new(),
            streamed: String::new(),
            live: LiveText::new(),
        }
    }

    /// Takes the next piece of the reply; asks the model to stop once a call is complete.
    fn push(&mut self, piece: &str, emit: &mut dyn FnMut(&Event)) -> Flow {
        let settled = self.parser.push(piece);
        if !settled.is_empty() {
            self.streamed.push_str(&settled);
            if let Some(text) = self.live.push(&settled) {
                emit(&Event::TextDelta {
                    step: self.step,
                    text,
                });
            }
        }
        if self.parser.call_complete() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    /// Sends the text held back to make a worthwhile piece.
    fn flush(&mut self, emit: &mut dyn FnMut(&Event)) {
        if let Some(text) = self.live.flush() {
            emit(&Event::TextDelta {
                step: self.step,
                text,
            });
        }
    }

    /// The reply read whole, with the server's own calls, and the text sent of it.
    fn finish(self, generation: &Generation, emit: &mut dyn FnMut(&Event)) -> (Turn, String) {
        let mut streamed = self.streamed;
        // A server's own calls come beside the text, structured.
        let turn = with_api_calls(self.parser.finish(), &generation.api_calls);
        if !generation.api_calls.is_empty() {
            // The parser held back text that might have begun a call; no call text follows
            // to settle it, so the rest is sent now.
            if let Some(rest) = unsent_rest(&streamed, &turn.text) {
                emit(&Event::TextDelta {
                    step: self.step,
                    text: rest.to_string(),
                });
                streamed.push_str(rest);
            }
        }
        (turn, streamed)
    }
}

/// The tools a turn on `question` is offered when not all of `toolbox`'s (more than
/// `max_remote` tools from MCP servers; see [`crate::tool_fit::offered_tools`]), with the
/// system prompt that lists them.
pub fn offer_for(
    toolbox: &crate::toolbox::Toolbox,
    question: &Question,
    max_remote: usize,
) -> Option<std::sync::Arc<crate::toolbox::Offer>> {
    let fit = crate::tool_fit::offered_tools(question, toolbox.specs(), max_remote);
    toolbox.offer(fit)
}

impl Session {
    /// Readies the history for `message`: the system prompt of the way `model` calls tools,
    /// the project map on a new conversation (when asked for), the message itself.
    pub(super) fn begin_turn(
        &mut self,
        message: &str,
        model: &mut dyn Model,
        emit: &mut dyn FnMut(&Event),
    ) -> TurnState {
        let question = Question::read(message);
        emit(&Event::TurnStarted {
            message: message.to_string(),
            model: model.name(),
            form: Some(question.form),
        });
        // With many tools from MCP servers, the turn is offered those that fit the message.
        self.offer = offer_for(&self.toolbox, &question, self.config.max_remote_tools);
        // The model may have been changed since the last turn, and with it how it calls tools.
        let system = match (&self.offer, model.call_path()) {
            (Some(offer), CallPath::Text) => offer.system_prompt.as_str(),
            _ => self.toolbox.system_prompt_for(model.call_path()),
        };
        if self.history[0].content != system {
            self.history[0].content = system.to_string();
        }
        // The user may have changed the files since the last turn.
        self.seen.forget();
        self.turn_start_contents.clear();
        let named = named_paths(&question, self.seen.look(&self.ctx, self.toolbox.specs()).0);
        let opening = self.history.len() == 1;
        if let Some(rules) = opening
            .then(|| ProjectRules::of(&self.ctx.workspace))
            .flatten()
            .filter(|_| self.config.project_rules)
        {
            self.history
                .push(Message::new(Role::System, rules.message()));
        }
        if self.config.repo_map > 0 && opening {
            let map = code_map(
                &self.ctx.workspace,
                &self.ctx.code_index,
                &question,
                &named,
                self.config.repo_map,
            );
            if !map.is_empty() {
                self.history.push(Message::new(Role::System, map));
            }
        }
        if self.config.project_map > 0 && opening {
            let (known, _) = self.seen.look(&self.ctx, self.toolbox.specs());
            let map = project_map(known, self.config.project_map);
            if !map.is_empty() {
                self.history.push(Message::new(Role::System, map));
            }
        }
        if self.config.project_rules {
            self.give_folder_rules(&named);
        }
        self.attach_mentions(message, emit);
        self.history.push(Message::new(Role::User, message));
        TurnState {
            turn_start: self.history.len() - 1,
            last_calls: Vec::new(),
            protocol_errors: 0,
            steps: 0,
            question,
        }
    }

    /// The instructions of the folders the question's paths (`named`) are in, when a folder has
    /// its own (`packages/api/AGENTS.md`), each given once per conversation.
    fn give_folder_rules(&mut self, named: &NamedPaths) {
        let named: Vec<String> = named
            .all()
            // Looked up from the path itself: a folder named has its own file checked too.
            .map(|path| format!("{path}/."))
            .collect();
        for path in named {
            let Some(rules) = ProjectRules::nearest_above(&self.ctx.workspace, &path) else {
                continue;
            };
            if !self.folder_rules.contains(&rules.path) {
                self.history
                    .push(Message::new(Role::System, rules.message()));
                self.folder_rules.push(rules.path);
            }
        }
    }

    /// What the message attaches with `@`, given to the model before it and reported.
    fn attach_mentions(&mut self, message: &str, emit: &mut dyn FnMut(&Event)) {
        if attachments::mentions_in(message).is_empty() {
            return;
        }
        let (known, _) = self.seen.look(&self.ctx, self.toolbox.specs());
        let (attached, problems) =
            attachments::attach(message, &self.ctx.workspace, known, &self.ctx.code_index);
        if !attached.is_empty() {
            self.history.push(Message::new(
                Role::System,
                attachments::message_of(&attached),
            ));
        }
        emit(&Event::ContextAttached {
            attachments: attached,
            problems,
        });
    }

    /// One step: the model's reply, reported and acted on. `Some` ends the turn.
    pub(super) fn step(
        &mut self,
        state: &mut TurnState,
        model: &mut dyn Model,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
        cancel: &CancelToken,
    ) -> Option<TurnEnd> {
        let step = state.steps;
        if self
            .filled
            .take()
            .is_some_and(|f| f >= compaction::COMPACT_AT)
        {
            state.turn_start = self.compact(step, state.turn_start, model, cancel, emit);
        }
        let reply = match self.generate_step(step, &state.question, model, emit, cancel) {
            Ok(reply) => reply,
            Err(end) => return Some(end),
        };
        self.report_reply(step, &reply, emit);
        let mut outcome = interpret(&reply.turn, self.toolbox.registry());
        if !self.config.protocol_guard && is_protocol_shaped_text(&reply.turn) {
            outcome = Outcome::Text {
                text: reply.turn.text.clone(),
            };
        }
        match outcome {
            Outcome::Text { text } => Some(self.answer(state, step, &reply, text, emit)),
            Outcome::Invalid(refused) => self.refuse_call(state, &reply, refused, emit),
            Outcome::ToolCall(call) => {
                state.protocol_errors = 0;
                self.run_model_call(state, &reply, call, confirmer, emit)
            }
        }
    }

    /// Asks the model for the step's reply, streaming its settled text as it comes.
    fn generate_step(
        &mut self,
        step: usize,
        question: &Question,
        model: &mut dyn Model,
        emit: &mut dyn FnMut(&Event),
        cancel: &CancelToken,
    ) -> Result<Reply, TurnEnd> {
        let mut stream = StepStream::new(step);
        let (known, names) = self.seen.look(&self.ctx, self.toolbox.specs());
        let texts = VisibleTexts {
            workspace: &self.ctx.workspace,
            known,
            code_index: None,
        };
        let offered = match &self.offer {
            Some(offer) => offer.specs.as_slice(),
            None => self.toolbox.specs(),
        };
        let mut request = GenerateRequest::new(&self.history, self.config.max_tokens, cancel)
            .with_tools(offered)
            .with_workspace(texts.known, &texts)
            .with_defined_names(names)
            .with_stop(STOP_SEQUENCES)
            .with_tool_choice(self.config.tool_choice)
            .with_question(question);
        if self.offer.is_some() {
            request = request.calibrated_for(self.toolbox.system_prompt());
        }
        let generated = model.generate(&request, &mut |piece| stream.push(piece, emit));
        stream.flush(emit);
        let generation = generated.map_err(|e| (FinishedReason::Error, e.0))?;
        if generation.messages_trimmed > 0 || generation.results_cut > 0 {
            emit(&Event::ContextTrimmed {
                step,
                messages_dropped: generation.messages_trimmed,
                results_cut: generation.results_cut,
            });
        }
        if let (Some(used), Some(size)) = (generation.context_used, generation.context_size) {
            self.filled = Some(used as f64 / size.max(1) as f64);
        }
        if cancel.is_cancelled() {
            return Err((FinishedReason::Cancelled, String::new()));
        }
        let (turn, streamed) = stream.finish(&generation, emit);
        Ok(Reply {
            turn,
            generation,
            streamed,
        })
    }

    /// The `response_finished` event: the reply as it came, before it is acted on.
    fn report_reply(&self, step: usize, reply: &Reply, emit: &mut dyn FnMut(&Event)) {
        let (turn, generation) = (&reply.turn, &reply.generation);
        emit(&Event::ResponseFinished {
            step,
            raw: turn.raw.clone(),
            constrained: generation.constrained,
            call_confidence: generation.call_confidence,
            tokens_evaluated: generation.tokens_evaluated,
            tokens_generated: generation.tokens_generated,
            context_used: generation.context_used,
            context_size: generation.context_size,
            native_deltas: generation.native_deltas.clone(),
            // Sent apart by a server, or written by the model at the start of its text.
            thinking: Some(generation.thinking.clone())
                .filter(|t| !t.is_empty())
                .or_else(|| turn.thinking.clone()),
            decision: generation.decision.clone(),
        });
    }

    /// A reply that is the final answer: the rest of its text sent, the answer given.
    fn answer(
        &mut self,
        state: &TurnState,
        step: usize,
        reply: &Reply,
        text: String,
        emit: &mut dyn FnMut(&Event),
    ) -> TurnEnd {
        // The parser holds back text that might have begun a tag; send the rest.
        if let Some(rest) = unsent_rest(&reply.streamed, &text) {
            emit(&Event::TextDelta {
                step,
                text: rest.to_string(),
            });
        }
        self.history.push(Message::new(
            Role::Assistant,
            reply.turn.reply_until(reply.turn.raw.len()),
        ));
        let answer = self.answer_from(
            text,
            reply.generation.finish,
            step,
            state.turn_start,
            &state.question,
            emit,
        );
        (FinishedReason::Answer, answer)
    }

    /// A reply whose call is refused before it runs: reported, kept in the history with the
    /// refusal the model reads next. Too many in a row end the turn.
    fn refuse_call(
        &mut self,
        state: &mut TurnState,
        reply: &Reply,
        refused: InvalidCall,
        emit: &mut dyn FnMut(&Event),
    ) -> Option<TurnEnd> {
        let InvalidCall {
            error_type,
            message,
            feedback,
            raw,
            ..
        } = refused;
        // A call the server made through its API (read, but an unknown tool or arguments its
        // schema does not take) stays a call, so that the server sees what it called.
        let server_call = reply
            .turn
            .call
            .as_ref()
            .filter(|call| call.dialect == Dialect::Api)
            .map(|call| RefusedServerCall {
                call_id: self.next_call_id(server_id(&reply.generation)),
                tool: call.tool.clone(),
                args: call.args.clone(),
            });
        emit(&Event::CallRejected {
            step: state.steps,
            error_type,
            message,
            feedback: feedback.clone(),
            raw,
            server_call: server_call.clone(),
        });
        let kept = calls::refused_reply(&reply.turn, &feedback, server_call.as_ref());
        self.history.extend(kept);
        state.protocol_errors += 1;
        (state.protocol_errors >= self.config.max_protocol_errors)
            .then(|| (FinishedReason::ProtocolErrors, String::new()))
    }

    /// A valid call: reported, kept in the history, stopped when it repeats, else run and its
    /// result given to the model. `Some` ends the turn.
    fn run_model_call(
        &mut self,
        state: &mut TurnState,
        reply: &Reply,
        call: ParsedCall,
        confirmer: &mut dyn Confirmer,
        emit: &mut dyn FnMut(&Event),
    ) -> Option<TurnEnd> {
        let step = state.steps;
        // A call the server made keeps the server's id for it.
        let call_id = self.next_call_id(match call.call.dialect {
            Dialect::Api => server_id(&reply.generation),
            _ => None,
        });
        report_call(step, &call_id, &call, reply, emit);
        let ParsedCall {
            call:
                RawCall {
                    tool,
                    args,
                    reasoning,
                    span,
                    ..
                },
            problems,
            text,
        } = call;
        // The model hears about calls it made that were not run, with the result.
        let not_run = problems
            .iter()
            .find(|p| p.kind == ProblemKind::ExtraCall)
            .map(|p| p.message.clone());
        // What the model said up to the end of its call; the rest was discarded, and its
        // thinking is not kept, as reasoning models' templates expect.
        let made = MadeCall {
            said: text,
            tool: tool.clone(),
            args: args.clone(),
        };
        self.history.push(Message::assistant_call(
            &call_id,
            reply.turn.reply_until(span.end),
            made,
        ));
        if state.repeats(&tool, &args, self.config.max_repeats) {
            return Some((FinishedReason::Repetition, String::new()));
        }
        let outcome = self.execute(
            &call_id,
            &tool,
            args,
            Author::Model {
                reasoning,
                asked_to_replace: state.question.asks_to_replace,
            },
            confirmer,
            emit,
        );
        let mut result = self.reply_to(&call_id, &outcome, &state.question);
        if let Some(note) = not_run {
            result = calls::with_note(result, &note);
        }
        self.history.push(result);
        None
    }

    /// The `turn_finished` event, its explanation in words (a reply with no text says so).
    pub(super) fn finish_turn(
        &mut self,
        reason: FinishedReason,
        text: String,
        steps: usize,
        emit: &mut dyn FnMut(&Event),
    ) -> Event {
        let explanation = match reason {
            FinishedReason::Answer if text.trim().is_empty() => NO_ANSWER.to_string(),
            _ => reason.explain(match reason {
                FinishedReason::MaxSteps => self.config.max_steps,
                FinishedReason::Repetition => self.config.max_repeats,
                FinishedReason::ProtocolErrors => self.config.max_protocol_errors,
                _ => 0,
            }),
        };
        let finished = Event::TurnFinished {
            reason,
            explanation,
            text,
            steps,
        };
        emit(&finished);
        finished
    }
}

/// The `call_parsed` event of a valid call the model made, under `call_id`.
fn report_call(
    step: usize,
    call_id: &str,
    parsed: &ParsedCall,
    reply: &Reply,
    emit: &mut dyn FnMut(&Event),
) {
    let (call, generation) = (&parsed.call, &reply.generation);
    emit(&Event::CallParsed {
        step,
        call_id: call_id.to_string(),
        tool: call.tool.clone(),
        args: call.args.clone(),
        reasoning: call.reasoning.clone(),
        dialect: call.dialect,
        constrained: generation.constrained,
        call_confidence: generation.call_confidence,
        raw: call.raw.clone(),
        span: call.span,
        problems: parsed.problems.clone(),
        via: if call.dialect == Dialect::Api || generation.native_template {
            CallPath::Native
        } else {
            CallPath::Text
        },
    });
}
