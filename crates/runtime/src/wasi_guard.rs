//! WASI host calls that could hold a host thread without bound, wrapped so they cannot.
//!
//! wasmtime-wasi runs filesystem calls on tokio's blocking pool. Opening a FIFO blocks until a
//! writer comes, and opening a device can block or read without end; the call's timeout stops
//! the plugin, but not the pool thread, so a plugin granted a directory holding one could pin
//! every blocking thread (the ones that also read the server's stdin). `open-at` therefore
//! looks at what the path is first and refuses anything that is not a regular file or a
//! directory. Random bytes are capped per request in the WASI context (see `sandbox`).

use anyhow::Result;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemView as _;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorType, ErrorCode, Host as _, HostDescriptor as _,
    OpenFlags, PathFlags,
};

use super::store::StoreState;

/// The `wasi:filesystem/types` interface exactly as wasmtime-wasi's linker names it: plugins
/// built against any 0.2.x link to it.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Replaces `descriptor.open-at` in `linker` (which must already hold wasmtime-wasi's).
pub fn add_to_linker(linker: &mut Linker<StoreState>) -> Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(FILESYSTEM_TYPES)?;
    types.func_wrap_async(
        "[method]descriptor.open-at",
        |mut store,
         (dir, path_flags, path, open_flags, flags): (
            Resource<Descriptor>,
            PathFlags,
            String,
            OpenFlags,
            DescriptorFlags,
        )| {
            Box::new(async move {
                let mut fs = store.data_mut().filesystem();
                let stat = fs
                    .stat_at(Resource::new_borrow(dir.rep()), path_flags, path.clone())
                    .await;
                if let Ok(stat) = stat
                    && !matches!(
                        stat.type_,
                        DescriptorType::RegularFile
                            | DescriptorType::Directory
                            | DescriptorType::SymbolicLink
                    )
                {
                    tracing::warn!(
                        plugin = &*store.data().plugin,
                        path,
                        kind = ?stat.type_,
                        "refused to open a file that is not a regular file or a directory"
                    );
                    return Ok((Err(ErrorCode::NotPermitted),));
                }
                let opened = fs.open_at(dir, path_flags, path, open_flags, flags).await;
                match opened {
                    Ok(descriptor) => Ok((Ok(descriptor),)),
                    Err(e) => Ok((Err(fs.convert_error_code(e)?),)),
                }
            })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
