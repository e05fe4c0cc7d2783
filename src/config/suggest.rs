//! "Did you mean …?": the one known name a misspelt one is close to, by Damerau-Levenshtein
//! distance (a transposed pair of letters counts once), else the one it is a prefix of.

/// The known name `given` most likely meant: the one [`near`] it, or failing that the only one
/// it begins. Case, and `-` for `_`, are not told apart.
pub(crate) fn closest<'a>(
    given: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let known: Vec<&str> = known.into_iter().collect();
    if let Some(near) = near(given, known.iter().copied()) {
        return Some(near);
    }
    let given = normal(given);
    if given.chars().count() < 3 {
        return None;
    }
    let mut begun = known
        .into_iter()
        .filter(|name| normal(name).starts_with(&given));
    match (begun.next(), begun.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// The known name at the smallest Damerau-Levenshtein distance from `given`, if it is the only
/// one there and within a bound that grows with the length of `given` (1 up to 4 characters, 2
/// up to 8, else 3).
pub(crate) fn near<'a>(given: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let given = normal(given);
    let bound = match given.chars().count() {
        0 => return None,
        1..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    let mut scored: Vec<(usize, &str)> = known
        .into_iter()
        .map(|name| (strsim::damerau_levenshtein(&given, &normal(name)), name))
        .filter(|(distance, _)| *distance <= bound)
        .collect();
    scored.sort_by_key(|(distance, _)| *distance);
    match scored.as_slice() {
        [(_, only)] => Some(only),
        [(a, best), (b, _), ..] if a < b => Some(best),
        _ => None,
    }
}

/// ` did you mean `x`?` when a known name is close; else nothing.
pub(crate) fn did_you_mean<'a>(
    given: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    closest(given, known).map(|name| format!("did you mean `{name}`?"))
}

fn normal(name: &str) -> String {
    name.trim().to_lowercase().replace('-', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: [&str; 10] = [
        "agent",
        "agent_cmd",
        "model",
        "inactivity_timeout",
        "timeout",
        "max_cost",
        "repair_attempts",
        "repair_budget",
        "repair_prompt",
        "checks",
    ];

    #[test]
    fn a_typo_finds_the_key_it_misspells() {
        for (typo, meant) in [
            ("inactivty_timeout", "inactivity_timeout"),
            ("inactivity-timeout", "inactivity_timeout"),
            ("INACTIVITY_TIMOUT", "inactivity_timeout"),
            ("timout", "timeout"),
            ("tiemout", "timeout"),
            ("modle", "model"),
            ("mdoel", "model"),
            ("maxcost", "max_cost"),
            ("max_cots", "max_cost"),
            ("chekcs", "checks"),
            ("repair_budgte", "repair_budget"),
            ("agent-cmd", "agent_cmd"),
            ("inactivity", "inactivity_timeout"),
        ] {
            assert_eq!(closest(typo, KEYS), Some(meant), "{typo}");
        }
    }

    #[test]
    fn nothing_close_or_two_alike_suggest_nothing() {
        for given in [
            "foo",
            "x",
            "",
            "budget_limit",
            "repair",
            "repair_atempts_max_x",
            "zzzzzzzz",
        ] {
            assert_eq!(closest(given, KEYS), None, "{given}");
        }
    }
}
