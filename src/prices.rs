//! The model price table runbook ships, for agents that report tokens but no cost (Codex).
//!
//! Prices are list prices in US dollars per million tokens. A user's own prices (from the
//! configuration) are looked up first. A model found in neither has an unknown cost, never zero.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::event::Tokens;

/// US dollars per million tokens of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Plain input.
    pub input: f64,
    /// Input served from the provider's prompt cache.
    pub cached_input: f64,
    /// Output; reasoning tokens are billed at this price too.
    pub output: f64,
    /// Input written to the prompt cache (Anthropic bills it above plain input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

impl Price {
    /// The cost of `tokens`; reasoning tokens are billed as output.
    pub fn cost(&self, tokens: &Tokens) -> f64 {
        let per_million = tokens.input as f64 * self.input
            + tokens.cache_read as f64 * self.cached_input
            + tokens.cache_write as f64 * self.cache_write.unwrap_or(self.input)
            + (tokens.output + tokens.reasoning) as f64 * self.output;
        per_million / 1e6
    }
}

const fn openai(input: f64, cached_input: f64, output: f64) -> Price {
    Price {
        input,
        cached_input,
        output,
        cache_write: None,
    }
}

/// Anthropic bills cache reads at a tenth of input and 5-minute cache writes at 1.25×.
const fn anthropic(input: f64, output: f64) -> Price {
    Price {
        input,
        cached_input: input / 10.0,
        output,
        cache_write: Some(input * 1.25),
    }
}

/// The shipped table: model id (without provider prefix or date suffix) → list price.
pub const SHIPPED: &[(&str, Price)] = &[
    // OpenAI (Codex, and OpenCode's `openai/…` models).
    ("gpt-5.5", openai(5.0, 0.5, 30.0)),
    ("gpt-5.4", openai(2.5, 0.25, 15.0)),
    ("gpt-5.4-mini", openai(0.75, 0.075, 4.5)),
    ("gpt-5.2", openai(1.75, 0.175, 14.0)),
    ("gpt-5.2-codex", openai(1.75, 0.175, 14.0)),
    ("gpt-5.1", openai(1.25, 0.125, 10.0)),
    ("gpt-5.1-codex", openai(1.25, 0.125, 10.0)),
    ("gpt-5.1-codex-mini", openai(0.25, 0.025, 2.0)),
    ("gpt-5", openai(1.25, 0.125, 10.0)),
    ("gpt-5-codex", openai(1.25, 0.125, 10.0)),
    ("gpt-5-mini", openai(0.25, 0.025, 2.0)),
    ("gpt-5-nano", openai(0.05, 0.005, 0.4)),
    ("gpt-4.1", openai(2.0, 0.5, 8.0)),
    ("gpt-4.1-mini", openai(0.4, 0.1, 1.6)),
    ("gpt-4o", openai(2.5, 1.25, 10.0)),
    ("o3", openai(2.0, 0.5, 8.0)),
    ("o4-mini", openai(1.1, 0.275, 4.4)),
    // Anthropic (Claude Code, and OpenCode's `anthropic/…` models).
    ("claude-opus-4-8", anthropic(5.0, 25.0)),
    ("claude-opus-4-7", anthropic(5.0, 25.0)),
    ("claude-opus-4-6", anthropic(5.0, 25.0)),
    ("claude-opus-4-5", anthropic(5.0, 25.0)),
    ("claude-opus-4-1", anthropic(15.0, 75.0)),
    ("claude-opus-4", anthropic(15.0, 75.0)),
    ("claude-sonnet-4-6", anthropic(3.0, 15.0)),
    ("claude-sonnet-4-5", anthropic(3.0, 15.0)),
    ("claude-sonnet-4", anthropic(3.0, 15.0)),
    ("claude-haiku-4-5", anthropic(1.0, 5.0)),
    ("claude-3-5-haiku", anthropic(0.8, 4.0)),
];

/// The shipped table with the user's prices laid over it.
#[derive(Debug, Clone, Default)]
pub struct PriceTable {
    user: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The shipped table with `user`'s prices (by model) over it.
    pub fn new(user: BTreeMap<String, Price>) -> Self {
        Self { user }
    }

    /// The price of `model`, and whether it came from the user's table.
    ///
    /// Looks up the id as given, then without its provider prefix (`openai/gpt-5` → `gpt-5`) and
    /// context tag (`claude-opus-4-8[1m]`), then the longest known id it extends with a `-`
    /// suffix (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`).
    pub fn lookup(&self, model: &str) -> Option<Price> {
        let bare = model.rsplit_once('/').map_or(model, |(_, m)| m);
        let bare = bare.split_once('[').map_or(bare, |(m, _)| m);
        for id in [model, bare] {
            if let Some(p) = self.user.get(id) {
                return Some(*p);
            }
        }
        if let Some(p) = self.user_family(bare) {
            return Some(p);
        }
        SHIPPED
            .iter()
            .filter(|(id, _)| extends(bare, id))
            .max_by_key(|(id, _)| id.len())
            .map(|(_, p)| *p)
    }

    fn user_family(&self, bare: &str) -> Option<Price> {
        self.user
            .iter()
            .filter(|(id, _)| extends(bare, id))
            .max_by_key(|(id, _)| id.len())
            .map(|(_, p)| *p)
    }

    /// The estimated cost of `tokens` on `model`; `None` for a model without a price.
    pub fn estimate(&self, model: &str, tokens: &Tokens) -> Option<f64> {
        self.lookup(model).map(|p| p.cost(tokens))
    }
}

/// `model` is `id`, or `id` followed by a `-`-separated suffix (a date, a variant).
fn extends(model: &str, id: &str) -> bool {
    model == id
        || model.strip_prefix(id).is_some_and(|rest| {
            rest.starts_with('-') && rest[1..].starts_with(|c: char| c.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, cache_read: u64, cache_write: u64, output: u64) -> Tokens {
        Tokens {
            input,
            output,
            reasoning: 0,
            cache_read,
            cache_write,
        }
    }

    #[test]
    fn claude_code_reports_the_same_cost_as_the_shipped_price() {
        // Claude Code 2.1.197 reported total_cost_usd 0.0085 for these tokens on claude-opus-4-8.
        let cost = PriceTable::default()
            .estimate("claude-opus-4-8[1m]", &tokens(1200, 0, 300, 25))
            .unwrap();
        assert!((cost - 0.0085).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn ids_are_found_through_prefixes_dates_and_the_users_table() {
        let table = PriceTable::default();
        assert_eq!(table.lookup("openai/gpt-5"), table.lookup("gpt-5"));
        assert_eq!(
            table.lookup("claude-sonnet-4-5-20250929"),
            table.lookup("claude-sonnet-4-5")
        );
        // A longer id is its own model, not a dated variant of a shorter one.
        assert_ne!(table.lookup("gpt-5-mini"), table.lookup("gpt-5"));
        assert_eq!(table.lookup("gpt-5-turbo-nonexistent"), None);
        assert_eq!(
            table.estimate("my-local-llama", &tokens(10, 0, 0, 10)),
            None
        );

        let mine = openai(1.0, 0.0, 2.0);
        let table = PriceTable::new(BTreeMap::from([
            ("my-local-llama".to_owned(), mine),
            ("gpt-5.5".to_owned(), mine),
        ]));
        assert_eq!(table.lookup("ollama/my-local-llama"), Some(mine));
        assert_eq!(table.lookup("gpt-5.5"), Some(mine), "the user's price wins");
        let cost = table.estimate("gpt-5.5", &tokens(1_000_000, 0, 0, 1_000_000));
        assert_eq!(cost, Some(3.0));
    }
}
