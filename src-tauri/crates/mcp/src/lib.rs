//! Lantern's MCP client: tools from Model Context Protocol servers, offered to the model under
//! the same schema check, call grammar, permission policy and inspector as the built-in ones.
//!
//! - [`config`] reads the `mcpServers` JSON (the user's `mcp.json` in Lantern's config folder
//!   and the workspace's `.lantern/mcp.json`); a workspace's server starts only once the user
//!   approved its exact definition.
//! - [`launch`] starts a stdio server in the sandbox every program of Lantern's runs in: no
//!   capabilities even as root, no home folder, the workspace read-only, its own state folder,
//!   no network unless the definition asks for it. A trusted server runs outside it.
//! - [`connection`] speaks MCP through the official SDK (`rmcp`), over stdio or streamable HTTP.
//! - [`hub`] keeps a workspace's servers: starts them, lists their tools (every page, again
//!   after `tools/list_changed`), calls them with a timeout and Stop, starts a crashed one
//!   again on its next call with a note, stops them all at the end.
//! - [`specs`] turns a server's tool into a [`lantern_core::tools::ToolSpec`] named
//!   `server.tool`, its risk from the tool's hints; [`drift`] lets grants lapse when a tool's
//!   definition changes.
//!
//! ```no_run
//! use lantern_core::tools::ToolRegistry;
//!
//! let root = std::path::Path::new("/path/to/project");
//! let hub = lantern_mcp::hub::Hub::start(root);
//! let mut registry = ToolRegistry::standard();
//! // Every schema is accepted here; a local model's composition passes its grammar's check.
//! hub.extend(&mut registry, &|_| Ok(()));
//! for status in hub.statuses() {
//!     println!("{}: {:?}, tools {:?}", status.name, status.state, status.tools);
//! }
//! hub.shutdown();
//! ```

pub mod config;
pub mod connection;
pub mod drift;
pub mod hub;
pub mod launch;
mod results;
pub mod specs;
