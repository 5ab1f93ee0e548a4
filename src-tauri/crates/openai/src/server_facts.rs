//! What a server can say about its model beyond the OpenAI API: how large its context is and
//! how many tokens a text takes. llama-server answers both (`GET /props`, `POST /tokenize` at
//! its root); a server that does not is asked once a conversation and says nothing.

use super::{read_body, OpenAiModel};
use serde_json::{json, Value};

impl OpenAiModel {
    /// The server's root: the API root without its `/v1`.
    fn root(&self) -> &str {
        self.options.base_url.trim_end_matches("/v1")
    }

    /// The context the server gives a conversation (llama-server's `n_ctx` for a slot).
    pub(super) fn ask_context_size(&self) -> Option<usize> {
        let (status, body) = self.get(&format!("{}/props", self.root())).ok()?;
        let props: Value = serde_json::from_str(&body).ok().filter(|_| status == 200)?;
        let n_ctx = &props["default_generation_settings"]["n_ctx"];
        n_ctx.as_u64().filter(|&n| n > 0).map(|n| n as usize)
    }

    /// How many tokens `text` is for the server's tokenizer.
    pub(super) fn ask_token_count(&self, text: &str) -> Option<usize> {
        let mut request = self
            .agent
            .post(format!("{}/tokenize", self.root()))
            .content_type("application/json");
        if let Some(key) = &self.options.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let response = request.send(json!({ "content": text }).to_string()).ok()?;
        if response.status().as_u16() != 200 {
            return None;
        }
        let body = read_body(response.into_body()).ok()?;
        let tokens: Value = serde_json::from_str(&body).ok()?;
        tokens["tokens"].as_array().map(Vec::len)
    }
}
