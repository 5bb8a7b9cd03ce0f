//! Text a plugin controls, as the server's log writes it. The log's formatter escapes a few
//! terminal controls in a message but not line breaks: a plugin's `\n` or `\r` would start a
//! line that reads like the server's own. Every plugin-supplied string in a log message goes
//! through [`log_safe`].

use std::borrow::Cow;

/// `text` with every control character (line breaks, ESC, C1 controls) and the Unicode line and
/// paragraph separators escaped as Rust does (`\n`, `\u{1b}`), so it stays on its log line.
pub fn log_safe(text: &str) -> Cow<'_, str> {
    let breaks = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    if !text.chars().any(breaks) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if breaks(c) {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_text_cannot_start_a_line_of_its_own() {
        let forged = "ok\n2026-01-01T00:00:00Z  INFO palisade: forged\r\u{1b}[2K\u{85}\u{2028}";
        let shown = log_safe(forged);
        assert!(
            !shown.chars().any(|c| c.is_control() || c == '\u{2028}'),
            "{shown}"
        );
        assert!(shown.starts_with("ok\\n2026-01-01"), "{shown}");
        assert!(matches!(log_safe("plain text, ünïcode"), Cow::Borrowed(_)));
    }
}
