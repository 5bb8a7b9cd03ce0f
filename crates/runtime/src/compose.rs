//! `link = [...]`: a component composed with the components whose exports it imports, so that
//! both run as one component in one store, under the grants and limits of the plugin that
//! imports (wasmtime links components to the host, not to each other).

use anyhow::{Context as _, Result};
use wac_graph::types::Package;
use wac_graph::{CompositionGraph, EncodeOptions, PlugError, plug};

/// `socket` (the importing component) with each of `plugs` (named for errors) instantiated
/// and wired into the imports of the same name.
pub fn compose(socket: &[u8], plugs: &[(&str, Vec<u8>)]) -> Result<Vec<u8>> {
    let mut graph = CompositionGraph::new();
    let socket = Package::from_bytes("palisade:linked", None, socket.to_vec(), graph.types_mut())
        .context("reading the component")?;
    let socket = graph.register_package(socket)?;
    let mut ids = Vec::new();
    for (i, (name, bytes)) in plugs.iter().enumerate() {
        // Package names only label the graph's nodes; the plugin's name may not be a valid one.
        let package = Package::from_bytes(
            &format!("palisade:dep{i}"),
            None,
            bytes.clone(),
            graph.types_mut(),
        )
        .with_context(|| format!("reading the component of `{name}`"))?;
        ids.push(graph.register_package(package)?);
    }
    plug(&mut graph, ids, socket).map_err(|e| match e {
        PlugError::NoPlugHappened => anyhow::anyhow!(
            "none of the linked components ({}) exports an interface it imports",
            plugs
                .iter()
                .map(|(n, _)| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => anyhow::Error::new(other),
    })?;
    graph
        .encode(EncodeOptions::default())
        .context("encoding the composed component")
}
