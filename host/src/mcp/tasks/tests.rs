use serde_json::json;

use super::*;

fn tasks(running_per_client: u64) -> Tasks {
    let tasks = Tasks::default();
    tasks.configure(TaskSettings {
        running_per_client,
        poll_interval: Duration::from_millis(10),
        ..TaskSettings::default()
    });
    tasks
}

async fn started(tasks: &Tasks, owner: &str) -> Arc<Live> {
    let live = tasks.admit(owner, owner, "p", 8).unwrap();
    tasks
        .publish(&live, Form::Extension, "t", None)
        .await
        .unwrap();
    live
}

fn elicitation(key: &str) -> Question {
    Question {
        key: key.into(),
        method: "elicitation/create",
        params: json!({ "mode": "form", "message": "?", "requestedSchema": { "type": "object" } }),
    }
}

#[tokio::test]
async fn another_owner_sees_exactly_what_an_unknown_id_gets() {
    let tasks = tasks(4);
    let live = started(&tasks, "alice").await;
    assert_eq!(
        tasks.get(&live.id, "alice").await.unwrap().status,
        Status::Working
    );
    let theirs = tasks.get(&live.id, "mallory").await.unwrap_err();
    let unknown = tasks.get("f00d", "mallory").await.unwrap_err();
    assert_eq!(theirs.code, unknown.code);
    assert_eq!(
        theirs.message.replace(&live.id, "ID"),
        unknown.message.replace("f00d", "ID")
    );
    assert!(tasks.cancel(&live.id, "mallory").await.is_err());
    assert!(
        tasks
            .answer(&live.id, "mallory", &Map::new())
            .await
            .is_err()
    );
    assert!(tasks.of_owner("mallory").await.unwrap().is_empty());
    assert_eq!(
        tasks.get(&live.id, "alice").await.unwrap().status,
        Status::Working
    );
}

#[tokio::test]
async fn running_tasks_are_capped_per_client_and_per_plugin() {
    let tasks = tasks(2);
    let _a = started(&tasks, "alice").await;
    let b = started(&tasks, "alice").await;
    assert!(
        tasks.admit("alice", "alice", "p", 8).is_err(),
        "a third for alice"
    );
    assert!(
        tasks.admit("bob", "bob", "p", 2).is_err(),
        "the plugin runs two"
    );
    tasks.finish(&b, Ok(json!({ "content": [] })));
    assert!(tasks.admit("alice", "alice", "p", 8).is_ok(), "one ended");
}

#[tokio::test]
async fn a_tool_error_completes_an_extension_task_and_fails_a_core_one() {
    let tasks = tasks(4);
    let error = json!({ "content": [], "isError": true });
    let extension = started(&tasks, "o").await;
    tasks.finish(&extension, Ok(error.clone()));
    assert_eq!(
        tasks.get(&extension.id, "o").await.unwrap().status,
        Status::Completed
    );
    let core = tasks.admit("o", "o", "p", 8).unwrap();
    tasks.publish(&core, Form::Core, "t", None).await.unwrap();
    tasks.finish(&core, Ok(error));
    assert_eq!(
        tasks.get(&core.id, "o").await.unwrap().status,
        Status::Failed
    );
    let failing = started(&tasks, "o").await;
    tasks.finish(&failing, Err(RpcError::new(-32603, "trap")));
    let task = tasks.get(&failing.id, "o").await.unwrap();
    assert_eq!(task.status, Status::Failed);
    assert_eq!(
        task.outcome,
        Some(Outcome::Error(json!({ "code": -32603, "message": "trap" })))
    );
}

#[tokio::test]
async fn a_cancelled_task_stays_cancelled_and_its_call_is_told() {
    let tasks = tasks(4);
    let live = started(&tasks, "o").await;
    tasks.cancel(&live.id, "o").await.unwrap();
    assert!(live.cancel.is_cancelled());
    tasks.finish(&live, Ok(json!({ "content": [] })));
    let task = tasks.get(&live.id, "o").await.unwrap();
    assert_eq!(task.status, Status::Cancelled);
    assert_eq!(task.outcome, None);
    // Cancelling again changes nothing.
    assert_eq!(
        tasks.cancel(&live.id, "o").await.unwrap().status,
        Status::Cancelled
    );
}

#[tokio::test]
async fn questions_wait_in_the_task_and_each_answer_resumes_its_own() {
    let tasks = Arc::new(tasks(4));
    let live = started(&tasks, "o").await;
    let asking = {
        let (tasks, live) = (tasks.clone(), live.clone());
        tokio::spawn(async move {
            tasks
                .ask(&live, vec![elicitation("name"), elicitation("confirm")])
                .await
        })
    };
    let mut changes = tasks.watch(&live.id, "o").await.unwrap();
    while tasks.get(&live.id, "o").await.unwrap().input_requests.len() < 2 {
        changes.changed().await.unwrap();
    }
    let task = tasks.get(&live.id, "o").await.unwrap();
    assert_eq!(task.status, Status::InputRequired);
    // Unknown keys are ignored; a wrong answer to a waiting key is refused whole.
    let answers = json!({ "name": { "action": "accept", "content": { "name": "Ann" } },
                          "stray": { "ignored": true } });
    tasks
        .answer(&live.id, "o", answers.as_object().unwrap())
        .await
        .unwrap();
    let task = tasks.get(&live.id, "o").await.unwrap();
    assert_eq!(task.status, Status::InputRequired);
    assert_eq!(task.input_requests.keys().collect::<Vec<_>>(), ["confirm"]);
    let wrong = json!({ "confirm": { "action": "maybe" } });
    assert!(
        tasks
            .answer(&live.id, "o", wrong.as_object().unwrap())
            .await
            .is_err()
    );
    let right = json!({ "confirm": { "action": "decline" } });
    tasks
        .answer(&live.id, "o", right.as_object().unwrap())
        .await
        .unwrap();
    assert_eq!(
        tasks.get(&live.id, "o").await.unwrap().status,
        Status::Working
    );
    let answers = asking.await.unwrap();
    assert_eq!(answers[0].as_ref().unwrap()["content"]["name"], "Ann");
    assert_eq!(answers[1].as_ref().unwrap()["action"], "decline");
    // A key names one question for the task's life.
    assert_eq!(tasks.question_key(&live, "name"), "name~2");
    assert_eq!(tasks.question_key(&live, "other"), "other");
}

#[tokio::test]
async fn polls_faster_than_the_interval_are_answered_no_sooner() {
    let tasks = Tasks::default();
    tasks.configure(TaskSettings {
        poll_interval: Duration::from_millis(200),
        ..TaskSettings::default()
    });
    let live = started(&tasks, "o").await;
    let start = Instant::now();
    for _ in 0..3 {
        tasks.poll(&live.id, "o").await.unwrap();
    }
    assert!(
        start.elapsed() >= Duration::from_millis(400),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn a_question_nobody_answers_fails_when_the_tasks_ttl_is_up() {
    let tasks = tasks(4);
    let live = tasks.admit("o", "o", "p", 8).unwrap();
    tasks
        .publish(&live, Form::Extension, "t", Some(Duration::from_millis(50)))
        .await
        .unwrap();
    let answers = tasks.ask(&live, vec![elicitation("name")]).await;
    assert!(
        answers[0].as_ref().unwrap_err().contains("TTL"),
        "{answers:?}"
    );
    let task = tasks.get(&live.id, "o").await.unwrap();
    assert_eq!(task.status, Status::Working);
    assert!(task.input_requests.is_empty());
}
