//! Transports: how MCP messages reach a [`crate::mcp::Session`] and leave it.

pub mod health;
pub mod http;
pub mod lines;
pub mod metrics_endpoint;
pub mod queue;
pub mod stdio;
