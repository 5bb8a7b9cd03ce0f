//! What fuel metering costs: the same CPU-bound call in an engine that counts fuel and in one
//! that does not, in this process (no transport, so only the wasm's own run time differs).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use palisade::runtime::PluginSpec;
use palisade::runtime::bindings::types::ContentBlock;
use palisade::runtime::{CallContext, CompileCache, Metering, Plugin, Runtime};

use crate::measure::median;

pub struct FuelCost {
    pub metered: Duration,
    pub unmetered: Duration,
    pub fuel_used: u64,
}

impl FuelCost {
    pub fn overhead(&self) -> f64 {
        self.metered.as_secs_f64() / self.unmetered.as_secs_f64() - 1.0
    }
}

/// Median time of `bench_primes(below)` in `rounds` interleaved rounds, metered and not.
pub fn measure(bench_wasm: &Path, cache: &Path, below: u32, rounds: usize) -> Result<FuelCost> {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    tokio.block_on(async {
        let load = async |metering| {
            let runtime = Runtime::with_metering(CompileCache::open(cache)?, metering)?;
            let plugin =
                Plugin::load(&runtime, PluginSpec::new("bench", bench_wasm.to_path_buf())).await?;
            anyhow::Ok((runtime, plugin))
        };
        let metered = load(Metering::Fuel).await?;
        let unmetered = load(Metering::Off).await?;
        let arguments = format!(r#"{{"below": {below}}}"#);
        let mut expected = None;
        let mut fuel_used = 0;
        let mut times = [Vec::new(), Vec::new()];
        // One unmeasured call each first: page in the code, warm the pool's slot.
        for round in 0..=rounds {
            for (i, (_, plugin)) in [&metered, &unmetered].into_iter().enumerate() {
                let call = CallContext::default();
                let stats = call.stats.clone();
                let started = Instant::now();
                let result = plugin
                    .call_tool("primes".into(), arguments.clone(), call)
                    .await?;
                let elapsed = started.elapsed();
                let Some(ContentBlock::Text(text)) = result.content.first() else {
                    bail!("bench_primes answered no text");
                };
                if *expected.get_or_insert_with(|| text.text.clone()) != text.text {
                    bail!(
                        "metered and unmetered runs disagree: {} and {:?}",
                        text.text,
                        expected
                    );
                }
                if i == 0 {
                    fuel_used = stats.fuel_used.load(std::sync::atomic::Ordering::Relaxed);
                }
                if round > 0 {
                    times[i].push(elapsed);
                }
            }
        }
        let [metered_times, unmetered_times] = times;
        Ok(FuelCost {
            metered: median(metered_times),
            unmetered: median(unmetered_times),
            fuel_used,
        })
    })
}
