//! Capabilities a plugin reaches for without a grant (`ask = true`): the runtime notices the
//! reach and holds the call's answers; the host's [`GrantDecider`] asks the user, remembers
//! "always" and audits.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::CallContext;

/// Something a plugin was not granted and reached for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Capability {
    /// An HTTP host, as the grant that would allow it: `api.example.com`, `http://host:8080`.
    Host(String),
    /// An environment variable of the server's.
    EnvVar(String),
}

impl Capability {
    /// The grant that allows a request to `host:port` (host as in the URI, IPv6 bracketed),
    /// if it names one host: a wildcard (`*` is legal in a URI's host) or an overlong name is
    /// never put to the user, who could grant more than the request showed.
    pub fn host(https: bool, host: &str, port: u16) -> Option<Capability> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() || host.len() > 255 || host.contains('*') {
            return None;
        }
        Some(Capability::Host(match (https, port) {
            (true, 443) => host,
            (true, port) => format!("{host}:{port}"),
            (false, 80) => format!("http://{host}"),
            (false, port) => format!("http://{host}:{port}"),
        }))
    }

    /// What the user is asked about, in words.
    pub fn describe(&self) -> String {
        match self {
            Capability::Host(grant) => format!("reach {grant}"),
            Capability::EnvVar(name) => format!("read the server's environment variable {name}"),
        }
    }

    /// The key of the question among a call's input requests: under the host's own `palisade/`
    /// prefix, which plugins may not use, so no plugin can pose it (or answer it) itself.
    pub fn question_key(&self) -> String {
        match self {
            Capability::Host(grant) => format!("{HOST_KEY_PREFIX}grant/network/{grant}"),
            Capability::EnvVar(name) => format!("{HOST_KEY_PREFIX}grant/env/{name}"),
        }
    }
}

/// Input request keys the host keeps for its own questions (confirmations, grants).
pub const HOST_KEY_PREFIX: &str = "palisade/";

/// Whether `name` can be an environment variable's name worth asking about: letters, digits
/// and `_`, not starting with a digit, at most 128 bytes (it is shown to the user).
pub fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// What the user answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// For the rest of this call.
    Once,
    /// From now on (the host remembered it).
    Always,
    /// Not in this call.
    Deny,
}

/// Why a capability stays denied without the user's word: the client could not be asked, or
/// the answer comes in the next attempt (MCP 2026-07-28).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unasked {
    /// The client answers between attempts; this attempt goes on without the capability.
    AwaitingAnswer,
    /// Nobody could be asked, with why.
    Failed(String),
}

/// The answer to a question, when it comes.
pub type PendingDecision = Pin<Box<dyn Future<Output = Result<Decision, Unasked>> + Send>>;

/// The host's side of asking: remembered grants, the question to the user, the audit.
pub trait GrantDecider: Send + Sync {
    /// Whether the user granted `capability` to `plugin` "always" (remembered grants).
    fn remembered(&self, plugin: &str, capability: &Capability) -> bool;

    /// Asks the user, through the client of `call`, whether `plugin` may have `capability`;
    /// remembers "always" and audits every outcome.
    fn ask(&self, plugin: Arc<str>, capability: Capability, call: &CallContext) -> PendingDecision;
}

/// When a call must end: its time limit from the start, plus the time the user spent answering
/// questions about grants (reading a security question should not be rushed by `timeout_ms`).
/// Fuel still bounds what the plugin computes meanwhile.
pub(crate) struct CallClock {
    state: parking_lot::Mutex<ClockState>,
}

struct ClockState {
    deadline: Instant,
    /// Since when a question is out, if one is.
    asking_since: Option<Instant>,
}

/// While a question is out, how far ahead the deadline is kept, so a waiting call is looked at
/// now and then rather than at every tick.
const WHILE_ASKING: Duration = Duration::from_secs(1);

impl CallClock {
    pub(crate) fn new(deadline: Instant) -> CallClock {
        CallClock {
            state: parking_lot::Mutex::new(ClockState {
                deadline,
                asking_since: None,
            }),
        }
    }

    /// When the call must end, as it stands now.
    pub(crate) fn deadline(&self) -> Instant {
        let state = self.state.lock();
        match state.asking_since {
            Some(since) => (state.deadline + since.elapsed()).max(Instant::now() + WHILE_ASKING),
            None => state.deadline,
        }
    }

    /// A question went out: the time until its answer does not count.
    pub(crate) fn pause(&self) {
        self.state
            .lock()
            .asking_since
            .get_or_insert_with(Instant::now);
    }

    /// The answer came: the deadline moves by the time it took.
    pub(crate) fn resume(&self) {
        let mut state = self.state.lock();
        if let Some(since) = state.asking_since.take() {
            state.deadline += since.elapsed();
        }
    }
}

/// Why a reach is refused when nobody may be asked: the plain refusal, which the caller words
/// in its own terms.
pub(crate) const NOT_GRANTED: &str = "not granted";

/// Most questions about grants one call may cause: a plugin reaching for host after host must
/// not keep the user answering.
pub const MAX_GRANT_QUESTIONS: usize = 4;

/// One call's view of grants it may ask for: answers given during the call, and how many
/// questions it caused.
pub(crate) struct CallAsks {
    plugin: Arc<str>,
    /// The plugin's `ask = true`.
    ask: bool,
    call: CallContext,
    /// The call's deadline, moved by the time the user takes to answer.
    clock: Arc<CallClock>,
    /// Answers of this call, held while one question is out so two requests to the same host
    /// ask once.
    answered: tokio::sync::Mutex<Answered>,
}

#[derive(Default)]
struct Answered {
    allowed: Vec<Capability>,
    denied: Vec<Capability>,
    questions: usize,
}

impl CallAsks {
    /// The call's clock: its deadline, moved by the time questions take.
    pub(crate) fn clock(&self) -> &Arc<CallClock> {
        &self.clock
    }

    pub(crate) fn new(
        plugin: Arc<str>,
        ask: bool,
        call: CallContext,
        clock: Arc<CallClock>,
    ) -> CallAsks {
        CallAsks {
            plugin,
            ask,
            call,
            clock,
            answered: Default::default(),
        }
    }

    /// Whether the plugin, which lacks a configured grant for `capability`, may have it: granted
    /// "always" before, allowed earlier in this call, or allowed by the user now. `Err` says why
    /// not, for the log and the client.
    pub(crate) async fn allow(&self, capability: Capability) -> Result<(), String> {
        let Some(decider) = self.call.grants.clone() else {
            return Err(NOT_GRANTED.into());
        };
        if decider.remembered(&self.plugin, &capability) {
            return Ok(());
        }
        if !self.ask {
            return Err(NOT_GRANTED.into());
        }
        let mut answered = self.answered.lock().await;
        if answered.allowed.contains(&capability) {
            return Ok(());
        }
        if answered.denied.contains(&capability) {
            return Err("the user denied it earlier in this call".into());
        }
        if answered.questions >= MAX_GRANT_QUESTIONS {
            return Err(format!(
                "not granted, and this call already caused {MAX_GRANT_QUESTIONS} questions to \
                 the user"
            ));
        }
        answered.questions += 1;
        self.clock.pause();
        let decision = decider
            .ask(self.plugin.clone(), capability.clone(), &self.call)
            .await;
        self.clock.resume();
        match decision {
            Ok(Decision::Once | Decision::Always) => {
                answered.allowed.push(capability);
                Ok(())
            }
            Ok(Decision::Deny) => {
                answered.denied.push(capability);
                Err("the user denied it".into())
            }
            Err(Unasked::AwaitingAnswer) => Err("awaiting the user's answer".into()),
            Err(Unasked::Failed(why)) => {
                answered.denied.push(capability);
                Err(why)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Answers every question the same way, counting them; remembers `kept`.
    struct Answering {
        answer: Result<Decision, Unasked>,
        kept: Capability,
        asked: AtomicUsize,
    }

    impl GrantDecider for Answering {
        fn remembered(&self, _plugin: &str, capability: &Capability) -> bool {
            *capability == self.kept
        }

        fn ask(&self, _: Arc<str>, _: Capability, _: &CallContext) -> PendingDecision {
            self.asked.fetch_add(1, Ordering::Relaxed);
            Box::pin(std::future::ready(self.answer.clone()))
        }
    }

    fn call_with(answer: Result<Decision, Unasked>, ask: bool) -> (CallAsks, Arc<Answering>) {
        let decider = Arc::new(Answering {
            answer,
            kept: Capability::EnvVar("KEPT".into()),
            asked: AtomicUsize::new(0),
        });
        let call = CallContext {
            grants: Some(decider.clone()),
            ..CallContext::default()
        };
        (CallAsks::new("p".into(), ask, call, far_clock()), decider)
    }

    fn far_clock() -> Arc<CallClock> {
        Arc::new(CallClock::new(Instant::now() + Duration::from_secs(60)))
    }

    #[tokio::test]
    async fn the_time_a_question_takes_moves_the_deadline() {
        struct Slow;
        impl GrantDecider for Slow {
            fn remembered(&self, _: &str, _: &Capability) -> bool {
                false
            }
            fn ask(&self, _: Arc<str>, _: Capability, _: &CallContext) -> PendingDecision {
                Box::pin(async {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok(Decision::Once)
                })
            }
        }
        let clock = far_clock();
        let before = clock.deadline();
        let ticking = CallClock::new(Instant::now());
        ticking.pause();
        assert!(
            ticking.deadline() > Instant::now(),
            "no deadline passes while asking"
        );
        let call = CallContext {
            grants: Some(Arc::new(Slow)),
            ..CallContext::default()
        };
        let asks = CallAsks::new("p".into(), true, call, clock.clone());
        assert_eq!(asks.allow(host(0)).await, Ok(()));
        assert!(clock.deadline() >= before + Duration::from_millis(50));
    }

    fn host(n: usize) -> Capability {
        Capability::Host(format!("h{n}.example"))
    }

    #[tokio::test]
    async fn a_call_asks_once_per_capability_and_at_most_a_few_times() {
        let (asks, decider) = call_with(Ok(Decision::Deny), true);
        assert!(asks.allow(host(0)).await.is_err());
        assert!(
            asks.allow(host(0)).await.is_err(),
            "denied again without asking"
        );
        assert_eq!(decider.asked.load(Ordering::Relaxed), 1);
        for n in 1..10 {
            assert!(asks.allow(host(n)).await.is_err());
        }
        assert_eq!(decider.asked.load(Ordering::Relaxed), MAX_GRANT_QUESTIONS);
        let why = asks.allow(host(99)).await.unwrap_err();
        assert!(why.contains("questions"), "{why}");
        // A remembered grant needs no question, whatever was asked before.
        assert_eq!(asks.allow(Capability::EnvVar("KEPT".into())).await, Ok(()));

        let (asks, decider) = call_with(Ok(Decision::Once), true);
        assert_eq!(asks.allow(host(0)).await, Ok(()));
        assert_eq!(asks.allow(host(0)).await, Ok(()));
        assert_eq!(decider.asked.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn without_ask_or_a_decider_nothing_is_asked() {
        let (asks, decider) = call_with(Ok(Decision::Always), false);
        assert!(asks.allow(host(0)).await.is_err());
        assert_eq!(decider.asked.load(Ordering::Relaxed), 0);
        assert_eq!(asks.allow(Capability::EnvVar("KEPT".into())).await, Ok(()));
        let bare = CallAsks::new("p".into(), true, CallContext::default(), far_clock());
        assert!(bare.allow(host(0)).await.is_err());
        // A client that cannot answer: denied, with its reason, and not asked again.
        let (asks, decider) = call_with(Err(Unasked::Failed("no elicitation".into())), true);
        assert_eq!(asks.allow(host(0)).await, Err("no elicitation".into()));
        assert!(asks.allow(host(0)).await.is_err());
        assert_eq!(decider.asked.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn hosts_are_named_as_the_grant_that_allows_them() {
        let grant = |https, host, port| match Capability::host(https, host, port) {
            Some(Capability::Host(g)) => g,
            other => panic!("{other:?}"),
        };
        assert_eq!(grant(true, "API.example.com", 443), "api.example.com");
        assert_eq!(grant(true, "api.example.com", 8443), "api.example.com:8443");
        assert_eq!(grant(false, "127.0.0.1", 80), "http://127.0.0.1");
        assert_eq!(grant(false, "[::1]", 8080), "http://[::1]:8080");
        for https in [true, false] {
            for (host, port) in [("a.example", 443), ("10.0.0.1", 8080), ("[::1]", 80)] {
                let Some(Capability::Host(text)) = Capability::host(https, host, port) else {
                    unreachable!()
                };
                let pattern = crate::HostPattern::parse(&text).unwrap();
                assert!(pattern.allows(https, host, port), "{text}");
            }
        }
        assert_eq!(Capability::host(true, "*.example.com", 443), None);
        assert_eq!(Capability::host(true, &"a".repeat(300), 443), None);
        assert!(
            Capability::EnvVar("K".into())
                .question_key()
                .starts_with(HOST_KEY_PREFIX)
        );
    }
}
