//! Checks of what a run wrote, so that a wrong experiment stops with an
//! error instead of printing a number.

use std::fs;
use std::path::Path;

/// Checks that `path` holds exactly `n` copies of `line` (which ends in a
/// newline) and nothing else.
pub(crate) fn repeated(path: &Path, line: &[u8], n: u64) -> Result<(), String> {
    let data = fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    repeated_bytes(&data, line, n)
}

/// [`repeated`] on bytes in memory.
pub(crate) fn repeated_bytes(data: &[u8], line: &[u8], n: u64) -> Result<(), String> {
    let want = line.len() as u64 * n;
    if data.len() as u64 != want {
        return Err(format!(
            "expected {n} lines of {:?} ({want} bytes), found {} bytes ({} lines)",
            String::from_utf8_lossy(line),
            data.len(),
            data.iter().filter(|&&b| b == b'\n').count()
        ));
    }
    if let Some((i, chunk)) = data
        .chunks_exact(line.len())
        .enumerate()
        .find(|(_, c)| *c != line)
    {
        return Err(format!(
            "line {} is {:?}, expected {:?}",
            i + 1,
            String::from_utf8_lossy(chunk),
            String::from_utf8_lossy(line)
        ));
    }
    Ok(())
}

/// Checks that `path` holds the integers `0..n` in order, one per line,
/// in decimal; returns the last line.
pub(crate) fn integers(path: &Path, n: u64) -> Result<String, String> {
    let data = fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    integers_bytes(&data, n)
}

/// [`integers`] on bytes in memory.
pub(crate) fn integers_bytes(data: &[u8], n: u64) -> Result<String, String> {
    let mut expected = 0u64;
    let mut last = String::new();
    let mut buf = itoa::Buffer::new();
    let body = match data.strip_suffix(b"\n") {
        Some(body) => body,
        None if data.is_empty() && n == 0 => return Ok(last),
        None => return Err("output does not end with a newline".into()),
    };
    for line in body.split(|&b| b == b'\n') {
        if expected >= n {
            return Err(format!("more than {n} lines"));
        }
        let want = buf.format(expected);
        if line != want.as_bytes() {
            return Err(format!(
                "line {} is {:?}, expected {want:?}",
                expected + 1,
                String::from_utf8_lossy(line)
            ));
        }
        expected += 1;
        last.clear();
        last.push_str(want);
    }
    if expected != n {
        return Err(format!("expected {n} lines, found {expected}"));
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_accepts_exact_output() {
        assert!(repeated_bytes(b"ab\nab\nab\n", b"ab\n", 3).is_ok());
        assert!(repeated_bytes(b"", b"ab\n", 0).is_ok());
    }

    #[test]
    fn repeated_rejects_a_missing_extra_or_wrong_line() {
        let missing = repeated_bytes(b"ab\nab\n", b"ab\n", 3).unwrap_err();
        assert!(missing.contains("found 6 bytes (2 lines)"), "{missing}");
        assert!(repeated_bytes(b"ab\nab\nab\nab\n", b"ab\n", 3).is_err());
        let wrong = repeated_bytes(b"ab\nxb\nab\n", b"ab\n", 3).unwrap_err();
        assert!(wrong.contains("line 2"), "{wrong}");
        // A notice line in place of a record, same length overall.
        assert!(repeated_bytes(b"ab\nab\n", b"x\n", 3).is_err());
    }

    #[test]
    fn integers_accepts_exact_output_and_returns_the_last_line() {
        assert_eq!(integers_bytes(b"0\n1\n2\n", 3).unwrap(), "2");
        assert_eq!(integers_bytes(b"", 0).unwrap(), "");
    }

    #[test]
    fn integers_rejects_gaps_duplicates_truncation_and_extra_lines() {
        let gap = integers_bytes(b"0\n2\n3\n", 3).unwrap_err();
        assert!(gap.contains("line 2"), "{gap}");
        assert!(integers_bytes(b"0\n1\n1\n", 3).is_err());
        assert!(integers_bytes(b"0\n1\n", 3)
            .unwrap_err()
            .contains("found 2"));
        assert!(integers_bytes(b"0\n1\n2", 3).is_err());
        assert!(integers_bytes(b"0\n1\n2\n3\n", 3).is_err());
        assert!(integers_bytes(b"0\n1\n2\n\n", 3).is_err());
        assert!(integers_bytes(b"0\n 1\n2\n", 3).is_err());
    }
}
