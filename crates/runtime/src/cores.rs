//! A plugin's share of the machine's cores: its calls run on at most `limits.cores` of them at
//! once, so a plugin that spins or floods its output leaves the other cores to everyone else.
//!
//! A call holds one of its plugin's cores only while its future is polled, that is while its
//! wasm (or the host's work for it: instantiating, lifting its answer) runs on a thread; a call
//! waiting on the network or the client holds none. A spinning plugin yields at every epoch tick
//! (`engine::EPOCH_TICK`), so its calls take turns on its cores, first come first served, and
//! never on more of them.

use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The default of `limits.cores`: all of the machine's cores but one, and at least one.
pub fn default_cores() -> u64 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.saturating_sub(1).max(1) as u64
}

/// The cores one plugin's calls may run on at once.
#[derive(Clone)]
pub(crate) struct CoreShare {
    cores: Arc<Semaphore>,
}

type Acquire = Pin<Box<dyn Future<Output = Option<OwnedSemaphorePermit>> + Send>>;

impl CoreShare {
    /// A share of `cores` cores (at least one).
    pub(crate) fn new(cores: u64) -> CoreShare {
        let cores = usize::try_from(cores)
            .unwrap_or(Semaphore::MAX_PERMITS)
            .clamp(1, Semaphore::MAX_PERMITS);
        CoreShare {
            cores: Arc::new(Semaphore::new(cores)),
        }
    }

    /// Runs `work`, polling it only while it holds one of the cores.
    pub(crate) async fn run<F: Future>(&self, work: F) -> F::Output {
        let mut work = std::pin::pin!(work);
        // The wait for a core, once the call has queued for one.
        let mut queued: Option<Acquire> = None;
        std::future::poll_fn(|cx| {
            let core = match queued.as_mut() {
                Some(acquire) => match acquire.as_mut().poll(cx) {
                    Poll::Ready(core) => {
                        queued = None;
                        core
                    }
                    Poll::Pending => return Poll::Pending,
                },
                None => match self.cores.clone().try_acquire_owned() {
                    Ok(core) => Some(core),
                    Err(_) => {
                        let cores = self.cores.clone();
                        let mut acquire: Acquire =
                            Box::pin(async move { cores.acquire_owned().await.ok() });
                        match acquire.as_mut().poll(cx) {
                            Poll::Ready(core) => core,
                            Poll::Pending => {
                                queued = Some(acquire);
                                return Poll::Pending;
                            }
                        }
                    }
                },
            };
            // `None` only if the semaphore were closed, which it never is.
            let polled = work.as_mut().poll(cx);
            drop(core);
            polled
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// Work that spins for `slice` per poll, `slices` times, yielding between: the shape of a
    /// spinning plugin, which yields at every epoch tick.
    async fn spin(slices: u32, slice: Duration, on_core: Arc<AtomicUsize>, most: Arc<AtomicUsize>) {
        for _ in 0..slices {
            let now = on_core.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            let until = Instant::now() + slice;
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            on_core.fetch_sub(1, Ordering::SeqCst);
            tokio::task::yield_now().await;
        }
    }

    /// Runs `calls` spinning calls on `share` at once, each `slices` slices of `slice`; the
    /// most that were on a core at the same time.
    async fn most_on_core(share: &CoreShare, calls: usize, slices: u32, slice: Duration) -> usize {
        let on_core = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let calls: Vec<_> = (0..calls)
            .map(|_| {
                let (share, on_core, most) = (share.clone(), on_core.clone(), most.clone());
                tokio::spawn(async move { share.run(spin(slices, slice, on_core, most)).await })
            })
            .collect();
        for call in calls {
            call.await.unwrap();
        }
        most.load(Ordering::SeqCst)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn calls_of_one_plugin_never_run_on_more_than_its_cores() {
        let share = CoreShare::new(2);
        let most = most_on_core(&share, 6, 20, Duration::from_micros(300)).await;
        assert_eq!(most, 2, "6 spinning calls on a share of 2 cores");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_plugin_of_one_core_runs_one_call_at_a_time_and_each_to_its_end() {
        let share = CoreShare::new(1);
        assert_eq!(
            most_on_core(&share, 4, 50, Duration::from_micros(200)).await,
            1
        );
        assert_eq!(share.cores.available_permits(), 1, "every core given back");
    }
}
