//! From a downloaded layer to the component: the layer itself (the CNCF Wasm artifact layout), or
//! the one `.wasm` file of a tar layer, gzipped or not (an image built `FROM scratch`).
//!
//! The layer is hostile: decompression and unpacking are bounded by the same size cap as the
//! download, so a small gzip bomb cannot fill memory.

use std::io::Read as _;

use anyhow::{Context as _, Result};

const WASM_MAGIC: &[u8] = b"\0asm";
const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];

/// The component in `layer`, refusing anything bigger than `max_bytes` once unpacked.
pub fn component_from_layer(layer: Vec<u8>, max_bytes: u64) -> Result<Vec<u8>> {
    if layer.starts_with(WASM_MAGIC) {
        return Ok(layer);
    }
    let layer = if layer.starts_with(GZIP_MAGIC) {
        let unzipped = read_bounded(flate2::read::GzDecoder::new(&layer[..]), max_bytes)
            .context("the layer is gzip, but does not decompress")?;
        if unzipped.starts_with(WASM_MAGIC) {
            return Ok(unzipped);
        }
        unzipped
    } else {
        layer
    };
    if !is_tar(&layer) {
        anyhow::bail!("the layer is neither a WebAssembly component nor a tar archive holding one");
    }
    let mut archive = tar::Archive::new(&layer[..]);
    let mut found: Option<(String, Vec<u8>)> = None;
    for entry in archive.entries().context("reading the tar layer")? {
        let entry = entry.context("reading the tar layer")?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.ends_with(".wasm") {
            continue;
        }
        if let Some((first, _)) = &found {
            anyhow::bail!(
                "the tar layer holds more than one .wasm file ({first}, {name}): a plugin is one \
                 component; publish it as a Wasm artifact (`palisade publish`)"
            );
        }
        let wasm = read_bounded(entry, max_bytes).with_context(|| format!("reading {name}"))?;
        found = Some((name, wasm));
    }
    let (name, wasm) = found.context("the tar layer holds no .wasm file")?;
    anyhow::ensure!(
        wasm.starts_with(WASM_MAGIC),
        "{name} in the tar layer is not WebAssembly"
    );
    Ok(wasm)
}

/// Reads `reader` whole, failing once it passes `max_bytes`.
pub fn read_bounded(reader: impl std::io::Read, max_bytes: u64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    reader.take(max_bytes + 1).read_to_end(&mut out)?;
    anyhow::ensure!(
        out.len() as u64 <= max_bytes,
        "it is larger than {} MiB once unpacked ([sources] max_mib)",
        max_bytes >> 20
    );
    Ok(out)
}

/// A POSIX tar archive has `ustar` at offset 257 of its first header.
fn is_tar(bytes: &[u8]) -> bool {
    bytes.get(257..262) == Some(b"ustar")
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, data) in files {
            let mut header = tar::Header::new_ustar();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, name, *data).unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn raw_gzipped_and_tarred_components_are_found() {
        let wasm = b"\0asm\x0d\0\x01\0rest".to_vec();
        assert_eq!(component_from_layer(wasm.clone(), 1 << 20).unwrap(), wasm);
        assert_eq!(component_from_layer(gzip(&wasm), 1 << 20).unwrap(), wasm);
        let tarred = tar_of(&[("README", b"hi"), ("plugin.wasm", &wasm)]);
        assert_eq!(component_from_layer(tarred.clone(), 1 << 20).unwrap(), wasm);
        assert_eq!(component_from_layer(gzip(&tarred), 1 << 20).unwrap(), wasm);
    }

    #[test]
    fn ambiguous_foreign_or_oversized_layers_are_refused() {
        let wasm: &[u8] = b"\0asm\x0d\0\x01\0";
        let two = tar_of(&[("a.wasm", wasm), ("b.wasm", wasm)]);
        let err = component_from_layer(two, 1 << 20).unwrap_err().to_string();
        assert!(err.contains("more than one .wasm"), "{err}");
        let err = component_from_layer(b"#!/bin/sh".to_vec(), 1 << 20).unwrap_err();
        assert!(err.to_string().contains("neither"), "{err}");
        // A gzip bomb: 64 MiB of zeros in a few KiB, against a 1 MiB cap.
        let bomb = gzip(&vec![0u8; 64 << 20]);
        assert!(bomb.len() < 1 << 20);
        let err = format!("{:#}", component_from_layer(bomb, 1 << 20).unwrap_err());
        assert!(err.contains("larger than 1 MiB"), "{err}");
    }
}
