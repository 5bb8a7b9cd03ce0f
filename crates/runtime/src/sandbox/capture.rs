//! Where a plugin's stdout and stderr go: the host's log, bounded per call, with a tail kept to
//! explain a failure.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

use crate::secrets::Redactor;

/// Bytes of one stream that are logged per call; the rest is counted and dropped, so a plugin
/// cannot flood the log.
const MAX_LOGGED_BYTES: usize = 64 << 10;
/// Longest line logged as one event.
const MAX_LINE: usize = 4 << 10;
/// How much of stderr is kept to explain a panic.
const TAIL_BYTES: usize = 4 << 10;

/// A plugin's stdout or stderr: written to the host log line by line, tagged with the plugin's
/// name, never to the MCP stream.
#[derive(Clone)]
pub struct OutputCapture {
    plugin: Arc<str>,
    stream: &'static str,
    redactor: Redactor,
    state: Arc<Mutex<CaptureState>>,
}

#[derive(Default)]
struct CaptureState {
    line: Vec<u8>,
    logged: usize,
    dropped: usize,
    tail: VecDeque<u8>,
}

impl OutputCapture {
    /// Captures the `stream` (stdout or stderr) of `plugin` into the host's log.
    pub fn new(plugin: Arc<str>, stream: &'static str, redactor: Redactor) -> OutputCapture {
        OutputCapture {
            plugin,
            stream,
            redactor,
            state: Arc::default(),
        }
    }

    fn write(&self, buf: &[u8]) {
        let mut state = self.state.lock();
        for &b in buf {
            if state.tail.len() == TAIL_BYTES {
                state.tail.pop_front();
            }
            state.tail.push_back(b);
        }
        for &b in buf {
            if b == b'\n' || state.line.len() >= MAX_LINE {
                self.emit(&mut state);
            }
            if b != b'\n' {
                state.line.push(b);
            }
        }
    }

    fn emit(&self, state: &mut CaptureState) {
        let line = std::mem::take(&mut state.line);
        if state.logged + line.len() > MAX_LOGGED_BYTES {
            state.dropped += line.len() + 1;
            return;
        }
        state.logged += line.len() + 1;
        tracing::info!(
            target: "palisade::plugin",
            plugin = %self.plugin,
            stream = self.stream,
            "{}",
            crate::log_safe(&self.redactor.redact(&String::from_utf8_lossy(&line)))
        );
    }

    /// Logs what is left of the last line and a note of what was dropped; returns the tail.
    /// The next call of a kept instance (`reuse`) starts with its own allowance and tail.
    pub fn finish(&self) -> String {
        let mut state = self.state.lock();
        if !state.line.is_empty() {
            self.emit(&mut state);
        }
        if state.dropped > 0 {
            tracing::warn!(
                target: "palisade::plugin",
                plugin = %self.plugin,
                stream = self.stream,
                "{} bytes of output not logged (more than {} KiB in one call)",
                state.dropped,
                MAX_LOGGED_BYTES >> 10
            );
            state.dropped = 0;
        }
        state.logged = 0;
        let tail: Vec<u8> = state.tail.drain(..).collect();
        self.redactor
            .redact(&String::from_utf8_lossy(&tail))
            .into_owned()
    }
}

impl IsTerminal for OutputCapture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for OutputCapture {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl AsyncWrite for OutputCapture {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.write(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_a_tail_and_caps_the_log() {
        let capture = OutputCapture::new("t".into(), "stderr", Redactor::default());
        let big = vec![b'x'; MAX_LOGGED_BYTES * 2];
        capture.write(&big);
        capture.write(b"\nlast words\n");
        assert!(capture.state.lock().logged <= MAX_LOGGED_BYTES);
        let tail = capture.finish();
        assert!(tail.ends_with("last words\n"));
        assert!(tail.len() <= TAIL_BYTES);
    }

    #[test]
    fn each_call_of_a_kept_instance_has_its_own_allowance_and_tail() {
        let capture = OutputCapture::new("t".into(), "stderr", Redactor::default());
        capture.write(&vec![b'x'; MAX_LOGGED_BYTES * 2]);
        capture.write(b"\nfirst call\n");
        capture.finish();
        capture.write(b"second call\n");
        let state = capture.state.lock();
        assert_eq!(state.logged, "second call\n".len(), "logged, not dropped");
        drop(state);
        assert_eq!(capture.finish(), "second call\n");
    }
}
