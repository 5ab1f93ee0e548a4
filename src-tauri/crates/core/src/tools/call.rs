//! A call prepared for the policy and then for its tool: arguments validated and decoded once,
//! the declared target resolved by the sandbox once.
//!
//! The preparation is one value ([`Call`]) rather than separate registry look-ups by name and
//! arguments, so that the risk the policy weighs, the paths it sees, the preview the user
//! approves and the paths the tool runs on all come from the same decoded input and the same
//! resolution; nothing can be resolved a second time in between, differently.

use super::target::Resolved;
use super::{RemoteTool, Rewrite, Risk, Tool, ToolContext};
use crate::error::ToolError;
use serde_json::Value;
use std::marker::PhantomData;

/// Why a call could not be prepared.
#[derive(Debug)]
pub enum PrepareError {
    /// An unknown tool, or arguments that do not fit its input.
    Arguments(ToolError),
    /// The sandbox refused a path the call declares: it leads outside the workspace, into
    /// Lantern's own state, or cannot exist.
    Sandbox(ToolError),
}

/// A call ready for the policy: what it risks and touches, its preview, and its run.
pub struct Call {
    risk: Risk,
    prepared: Box<dyn Prepared>,
}

impl Call {
    /// How much harm the call can do here (see [`Tool::risk`]).
    pub fn risk(&self) -> Risk {
        self.risk
    }

    /// What the call touches, resolved: the paths and the command line the policy decides on.
    pub fn target(&self) -> &Resolved {
        self.prepared.target()
    }

    /// Whether the call can work on its target as things stand (see [`Tool::check`]).
    pub fn check(&self, ctx: &ToolContext) -> Result<(), ToolError> {
        self.prepared.check(ctx)
    }

    /// What to show the user before approval.
    pub fn preview(&self, ctx: &ToolContext) -> Option<Value> {
        self.prepared.preview(ctx)
    }

    /// The existing files the call would change, and how (see [`Tool::rewrites`]).
    pub fn rewrites(&self, ctx: &ToolContext) -> Vec<Rewrite> {
        self.prepared.rewrites(ctx)
    }

    /// Runs the tool on the resolved target. The caller has cleared the policy.
    pub fn run(self, ctx: &ToolContext) -> Result<Value, ToolError> {
        self.prepared.run(ctx)
    }
}

/// The type-erased face of a tool, as the registry keeps it.
pub(super) trait ErasedTool: Send + Sync {
    fn prepare(&self, args: Value, ctx: &ToolContext) -> Result<Call, PrepareError>;
}

pub(super) struct Erased<T: Tool>(pub(super) PhantomData<T>);

impl<T: Tool> ErasedTool for Erased<T> {
    fn prepare(&self, args: Value, ctx: &ToolContext) -> Result<Call, PrepareError> {
        // The schema check has already passed, so a failure here means schema and struct
        // disagree.
        let input: T::Input = serde_json::from_value(args).map_err(|e| {
            PrepareError::Arguments(ToolError::invalid(format!("Invalid arguments: {e}")))
        })?;
        let risk = T::risk(&input, ctx);
        let target = T::target(&input)
            .resolve(&ctx.workspace)
            .map_err(PrepareError::Sandbox)?;
        Ok(Call {
            risk,
            prepared: Box::new(Typed::<T> { input, target }),
        })
    }
}

/// One tool's decoded input with its resolved target.
struct Typed<T: Tool> {
    input: T::Input,
    target: Resolved,
}

/// [`Typed`] with the tool's type erased, so that [`Call`] needs none.
trait Prepared {
    fn target(&self) -> &Resolved;
    fn check(&self, ctx: &ToolContext) -> Result<(), ToolError>;
    fn preview(&self, ctx: &ToolContext) -> Option<Value>;
    fn rewrites(&self, ctx: &ToolContext) -> Vec<Rewrite>;
    fn run(self: Box<Self>, ctx: &ToolContext) -> Result<Value, ToolError>;
}

impl<T: Tool> Prepared for Typed<T> {
    fn target(&self) -> &Resolved {
        &self.target
    }

    fn check(&self, ctx: &ToolContext) -> Result<(), ToolError> {
        T::check(&self.input, &self.target, ctx)
    }

    fn preview(&self, ctx: &ToolContext) -> Option<Value> {
        T::preview(&self.input, &self.target, ctx)
    }

    fn rewrites(&self, ctx: &ToolContext) -> Vec<Rewrite> {
        T::rewrites(&self.input, &self.target, ctx)
    }

    fn run(self: Box<Self>, ctx: &ToolContext) -> Result<Value, ToolError> {
        T::run(self.input, &self.target, ctx)
    }
}

/// A tool outside Lantern, as the registry keeps it.
pub(super) struct Remote {
    pub(super) risk: Risk,
    pub(super) tool: std::sync::Arc<dyn RemoteTool>,
}

impl ErasedTool for Remote {
    fn prepare(&self, args: Value, _ctx: &ToolContext) -> Result<Call, PrepareError> {
        Ok(Call {
            risk: self.risk,
            prepared: Box::new(RemoteCall {
                tool: self.tool.clone(),
                args,
                target: Resolved::default(),
            }),
        })
    }
}

/// One call of a tool outside Lantern, its arguments checked.
struct RemoteCall {
    tool: std::sync::Arc<dyn RemoteTool>,
    args: Value,
    target: Resolved,
}

impl Prepared for RemoteCall {
    fn target(&self) -> &Resolved {
        &self.target
    }

    fn check(&self, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn preview(&self, _ctx: &ToolContext) -> Option<Value> {
        None
    }

    fn rewrites(&self, _ctx: &ToolContext) -> Vec<Rewrite> {
        Vec::new()
    }

    fn run(self: Box<Self>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let outcome = self.tool.call(self.args, &ctx.cancel);
        *ctx.exchange.lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome.exchange);
        outcome.result
    }
}
