//! How a task's call asks the client: until the task is published, in its request (the input
//! round of a 2026-07-28 request, whose questions come back as `input_required`); after, in the
//! task, where each question waits in the record until the client answers it.

use parking_lot::Mutex;
use std::sync::Arc;

use serde_json::Value;

use super::{Live, Question};
use crate::mcp::Server;
use crate::mcp::requests_to_client::{ClientView, input_request, input_response};
use crate::mcp::stateless::input_round::InputRound;
use crate::mcp::version::ProtocolVersion;
use crate::runtime::bindings::host::{AskError, InputRequest};
use crate::runtime::{ClientChannel, PendingAnswers};

/// The client, as a task's call asks it.
pub(crate) struct TaskChannel {
    server: Arc<Server>,
    live: Arc<Live>,
    /// The revision the task was created in, and the capabilities its client declared then:
    /// what may be asked.
    version: ProtocolVersion,
    capabilities: Value,
    /// Until the task is published, the request's own input round.
    in_request: Mutex<Option<Arc<InputRound>>>,
}

impl TaskChannel {
    /// The channel of the task `live`, created by a client of `version` with `capabilities`;
    /// with `in_request`, questions go to the request until [`detach`](TaskChannel::detach).
    pub(crate) fn new(
        server: Arc<Server>,
        live: Arc<Live>,
        version: ProtocolVersion,
        capabilities: Value,
        in_request: Option<Arc<InputRound>>,
    ) -> TaskChannel {
        TaskChannel {
            server,
            live,
            version,
            capabilities,
            in_request: Mutex::new(in_request),
        }
    }

    /// The task.
    pub(crate) fn live(&self) -> &Arc<Live> {
        &self.live
    }

    /// Questions go to the task from now on, unless one already went to the request (then
    /// `false`: the call ends asking the client, and no task is made).
    pub(crate) fn detach(&self) -> bool {
        let mut in_request = self.in_request.lock();
        if in_request.as_ref().is_some_and(|round| round.awaiting()) {
            return false;
        }
        *in_request = None;
        true
    }
}

impl ClientChannel for TaskChannel {
    fn ask(&self, requests: Vec<(String, InputRequest)>) -> PendingAnswers {
        // Held while the round records the questions, so `detach` sees them.
        let in_request = self.in_request.lock();
        if let Some(round) = in_request.as_ref() {
            return round.ask(requests);
        }
        drop(in_request);
        let client = ClientView {
            version: self.version,
            capabilities: &self.capabilities,
        };
        let tasks = &self.server.tasks;
        let mut asked = Vec::new();
        let mut questions = Vec::new();
        for (key, request) in requests {
            match input_request(&client, request) {
                Ok((method, params)) => {
                    let wire_key = tasks.question_key(&self.live, &key);
                    questions.push(Question {
                        key: wire_key,
                        method,
                        params,
                    });
                    asked.push((key, Ok(method)));
                }
                Err(why) => asked.push((key, Err(why.to_string()))),
            }
        }
        let (server, live) = (self.server.clone(), self.live.clone());
        Box::pin(async move {
            let mut answers = server.tasks.ask(&live, questions).await.into_iter();
            asked
                .into_iter()
                .map(|(key, method)| {
                    let answer = method.and_then(|method| {
                        let answer = answers
                            .next()
                            .unwrap_or_else(|| Err("no answer".to_string()))?;
                        input_response(method, answer)
                    });
                    (key, answer.map_err(AskError::Failed))
                })
                .collect()
        })
    }
}
