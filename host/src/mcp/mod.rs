//! The Model Context Protocol: JSON-RPC framing, revisions, sessions and the wire shapes of results.

pub mod calls;
mod change;
pub mod cluster_events;
mod coalesce;
pub mod grant_questions;
mod handlers;
pub mod incident;
pub mod jsonrpc;
mod lists;
pub mod loading;
mod plugin_events;
mod requests_to_client;
pub mod roots;
mod server;
pub mod session;
pub mod session_list;
pub mod stateless;
pub mod tasks;
pub mod version;
pub mod wire;

pub use change::Change;
pub use loading::{Loading, Pending};
pub use server::{ReloadHooks, Reports, Server};
pub use session::intake::{Accepted, BatchAccepted, Reply, batch_responses};
pub use session::{Outbox, Outgoing, Session};
pub use stateless::input_round::StateSettings;
