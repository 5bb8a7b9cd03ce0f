//! Why a call or a load did not succeed, in words for the caller: a limit, the plugin's own
//! error, a trap, or the host.

mod call;
mod load;
mod stopped;

pub use call::{CallError, LimitExceeded};
pub use load::{Cause, LoadError};
pub use stopped::{describe_failure, limit_hit};
