//! RFC 3339 timestamps without a date-time crate.

use std::time::{SystemTime, UNIX_EPOCH};

/// Civil date from days since 1970-01-01 (Howard Hinnant's `civil_from_days`
/// algorithm, <https://howardhinnant.github.io/date_algorithms.html>).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Appends `time` as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds).
pub(crate) fn write_rfc3339_micros(time: SystemTime, out: &mut Vec<u8>) {
    let (secs, micros) = match time.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_micros()),
        Err(_) => (0, 0),
    };
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    let mut buf = [0u8; 27];
    let mut put = |at: usize, v: u64, width: usize| {
        let mut v = v;
        for i in (0..width).rev() {
            buf[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, y.clamp(0, 9999) as u64, 4);
    put(5, u64::from(mo), 2);
    put(8, u64::from(d), 2);
    put(11, (sod / 3600) as u64, 2);
    put(14, (sod / 60 % 60) as u64, 2);
    put(17, (sod % 60) as u64, 2);
    put(20, u64::from(micros), 6);
    buf[4] = b'-';
    buf[7] = b'-';
    buf[10] = b'T';
    buf[13] = b':';
    buf[16] = b':';
    buf[19] = b'.';
    buf[26] = b'Z';
    out.extend_from_slice(&buf);
}

/// `time` as an RFC 3339 string (for notices).
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let mut out = Vec::with_capacity(27);
    write_rfc3339_micros(time, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        let t = UNIX_EPOCH + Duration::from_micros(1_795_876_081_123_456);
        assert_eq!(rfc3339(t), "2026-11-28T14:28:01.123456Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000000Z");
    }
}
