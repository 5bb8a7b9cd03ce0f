//! `palisade inspect`: what a component exports and imports, what the sandbox gives it, and what
//! the server would serve from it.

use std::fmt::Write as _;

use anyhow::{Context as _, Result};
use sha2::Digest as _;

use crate::catalog::header_params;
use crate::config::PluginConfig;
use crate::runtime::bindings::completion;
use crate::runtime::{Runtime, import_status};

/// The parameters a tool mirrors into HTTP headers (`x-mcp-header`), or why the markings get the
/// tool left out when served.
fn describe_header_params(out: &mut String, input_schema: &str) -> std::fmt::Result {
    use std::fmt::Write as _;
    let Ok(serde_json::Value::Object(schema)) = serde_json::from_str(input_schema) else {
        return Ok(());
    };
    match header_params::header_params(&schema) {
        Ok(params) => {
            for param in params {
                writeln!(
                    out,
                    "    header: Mcp-Param-{} <- {}",
                    param.name,
                    param.path.join(".")
                )?;
            }
            Ok(())
        }
        Err(why) => writeln!(out, "    LEFT OUT when served: {why}"),
    }
}

/// A description of a component for `palisade inspect`: its exports, its tools and its imports.
pub async fn inspect(runtime: &Runtime, config: PluginConfig) -> Result<String> {
    let spec = &config.spec;
    let wasm = std::fs::read(&spec.path)
        .with_context(|| format!("cannot read {}", spec.path.display()))?;
    let sha256: [u8; 32] = sha2::Sha256::digest(&wasm).into();
    let component = runtime
        .cache
        .load(&runtime.engine, &wasm, &sha256, &spec.name)
        .with_context(|| format!("{} is not a valid component", spec.path.display()))?;
    let ty = component.component_type();
    let mut out = String::new();
    writeln!(out, "component: {}", spec.path.display())?;
    writeln!(out, "size: {} bytes", wasm.len())?;
    let pinned = match spec.sha256 {
        None => "",
        Some(p) if p == sha256 => " (matches the pinned sha256)",
        Some(_) => " (DIFFERS from the pinned sha256: it will not load)",
    };
    writeln!(out, "sha256: {}{pinned}", hex::encode(sha256))?;
    let l = &spec.limits;
    writeln!(
        out,
        "limits: fuel_per_call={} fuel_per_second={} fuel_burst={} timeout_ms={} memory_mib={} \
         output_kib={} calls_per_minute={} calls_per_minute_per_client={} concurrent_calls={} \
         questions_per_call={} cores={}",
        l.fuel_per_call,
        l.fuel_per_second,
        l.fuel_burst,
        l.timeout_ms,
        l.memory_bytes >> 20,
        l.output_bytes >> 10,
        l.calls_per_minute,
        l.calls_per_minute_per_client,
        l.concurrent_calls,
        l.questions_per_call,
        l.cores
    )?;
    let contract = ty
        .exports(&runtime.engine)
        .any(|(name, _)| name.starts_with("palisade:plugin/"));
    writeln!(out, "\nexports:")?;
    for (name, _) in ty.exports(&runtime.engine) {
        // Toolchains add exports of their own (componentize-py exports `exports` with its build-time
        // `init`); the host never calls them. Without the contract, every function is a tool.
        let note = if contract && !name.starts_with("palisade:plugin/") {
            " (not part of the contract: never called)"
        } else {
            ""
        };
        writeln!(out, "  {name}{note}")?;
    }
    writeln!(out, "\nimports (and what the sandbox gives for each):")?;
    for (name, item) in ty.imports(&runtime.engine) {
        writeln!(
            out,
            "  {name}: {}",
            import_status(&runtime.engine, name, &item.ty, spec)
        )?;
    }
    match crate::plugin_load::load_plugin(runtime, &config).await {
        Ok(plugin) => {
            match plugin.kind() {
                crate::runtime::Kind::Wasmcp(adapter) => writeln!(
                    out,
                    "\nprovides: tools, through the wasmcp adapter ({})",
                    adapter.interface
                )?,
                crate::runtime::Kind::Generic(_) => writeln!(
                    out,
                    "\nprovides: tools, one per exported function (a generic component: it \
                     exports no palisade:plugin interface)"
                )?,
                crate::runtime::Kind::Contract(contract) => {
                    let e = contract.exports;
                    writeln!(
                        out,
                        "\nprovides: tools={} resources={} prompts={} completion={}",
                        e.tools, e.resources, e.prompts, e.completion
                    )?
                }
            }
            writeln!(out, "\ntools ({}):", plugin.tools.len())?;
            for tool in &plugin.tools {
                writeln!(
                    out,
                    "  {}: {}",
                    tool.name,
                    tool.description.as_deref().unwrap_or("(no description)")
                )?;
                if let Some(func) = plugin.generic().and_then(|g| g.get(&tool.name)) {
                    writeln!(out, "    from: {}", func.path())?;
                }
                writeln!(out, "    input schema: {}", tool.input_schema)?;
                if let Some(output) = &tool.output_schema {
                    writeln!(out, "    output schema: {output}")?;
                }
                describe_header_params(&mut out, &tool.input_schema)?;
            }
            if let Some(generic) = plugin.generic() {
                writeln!(out, "\nfunctions left out ({}):", generic.skipped.len())?;
                for skipped in &generic.skipped {
                    writeln!(out, "  {}: {}", skipped.path, skipped.why)?;
                }
            }
            writeln!(out, "\nresources ({}):", plugin.resources.len())?;
            for r in &plugin.resources {
                writeln!(out, "  {} ({})", r.uri, r.name)?;
            }
            writeln!(out, "\nresource templates ({}):", plugin.templates.len())?;
            for t in &plugin.templates {
                writeln!(out, "  {} ({})", t.uri_template, t.name)?;
            }
            writeln!(out, "\nprompts ({}):", plugin.prompts.len())?;
            for p in &plugin.prompts {
                let args: Vec<String> = p
                    .arguments
                    .iter()
                    .map(|a| format!("{}{}", a.name, if a.required { "" } else { "?" }))
                    .collect();
                writeln!(out, "  {}({})", p.name, args.join(", "))?;
            }
            writeln!(out, "\ncompletes ({}):", plugin.completable.len())?;
            for c in &plugin.completable {
                match c {
                    completion::CompletionRef::Prompt(p) => {
                        writeln!(out, "  arguments of prompt {p}")?
                    }
                    completion::CompletionRef::ResourceTemplate(t) => {
                        writeln!(out, "  variables of template {t}")?
                    }
                }
            }
        }
        Err(e) => writeln!(out, "\ncannot serve it: {e:#}")?,
    }
    Ok(out)
}
