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

/// The tools of a process, their specs in prompt order, and the system prompt made from them.
pub struct Toolbox {
    registry: ToolRegistry,
    specs: Vec<ToolSpec>,
    system_prompt: String,
    fingerprint: String,
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
        }
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
