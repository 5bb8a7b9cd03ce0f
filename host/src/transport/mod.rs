//! Transports: how MCP messages reach a [`crate::mcp::Session`] and leave it.

pub mod http;
pub mod lines;
pub mod queue;
pub mod stdio;
