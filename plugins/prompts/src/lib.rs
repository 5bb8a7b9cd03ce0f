//! A prompt pack: code review, summaries, commit messages, and an image to describe. Every
//! `language` argument completes from a list of programming languages.

use palisade_sdk::{
    Arguments, Prompt, PromptMessage, PromptResult, ResourceContents, prefix_matches,
};

#[rustfmt::skip]
const LANGUAGES: [&str; 24] = [
    "Bash", "C", "C#", "C++", "Clojure", "Dart", "Elixir", "Erlang", "Go", "Haskell", "Java",
    "JavaScript", "Kotlin", "Lua", "OCaml", "PHP", "Python", "R", "Ruby", "Rust", "Scala", "SQL",
    "Swift", "TypeScript",
];

const STYLES: [&str; 4] = [
    "bullet points",
    "one paragraph",
    "one sentence",
    "executive summary",
];

/// A 16x16 PNG: red, green, blue and yellow quadrants.
const QUADRANTS_PNG: &[u8] = include_bytes!("quadrants.png");

/// ` Rust` for `language = "Rust"`, or nothing when the argument is missing or blank.
fn language(args: &Arguments) -> String {
    match args.get("language").map(|l| l.trim()) {
        Some(l) if !l.is_empty() => format!(" {l}"),
        _ => String::new(),
    }
}

/// `text` in a Markdown code block whose fence no backtick run inside it can close.
fn fenced(text: &str, info: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{info}\n{}\n{fence}", text.trim_end_matches('\n'))
}

fn code_review(args: &Arguments) -> PromptResult {
    let code = &args["code"];
    let language = language(args);
    let lines = code.lines().count();
    let plural = if lines == 1 { "" } else { "s" };
    PromptResult::new()
        .description(format!("Review of {lines} line{plural} of{language} code"))
        .with_message(PromptMessage::user(format!(
            "Please review the{language} code attached below. Look for bugs, unclear names, \
             missing error handling and security problems. For each finding, quote the line, say \
             why it matters and suggest a fix. End with a one-line verdict."
        )))
        .with_message(PromptMessage::embedded_resource(
            ResourceContents::text("prompts://code_review/code", code.as_str())
                .mime_type("text/plain"),
        ))
}

fn summarize(args: &Arguments) -> PromptMessage {
    let style = args
        .get("style")
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .unwrap_or("one paragraph");
    PromptMessage::user(format!(
        "Summarize the text below as {style}. Keep the key facts, names and numbers; leave out \
         everything else.\n\n{}",
        fenced(&args["text"], "")
    ))
}

fn commit_message(args: &Arguments) -> PromptMessage {
    PromptMessage::user(format!(
        "Write a git commit message for this{} change. First line: what it does, in the \
         imperative mood, at most 50 characters, no final period. Then a blank line and a body \
         wrapped at 72 columns saying what changed and why. Answer with the message only.\n\n{}",
        language(args),
        fenced(&args["diff"], "diff")
    ))
}

fn describe_image(_: &Arguments) -> Vec<PromptMessage> {
    vec![
        PromptMessage::image(QUADRANTS_PNG, "image/png"),
        PromptMessage::user("Describe this image: its shapes, colours and layout."),
    ]
}

fn complete_language(typed: &str, _: &Arguments) -> Vec<String> {
    prefix_matches(typed, LANGUAGES)
}

palisade_sdk::export_plugin! {
    prompts: [
        Prompt::new("code_review", code_review)
            .title("Code review")
            .description("Ask for a review of a piece of code")
            .argument("code", "The code to review", true)
            .argument("language", "Its programming language", false)
            .complete("language", complete_language),
        Prompt::new("summarize", summarize)
            .title("Summarize")
            .description("Ask for a summary of a text")
            .argument("text", "The text to summarize", true)
            .argument("style", "The summary's form, such as bullet points or one paragraph", false)
            .complete("style", |typed, _| prefix_matches(typed, STYLES)),
        Prompt::new("commit_message", commit_message)
            .title("Commit message")
            .description("Ask for a git commit message for a diff")
            .argument("diff", "The change, as a unified diff", true)
            .argument("language", "The programming language of the change", false)
            .complete("language", complete_language),
        Prompt::new("describe_image", describe_image)
            .title("Describe an image")
            .description("Ask for a description of a small sample image (shows image content)"),
    ],
}
