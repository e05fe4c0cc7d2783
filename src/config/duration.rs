//! Durations as settings take them: milliseconds, seconds, minutes and hours only (`90s`, `3m`,
//! `1h30m`, `250ms`, or plain seconds). Months, years, days and weeks are refused with a hint,
//! since `3M` reads as three months to one tool and three minutes to a person.

use std::time::Duration;

/// The longest duration a setting may have. Longer ones are surely mistakes, and deadlines that
/// far out would overflow the clock's arithmetic.
pub(crate) const MAX: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// The longest inactivity timeout: a watchdog that waits longer has in effect been turned off,
/// which is said with `off`.
pub(crate) const MAX_WATCHDOG: Duration = Duration::from_secs(24 * 60 * 60);

/// The inactivity timeout that means the watchdog is off: longer than any duration a setting
/// can be given, so it is never mistaken for one.
pub(crate) const WATCHDOG_OFF: Duration = Duration::from_secs(MAX.as_secs() + 1);

/// The words that turn the watchdog off.
const OFF: &[&str] = &["off", "never", "none"];

/// A duration above zero and at most [`MAX`].
pub(crate) fn parse(text: &str) -> Result<Duration, String> {
    let d = parse_any(text)?;
    if d > MAX {
        return Err("it must be at most a year (8760h)".to_owned());
    }
    Ok(d)
}

/// An inactivity timeout: a duration above zero and at most a day, or `off`.
pub(crate) fn parse_watchdog(text: &str) -> Result<Duration, String> {
    if OFF.contains(&text.trim().to_ascii_lowercase().as_str()) {
        return Ok(WATCHDOG_OFF);
    }
    let d = parse_any(text)?;
    if d > MAX_WATCHDOG {
        return Err(
            "a watchdog that waits over a day never fires in practice; write `off` to turn it off"
                .to_owned(),
        );
    }
    Ok(d)
}

/// `d` as a setting would be written: `1h30m`, `90ms`, `off` for [`WATCHDOG_OFF`].
pub(crate) fn format(d: Duration) -> String {
    if d == WATCHDOG_OFF {
        return "off".to_owned();
    }
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    let mut rest = ms;
    for (unit, size) in [("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)] {
        if rest >= size {
            out.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    out
}

/// Any positive sum of `<whole number><unit>` parts, or plain seconds.
fn parse_any(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err("a duration is needed, such as 90s or 3m".to_owned());
    }
    if let Ok(secs) = s.parse::<u64>() {
        return positive(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err("a duration is a number followed by ms, s, m or h".to_owned());
        }
        let number: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("`{}` is too large", &rest[..digits]))?;
        let after = rest[digits..].trim_start();
        let unit_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let unit = &after[..unit_len];
        let part = part(number, unit, s)?;
        total = total
            .checked_add(part)
            .ok_or_else(|| format!("`{s}` is too long"))?;
        rest = after[unit_len..].trim_start();
    }
    positive(total)
}

/// `number` of `unit`, or why that unit is not taken.
fn part(number: u64, unit: &str, whole: &str) -> Result<Duration, String> {
    let scaled = |per: u64| {
        number
            .checked_mul(per)
            .map(Duration::from_millis)
            .ok_or_else(|| format!("`{whole}` is too long"))
    };
    match unit {
        "ms" | "msec" | "msecs" | "millis" => scaled(1),
        "" | "s" | "sec" | "secs" | "second" | "seconds" => scaled(1_000),
        "m" | "min" | "mins" | "minute" | "minutes" => scaled(60_000),
        "h" | "hr" | "hrs" | "hour" | "hours" => scaled(3_600_000),
        _ => Err(refused(number, unit)),
    }
}

/// Why `unit` is not taken, with what was probably meant.
fn refused(number: u64, unit: &str) -> String {
    let hours = |per: u64| number.saturating_mul(per);
    match unit {
        "M" | "mo" | "mon" | "month" | "months" => {
            format!("months are not taken; did you mean {number}m (minutes)?")
        }
        "y" | "Y" | "yr" | "yrs" | "year" | "years" => {
            "years are not taken; runbook takes ms, s, m and h".to_owned()
        }
        "d" | "D" | "day" | "days" => {
            format!("days are not taken; did you mean {}h?", hours(24))
        }
        "w" | "W" | "week" | "weeks" => {
            format!("weeks are not taken; did you mean {}h?", hours(168))
        }
        "S" | "H" | "MS" | "Ms" => {
            format!("did you mean {number}{}?", unit.to_ascii_lowercase())
        }
        _ => format!("`{unit}` is not a unit runbook takes: ms, s, m or h"),
    }
}

fn positive(d: Duration) -> Result<Duration, String> {
    if d.is_zero() {
        Err("it must be longer than zero".to_owned())
    } else {
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Result<Duration, String> {
        Ok(Duration::from_secs(s))
    }

    #[test]
    fn seconds_minutes_hours_and_milliseconds_are_taken() {
        assert_eq!(parse("90s"), secs(90));
        assert_eq!(parse("3m"), secs(180));
        assert_eq!(parse("1h30m"), secs(5400));
        assert_eq!(parse("1h 30m"), secs(5400));
        assert_eq!(parse("45"), secs(45));
        assert_eq!(parse("2 minutes"), secs(120));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("8760h"), secs(365 * 24 * 3600));
    }

    #[test]
    fn months_years_days_and_weeks_are_refused_with_what_was_meant() {
        let err = parse("3M").unwrap_err();
        assert!(err.contains("did you mean 3m"), "{err}");
        assert!(parse("3months").unwrap_err().contains("did you mean 3m"));
        assert!(parse("1y").unwrap_err().contains("years are not taken"));
        assert!(parse("1d").unwrap_err().contains("did you mean 24h"));
        assert!(parse("1day").unwrap_err().contains("did you mean 24h"));
        assert!(parse("2w").unwrap_err().contains("did you mean 336h"));
        assert!(parse("5S").unwrap_err().contains("did you mean 5s"));
        assert!(parse("5x").unwrap_err().contains("`x` is not a unit"));
    }

    #[test]
    fn zero_nonsense_and_overflow_are_refused() {
        assert!(parse("0").is_err());
        assert!(parse("0s").is_err());
        assert!(parse("").is_err());
        assert!(parse("m").is_err());
        assert!(parse("-5s").is_err());
        assert!(parse("8761h").is_err());
        assert!(parse("99999999999999999999h").is_err());
        assert!(parse("18446744073709551615h").is_err());
    }

    #[test]
    fn a_watchdog_over_a_day_must_be_turned_off_in_words() {
        assert_eq!(parse_watchdog("20s"), secs(20));
        assert_eq!(parse_watchdog("24h"), secs(86_400));
        assert!(parse_watchdog("25h").unwrap_err().contains("write `off`"));
        assert!(
            parse_watchdog("3M")
                .unwrap_err()
                .contains("did you mean 3m")
        );
        assert_eq!(parse_watchdog("off"), Ok(WATCHDOG_OFF));
        assert_eq!(parse_watchdog("Never"), Ok(WATCHDOG_OFF));
    }

    #[test]
    fn a_duration_is_written_back_as_it_is_read() {
        for text in ["1h30m", "90ms", "3m", "1h1m1s500ms", "8760h", "off"] {
            let d = if text == "off" {
                parse_watchdog(text)
            } else {
                parse(text)
            };
            assert_eq!(format(d.unwrap()), text);
        }
    }
}
