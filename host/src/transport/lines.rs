//! Newline-delimited messages with a cap on their length. A line over the cap is skipped (its
//! bytes are read and dropped as they come, never held) and reported once, and reading goes on
//! with the next line: one oversized message costs the client an error, not the connection.

use std::io::{self, BufRead};

/// One line read.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A line within the cap, without its newline.
    Message(Vec<u8>),
    /// A line longer than the cap, skipped.
    TooLong,
}

/// Reads lines of at most `max` bytes.
pub struct Lines<R> {
    reader: R,
    max: usize,
    line: Vec<u8>,
    /// The line being read went over the cap: its bytes are dropped until its newline.
    skipping: bool,
}

impl<R: BufRead> Lines<R> {
    /// Lines of `reader`, each at most `max` bytes.
    pub fn new(reader: R, max: usize) -> Lines<R> {
        Lines {
            reader,
            max,
            line: Vec::new(),
            skipping: false,
        }
    }

    /// The next line; `None` at the end of input. Blocks until a line ends: stdio reads it on
    /// a thread of its own.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                // The end of input ends the last line, newline or not.
                return Ok(if std::mem::take(&mut self.skipping) {
                    Some(Line::TooLong)
                } else if self.line.is_empty() {
                    None
                } else {
                    Some(Line::Message(std::mem::take(&mut self.line)))
                });
            }
            let (chunk, ends_line) = match available.iter().position(|&b| b == b'\n') {
                Some(newline) => (&available[..newline], true),
                None => (available, false),
            };
            if !self.skipping && self.line.len() + chunk.len() > self.max {
                self.skipping = true;
                // Given back: an oversized line must not keep its memory.
                self.line = Vec::new();
            }
            if !self.skipping {
                self.line.extend_from_slice(chunk);
            }
            let consumed = chunk.len() + usize::from(ends_line);
            self.reader.consume(consumed);
            if ends_line {
                return Ok(Some(if std::mem::take(&mut self.skipping) {
                    Line::TooLong
                } else {
                    Line::Message(std::mem::take(&mut self.line))
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(input: &[u8], max: usize, buffer: usize) -> Vec<Line> {
        let reader = io::BufReader::with_capacity(buffer, input);
        let mut lines = Lines::new(reader, max);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line);
        }
        out
    }

    fn message(text: &str) -> Line {
        Line::Message(text.as_bytes().to_vec())
    }

    #[test]
    fn long_lines_are_skipped_and_reading_goes_on() {
        let input = b"short\n0123456789abcdef\nok\n\n0123456789\nlast";
        for buffer in [1, 3, 8, 64] {
            assert_eq!(
                read_all(input, 10, buffer),
                vec![
                    message("short"),
                    Line::TooLong,
                    message("ok"),
                    message(""),
                    message("0123456789"),
                    message("last"),
                ],
                "buffer of {buffer}"
            );
        }
    }

    #[test]
    fn a_long_last_line_without_newline_is_reported() {
        assert_eq!(
            read_all(b"a\nbbbbbbbbbbbbbbbb", 4, 4),
            vec![message("a"), Line::TooLong]
        );
        assert!(read_all(b"", 4, 4).is_empty());
    }
}
