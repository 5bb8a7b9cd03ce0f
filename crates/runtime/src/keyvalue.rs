//! `wasi:keyvalue@0.2.0-draft` (`store`, `atomics`, `batch`): a plugin's own buckets, kept in
//! one file on disk under a size cap, for a plugin granted `[plugins.NAME.keyvalue]`. A plugin
//! without the grant gets the imports as stubs that fail when called, as for anything not
//! granted.
//!
//! The whole store is held in memory and written to its file (whole, through a temporary file,
//! synced) after every change: stores are small (the cap is at most [`MAX_STORE_BYTES`]), and a
//! change is on disk when the call that made it returns. Arguments are lifted under the store's
//! hostcall fuel (`copy_bound.rs`): a `list<string>` of keys cannot make the host copy more than
//! that. Counters (`atomics.increment`) are 8 bytes, little-endian.

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use wasmtime::component::{ComponentType, Lift, Linker, Lower, Resource, ResourceType};

use super::store::StoreState;
use crate::spec::KeyValueGrant;

/// The largest store a plugin may be granted.
pub const MAX_STORE_BYTES: u64 = 64 << 20;
/// Buckets a plugin may open.
pub const MAX_BUCKETS: usize = 16;
/// Keys `list-keys` returns a page.
const PAGE: usize = 1000;
const STORE: &str = "wasi:keyvalue/store@0.2.0-draft";
const ATOMICS: &str = "wasi:keyvalue/atomics@0.2.0-draft";
const BATCH: &str = "wasi:keyvalue/batch@0.2.0-draft";
/// The interfaces served.
pub const INTERFACES: [&str; 3] = [STORE, ATOMICS, BATCH];

/// The buckets as written to disk: values in base64.
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OnDisk {
    version: u32,
    buckets: BTreeMap<String, BTreeMap<String, String>>,
}

type Buckets = BTreeMap<String, BTreeMap<String, Vec<u8>>>;

/// One plugin's store, shared by its calls (and by the plugin's versions across a reload).
pub struct KeyValueStore {
    grant: KeyValueGrant,
    buckets: Mutex<Buckets>,
}

/// Open stores by file, so a reloaded plugin shares its store with calls of the version before.
#[derive(Default)]
pub struct Stores(Mutex<HashMap<PathBuf, Weak<KeyValueStore>>>);

impl Stores {
    /// The store of `grant`, read from its file (or empty if there is none yet).
    pub fn open(&self, grant: &KeyValueGrant) -> anyhow::Result<Arc<KeyValueStore>> {
        let mut open = self.0.lock();
        if let Some(store) = open.get(&grant.path).and_then(Weak::upgrade) {
            return Ok(store);
        }
        let store = Arc::new(KeyValueStore::read(grant.clone())?);
        open.retain(|_, s| s.strong_count() > 0);
        open.insert(grant.path.clone(), Arc::downgrade(&store));
        Ok(store)
    }
}

impl KeyValueStore {
    fn read(grant: KeyValueGrant) -> anyhow::Result<KeyValueStore> {
        let buckets = match std::fs::read(&grant.path) {
            Ok(bytes) => decode(&bytes).map_err(|why| {
                anyhow::anyhow!(
                    "the key-value store {} is damaged: {why}",
                    grant.path.display()
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Buckets::new(),
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!(
                    "cannot read the key-value store {}",
                    grant.path.display()
                )));
            }
        };
        Ok(KeyValueStore {
            grant,
            buckets: Mutex::new(buckets),
        })
    }

    /// Runs `change` on the buckets; keeps and writes the result only if it fits the cap and
    /// reaches the disk.
    fn change<R>(
        &self,
        change: impl FnOnce(&mut Buckets) -> Result<R, KvError>,
    ) -> Result<R, KvError> {
        let mut buckets = self.buckets.lock();
        let mut changed = buckets.clone();
        let answer = change(&mut changed)?;
        let size = size(&changed);
        if size > self.grant.max_bytes {
            return Err(KvError::Other(format!(
                "the plugin's key-value store would hold {size} bytes, more than its {} \
                 (keyvalue.max_kib)",
                self.grant.max_bytes
            )));
        }
        write(&self.grant.path, &changed)
            .map_err(|e| KvError::Other(format!("cannot write the key-value store: {e}")))?;
        *buckets = changed;
        Ok(answer)
    }

    fn read_with<R>(&self, f: impl FnOnce(&Buckets) -> R) -> R {
        f(&self.buckets.lock())
    }
}

fn size(buckets: &Buckets) -> u64 {
    buckets
        .iter()
        .map(|(name, keys)| {
            name.len() as u64
                + keys
                    .iter()
                    .map(|(k, v)| (k.len() + v.len()) as u64)
                    .sum::<u64>()
        })
        .sum()
}

fn decode(bytes: &[u8]) -> Result<Buckets, String> {
    let disk: OnDisk = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if disk.version != 1 {
        return Err(format!("version {} is not 1", disk.version));
    }
    disk.buckets
        .into_iter()
        .map(|(name, keys)| {
            let keys = keys
                .into_iter()
                .map(|(k, v)| {
                    let value = base64::engine::general_purpose::STANDARD
                        .decode(v)
                        .map_err(|e| format!("bucket `{name}`, key `{k}`: {e}"))?;
                    Ok((k, value))
                })
                .collect::<Result<_, String>>()?;
            Ok((name, keys))
        })
        .collect()
}

fn write(path: &Path, buckets: &Buckets) -> std::io::Result<()> {
    let disk = OnDisk {
        version: 1,
        buckets: buckets
            .iter()
            .map(|(name, keys)| {
                let keys = keys
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            base64::engine::general_purpose::STANDARD.encode(v),
                        )
                    })
                    .collect();
                (name.clone(), keys)
            })
            .collect(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        super::private_dir::create(dir)?;
    }
    let bytes = serde_json::to_vec(&disk).map_err(std::io::Error::other)?;
    super::private_dir::write(path, &bytes)
}

/// `wasi:keyvalue/store`'s `error`.
#[derive(ComponentType, Lift, Lower, Debug)]
#[component(variant)]
pub enum KvError {
    /// The identifier names no bucket the host provides.
    #[component(name = "no-such-store")]
    NoSuchStore,
    /// The plugin may not use the store.
    #[component(name = "access-denied")]
    AccessDenied,
    /// Anything else: the message says.
    #[component(name = "other")]
    Other(String),
}

#[derive(ComponentType, Lift, Lower)]
#[component(record)]
struct KeyResponse {
    #[component(name = "keys")]
    keys: Vec<String>,
    #[component(name = "cursor")]
    cursor: Option<u64>,
}

/// A bucket a plugin opened: its name in the plugin's store.
pub struct Bucket(String);

/// The store of the calling plugin (linked only for a plugin granted one).
fn store_of(state: &StoreState) -> Result<&Arc<KeyValueStore>, KvError> {
    state.keyvalue.as_ref().ok_or(KvError::AccessDenied)
}

fn bucket_name(state: &StoreState, bucket: &Resource<Bucket>) -> Result<String, KvError> {
    state
        .table
        .get(bucket)
        .map(|b| b.0.clone())
        .map_err(|e| KvError::Other(e.to_string()))
}

type Answer<T> = wasmtime::Result<(Result<T, KvError>,)>;

/// What `get-many` answers per key: the key and its value, if there is one.
type Found = Option<(String, Vec<u8>)>;

/// Defines the three interfaces of `wasi:keyvalue@0.2.0-draft` in `linker`.
pub fn add_to_linker(linker: &mut Linker<StoreState>) -> anyhow::Result<()> {
    let mut store = linker.instance(STORE)?;
    store.resource(
        "bucket",
        ResourceType::host::<Bucket>(),
        |mut store, rep| {
            store
                .data_mut()
                .table
                .delete(Resource::<Bucket>::new_own(rep))?;
            Ok(())
        },
    )?;
    store.func_wrap(
        "open",
        |mut store, (identifier,): (String,)| -> Answer<Resource<Bucket>> {
            let state = store.data_mut();
            let opened = (|| {
                let kv = store_of(state)?;
                if identifier.len() > 256 {
                    return Err(KvError::NoSuchStore);
                }
                let known = kv.read_with(|b| b.contains_key(&identifier) || b.len() < MAX_BUCKETS);
                if !known {
                    return Err(KvError::Other(format!(
                        "a plugin may open at most {MAX_BUCKETS} buckets"
                    )));
                }
                Ok(())
            })();
            if opened.is_ok() {
                state.grants.usage.note("keyvalue", "");
            }
            Ok((match opened {
                Ok(()) => Ok(state.table.push(Bucket(identifier))?),
                Err(e) => Err(e),
            },))
        },
    )?;
    store.func_wrap(
        "[method]bucket.get",
        |store, (bucket, key): (Resource<Bucket>, String)| -> Answer<Option<Vec<u8>>> {
            let state = store.data();
            Ok((store_of(state).and_then(|kv| {
                let name = bucket_name(state, &bucket)?;
                Ok(kv.read_with(|b| b.get(&name).and_then(|keys| keys.get(&key)).cloned()))
            }),))
        },
    )?;
    store.func_wrap(
        "[method]bucket.set",
        |store, (bucket, key, value): (Resource<Bucket>, String, Vec<u8>)| -> Answer<()> {
            let state = store.data();
            Ok((store_of(state).and_then(|kv| {
                let name = bucket_name(state, &bucket)?;
                kv.change(|b| {
                    b.entry(name).or_default().insert(key, value);
                    Ok(())
                })
            }),))
        },
    )?;
    store.func_wrap(
        "[method]bucket.delete",
        |store, (bucket, key): (Resource<Bucket>, String)| -> Answer<()> {
            let state = store.data();
            Ok((store_of(state).and_then(|kv| {
                let name = bucket_name(state, &bucket)?;
                kv.change(|b| {
                    remove(b, &name, &key);
                    Ok(())
                })
            }),))
        },
    )?;
    store.func_wrap(
        "[method]bucket.exists",
        |store, (bucket, key): (Resource<Bucket>, String)| -> Answer<bool> {
            let state = store.data();
            Ok((store_of(state).and_then(|kv| {
                let name = bucket_name(state, &bucket)?;
                Ok(kv.read_with(|b| b.get(&name).is_some_and(|keys| keys.contains_key(&key))))
            }),))
        },
    )?;
    store.func_wrap(
        "[method]bucket.list-keys",
        |store, (bucket, cursor): (Resource<Bucket>, Option<u64>)| -> Answer<KeyResponse> {
            let state = store.data();
            Ok((store_of(state).and_then(|kv| {
                let name = bucket_name(state, &bucket)?;
                let start = usize::try_from(cursor.unwrap_or(0)).unwrap_or(usize::MAX);
                Ok(kv.read_with(|b| {
                    let all = b.get(&name);
                    let keys: Vec<String> = all
                        .into_iter()
                        .flat_map(|keys| keys.keys())
                        .skip(start)
                        .take(PAGE)
                        .cloned()
                        .collect();
                    let more = all.is_some_and(|k| k.len() > start.saturating_add(PAGE));
                    KeyResponse {
                        keys,
                        cursor: more.then_some((start + PAGE) as u64),
                    }
                }))
            }),))
        },
    )?;

    let mut atomics = linker.instance(ATOMICS)?;
    atomics.func_wrap(
        "increment",
        |store, (bucket, key, delta): (Resource<Bucket>, String, u64)| -> Answer<u64> {
            let state = store.data();
            Ok((store_of(state).and_then(|kv| {
                let name = bucket_name(state, &bucket)?;
                kv.change(|b| {
                    let keys = b.entry(name).or_default();
                    let current = match keys.get(&key) {
                        None => 0,
                        Some(v) => u64::from_le_bytes(v.as_slice().try_into().map_err(|_| {
                            KvError::Other(format!(
                                "the value of `{}` is not a counter (8 bytes, little-endian)",
                                key
                            ))
                        })?),
                    };
                    let next = current.wrapping_add(delta);
                    keys.insert(key, next.to_le_bytes().to_vec());
                    Ok(next)
                })
            }),))
        },
    )?;

    let mut batch = linker.instance(BATCH)?;
    batch.func_wrap(
        "get-many",
        |store, (bucket, keys): (Resource<Bucket>, Vec<String>)| -> Answer<Vec<Found>> {
            let state = store.data();
            Ok((store_of(state).and_then(|kv| {
                let name = bucket_name(state, &bucket)?;
                Ok(kv.read_with(|b| {
                    let bucket = b.get(&name);
                    keys.into_iter()
                        .map(|key| {
                            let value = bucket.and_then(|k| k.get(&key)).cloned();
                            value.map(|v| (key, v))
                        })
                        .collect()
                }))
            }),))
        },
    )?;
    batch.func_wrap(
        "set-many",
        |store, (bucket, pairs): (Resource<Bucket>, Vec<(String, Vec<u8>)>)| -> Answer<()> {
            let state = store.data();
            Ok((store_of(state).and_then(|kv| {
                let name = bucket_name(state, &bucket)?;
                kv.change(|b| {
                    let keys = b.entry(name).or_default();
                    for (key, value) in pairs {
                        keys.insert(key, value);
                    }
                    Ok(())
                })
            }),))
        },
    )?;
    batch.func_wrap(
        "delete-many",
        |store, (bucket, keys): (Resource<Bucket>, Vec<String>)| -> Answer<()> {
            let state = store.data();
            Ok((store_of(state).and_then(|kv| {
                let name = bucket_name(state, &bucket)?;
                kv.change(|b| {
                    for key in keys {
                        remove(b, &name, &key);
                    }
                    Ok(())
                })
            }),))
        },
    )?;
    Ok(())
}

/// Removes `key` from bucket `name`, and the bucket once it is empty.
fn remove(buckets: &mut Buckets, name: &str, key: &str) {
    if let Some(keys) = buckets.get_mut(name) {
        keys.remove(key);
        if keys.is_empty() {
            buckets.remove(name);
        }
    }
}
