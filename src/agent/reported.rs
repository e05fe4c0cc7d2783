//! Costs and token counts as agents report them, read so that one bad number costs a line none of
//! its other facts: any JSON value is taken, and what is not a usable number says why.
//!
//! serde_json refuses a number beyond `f64`'s range (`1e400`) outright, which would make the whole
//! line unreadable; these fields are therefore read as raw JSON text first.

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::event::{CostIssue, Tokens};
use crate::prices::PriceTable;

/// A cost in USD, as the agent wrote it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cost {
    /// A number within range (maybe below zero).
    Number(f64),
    /// A number too large for `f64` (`1e400`, `-1e400`), by its sign.
    OutOfRange { negative: bool },
    /// Not a number: a string, a boolean, an object or an array.
    NotANumber,
}

impl Cost {
    /// The amount, or why it cannot be used.
    pub(crate) fn usable(self) -> Result<f64, CostIssue> {
        match self {
            Cost::Number(n) => CostIssue::check(n),
            Cost::OutOfRange { negative: true } => Err(CostIssue::Negative),
            Cost::OutOfRange { negative: false } => Err(CostIssue::Infinite),
            Cost::NotANumber => Err(CostIssue::Unreadable),
        }
    }

    fn of_raw(raw: &str) -> Self {
        let raw = raw.trim();
        // serde_json's own reading of a number, as for an `f64` field.
        if let Ok(n) = serde_json::from_str::<f64>(raw) {
            return Cost::Number(n);
        }
        match raw.as_bytes().first() {
            Some(b'-') => Cost::OutOfRange { negative: true },
            Some(b'0'..=b'9') => Cost::OutOfRange { negative: false },
            _ => Cost::NotANumber,
        }
    }
}

impl<'de> Deserialize<'de> for Cost {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        Ok(Cost::of_raw(raw.get()))
    }
}

/// A token count, as the agent wrote it: a whole number, or `None` for anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Count(pub Option<u64>);

impl Default for Count {
    fn default() -> Self {
        Count(Some(0))
    }
}

impl Count {
    /// The count; one that cannot be read counts as 0 and sets `unreadable`.
    pub(crate) fn get(self, unreadable: &mut bool) -> u64 {
        self.0.unwrap_or_else(|| {
            *unreadable = true;
            0
        })
    }

    /// A count read from the fast path's cursor exactly as [`Count`]'s `Deserialize` reads it:
    /// a plain whole number here, any other value by serde_json.
    pub(crate) fn read(c: &mut super::scan::Cursor<'_>) -> Option<Self> {
        let raw = c.raw()?;
        // Up to 19 digits always fit in a u64; the cursor has checked it is a JSON number.
        if raw.len() <= 19 && raw.bytes().all(|b| b.is_ascii_digit()) {
            return Some(Count(raw.parse().ok()));
        }
        Some(Count(serde_json::from_str::<u64>(raw).ok()))
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        Ok(Count(serde_json::from_str::<u64>(raw.get()).ok()))
    }
}

/// A cost the agent reported, checked: what is counted (`cost_usd`), where it came from, and
/// why the reported one was not used. A cost that cannot be used is estimated from the tokens when
/// the model has a price; the tokens of a count that could not be read make no estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Checked {
    pub cost_usd: Option<f64>,
    pub cost_source: Option<crate::event::CostSource>,
    pub cost_rejected: Option<CostIssue>,
}

/// `reported`, checked; `estimate` prices the tokens when it has to.
pub(crate) fn check(
    reported: Option<Cost>,
    estimate: impl FnOnce() -> Option<f64>,
    tokens_unreadable: bool,
) -> Checked {
    use crate::event::CostSource;
    match reported.map(Cost::usable) {
        None => Checked {
            cost_usd: None,
            cost_source: None,
            cost_rejected: None,
        },
        Some(Ok(cost)) => Checked {
            cost_usd: Some(cost),
            cost_source: Some(CostSource::Reported),
            cost_rejected: None,
        },
        Some(Err(issue)) => {
            let cost = if tokens_unreadable { None } else { estimate() };
            Checked {
                cost_usd: cost,
                cost_source: cost.map(|_| CostSource::Estimated),
                cost_rejected: Some(issue),
            }
        }
    }
}

/// The estimate of `tokens` on `model` from `prices`, when both are known.
pub(crate) fn estimate(prices: &PriceTable, model: Option<&str>, tokens: &Tokens) -> Option<f64> {
    model.and_then(|m| prices.estimate(m, tokens))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Line {
        cost: Option<Cost>,
        #[serde(default)]
        input: Count,
        text: String,
    }

    fn read(json: &str) -> Line {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
    }

    #[test]
    fn a_bad_number_leaves_the_rest_of_the_line_readable() {
        for (json, cost, input) in [
            (
                r#"{"cost":0.5,"input":3,"text":"a"}"#,
                Some(Cost::Number(0.5)),
                Some(3),
            ),
            (
                r#"{"cost":1e400,"input":3,"text":"a"}"#,
                Some(Cost::OutOfRange { negative: false }),
                Some(3),
            ),
            (
                r#"{"cost":-1E+999,"input":1e400,"text":"a"}"#,
                Some(Cost::OutOfRange { negative: true }),
                None,
            ),
            (
                r#"{"cost":"0.3","input":"12","text":"a"}"#,
                Some(Cost::NotANumber),
                None,
            ),
            (
                r#"{"cost":{"usd":1},"input":-4,"text":"a"}"#,
                Some(Cost::NotANumber),
                None,
            ),
            (r#"{"cost":null,"input":1.5,"text":"a"}"#, None, None),
            (
                r#"{"cost":[1],"text":"a"}"#,
                Some(Cost::NotANumber),
                Some(0),
            ),
        ] {
            let line = read(json);
            assert_eq!(line.cost, cost, "{json}");
            assert_eq!(line.input.0, input, "{json}");
            assert_eq!(line.text, "a");
        }
    }

    #[test]
    fn only_a_finite_amount_not_below_zero_is_used() {
        assert_eq!(Cost::Number(0.25).usable(), Ok(0.25));
        assert_eq!(
            Cost::Number(-0.0).usable().map(f64::to_bits),
            Ok(0.0f64.to_bits())
        );
        assert_eq!(Cost::Number(-0.45).usable(), Err(CostIssue::Negative));
        assert_eq!(
            Cost::OutOfRange { negative: false }.usable(),
            Err(CostIssue::Infinite)
        );
        assert_eq!(Cost::NotANumber.usable(), Err(CostIssue::Unreadable));
        // A number, but no amount one run spends: two of them would sum to infinity.
        assert_eq!(Cost::Number(1e308).usable(), Err(CostIssue::Infinite));
        assert_eq!(Cost::Number(1e6 + 1.0).usable(), Err(CostIssue::Infinite));
        assert_eq!(Cost::Number(1e6).usable(), Ok(1e6));
    }

    #[test]
    fn a_rejected_cost_is_estimated_from_tokens_that_could_be_read() {
        let priced = check(Some(Cost::Number(-1.0)), || Some(0.02), false);
        assert_eq!(priced.cost_usd, Some(0.02));
        assert_eq!(priced.cost_rejected, Some(CostIssue::Negative));
        let blind = check(Some(Cost::NotANumber), || Some(0.02), true);
        assert_eq!((blind.cost_usd, blind.cost_source), (None, None));
        let fine = check(Some(Cost::Number(0.1)), || unreachable!(), true);
        assert_eq!(fine.cost_usd, Some(0.1));
        assert_eq!(check(None, || unreachable!(), false).cost_usd, None);
    }
}
