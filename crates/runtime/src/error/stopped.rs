//! What stopped a call, read from wasmtime's error: a limit (fuel, time, the copy bound, or one
//! the host raised) or a trap, in words for the tool's caller.

use wasmtime::Trap;

use super::call::LimitExceeded;
use crate::limits::Budget;
use crate::spec::Limits;

/// The limit that stopped a call, when a limit did.
pub fn limit_hit(err: &wasmtime::Error, limits: &Limits, budget: &Budget) -> Option<LimitExceeded> {
    if crate::copy_bound::exhausted(err) {
        // wasmtime stopped a lift past the hostcall fuel, a multiple of the output limit.
        return Some(LimitExceeded::Output {
            bytes: limits.output_bytes.saturating_add(1),
            limit_bytes: limits.output_bytes,
        });
    }
    if let Some(limit) = err.chain().find_map(|c| c.downcast_ref::<LimitExceeded>()) {
        return Some(limit.clone());
    }
    match err.downcast_ref::<Trap>()? {
        Trap::OutOfFuel => Some(budget.out_of_fuel()),
        Trap::Interrupt => Some(budget.out_of_time()),
        _ => None,
    }
}

/// Why a call into a plugin did not return normally, in words for the tool's caller, when no
/// limit stopped it (that is [`limit_hit`]'s to say).
pub fn describe_failure(err: &wasmtime::Error, stderr_tail: &str) -> String {
    let Some(trap) = err.downcast_ref::<Trap>() else {
        return format!("failed: {err:#}");
    };
    match trap {
        Trap::StackOverflow => "overflowed its stack (stack overflow)".to_string(),
        Trap::UnreachableCodeReached => match panic_message(stderr_tail) {
            Some(message) => format!("panicked: {message}"),
            None => "panicked (it reached an `unreachable` instruction)".to_string(),
        },
        // Rust and C keep their stack in linear memory: overflowing it shows up as an
        // out-of-bounds access rather than a wasm stack overflow.
        Trap::MemoryOutOfBounds => {
            "trapped on an out-of-bounds memory access (most often a stack overflow in the plugin)"
                .to_string()
        }
        other => format!("trapped: {other}"),
    }
}

/// The message of a Rust panic, from what the plugin last wrote to stderr.
fn panic_message(stderr_tail: &str) -> Option<String> {
    let start = stderr_tail.rfind("panicked at ")?;
    let rest = &stderr_tail[start..];
    // "panicked at src/lib.rs:1:2:\nmessage\nnote: ..."
    let message: Vec<&str> = rest
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("note: "))
        .collect();
    let message = message.join("\n").trim().to_string();
    Some(if message.is_empty() {
        rest.lines().next().unwrap_or_default().to_string()
    } else {
        message
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_message_is_read_from_stderr() {
        let tail = "noise\nthread '<unnamed>' panicked at src/lib.rs:10:5:\nmisbehave panicked on purpose\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            panic_message(tail).as_deref(),
            Some("misbehave panicked on purpose")
        );
        assert_eq!(panic_message("no panic here"), None);
    }
}
