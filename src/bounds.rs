//! The bounds a receipt read back must keep: a receipt is foreign input (copied from CI or another
//! machine, or written by hand), and one absurd figure must not make every total absurd. A figure
//! beyond its bound is left out (as unknown, never as zero) and said so, with the value: by
//! `stats` (`overview`) and by the views of one run (`runs::load`).

use crate::receipt::TokenTotals as Tokens;

/// The most one run can plausibly cost, in USD.
pub(crate) const MAX_RUN_COST_USD: f64 = crate::event::MAX_COST_USD;
/// The most tokens of one kind one run can plausibly use.
pub(crate) const MAX_RUN_TOKENS: u64 = 1_000_000_000_000_000;
/// The longest a run can plausibly take, in milliseconds: a year (`--timeout`'s own limit).
pub(crate) const MAX_RUN_MS: u64 = 365 * 24 * 3600 * 1000;
/// The most calls of one tool one run can plausibly make.
pub(crate) const MAX_RUN_TOOL_CALLS: u32 = 1_000_000_000;

/// A figure of a receipt that is beyond its bound, and so left out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum OutOfBounds {
    /// A cost that is not a finite amount from 0 to [`MAX_RUN_COST_USD`].
    Cost(f64),
    /// A token count above [`MAX_RUN_TOKENS`].
    Tokens(u64),
    /// A duration above [`MAX_RUN_MS`].
    Duration(u64),
    /// A count of a tool's calls above [`MAX_RUN_TOOL_CALLS`].
    ToolCalls(u32),
}

impl OutOfBounds {
    /// The figure's name, as `stats` says it.
    pub(crate) fn figure(self) -> &'static str {
        match self {
            OutOfBounds::Cost(_) => "cost",
            OutOfBounds::Tokens(_) => "tokens",
            OutOfBounds::Duration(_) => "duration",
            OutOfBounds::ToolCalls(_) => "tool calls",
        }
    }

    /// The value, short: `$1e308`, `18446744073709551615 tokens`.
    pub(crate) fn value(self) -> String {
        match self {
            OutOfBounds::Cost(usd) if usd.is_finite() && usd.abs() < 1e15 => format!("${usd}"),
            OutOfBounds::Cost(usd) => format!("${usd:e}"),
            OutOfBounds::Tokens(n) => format!("{n} tokens"),
            OutOfBounds::Duration(ms) => format!("{ms} ms"),
            OutOfBounds::ToolCalls(n) => format!("{n} calls"),
        }
    }

    /// What the figure must be.
    pub(crate) fn bound(self) -> &'static str {
        match self {
            OutOfBounds::Cost(_) => "a run costs from $0 to $1e6",
            OutOfBounds::Tokens(_) => "a run uses at most 1e15 tokens of a kind",
            OutOfBounds::Duration(_) => "a run takes at most a year",
            OutOfBounds::ToolCalls(_) => "a run makes at most 1e9 calls of a tool",
        }
    }
}

/// A run's cost, when it is within bounds.
pub(crate) fn cost(usd: f64) -> Result<f64, OutOfBounds> {
    if usd.is_finite() && (0.0..=MAX_RUN_COST_USD).contains(&usd) {
        // No `-0`.
        Ok(usd + 0.0)
    } else {
        Err(OutOfBounds::Cost(usd))
    }
}

/// A run's tokens, when every count is within bounds.
pub(crate) fn tokens(t: &Tokens) -> Result<(), OutOfBounds> {
    let most = [
        t.input,
        t.output,
        t.reasoning,
        t.cache_read,
        t.cache_write,
        t.total,
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    if most <= MAX_RUN_TOKENS {
        Ok(())
    } else {
        Err(OutOfBounds::Tokens(most))
    }
}

/// A run's duration, when it is within bounds.
pub(crate) fn duration(ms: u64) -> Result<u64, OutOfBounds> {
    if ms <= MAX_RUN_MS {
        Ok(ms)
    } else {
        Err(OutOfBounds::Duration(ms))
    }
}

/// A run's tool tallies, when every count is within bounds.
pub(crate) fn tool_calls<'a>(
    tallies: impl IntoIterator<Item = &'a crate::stats::ToolTally>,
) -> Result<(), OutOfBounds> {
    let most = tallies
        .into_iter()
        .flat_map(|t| [t.calls, t.errors, t.denied])
        .max()
        .unwrap_or(0);
    if most <= MAX_RUN_TOOL_CALLS {
        Ok(())
    } else {
        Err(OutOfBounds::ToolCalls(most))
    }
}

/// A receipt read back, held to the bounds: a cost beyond them becomes unknown (the known part
/// with it), tokens beyond them unknown; each figure left out is said, one line each.
pub(crate) fn hold(receipt: &mut crate::receipt::Receipt) -> Vec<String> {
    let mut said = Vec::new();
    let c = &mut receipt.cost;
    let usd = c.usd.map(cost).transpose();
    if let Err(out) = usd.and(cost(c.known_usd)) {
        c.usd = None;
        c.known_usd = 0.0;
        c.incomplete = true;
        said.push(left_out(out));
    }
    if let Err(out) = tokens(&receipt.tokens) {
        receipt.tokens = Tokens {
            incomplete: true,
            ..Tokens::default()
        };
        said.push(left_out(out));
    }
    said
}

/// `the receipt's figure for cost ($1e308) is implausible (a run costs from $0 to $1e6): shown as
/// unknown`.
fn left_out(out: OutOfBounds) -> String {
    format!(
        "the receipt's figure for {} ({}) is implausible ({}): shown as unknown",
        out.figure(),
        out.value(),
        out.bound()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_finite_amounts_within_the_bound_are_costs() {
        assert_eq!(cost(0.0), Ok(0.0));
        assert_eq!(cost(12.5), Ok(12.5));
        assert_eq!(cost(MAX_RUN_COST_USD), Ok(MAX_RUN_COST_USD));
        for bad in [1e308, 1e6 + 1.0, -0.01, f64::INFINITY, f64::NAN, f64::MAX] {
            assert!(cost(bad).is_err(), "{bad}");
        }
        assert_eq!(OutOfBounds::Cost(1e308).value(), "$1e308");
        assert_eq!(OutOfBounds::Cost(2e6).value(), "$2000000");
        assert_eq!(OutOfBounds::Cost(-3.5).value(), "$-3.5");
        assert_eq!(cost(-0.0).map(f64::to_bits), Ok(0.0f64.to_bits()));
        assert_eq!(duration(MAX_RUN_MS), Ok(MAX_RUN_MS));
        assert_eq!(duration(u64::MAX), Err(OutOfBounds::Duration(u64::MAX)));
    }

    #[test]
    fn a_count_beyond_the_bound_leaves_the_tokens_out() {
        let mut t = Tokens {
            input: 10,
            total: 10,
            ..Tokens::default()
        };
        assert_eq!(tokens(&t), Ok(()));
        t.cache_read = u64::MAX;
        assert_eq!(tokens(&t), Err(OutOfBounds::Tokens(u64::MAX)));
        assert_eq!(
            OutOfBounds::Tokens(u64::MAX).value(),
            "18446744073709551615 tokens"
        );
    }
}
