//! The user's standing answers in a session: grants given in a confirmation (for the session,
//! or saved for the workspace), listed and revoked.

use super::Session;
use crate::error::ToolError;
use crate::event::AnswerKind;
use crate::policy::{Effect, Grant, Lifetime, Scope};

impl Session {
    /// Saved and session grants, saved first.
    pub fn grants(&self) -> impl Iterator<Item = &Grant> {
        self.saved_grants.iter().chain(&self.session_grants)
    }

    /// Records a standing "yes"; if it cannot be recorded the call is still allowed, once.
    pub(super) fn grant_answer(
        &mut self,
        tool: &str,
        scope: Scope,
        lifetime: Lifetime,
    ) -> (String, Option<AnswerKind>) {
        let kind = match lifetime {
            Lifetime::Session => AnswerKind::Session,
            Lifetime::Always => AnswerKind::Always,
        };
        match self.remember(tool, scope, lifetime) {
            Ok(g) => (g.describe(), Some(kind)),
            Err(e) => (
                format!("the user allowed this call once ({})", e.message),
                Some(AnswerKind::Once),
            ),
        }
    }

    /// Records a grant the user gave; "always" grants are also saved for the workspace.
    fn remember(
        &mut self,
        tool: &str,
        scope: Scope,
        lifetime: Lifetime,
    ) -> Result<Grant, ToolError> {
        let grant = Grant::new(tool, scope, Effect::Allow, lifetime)?;
        if lifetime == Lifetime::Always {
            match &self.policy {
                Some(store) => store.add(grant.clone())?,
                None => return Err(ToolError::internal("saved grants are off in this session")),
            }
            self.saved_grants.retain(|g| g.id != grant.id);
            self.saved_grants.push(grant.clone());
        } else {
            self.session_grants.retain(|g| g.id != grant.id);
            self.session_grants.push(grant.clone());
        }
        Ok(grant)
    }

    /// Revokes a grant by id, saved or session.
    pub fn revoke(&mut self, id: &str) -> Result<Grant, ToolError> {
        if let Some(i) = self.session_grants.iter().position(|g| g.id == id) {
            return Ok(self.session_grants.remove(i));
        }
        let store = self
            .policy
            .as_ref()
            .ok_or_else(|| ToolError::not_found(format!("No grant {id}")))?;
        let removed = store.revoke(id)?;
        self.saved_grants.retain(|g| g.id != id);
        Ok(removed)
    }
}
