//! Which catalog generation the client last listed each list from: only a list it has can
//! grow under it while plugins load at start.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime::bindings::host::ListKind;

/// Per [`ListKind`], the catalog generation the client last listed from (0: never).
#[derive(Default)]
pub(in crate::mcp) struct Listed {
    generations: [AtomicU64; 3],
}

impl Listed {
    /// The client is answered a `kind` list from a catalog of at least `generation`: from now
    /// on it hears when plugins loading at start make that list grow.
    pub(in crate::mcp) fn mark(&self, kind: ListKind, generation: u64) {
        self.generations[index(kind)].fetch_max(generation, Ordering::AcqRel);
    }

    /// Whether the client has a `kind` list older than `generation`.
    pub(super) fn older_than(&self, kind: ListKind, generation: u64) -> bool {
        let listed = self.generations[index(kind)].load(Ordering::Acquire);
        listed != 0 && listed < generation
    }
}

fn index(kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => 0,
        ListKind::Resources => 1,
        ListKind::Prompts => 2,
    }
}
