//! Durations given as cgbench's flags give them (`90`, `90s`, `10m`, `1.5h`), for the scenarios'
//! `--timeout`-style flags.

use std::time::Duration;

/// Parses `N`, `Ns`, `Nm` or `Nh` (the forms cgbench's `-timeout` is given in).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let (number, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        other => return Err(format!("unknown unit {other:?} (use s, m or h)")),
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("{number:?} is not a number"))?;
    Duration::try_from_secs_f64(n * scale).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_in_go_forms() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("m").is_err());
    }
}
