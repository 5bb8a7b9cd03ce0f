//! The first load: every plugin the configuration wants, loaded (compiled, on a cold cache) in
//! the background while the server already answers, as many at once as there are cores. Each
//! plugin is served as soon as it is ready, and clients are told the lists changed; one that
//! fails is reported and left out, as on a reload, and the others serve.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::Reloader;
use crate::catalog::{Catalog, Loaded};
use crate::mcp::Pending;
use crate::plugin_load::{load_plugin, log_loaded};
use crate::plugin_set::Wanted;

/// What a request waits for the plugins loading at start (see `mcp::loading`).
pub fn pending(wanted: &[Wanted]) -> Vec<Pending> {
    wanted
        .iter()
        .map(|w| Pending {
            name: w.config.spec.name.as_str().into(),
            prefix: w.config.prefix.clone(),
            wait: Duration::from_millis(w.config.spec.limits.timeout_ms),
        })
        .collect()
}

impl Reloader {
    /// Loads `wanted` (which the server was told is [`pending`]) and serves each plugin as it
    /// becomes ready, keeping the configuration's order in the lists.
    pub(super) async fn load_at_start(&mut self, wanted: Vec<Wanted>) {
        let started = Instant::now();
        let count = wanted.len();
        // Loading is CPU work: more at once than cores only makes every plugin later. The
        // smallest go first, so that they are ready soonest (the cache compiles one at a time,
        // each over every core): `cores` workers take plugins from one queue in that order.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut queue: Vec<(usize, Wanted)> = wanted.into_iter().enumerate().collect();
        queue.sort_by_cached_key(|(_, w)| {
            std::fs::metadata(&w.config.spec.path).map_or(0, |m| m.len())
        });
        let queue = Arc::new(Mutex::new(VecDeque::from(queue)));
        let (done, mut loaded_rx) = mpsc::unbounded_channel();
        for _ in 0..cores.min(count) {
            let (runtime, queue, done) = (self.runtime.clone(), queue.clone(), done.clone());
            tokio::spawn(async move {
                loop {
                    let next = queue.lock().pop_front();
                    let Some((order, Wanted { config, origin })) = next else {
                        return;
                    };
                    let loaded = load_plugin(&runtime, &config).await;
                    if done.send((order, config, origin, loaded)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done);
        // The plugins served so far, each with its place in the configuration.
        let mut ready: Vec<(usize, Loaded)> = Vec::new();
        // A worker that panicked drops its plugin; the wait for it ends below.
        while let Some(first) = loaded_rx.recv().await {
            // Whatever else is ready joins the same catalog (a warm cache readies many at once).
            let mut batch = vec![first];
            while let Ok(more) = loaded_rx.try_recv() {
                batch.push(more);
            }
            let mut names = Vec::new();
            let mut fresh = Vec::new();
            for (order, config, origin, loaded) in batch {
                names.push(config.spec.name.clone());
                match loaded {
                    Ok(plugin) => {
                        log_loaded(&plugin);
                        self.server.loading.loaded(&config.spec.name, None);
                        let plugin = Arc::new(plugin);
                        fresh.push((order, origin, Loaded { plugin, config }));
                    }
                    Err(e) => {
                        tracing::error!("{origin}: not loaded: {e:#}");
                        (self.server.loading).loaded(&config.spec.name, Some(format!("{e:#}")));
                    }
                }
            }
            self.serve_beside(&mut ready, fresh);
            // Watched before a client waiting for these plugins goes on, so a change it makes
            // right after is seen.
            self.update_watches();
            for name in names {
                self.server.loading.finished(&name);
            }
        }
        // The configuration and the files of plugins that failed, even when none loaded.
        self.update_watches();
        self.server.loading.finish_all();
        let catalog = self.server.catalog();
        tracing::info!(
            plugins = self.plugins.len(),
            failed = count - self.plugins.len(),
            tools = catalog.tools().len(),
            prompts = catalog.prompts().len(),
            seconds = format_args!("{:.2}", started.elapsed().as_secs_f64()),
            "plugins ready"
        );
    }

    /// Serves `fresh` beside the plugins `ready` (each keeping its place in the configuration),
    /// all together when they can be served together, else one by one, refusing those that
    /// cannot be served with the others.
    fn serve_beside(
        &mut self,
        ready: &mut Vec<(usize, Loaded)>,
        fresh: Vec<(usize, String, Loaded)>,
    ) {
        let with = |ready: &[(usize, Loaded)], more: &[(usize, String, Loaded)]| {
            let mut all: Vec<(usize, Loaded)> = ready.to_vec();
            all.extend(more.iter().map(|(o, _, l)| (*o, l.clone())));
            all.sort_by_key(|(o, _)| *o);
            all
        };
        if fresh.is_empty() {
            return;
        }
        let all = with(ready, &fresh);
        if self
            .serve(all.iter().map(|(_, l)| l.clone()).collect())
            .is_ok()
        {
            *ready = all;
            return;
        }
        for one in fresh {
            let all = with(ready, std::slice::from_ref(&one));
            match self.serve(all.iter().map(|(_, l)| l.clone()).collect()) {
                Ok(()) => *ready = all,
                Err(e) => {
                    tracing::error!("{}: not served: {e:#}", one.1);
                    let name = &one.2.config.spec.name;
                    (self.server.loading).loaded(name, Some(format!("not served: {e:#}")));
                }
            }
        }
    }

    /// Serves `plugins` with the in-host tools, announcing the lists that changed; refused (and
    /// nothing changes) when they cannot be served together.
    fn serve(&mut self, plugins: Vec<Loaded>) -> anyhow::Result<()> {
        let catalog = Catalog::new(plugins.clone(), (self.in_host)())?;
        self.server.grow_catalog(catalog);
        (self.server.activity).changed(crate::telemetry::Topic::Plugins);
        self.plugins = plugins;
        Ok(())
    }
}
