//! A queue of outgoing messages with a cap in bytes: a client that stops reading cannot make the
//! server hold more than the cap for it. Sending past the cap closes the queue instead of growing it, and the
//! transport ends the connection (the client was not reading anyway).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Bytes queued for one client before it is dropped.
pub const MAX_QUEUED_BYTES: usize = 64 << 20;

/// The sending half.
pub struct QueueSender<T> {
    tx: mpsc::UnboundedSender<(T, usize)>,
    queued: Arc<AtomicUsize>,
    cap: usize,
    overflow: CancellationToken,
}

// Not derived: that would ask `T: Clone`.
impl<T> Clone for QueueSender<T> {
    fn clone(&self) -> Self {
        QueueSender {
            tx: self.tx.clone(),
            queued: self.queued.clone(),
            cap: self.cap,
            overflow: self.overflow.clone(),
        }
    }
}

/// The receiving half: the writer to the client.
pub struct QueueReceiver<T> {
    rx: mpsc::UnboundedReceiver<(T, usize)>,
    queued: Arc<AtomicUsize>,
}

/// A queue that holds at most `cap` bytes.
pub fn channel<T>(cap: usize) -> (QueueSender<T>, QueueReceiver<T>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(AtomicUsize::new(0));
    (
        QueueSender {
            tx,
            queued: queued.clone(),
            cap,
            overflow: CancellationToken::new(),
        },
        QueueReceiver { rx, queued },
    )
}

impl<T> QueueSender<T> {
    /// Queues `item`, which is `len` bytes on the wire; false (and the queue overflowed) when it
    /// does not fit under the cap, or the receiver is gone.
    pub fn send(&self, item: T, len: usize) -> bool {
        if self.overflow.is_cancelled() {
            return false;
        }
        let before = self.queued.fetch_add(len, Ordering::AcqRel);
        if before + len > self.cap {
            self.queued.fetch_sub(len, Ordering::AcqRel);
            tracing::warn!(
                queued = before,
                cap = self.cap,
                "the client is not reading what the server sends: dropping it"
            );
            self.overflow.cancel();
            return false;
        }
        if self.tx.send((item, len)).is_err() {
            self.queued.fetch_sub(len, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// Completes once a send did not fit.
    pub fn overflowed(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.overflow.clone().cancelled_owned()
    }

    /// Bytes queued now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }
}

impl<T> QueueReceiver<T> {
    /// The next item to write; `None` when every sender is gone.
    pub async fn recv(&mut self) -> Option<T> {
        let (item, len) = self.rx.recv().await?;
        self.queued.fetch_sub(len, Ordering::AcqRel);
        Some(item)
    }

    /// [`recv`](Self::recv) for a thread of its own (never an async task's).
    pub fn blocking_recv(&mut self) -> Option<T> {
        let (item, len) = self.rx.blocking_recv()?;
        self.queued.fetch_sub(len, Ordering::AcqRel);
        Some(item)
    }

    /// The next item if one is queued now.
    pub fn try_recv(&mut self) -> Option<T> {
        let (item, len) = self.rx.try_recv().ok()?;
        self.queued.fetch_sub(len, Ordering::AcqRel);
        Some(item)
    }
}

/// The length of `value` as JSON text, counted without building the text.
pub fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_cap_holds_and_reading_frees_room() {
        let (tx, mut rx) = channel(10);
        let send = |v: Vec<u8>| tx.send(v.clone(), v.len());
        assert!(send(vec![1; 6]));
        assert!(send(vec![2; 4]));
        assert_eq!(tx.queued(), 10);
        assert_eq!(rx.recv().await.unwrap(), vec![1; 6]);
        assert!(send(vec![3; 5]));
        assert!(!send(vec![4; 2]), "over the cap");
        // Once overflowed, the queue stays closed: the client is being dropped.
        assert!(!send(vec![5]));
        tx.overflowed().await;
        assert_eq!(rx.recv().await.unwrap(), vec![2; 4]);
    }
}
