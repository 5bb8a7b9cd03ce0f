//! Opaque cursors over sorted lists, shared by every paginated list method.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A cursor this server did not hand out, or one from before a change of the list.
#[derive(Debug, PartialEq, Eq)]
pub struct InvalidCursor;

/// Cursors are opaque to clients: an offset, encoded so nobody is tempted to compute one.
pub fn page<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    page_size: usize,
) -> Result<(&'a [T], Option<String>), InvalidCursor> {
    let start = match cursor {
        None => 0,
        Some(cursor) => decode_cursor(cursor).ok_or(InvalidCursor)?,
    };
    if start > items.len() || (start == items.len() && start != 0) {
        return Err(InvalidCursor);
    }
    let end = start.saturating_add(page_size).min(items.len());
    let next = (end < items.len()).then(|| encode_cursor(end));
    Ok((&items[start..end], next))
}

/// Whether `cursor` is one this server could have handed out, before any work to list what it
/// pages over.
pub fn check_cursor(cursor: Option<&str>) -> Result<(), InvalidCursor> {
    match cursor {
        Some(cursor) if decode_cursor(cursor).is_none() => Err(InvalidCursor),
        _ => Ok(()),
    }
}

fn encode_cursor(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("palisade:{offset}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let offset = text.strip_prefix("palisade:")?;
    // Only the canonical form: no leading zeros or signs.
    let n: usize = offset.parse().ok()?;
    (n.to_string() == offset && n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_everything_once() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2).unwrap();
        assert_eq!(first, &[0, 1]);
        let (second, next) = page(&items, next.as_deref(), 2).unwrap();
        assert_eq!(second, &[2, 3]);
        let (third, next) = page(&items, next.as_deref(), 2).unwrap();
        assert_eq!(third, &[4]);
        assert_eq!(next, None);
    }

    #[test]
    fn foreign_cursors_are_refused() {
        let items: Vec<u32> = (0..5).collect();
        for bad in [
            "",
            "2",
            "!!",
            &encode_cursor(9),
            &URL_SAFE_NO_PAD.encode("palisade:02"),
        ] {
            assert_eq!(page(&items, Some(bad), 2), Err(InvalidCursor), "{bad}");
        }
        let empty: Vec<u32> = Vec::new();
        assert_eq!(page(&empty, None, 2), Ok((&empty[..], None)));
    }
}
