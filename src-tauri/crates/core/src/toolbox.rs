//! The composition root of what a model is offered: the tools, the system prompt rendered from
//! them, and that prompt's fingerprint.
//!
//! Built once — by the app, the command line, the evaluation — and shared (`Arc<Toolbox>`) by
//! every session, probe and calibration of that process, so they all see the same tools and the
//! same prompt. Calibration is keyed by the prompt; with one place that renders it, a change to
//! the tools changes every consumer's key alike instead of silently invalidating one of them.
//!
//! ```
//! use lantern_core::toolbox::Toolbox;
//!
//! let toolbox = Toolbox::standard();
//! assert!(toolbox.system_prompt().contains("read_file"));
//! assert_eq!(toolbox.specs()[0].name, "read_file");
//! ```

use crate::model::{CallPath, ToolOffer};
use crate::prompt::{render_system_prompt, NATIVE_SYSTEM_PROMPT};
use crate::tools::{ToolRegistry, ToolSpec};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The tools of a process, their specs in prompt order, and the system prompt made from them.
pub struct Toolbox {
    registry: ToolRegistry,
    specs: Vec<ToolSpec>,
    system_prompt: String,
    fingerprint: String,
    /// The narrower offers made so far, by the names they hold: the same choice of tools is
    /// the same prompt, so the model's cache and calibration for it are found again.
    narrowed: Mutex<HashMap<Vec<String>, Arc<Offer>>>,
}

/// The tools one turn is offered, and the system prompt that lists them.
#[derive(Debug)]
pub struct Offer {
    pub specs: Vec<ToolSpec>,
    pub system_prompt: String,
}

impl Toolbox {
    /// The built-in tools.
    pub fn standard() -> Self {
        Self::new(ToolRegistry::standard())
    }

    /// A toolbox over `registry` (the built-in tools plus any registered on top).
    pub fn new(registry: ToolRegistry) -> Self {
        let specs: Vec<ToolSpec> = registry.specs().into_iter().cloned().collect();
        let system_prompt = render_system_prompt(&registry.specs());
        let fingerprint = crate::paths::sha256_hex(system_prompt.as_bytes());
        Toolbox {
            registry,
            specs,
            system_prompt,
            fingerprint,
            narrowed: Mutex::new(HashMap::new()),
        }
    }

    /// An offer of `specs` (some of this toolbox's tools, in its order) with the system prompt
    /// that lists them; `None` when they are all of them.
    pub fn offer(&self, specs: Vec<ToolSpec>) -> Option<Arc<Offer>> {
        if specs.len() == self.specs.len() {
            return None;
        }
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let mut narrowed = self.narrowed.lock().unwrap_or_else(|p| p.into_inner());
        let offer = narrowed.entry(names).or_insert_with(|| {
            let listed: Vec<&ToolSpec> = specs.iter().collect();
            Arc::new(Offer {
                system_prompt: render_system_prompt(&listed),
                specs,
            })
        });
        Some(Arc::clone(offer))
    }

    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// Every tool's spec, in the order the prompt lists them; what a generation request offers.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The system prompt: the tool catalog and the protocol, rendered once.
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    /// The system prompt for a model that makes its calls along `path`: for native calls the
    /// tools travel with each request, so the prompt holds neither the catalog nor a protocol.
    pub fn system_prompt_for(&self, path: CallPath) -> &str {
        match path {
            CallPath::Text => &self.system_prompt,
            CallPath::Native => NATIVE_SYSTEM_PROMPT,
        }
    }

    /// SHA-256 of the system prompt: what calibrations and caches made for it are keyed by.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

impl ToolOffer for Toolbox {
    fn specs(&self) -> &[ToolSpec] {
        Toolbox::specs(self)
    }

    fn system_prompt_for(&self, path: CallPath) -> &str {
        Toolbox::system_prompt_for(self, path)
    }
}
