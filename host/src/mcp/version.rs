//! The protocol revisions served, and negotiation.
//!
//! Two eras share one process: the revisions *with sessions* (2024-11-05 to 2025-11-25) open one
//! with `initialize`; the *stateless* ones (2026-07-28 on) carry their version and the client's
//! capabilities in every request's `_meta` and keep no session.

use std::fmt;

/// An MCP revision, oldest first (so `<` means older).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// The first revision, with the HTTP+SSE transport.
    V2024_11_05,
    /// Streamable HTTP, JSON-RPC batches, tool annotations.
    V2025_03_26,
    /// Structured tool output, elicitation; no more batches.
    V2025_06_18,
    /// Icons, URL elicitation, tasks.
    V2025_11_25,
    /// No sessions: every request carries its revision and capabilities.
    V2026_07_28,
}

impl ProtocolVersion {
    /// The revisions an `initialize` can negotiate.
    pub const WITH_SESSIONS: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];
    /// The newest revision with sessions, the answer to an `initialize` asking for one we lack.
    pub const LATEST_WITH_SESSIONS: ProtocolVersion = ProtocolVersion::V2025_11_25;
    /// The revisions served statelessly, per request, newest first.
    pub const STATELESS: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];

    /// A revision with sessions, by name.
    pub fn parse_with_sessions(s: &str) -> Option<ProtocolVersion> {
        Self::WITH_SESSIONS.into_iter().find(|v| v.as_str() == s)
    }

    /// A stateless revision, by name.
    pub fn parse_stateless(s: &str) -> Option<ProtocolVersion> {
        Self::STATELESS.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether the revision has no sessions (2026-07-28).
    pub fn is_stateless(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// The revision as the wire names it: `2025-11-25`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The version to answer a client that asked for `requested`: the same if served, else the
    /// latest (the client then decides whether to go on).
    pub fn negotiate(requested: &str) -> ProtocolVersion {
        Self::parse_with_sessions(requested).unwrap_or(Self::LATEST_WITH_SESSIONS)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_versions_are_echoed_others_get_the_latest() {
        for v in ProtocolVersion::WITH_SESSIONS {
            assert_eq!(ProtocolVersion::negotiate(v.as_str()), v);
        }
        assert_eq!(
            ProtocolVersion::negotiate("2099-01-01"),
            ProtocolVersion::LATEST_WITH_SESSIONS
        );
        assert_eq!(
            ProtocolVersion::negotiate(""),
            ProtocolVersion::LATEST_WITH_SESSIONS
        );
    }
}
