//! Civil (proleptic Gregorian) dates to and from days since 1970-01-01, and the result files'
//! date texts (`20261123-194756`, ISO 8601) to and from seconds since the epoch: the one copy of
//! the arithmetic that the readers' dates, trace time stamps and the trend view's date axis need.
//! Howard Hinnant's `days_from_civil` / `civil_from_days` algorithms, exact for every year an
//! `i64` of days holds.

/// Days since 1970-01-01 of year `y`, month `m` (1–12), day `d` (not checked against the
/// month's length: callers check).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Year, month (1–12) and day of `days` since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Seconds since 1970-01-01T00:00:00Z of a date as the readers write it, `None` when it is not
/// one of: `YYYYMMDD-HHMMSS` (vLLM), `YYYYMMDD`, `YYYY-MM-DD`, `YYYY-MM-DD[T ]HH:MM[:SS[.fff]]`
/// with an optional `Z` or `±HH[:]MM` offset. Dates without an offset are taken as UTC.
pub fn parse_date_s(text: &str) -> Option<i64> {
    let t = text.trim();
    let b = t.as_bytes();
    let num = |s: &[u8]| -> Option<i64> {
        if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    // Compact forms: 20261123, 20261123-194756, 20261123_194756, 20261123T194756.
    if b.len() >= 8
        && b[..8].iter().all(u8::is_ascii_digit)
        && b.get(8).is_none_or(|c| !c.is_ascii_digit())
    {
        let (y, mo, d) = (num(&b[0..4])?, num(&b[4..6])?, num(&b[6..8])?);
        let (h, mi, s) = match b.len() {
            8 => (0, 0, 0),
            15 if matches!(b[8], b'-' | b'_' | b'T') => {
                (num(&b[9..11])?, num(&b[11..13])?, num(&b[13..15])?)
            }
            _ => return None,
        };
        return to_epoch_s(y, mo, d, h, mi, s, 0);
    }
    // ISO 8601: 2026-11-23, 2026-11-23T19:47:56.123+01:00, 2026-11-23 19:47.
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, mo, d) = (num(&b[0..4])?, num(&b[5..7])?, num(&b[8..10])?);
    if b.len() == 10 {
        return to_epoch_s(y, mo, d, 0, 0, 0, 0);
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 16 || b[13] != b':' {
        return None;
    }
    let (h, mi) = (num(&b[11..13])?, num(&b[14..16])?);
    let mut rest = &b[16..];
    let mut s = 0;
    if rest.first() == Some(&b':') {
        s = num(rest.get(1..3)?)?;
        rest = &rest[3..];
        if rest.first() == Some(&b'.') || rest.first() == Some(&b',') {
            let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                return None;
            }
            rest = &rest[1 + digits..];
        }
    }
    let offset_s = match rest {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), oh1, oh2, tail @ ..] => {
            let oh = num(&[*oh1, *oh2])?;
            let om = match tail {
                [] => 0,
                [b':', m1, m2] | [m1, m2] => num(&[*m1, *m2])?,
                _ => return None,
            };
            let o = oh * 3600 + om * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    to_epoch_s(y, mo, d, h, mi, s, offset_s)
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of seconds since the epoch, the form plotly reads as a date.
pub fn iso_of_epoch_s(time_s: i64) -> String {
    let days = time_s.div_euclid(86_400);
    let secs = time_s.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Seconds since the epoch of a checked civil date and time (UTC minus `offset_s`).
fn to_epoch_s(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, offset_s: i64) -> Option<i64> {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in_month = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if !(1..=days_in_month).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some(days * 86_400 + h * 3600 + mi * 60 + s - offset_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates_and_a_round_trip_over_eight_centuries() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(
            days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28),
            2
        );
        assert_eq!(
            days_from_civil(1900, 3, 1) - days_from_civil(1900, 2, 28),
            1
        );
        assert_eq!(civil_from_days(20_415), (2025, 11, 23));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        for days in (-150_000..150_000).step_by(7) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn dates_in_the_readers_formats() {
        let iso = parse_date_s("2026-11-23T19:47:56Z").unwrap();
        assert_eq!(parse_date_s("20261123-194756"), Some(iso));
        assert_eq!(parse_date_s("2026-11-23 19:47:56"), Some(iso));
        assert_eq!(parse_date_s("2026-11-23T19:47:56.250"), Some(iso));
        assert_eq!(parse_date_s("2026-11-23T20:47:56+01:00"), Some(iso));
        assert_eq!(parse_date_s("2026-11-23T18:47:56-0100"), Some(iso));
        assert_eq!(parse_date_s("1970-01-02"), Some(86_400));
        assert_eq!(
            parse_date_s("20240229"),
            Some(parse_date_s("2024-02-29").unwrap())
        );
        assert_eq!(iso, 1_795_463_276);
        assert_eq!(iso_of_epoch_s(iso), "2026-11-23 19:47:56");
        assert_eq!(iso_of_epoch_s(0), "1970-01-01 00:00:00");
        assert_eq!(
            iso_of_epoch_s(parse_date_s("2024-02-29").unwrap()),
            "2024-02-29 00:00:00"
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01",
            "2023-02-29",
            "20261123-25",
            "2026-11-23T19",
            "2026-11-23T19:47:56+1",
        ] {
            assert_eq!(parse_date_s(bad), None, "{bad}");
        }
    }
}
