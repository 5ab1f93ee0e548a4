//! A model on a server as the window's model: asking a server what it offers, testing a
//! connection, and connecting. The API key the user types is used for the request and, once a
//! connection succeeds, saved apart from the settings (see `server_keys`).

use super::{hold, AppState, ModelInfo, WindowModel, MODEL_IN_USE};
use crate::error::{AppError, ErrorCode};
use crate::settings::{ProviderKind, ServerConfig};
use lantern_core::model::CallPath;
use lantern_providers::{CallMode, ServerSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The server form of the Model page.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ServerForm {
    pub base_url: String,
    pub model: String,
    /// The key to send; absent, the key saved for this server is used, and an empty key
    /// forgets it.
    pub api_key: Option<String>,
    pub calls: CallMode,
}

/// The connected server, as the Model page shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServerInfo {
    pub base_url: String,
    pub model: String,
    /// The path tool calls take, and why.
    pub calls: CallPath,
    pub why: String,
    /// Whether an API key is sent (the key itself never leaves the backend).
    pub has_key: bool,
}

/// What *Test connection* found.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServerReport {
    /// The models the server lists.
    pub models: Vec<String>,
    /// The model tested: the one named, or the first listed when none was.
    pub model: String,
    /// Whether the chosen model is one of them.
    pub model_listed: bool,
    /// The path tool calls would take; absent when the model is not listed.
    pub calls: Option<CallPath>,
    pub why: String,
}

impl ServerForm {
    fn base_url(&self) -> String {
        self.base_url.trim().trim_end_matches('/').to_string()
    }

    /// The key to send: the one typed, or else the one saved for this server.
    fn key(&self, state: &AppState) -> Option<String> {
        match self.api_key.as_deref().map(str::trim) {
            Some("") => None,
            Some(typed) => Some(typed.to_string()),
            None => state.server_keys.get(&self.base_url()),
        }
    }
}

fn model_error(error: lantern_core::model::ModelError) -> AppError {
    AppError::new(ErrorCode::Model, error.0)
}

impl AppState {
    /// The models a server offers, for the form's list.
    pub fn server_models(&self, form: &ServerForm) -> Result<Vec<String>, AppError> {
        lantern_providers::server_models(&self.spec(form, CallMode::Text)).map_err(model_error)
    }

    /// Lists the server's models and, when the chosen one (or, with none chosen, the first) is
    /// among them, asks which path tool calls take with it. The window's model is not changed.
    pub fn test_server(&self, form: &ServerForm) -> Result<ServerReport, AppError> {
        let check = lantern_providers::check_server(&self.spec(form, CallMode::Auto))
            .map_err(model_error)?;
        let why = match (&check.detection, check.model.is_empty()) {
            (Some(detection), _) => detection.why.clone(),
            (None, true) => "The server offers no model.".to_string(),
            (None, false) => format!(
                "The server does not offer a model named \"{}\".",
                check.model
            ),
        };
        Ok(ServerReport {
            models: check.models,
            model: check.model,
            model_listed: check.listed,
            calls: check.detection.map(|d| d.path),
            why,
        })
    }

    /// Makes the server's model the window's model, replacing the current one, and remembers
    /// the server (and a typed key, apart) for the next start.
    pub fn connect_server(&self, form: &ServerForm) -> Result<ModelInfo, AppError> {
        let spec = self.spec(form, form.calls);
        let mut slot = hold(&self.model, MODEL_IN_USE)?;
        let (mut model, detection) = lantern_providers::open_server(&spec).map_err(model_error)?;
        lantern_core::model::Model::configure(&mut model, &self.settings().generation());
        *slot = Some(WindowModel::Server(Box::new(model)));
        let base_url = form.base_url();
        if let Some(typed) = form.api_key.as_deref().map(str::trim) {
            self.server_keys
                .set(&base_url, Some(typed).filter(|k| !k.is_empty()))?;
        }
        let info = ModelInfo::Server {
            server: ServerInfo {
                base_url: base_url.clone(),
                model: spec.model.clone(),
                calls: detection.path,
                why: detection.why,
                has_key: spec.api_key.is_some(),
            },
        };
        *self.model_info.write().unwrap_or_else(|e| e.into_inner()) = Some(info.clone());
        self.remember(|config| {
            config.last_server = Some(ServerConfig {
                base_url,
                model: spec.model.clone(),
                calls: form.calls,
            });
            config.last_provider = ProviderKind::Server;
        });
        Ok(info)
    }

    fn spec(&self, form: &ServerForm, calls: CallMode) -> ServerSpec {
        ServerSpec {
            base_url: form.base_url(),
            model: form.model.trim().to_string(),
            api_key: form.key(self),
            calls,
        }
    }
}
