//! Admission shared with other processes. A host running several replicas behind one load
//! balancer supplies a [`SharedLimits`] (Palisade's is Redis, `host/src/cluster/`), and every
//! plugin's gate asks it instead of counting alone, so N replicas give a client one allowance,
//! not N.

use std::future::Future;
use std::pin::Pin;

use crate::{LimitExceeded, Limits};

/// A future the shared store answers with.
pub type SharedFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the shared store says of a call.
#[derive(Debug)]
pub enum SharedVerdict {
    /// Let in, holding `slot` among the plugin's running calls everywhere.
    Admitted(SharedSlot),
    /// Refused by a limit, with the same reason a lone process would give.
    Refused(LimitExceeded),
    /// The store could not answer (unreachable, too slow); the text says why, for the client.
    Unavailable(String),
}

/// A call's place among a plugin's running calls in the shared store, given back when it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedSlot(pub String);

/// Calls per minute, fuel budgets and running calls counted in a store every replica shares.
pub trait SharedLimits: Send + Sync {
    /// Lets a call of `client` into `plugin` under `limits`, or says which limit refuses it:
    /// one round trip to the store, checked and counted atomically.
    fn admit<'a>(
        &'a self,
        plugin: &'a str,
        client: &'a str,
        limits: &'a Limits,
    ) -> SharedFuture<'a, SharedVerdict>;

    /// The call holding `slot` ended having burned `fuel`: its slot comes back and the fuel is
    /// charged to the plugin's budget. Sent in the background: the call does not wait for it.
    fn finish(&self, plugin: &str, slot: SharedSlot, fuel: u64, limits: &Limits);

    /// Whether a call is let in under this process's own limits when the store cannot answer
    /// (`true`), or refused (`false`, the default policy).
    fn fail_open(&self) -> bool;
}
