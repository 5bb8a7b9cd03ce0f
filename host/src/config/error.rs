//! The configuration's errors.

/// A configuration error, with where it is and how to fix it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub(super) String);

/// A value its setting does not take (a listen address, a plugin name, a scope's pattern); the
/// text names the value, and the caller says where it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidValue(pub String);
