//! What the app remembers between runs: the user's settings and the last folder and model, as
//! one JSON file, by default in Lantern's config folder (`~/.config/lantern/app.json`, or
//! under `LANTERN_HOME`).

use crate::error::{AppError, ErrorCode};
use lantern_core::agent::AgentConfig;
use lantern_core::model::{GenerationOptions, ToolChoice};
use lantern_core::paths::{config_dir, write_state_file};
use lantern_providers::CallMode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The most steps a message may take; more than this only burns time on a looping model.
pub const MAX_STEPS_LIMIT: usize = 100;
/// The smallest context that still fits the system prompt and a short exchange.
pub const MIN_CONTEXT: u32 = 1024;
pub const MAX_TEMPERATURE: f32 = 2.0;
/// More thinking than this leaves a small model's context no room for the conversation.
pub const MAX_THINKING_BUDGET: u32 = 8192;
/// The largest map of the project's code a conversation may open with, in characters.
pub const MAX_REPO_MAP: usize = 200_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Settings {
    /// Most model replies per message.
    pub max_steps: usize,
    /// Constrain tool calls with the grammar derived from the tool schemas.
    pub grammar: bool,
    /// Sampling temperature; 0 decodes greedily.
    pub temperature: f32,
    /// Context size in tokens, used when a model is loaded; `None` lets the model decide.
    pub context: Option<u32>,
    /// Whether each step may, must or must not be a tool call.
    pub tool_choice: ToolChoice,
    /// The most tokens a local reasoning model may think before its reply; 0 for none.
    pub thinking_budget: u32,
    /// The characters of the map of the project's code a conversation opens with; `None`
    /// gives a model on a server the default (`SERVER_REPO_MAP`) and the local default model
    /// none, which is what the evaluation supports; 0 gives none to any model.
    pub repo_map: Option<usize>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_steps: AgentConfig::default().max_steps,
            grammar: true,
            temperature: 0.0,
            context: None,
            tool_choice: ToolChoice::Auto,
            thinking_budget: GenerationOptions::default().thinking_budget,
            repo_map: None,
        }
    }
}

impl Settings {
    /// The generation options these settings choose; the rest keep the model's defaults.
    pub fn generation(&self) -> GenerationOptions {
        GenerationOptions {
            grammar: self.grammar,
            temperature: self.temperature,
            thinking_budget: self.thinking_budget,
            ..GenerationOptions::default()
        }
    }

    /// Refuses values the agent or the model cannot work with, saying which and why.
    pub fn check(&self) -> Result<(), AppError> {
        if !(1..=MAX_STEPS_LIMIT).contains(&self.max_steps) {
            return Err(AppError::invalid(format!(
                "Max steps must be between 1 and {MAX_STEPS_LIMIT}."
            )));
        }
        if !(0.0..=MAX_TEMPERATURE).contains(&self.temperature) {
            return Err(AppError::invalid(format!(
                "The temperature must be between 0 and {MAX_TEMPERATURE}."
            )));
        }
        if self.thinking_budget > MAX_THINKING_BUDGET {
            return Err(AppError::invalid(format!(
                "The thinking budget must be between 0 and {MAX_THINKING_BUDGET} tokens."
            )));
        }
        if self.repo_map.is_some_and(|chars| chars > MAX_REPO_MAP) {
            return Err(AppError::invalid(format!(
                "The map of the code may hold at most {MAX_REPO_MAP} characters."
            )));
        }
        if let Some(context) = self.context {
            if context < MIN_CONTEXT {
                return Err(AppError::invalid(format!(
                    "The context must be at least {MIN_CONTEXT} tokens, or left to the model."
                )));
            }
        }
        Ok(())
    }
}

/// A model server the window connects to. Its API key is kept apart (see `server_keys`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerConfig {
    /// The API root, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The model's name on the server.
    pub model: String,
    /// Native tool calls, the text protocol, or whichever the server shows it can do.
    #[serde(default)]
    pub calls: CallMode,
}

/// Which kind of model the window used last, and so opens at start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    #[default]
    Local,
    Server,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AppConfig {
    pub settings: Settings,
    /// The folder opened last, reopened when no folder is given on the command line.
    pub last_workspace: Option<PathBuf>,
    /// The model loaded last, loaded again at start while the file exists.
    pub last_model: Option<PathBuf>,
    /// The server connected to last.
    pub last_server: Option<ServerConfig>,
    /// Whether the last model was the local one or the server's.
    pub last_provider: ProviderKind,
}

impl AppConfig {
    /// Where the app keeps it: `app.json` in Lantern's config folder.
    pub fn default_path() -> PathBuf {
        config_dir().join("app.json")
    }

    /// The saved configuration; a missing or unreadable file gives the defaults, since nothing
    /// in it is worth refusing to start over.
    pub fn load(path: &Path) -> AppConfig {
        lantern_core::paths::read_state_file(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> Result<(), AppError> {
        let text = serde_json::to_string_pretty(self).expect("the configuration serialises");
        write_state_file(path, text.as_bytes()).map_err(|e| {
            AppError::new(
                ErrorCode::Io,
                format!("Could not save the settings to {}: {e}", path.display()),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_the_check() {
        assert_eq!(Settings::default().check(), Ok(()));
    }

    #[test]
    fn out_of_range_values_are_refused_with_the_range() {
        let steps = Settings {
            max_steps: 0,
            ..Settings::default()
        };
        assert!(steps.check().unwrap_err().message.contains("between 1 and"));
        let hot = Settings {
            temperature: 5.0,
            ..Settings::default()
        };
        assert!(hot.check().is_err());
        let mapped = Settings {
            repo_map: Some(MAX_REPO_MAP + 1),
            ..Settings::default()
        };
        assert!(mapped
            .check()
            .unwrap_err()
            .message
            .contains("map of the code"));
        let tiny = Settings {
            context: Some(16),
            ..Settings::default()
        };
        assert!(tiny.check().unwrap_err().message.contains("at least"));
        let pondering = Settings {
            thinking_budget: 100_000,
            ..Settings::default()
        };
        assert!(pondering
            .check()
            .unwrap_err()
            .message
            .contains("thinking budget"));
    }

    #[test]
    fn a_partial_file_keeps_the_other_defaults() {
        let config: AppConfig = serde_json::from_str(r#"{"settings": {"max_steps": 4}}"#).unwrap();
        assert_eq!(config.settings.max_steps, 4);
        assert!(config.settings.grammar);
        assert_eq!(config.settings.thinking_budget, 512);
        assert_eq!(config.last_workspace, None);
    }
}
