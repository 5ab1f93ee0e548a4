//! The model contract: what the agent loop needs from a language model, and nothing more.
//!
//! A [`Model`] turns a conversation into streamed text. Backends (llama.cpp in-process, an
//! OpenAI-compatible server, the scripted model of the tests) implement it; the agent loop
//! never knows which one it drives.
//!
//! The conversation is typed: a tool result is a [`Role::Tool`] message naming the call it
//! answers and holding the result as the model reads it, and each request carries the tools
//! it may call. A backend renders both its own way —
//! the `<TOOL_CALL>` text protocol ([`crate::protocol::markers::text_protocol_messages`]), a
//! model's own chat template, or a server's native tool API.

use crate::question::Question;
use crate::spec::ToolSpec;
use crate::tool_result::ShownResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    /// What a tool call came back with, or why it was refused before it ran.
    Tool,
}

/// How a summary of earlier messages opens, in the history: the model reads it as what came
/// before, and a user message that begins with it holds Lantern's words, not the user's.
pub const SUMMARY_PREFIX: &str = "Earlier in this conversation (summarised to save context):";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// The text; for a [`Role::Tool`] message the result's JSON (or the refusal), without any
    /// protocol prefix, as a backend sends it.
    pub content: String,
    /// The call an assistant message made, or the call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// A tool message that refuses an invalid call (it never ran) rather than reporting a result.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rejected: bool,
    /// The call an assistant message made, as the agent read it from the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<MadeCall>,
    /// A tool result as the model reads it, kept whole: `content` is its text, written once
    /// when the message is made, and what is read back is read from here
    /// ([`Message::result`]).
    #[serde(skip)]
    result: Option<ShownResult>,
}

/// A tool call as a server's API returned it (`tool_calls`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiCall {
    /// The server's id for the call, if it gave one: the conversation sent back names the call
    /// by it, since some providers check that a result answers a call they made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    /// The arguments as the server sent them: the text of a JSON object, which a model may
    /// have got wrong, so it is checked like any call.
    pub arguments: String,
}

/// A call the history keeps beside the text it was read from: a backend that takes calls
/// natively (a server's API, a model's own chat template) sends it as it is, and the text
/// protocol sends the text (or, for a call a server made through its API, which never was
/// text, the call written in the protocol). Neither reads the text again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MadeCall {
    /// What the model wrote before its call, trimmed (empty when nothing).
    pub said: String,
    pub tool: String,
    /// The arguments the call ran with.
    pub args: serde_json::Value,
}

impl MadeCall {
    /// A call of `tool` with `args` and nothing said before it.
    pub fn new(tool: impl Into<String>, args: serde_json::Value) -> Self {
        MadeCall {
            said: String::new(),
            tool: tool.into(),
            args,
        }
    }
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            call_id: None,
            rejected: false,
            call: None,
            result: None,
        }
    }

    /// The model's reply that made `call` as call `call_id` (its text up to the end of the
    /// call).
    pub fn assistant_call(
        call_id: impl Into<String>,
        content: impl Into<String>,
        call: MadeCall,
    ) -> Self {
        Message {
            call_id: Some(call_id.into()),
            call: Some(call),
            ..Message::new(Role::Assistant, content)
        }
    }

    /// The call this message made when it was never written as text (a server made it through
    /// its API): the message holds only what was said before it.
    pub fn unwritten_call(&self) -> Option<&MadeCall> {
        self.call.as_ref().filter(|call| self.content == call.said)
    }

    /// The result of call `call_id`, as the model reads it.
    pub fn tool_result(call_id: impl Into<String>, result: ShownResult) -> Self {
        Message {
            call_id: Some(call_id.into()),
            content: result.to_string(),
            result: Some(result),
            ..Message::new(Role::Tool, "")
        }
    }

    /// The result this message holds, when it is a tool's result (not a refusal, nor any
    /// other message).
    pub fn result(&self) -> Option<&ShownResult> {
        self.result.as_ref()
    }

    /// This tool result's message with `result` in place of what it held (a result shortened
    /// or cut to save context); the call it answers stays.
    pub fn with_result(&self, result: ShownResult) -> Self {
        Message {
            call_id: self.call_id.clone(),
            ..Message::tool_result("", result)
        }
    }

    /// Why the model's last call was refused before it ran, and what a correct one looks like.
    pub fn call_rejected(feedback: impl Into<String>) -> Self {
        Message {
            rejected: true,
            ..Message::new(Role::Tool, feedback)
        }
    }

    /// Why call `call_id` was refused before it ran.
    pub fn call_refused(call_id: impl Into<String>, feedback: impl Into<String>) -> Self {
        Message {
            call_id: Some(call_id.into()),
            ..Message::call_rejected(feedback)
        }
    }

    /// A tool result (not a refusal).
    pub fn is_tool_result(&self) -> bool {
        self.role == Role::Tool && !self.rejected
    }
}

/// Whether this step may, must or must not be a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The backend decides (for llama.cpp: from the model's own probability of a call).
    #[default]
    Auto,
    /// The reply must be a call.
    Required,
    /// The reply must not be a call.
    None,
}

/// How a backend's model makes its tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallPath {
    /// It writes them as text, in the `<TOOL_CALL>` protocol the system prompt describes.
    #[default]
    Text,
    /// The server returns them as structured tool calls of its API (OpenAI `tool_calls`), from
    /// the tools the request declares; the system prompt then describes no protocol.
    Native,
}

/// A shared flag that stops generation and the agent loop.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
    /// Clears the flag for the next message.
    pub fn reset(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// The files and folders of the workspace a call may name: those the tools can see (dotfiles
/// included; not ignored, not in a version-control folder, not Lantern's own), relative to the
/// root. A backend that can constrain
/// decoding uses them to make a path argument name something that exists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownPaths {
    /// Sorted.
    pub files: Vec<String>,
    /// Sorted; `.` (the root) first.
    pub folders: Vec<String>,
}

impl KnownPaths {
    /// `files` sorted, and the folders that hold them (each file's ancestors) with the root.
    pub fn from_files(mut files: Vec<String>) -> Self {
        files.sort();
        let mut folders = std::collections::BTreeSet::new();
        for file in &files {
            let mut rest = file.as_str();
            while let Some((parent, _)) = rest.rsplit_once('/') {
                if !folders.insert(parent.to_string()) {
                    break;
                }
                rest = parent;
            }
        }
        KnownPaths {
            files,
            folders: std::iter::once(".".to_string()).chain(folders).collect(),
        }
    }

    /// Is `rel` one of the files, by its path? (A lookup in the sorted list, so a large
    /// project's files are cheap to ask about.)
    pub fn has_file(&self, rel: &str) -> bool {
        self.files
            .binary_search_by(|file| file.as_str().cmp(rel))
            .is_ok()
    }
}

/// The text of the files a call may name, for a backend that grounds an argument in a file's
/// content (an edit's old text, declared `"x-span-of": "path"`).
pub trait FileTexts {
    /// The whole text of the file at `rel` (relative to the workspace root), if it is one of
    /// the known files and reads as text.
    fn text_of(&self, rel: &str) -> Option<String>;

    /// For each (file, 1-based line), the last line of the definition whose name stands on
    /// it, where a code index reads the file's language; `None` elsewhere.
    fn definition_ends(&self, lines: &[(&str, u64)]) -> Vec<Option<u32>> {
        vec![None; lines.len()]
    }
}

/// Files given as `(path, text)` pairs, for tests.
#[cfg(test)]
impl<const N: usize> FileTexts for [(&str, &str); N] {
    fn text_of(&self, rel: &str) -> Option<String> {
        self.iter()
            .find(|(path, _)| *path == rel)
            .map(|(_, text)| text.to_string())
    }
}

/// What a process offers its models: the tools, in prompt order, and the system prompt made
/// from them for each way of calling. [`crate::toolbox::Toolbox`] is what offers them; the
/// contract names only what a backend reads, so it depends on no tool.
pub trait ToolOffer {
    /// The tools' specs, in the order the prompt lists them.
    fn specs(&self) -> &[ToolSpec];
    /// The system prompt for a backend that calls tools by `path`.
    fn system_prompt_for(&self, path: CallPath) -> &str;
}

/// One generation request.
pub struct GenerateRequest<'a> {
    pub messages: &'a [Message],
    /// The tools this step may call (name, description, JSON Schema); a backend constrains or
    /// declares calls with these, never with a list of its own.
    pub tools: &'a [ToolSpec],
    /// What path arguments may name, when the caller knows its workspace.
    pub paths: Option<&'a KnownPaths>,
    /// The text of those files, when the caller can read them.
    pub files: Option<&'a dyn FileTexts>,
    /// The names the workspace's code defines (sorted), what a symbol argument may name.
    pub defined_names: &'a [String],
    /// Generation ends right after any of these; the stop sequence stays in the text.
    pub stop: &'a [&'a str],
    pub tool_choice: ToolChoice,
    pub max_tokens: usize,
    pub cancel: &'a CancelToken,
    /// The system prompt whose calibration the call decision takes, when not the request's
    /// own: a turn offered some of many tools lists fewer, and the decision measured for the
    /// whole list holds for it (measuring each choice of tools anew would cost a minute).
    pub calibrated_for: Option<&'a str>,
    /// The user's message as the agent read it when the turn began; `None` for a request made
    /// outside a turn (a calibration, a benchmark), read then from its last user message (see
    /// [`GenerateRequest::question`]).
    pub question: Option<&'a Question>,
}

impl<'a> GenerateRequest<'a> {
    /// A request to continue `messages` with at most `max_tokens`: no tools (the reply is
    /// text), no workspace, no stop sequence, the tool choice left to the model. The methods
    /// below add what a step needs.
    pub fn new(messages: &'a [Message], max_tokens: usize, cancel: &'a CancelToken) -> Self {
        GenerateRequest {
            messages,
            tools: &[],
            paths: None,
            files: None,
            defined_names: &[],
            stop: &[],
            tool_choice: ToolChoice::Auto,
            max_tokens,
            cancel,
            calibrated_for: None,
            question: None,
        }
    }

    /// Takes the call decision's calibration for `system_prompt` (see
    /// [`GenerateRequest::calibrated_for`]).
    pub fn calibrated_for(mut self, system_prompt: &'a str) -> Self {
        self.calibrated_for = Some(system_prompt);
        self
    }

    /// The turn's question, read once when it began.
    pub fn with_question(mut self, question: &'a Question) -> Self {
        self.question = Some(question);
        self
    }

    /// What the user asked: the turn's question, or else the last user message read now.
    pub fn question(&self) -> Cow<'a, Question> {
        match self.question {
            Some(question) => Cow::Borrowed(question),
            None => Cow::Owned(Question::read(self.question_text())),
        }
    }

    /// The words the user asked in: the turn's question's, or else the last user message's.
    /// Nothing is read, so a step may ask for them as often as it likes.
    pub fn question_text(&self) -> &'a str {
        match self.question {
            Some(question) => question.text.as_str(),
            None => self
                .messages
                .iter()
                .rev()
                .find(|m| m.role == Role::User)
                .map(|m| m.content.as_str())
                .unwrap_or_default(),
        }
    }

    /// The messages after the user's last one: this turn's calls, results and refusals (and
    /// any system message set after it); the whole conversation when there is no user message.
    pub fn this_turn(&self) -> &'a [Message] {
        let since_user = self
            .messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .map_or(0, |i| i + 1);
        &self.messages[since_user..]
    }

    /// Is this the turn's first step: has nothing come after the user's last message (no call,
    /// no result, no refusal)?
    pub fn is_first_step(&self) -> bool {
        self.this_turn().iter().all(|m| m.role == Role::System)
    }

    /// The calls made since the user's last message, in order.
    pub fn calls_this_turn(&self) -> impl Iterator<Item = &'a MadeCall> {
        self.this_turn().iter().filter_map(|m| m.call.as_ref())
    }

    /// The tools this step may call.
    pub fn with_tools(mut self, tools: &'a [ToolSpec]) -> Self {
        self.tools = tools;
        self
    }

    /// The workspace's paths and the text of its files.
    pub fn with_workspace(mut self, paths: &'a KnownPaths, files: &'a dyn FileTexts) -> Self {
        self.paths = Some(paths);
        self.files = Some(files);
        self
    }

    /// The names the workspace's code defines (sorted).
    pub fn with_defined_names(mut self, names: &'a [String]) -> Self {
        self.defined_names = names;
        self
    }

    /// Where generation ends (each stop sequence stays in the text).
    pub fn with_stop(mut self, stop: &'a [&'a str]) -> Self {
        self.stop = stop;
        self
    }

    /// Whether the step must call, may call or must not.
    pub fn with_tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = tool_choice;
        self
    }
}

/// What the text callback tells the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A stop sequence was produced, or the text callback asked to stop (the agent does so
    /// as soon as a call is complete).
    Stop,
    /// The model ended its reply.
    EndOfText,
    /// `max_tokens` reached.
    Length,
    /// The reply began repeating itself and the backend ended it (see [`crate::repeats`]).
    Repeating,
    /// The cancel token was set.
    Cancelled,
}

/// The result of one generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    pub text: String,
    pub finish: FinishReason,
    /// True when a grammar constrained the call.
    pub constrained: bool,
    /// The backend's confidence that this step should be a call (log-probability), if measured.
    pub call_confidence: Option<f64>,
    /// Prompt tokens evaluated for this step (after cache reuse), if known.
    pub tokens_evaluated: Option<usize>,
    /// Tokens generated, if known.
    pub tokens_generated: Option<usize>,
    /// Messages dropped from the front of the conversation to fit the context, if any.
    pub messages_trimmed: usize,
    /// Tool results cut in what the model was shown, when nothing was left to drop.
    #[serde(default)]
    pub results_cut: usize,
    /// Tokens the context holds after this step (the prompt and the reply), if known.
    pub context_used: Option<usize>,
    /// Tokens the context holds at most, if known.
    pub context_size: Option<usize>,
    /// The pieces of native tool calls as the server streamed them (raw JSON), for the
    /// inspector, when the calls came through its API.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub native_deltas: Vec<serde_json::Value>,
    /// The calls the server returned through its API, put together from those pieces, in
    /// order. They came structured and stay so: they are never written into `text`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_calls: Vec<ApiCall>,
    /// The model was prompted through its own chat template with the tools given natively, so
    /// a call in `text` is in the model's own form (local models).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub native_template: bool,
    /// What a reasoning model thought before it replied, kept out of `text` so it is never
    /// read as a call or an answer.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thinking: String,
    /// Why the backend made this step a call or an answer, when it decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
}

impl Generation {
    pub fn text(text: impl Into<String>, finish: FinishReason) -> Self {
        Generation {
            text: text.into(),
            finish,
            constrained: false,
            call_confidence: None,
            tokens_evaluated: None,
            tokens_generated: None,
            messages_trimmed: 0,
            results_cut: 0,
            context_used: None,
            context_size: None,
            native_deltas: Vec::new(),
            api_calls: Vec::new(),
            native_template: false,
            thinking: String::new(),
            decision: None,
        }
    }
}

/// A model failure, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError(pub String);

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModelError {}

/// How the user wants replies generated; each backend applies what it can.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GenerationOptions {
    /// Constrain calls with a grammar built from the tools' schemas (local models).
    pub grammar: bool,
    /// Let a constrained call carry a `reasoning` string (local models with the grammar).
    pub call_reasoning: bool,
    /// Choose path arguments among the workspace's files and folders while a constrained call
    /// is decoded (local models with the grammar, when the request brings known paths).
    pub grounded_paths: bool,
    /// Choose symbol arguments (`"x-symbol"`) among the names the workspace's code defines
    /// while a constrained call is decoded (local models with the grammar, when the request
    /// brings defined names).
    pub grounded_symbols: bool,
    /// Offer a constrained call only the tool's required arguments and its path arguments, not
    /// the optional line ranges, limits and search options (local models with the grammar).
    pub lean_calls: bool,
    /// Choose a constrained call's tool by the model's score for each whole name together with
    /// the words the question shares with each tool's description (local models with the
    /// grammar).
    pub ranked_tools: bool,
    /// Choose an argument declared `"x-words": "question"` (a search's query) among the words
    /// of the user's question (local models with the grammar).
    pub question_words: bool,
    /// Offer a constrained call an optional argument declared `"x-glob": "question"` (a
    /// listing's pattern) when the user's message names a glob (`test_*.py`), and choose it
    /// among those globs (local models with the grammar).
    pub question_globs: bool,
    /// In an answer after a tool result, favour tokens that copy a span of the result (a path,
    /// a number, an identifier) exactly, once the answer has begun one, and a path's start
    /// when the question asks where something is (local models).
    pub copy_spans: bool,
    /// In an answer after a tool result, favour more strongly a token that begins a value that
    /// answers the question, a lone digit included: a value of the lines Lantern put first as
    /// those about it (a read's lines about it, a search's definitions and their bodies), or
    /// the last listing's count when it asks how many files there are (local models, with
    /// `copy_spans`). Off: it won dev runs and lost a held-out one.
    #[serde(default)]
    pub asked_values: bool,
    /// Offer a call's tool no tool without arguments that already ran in the turn: every call
    /// of it is the same call, and its result is already there (local models with the grammar).
    #[serde(default = "yes")]
    pub spent_tools: bool,
    /// Favour, as a path argument, a file or folder of the workspace the user's message names
    /// (`utils.py` for `src/click/utils.py`), as a new file it names is (local models with the
    /// grammar). Off: it moved no dev verdict.
    #[serde(default)]
    pub named_files: bool,
    /// In an answer, refuse a token that would begin a path, number or name only the system
    /// prompt's worked examples hold (a made-up version or port), or a tool's name, unless the
    /// conversation holds one that begins the same way (local models).
    pub shun_examples: bool,
    /// Let an argument declared `"x-span-of": KEY` (an edit's old text) become only a piece of
    /// the text of the file the call's KEY argument names, ending where that piece is found
    /// once (local models with the grammar, when the request can read the files).
    pub file_spans: bool,
    /// In an argument declared `"x-replaces": KEY` (an edit's new text), favour the values of
    /// the question where the copy of the KEY argument reaches what they replace, and do not
    /// let it end equal to that argument (local models with the grammar).
    pub replace_values: bool,
    /// Decide a first step to be a call when the message names a file or folder of the
    /// workspace (local models, when the request brings known paths).
    pub named_paths: bool,
    /// Decide a first step to be a call when the message names something a file of the
    /// workspace defines, by a word only code uses (`make_default_short_help`, `UsageError`),
    /// when the request can read the files.
    pub named_definitions: bool,
    /// Make a first step a call when the user's message names the project, by the name its
    /// manifest gives (`click` in "What Python version does click need?") or by pointing at it
    /// ("Summarise this project", "…do here?"), when the request has a workspace.
    pub named_project: bool,
    /// Make a first step a call when the user's message asks for a file that does not exist
    /// yet ("Create CHANGELOG.md with …"; see [`crate::mentions::new_files_named`]), and (local
    /// models) that first call one of a tool that can create it: only a call can make the
    /// file, and a small model otherwise answers with its text or reads another file.
    pub named_new_files: bool,
    /// Offer the tools that write or run commands only at a large cost when the user's message
    /// asks for no change (see [`Question::asks_for_a_change`]): a question reads (local
    /// models).
    pub changes_when_asked: bool,
    /// Decide the step after a result that found nothing (a failed call, a search or listing
    /// with no entries) to be another call, not an answer (local models).
    pub call_after_nothing: bool,
    /// Make the turn's first call the tool that looks names up (an `"x-symbol"` argument) when
    /// the user's message asks where something the workspace defines is (see
    /// [`crate::intent::asks_where_a_definition_is`]; local models with the grammar).
    #[serde(default = "yes")]
    pub where_lookups: bool,
    /// Offer a write's path argument only the files the conversation points at (see
    /// [`crate::pointed`]: the user named them, or a result reported on them) when there are
    /// any, so a file nobody meant is never the model's pick (local models with the grammar).
    /// Off until the evaluation has weighed it; the agent flags and an automatic yes refuses
    /// such a write either way.
    #[serde(default)]
    pub pointed_writes: bool,
    /// The most tokens a local reasoning model may think before its reply; 0 lets it reply
    /// without thinking. A call or an answer begins after the thinking, under the grammar.
    #[serde(default = "default_thinking_budget")]
    pub thinking_budget: u32,
    /// 0 decodes greedily.
    pub temperature: f32,
    pub seed: u32,
}

/// Thinking of 512 tokens takes a few seconds on a small model and leaves most of a small
/// context to the conversation.
pub const DEFAULT_THINKING_BUDGET: u32 = 512;

fn yes() -> bool {
    true
}

fn default_thinking_budget() -> u32 {
    DEFAULT_THINKING_BUDGET
}

impl Default for GenerationOptions {
    fn default() -> Self {
        GenerationOptions {
            grammar: true,
            call_reasoning: true,
            grounded_paths: true,
            grounded_symbols: true,
            lean_calls: true,
            ranked_tools: true,
            question_words: true,
            question_globs: true,
            copy_spans: true,
            shun_examples: true,
            file_spans: true,
            replace_values: true,
            named_paths: true,
            named_definitions: true,
            named_project: true,
            named_new_files: true,
            changes_when_asked: true,
            call_after_nothing: true,
            pointed_writes: false,
            where_lookups: true,
            asked_values: false,
            spent_tools: true,
            named_files: false,
            thinking_budget: DEFAULT_THINKING_BUDGET,
            temperature: 0.0,
            seed: 42,
        }
    }
}

/// A language model that streams text.
pub trait Model: Send + 'static {
    /// A short name for the UI and transcripts.
    fn name(&self) -> String;

    /// Applies the user's generation settings to the next steps. A backend ignores what it
    /// cannot do (a server has no grammar).
    fn configure(&mut self, _options: &GenerationOptions) {}

    /// Work worth doing once before the first message of the conversations `offer` makes, so
    /// that message does not wait for it (the local engine calibrates its call decision).
    fn prepare(&mut self, _offer: &dyn ToolOffer, _cancel: &CancelToken) -> Result<(), ModelError> {
        Ok(())
    }

    /// How this model makes tool calls; the agent gives it the system prompt for that path.
    fn call_path(&self) -> CallPath {
        CallPath::Text
    }

    /// How many tokens `text`, given as a system message, takes of this model's context;
    /// `None` when the model cannot say (a server without a tokenizer endpoint).
    fn count_tokens(&mut self, _text: &str) -> Option<usize> {
        None
    }

    /// How many tokens this model's context holds; `None` when it cannot say.
    fn context_size(&mut self) -> Option<usize> {
        None
    }

    /// Generates a reply to `request.messages`, calling `on_text` with each new piece of text.
    /// Stops at a stop sequence, the end of the reply, `max_tokens`, when `on_text` returns
    /// [`Flow::Stop`], or when the cancel token is set.
    fn generate(
        &mut self,
        request: &GenerateRequest<'_>,
        on_text: &mut dyn FnMut(&str) -> Flow,
    ) -> Result<Generation, ModelError>;
}

pub use scripted::ScriptedModel;

mod scripted {
    use super::*;

    /// A model that replies with prepared texts, one per step, streamed in small pieces and cut
    /// at stop sequences the way a real backend cuts them. For tests and demos of the loop.
    pub struct ScriptedModel {
        replies: std::collections::VecDeque<String>,
        /// Every request's messages, for assertions.
        pub seen: Vec<Vec<Message>>,
        /// The names of the tools every request offered, for assertions.
        pub offered: Vec<Vec<String>>,
    }

    impl ScriptedModel {
        pub fn new<S: Into<String>>(replies: impl IntoIterator<Item = S>) -> Self {
            ScriptedModel {
                replies: replies.into_iter().map(Into::into).collect(),
                seen: Vec::new(),
                offered: Vec::new(),
            }
        }

        /// Reads a script: a JSON array of reply strings.
        pub fn from_json(text: &str) -> Result<Self, ModelError> {
            let replies: Vec<String> = serde_json::from_str(text).map_err(|e| {
                ModelError(format!(
                    "A script must be a JSON array of reply strings: {e}"
                ))
            })?;
            Ok(Self::new(replies))
        }
    }

    impl Model for ScriptedModel {
        fn name(&self) -> String {
            "scripted".to_string()
        }

        fn generate(
            &mut self,
            request: &GenerateRequest<'_>,
            on_text: &mut dyn FnMut(&str) -> Flow,
        ) -> Result<Generation, ModelError> {
            self.seen.push(request.messages.to_vec());
            self.offered
                .push(request.tools.iter().map(|t| t.name.clone()).collect());
            let reply = self
                .replies
                .pop_front()
                .ok_or_else(|| ModelError("The script has no more replies".to_string()))?;
            // Cut right after the first stop sequence, as a backend does.
            let end = request
                .stop
                .iter()
                .filter_map(|s| reply.find(s).map(|i| i + s.len()))
                .min();
            let (text, mut finish) = match end {
                Some(end) => (&reply[..end], FinishReason::Stop),
                None => (reply.as_str(), FinishReason::EndOfText),
            };
            let mut sent = 0;
            for (i, c) in text.char_indices() {
                if request.cancel.is_cancelled() {
                    finish = FinishReason::Cancelled;
                    break;
                }
                let piece = &text[i..i + c.len_utf8()];
                sent = i + c.len_utf8();
                if on_text(piece) == Flow::Stop {
                    finish = FinishReason::Stop;
                    break;
                }
            }
            Ok(Generation::text(&text[..sent], finish))
        }
    }
}
