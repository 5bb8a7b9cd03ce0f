//! Directories only the user running the server can change: the compile cache (native code the
//! server runs) and the plugin store (components whose digests the lock pins) are both held to
//! the rules ssh holds its keys to.

use std::path::Path;

use anyhow::Context as _;

use crate::Cause;

/// Creates `dir` and the directories above it, new ones with mode 0700.
pub fn create(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Checks that only this user (and root, above the cache) can change `dir`, its entries, and
/// every directory on the way to it (a writable parent could swap the whole directory).
#[cfg(unix)]
pub fn check(dir: &Path) -> Result<(), Cause> {
    check_unix(dir).map_err(Into::into)
}

#[cfg(unix)]
fn check_unix(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let me = rustix::process::geteuid().as_raw();
    let group_or_other_writable = |meta: &std::fs::Metadata| meta.mode() & 0o022 != 0;
    let meta = std::fs::metadata(dir).with_context(|| format!("{}", dir.display()))?;
    anyhow::ensure!(
        meta.uid() == me,
        "it belongs to user id {}, not to the user running the server ({me}); use a directory \
         of your own",
        meta.uid()
    );
    anyhow::ensure!(
        !group_or_other_writable(&meta),
        "other users can write it (mode {:o}); run `chmod go-w {}`",
        meta.permissions().mode() & 0o7777,
        dir.display()
    );
    for ancestor in dir.ancestors().skip(1) {
        let meta =
            std::fs::metadata(ancestor).with_context(|| format!("{}", ancestor.display()))?;
        let sticky = meta.mode() & 0o1000 != 0;
        anyhow::ensure!(
            (meta.uid() == me || meta.uid() == 0) && (sticky || !group_or_other_writable(&meta)),
            "the directory above it, {}, can be changed by another user (owner {}, mode {:o}), \
             who could replace it; keep it under directories only you (or root) \
             can write",
            ancestor.display(),
            meta.uid(),
            meta.permissions().mode() & 0o7777
        );
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        let path = entry.path();
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            // Another palisade sharing the cache renamed or removed it since the listing (its
            // temporary file became an entry): what is gone cannot be loaded, and an entry is
            // checked again when it is loaded.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("{}", path.display())),
        };
        anyhow::ensure!(
            !meta.file_type().is_symlink(),
            "{} is a symbolic link; it holds only files the server wrote (remove it)",
            path.display()
        );
        anyhow::ensure!(
            meta.uid() == me && !group_or_other_writable(&meta),
            "{} can be changed by another user (owner {}, mode {:o}); remove it, or run \
             `chmod go-w` on it if it is yours",
            path.display(),
            meta.uid(),
            meta.permissions().mode() & 0o7777
        );
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn check(_dir: &Path) -> Result<(), Cause> {
    Ok(())
}

/// Whether a file belongs to the user running palisade and no one else can write it.
#[cfg(unix)]
pub fn writable_only_by_me(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    meta.uid() == rustix::process::geteuid().as_raw() && meta.mode() & 0o022 == 0
}

/// Whether a file belongs to the user running palisade and no one else can write it.
#[cfg(not(unix))]
pub fn writable_only_by_me(_meta: &std::fs::Metadata) -> bool {
    true
}

/// Whether a file belongs to the user running palisade and no one else can read or write it.
#[cfg(unix)]
pub fn readable_only_by_me(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    meta.uid() == rustix::process::geteuid().as_raw() && meta.mode() & 0o077 == 0
}

/// Whether a file belongs to the user running palisade and no one else can read or write it.
#[cfg(not(unix))]
pub fn readable_only_by_me(_meta: &std::fs::Metadata) -> bool {
    true
}

/// Writes `bytes` to `path` (mode 0600) whole: through a temporary file beside it, synced, then
/// renamed, so a reader never sees half a file and a crash leaves the old one.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)
}

/// Whether a plugin that can see `path` could reach `dir` (canonical): `path` holds `dir` or lies
/// inside it.
pub fn overlaps(dir: &Path, path: &Path) -> bool {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    dir.starts_with(&path) || path.starts_with(dir)
}
