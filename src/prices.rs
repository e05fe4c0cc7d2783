//! The model price table runbook ships, for agents that report tokens but no cost (Codex), and
//! for pricing steps before an agent reports its own cost (Claude Code).
//!
//! Prices are list prices in US dollars per million tokens. A user's own prices (from the
//! configuration) are looked up first. A model found in neither has an unknown cost, never zero;
//! when its provider is known, its provider's most expensive known price is the conservative
//! stand-in that `--max-cost` counts until the agent reports what it really cost.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::event::{CostSource, PriceBasis, Tokens};

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
    anthropic_cache_read(input, output, input / 10.0)
}

/// An Anthropic price whose cache reads are not a tenth of input (the 5.x models).
const fn anthropic_cache_read(input: f64, output: f64, cache_read: f64) -> Price {
    Price {
        input,
        cached_input: cache_read,
        output,
        cache_write: Some(input * 1.25),
    }
}

/// A model provider the table knows, and where and when its prices were last checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// The provider, as model ids are prefixed with it (`anthropic/claude-…`).
    pub provider: &'static str,
    /// The day the provider's rows were last checked, `YYYY-MM-DD`.
    pub date: &'static str,
    /// Where they were checked.
    pub source: &'static str,
}

/// Where and when each provider's prices were checked.
pub const CHECKED: &[Checked] = &[
    Checked {
        provider: "openai",
        date: "2026-11-22",
        source: "OpenAI's published API prices, when the table was first shipped; not checked \
                 since (Codex 0.169.0 prints no prices of its own). The models.dev snapshot \
                 OpenCode 1.18.33 bundles names OpenAI models this table lacks (`gpt-5.6`, \
                 `gpt-6-sol`, `gpt-6-luna`) and may price some differently: to be confirmed on \
                 OpenAI's price page before they are added",
    },
    Checked {
        provider: "anthropic",
        date: "2026-11-27",
        source: "the model catalog Claude Code 2.1.330 and 2.1.332 bundle and compute \
                 `total_cost_usd` from (its `pricing` tiers; 5-minute cache writes), which the \
                 recordings in fixtures/claude-2.1.330 and fixtures/claude-2.1.332 reproduce to \
                 the cent, model by model (`modelUsage.*.costUSD`, checked by the conformance \
                 suite). Their default model, `claude-opus-5-5`, costs 0.8 times what 2.1.197's \
                 `claude-opus-4-8` does (0.4 times for cache reads): the cost of the same \
                 scenario differs between those releases by that, and both are right",
    },
];

/// The provider a model id belongs to, from its prefix or its name: `anthropic` for `claude-…`,
/// `openai` for `gpt-…` and `o1`…`o9`.
pub fn provider_of(model: &str) -> Option<&'static str> {
    if let Some((prefix, _)) = model.split_once('/') {
        return CHECKED.iter().map(|c| c.provider).find(|p| *p == prefix);
    }
    if model.starts_with("claude-") {
        Some("anthropic")
    } else if model.starts_with("gpt-")
        || (model.starts_with('o') && model[1..].starts_with(|c: char| c.is_ascii_digit()))
    {
        Some("openai")
    } else {
        None
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
    ("claude-opus-5-5", anthropic_cache_read(4.0, 20.0, 0.2)),
    ("claude-opus-5", anthropic(5.0, 25.0)),
    ("claude-sonnet-5-5", anthropic_cache_read(2.0, 10.0, 0.1)),
    ("claude-sonnet-5", anthropic(2.0, 10.0)),
    ("claude-haiku-5-5", anthropic(0.1, 0.5)),
    ("claude-fable-5-2", anthropic_cache_read(8.0, 40.0, 0.2)),
    ("claude-fable-5-1", anthropic_cache_read(10.0, 50.0, 0.25)),
    ("claude-fable-5", anthropic(10.0, 50.0)),
    ("claude-mythos-5-2", anthropic_cache_read(8.0, 40.0, 0.2)),
    ("claude-mythos-5-1", anthropic_cache_read(10.0, 50.0, 0.25)),
    ("claude-mythos-5", anthropic(10.0, 50.0)),
    ("claude-opus-4-8", anthropic(5.0, 25.0)),
    ("claude-opus-4-7", anthropic(5.0, 25.0)),
    ("claude-opus-4-6", anthropic(5.0, 25.0)),
    ("claude-opus-4-5", anthropic(5.0, 25.0)),
    ("claude-opus-4-1", anthropic(15.0, 75.0)),
    ("claude-opus-4-0", anthropic(15.0, 75.0)),
    ("claude-opus-4", anthropic(15.0, 75.0)),
    ("claude-sonnet-4-6", anthropic(3.0, 15.0)),
    ("claude-sonnet-4-5", anthropic(3.0, 15.0)),
    ("claude-sonnet-4-0", anthropic(3.0, 15.0)),
    ("claude-sonnet-4", anthropic(3.0, 15.0)),
    ("claude-3-7-sonnet", anthropic(3.0, 15.0)),
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

    /// Where the price of `model` comes from: the user's table, the shipped one, its provider's
    /// most expensive known price (a model runbook does not know yet), or nowhere.
    pub fn basis(&self, model: &str) -> PriceBasis {
        let bare = model.rsplit_once('/').map_or(model, |(_, m)| m);
        let bare = bare.split_once('[').map_or(bare, |(m, _)| m);
        if self.user.contains_key(model)
            || self.user.contains_key(bare)
            || self.user_family(bare).is_some()
        {
            PriceBasis::User
        } else if self.lookup(model).is_some() {
            PriceBasis::Table
        } else if self.conservative(model).is_some() {
            PriceBasis::Conservative
        } else {
            PriceBasis::Unknown
        }
    }

    /// For a model missing from both tables, each kind of token at the highest price any known
    /// model of its provider charges: a cost that is never below the real one. `None` when the
    /// model is known, or its provider is not.
    pub fn conservative(&self, model: &str) -> Option<Price> {
        if self.lookup(model).is_some() {
            return None;
        }
        let provider = provider_of(model)?;
        SHIPPED
            .iter()
            .filter(|(id, _)| provider_of(id) == Some(provider))
            .map(|(_, p)| *p)
            .reduce(|a, b| Price {
                input: a.input.max(b.input),
                cached_input: a.cached_input.max(b.cached_input),
                output: a.output.max(b.output),
                cache_write: match (a.cache_write, b.cache_write) {
                    (Some(x), Some(y)) => Some(x.max(y)),
                    (x, y) => x.or(y),
                },
            })
    }

    /// The cost of `tokens` on `model` and how it was priced: from a table (`estimated`), or
    /// at its provider's highest price (`conservative`); `None` when neither can price it.
    pub fn price_with_source(&self, model: &str, tokens: &Tokens) -> Option<(f64, CostSource)> {
        if let Some(p) = self.lookup(model) {
            return Some((p.cost(tokens), CostSource::Estimated));
        }
        self.conservative(model)
            .map(|p| (p.cost(tokens), CostSource::Conservative))
    }
}

/// `model` is `id`, or `id` followed by a dated suffix (`-20250929`, `-2026-03-05`): a `-` and at
/// least four digits. A shorter number is another model (`claude-opus-5-5` is not a dated
/// `claude-opus-5`), which must not borrow its price.
fn extends(model: &str, id: &str) -> bool {
    model == id
        || model.strip_prefix(id).is_some_and(|rest| {
            rest.strip_prefix('-')
                .is_some_and(|date| date.chars().take_while(char::is_ascii_digit).count() >= 4)
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
    fn claude_code_2_1_330_reports_the_same_cost_as_the_shipped_price() {
        // Claude Code 2.1.330 reported total_cost_usd 0.05017 for these tokens on
        // claude-opus-5-5 (fixtures/claude-2.1.330/subagent).
        let cost = PriceTable::default()
            .estimate("claude-opus-5-5", &tokens(8200, 2800, 2950, 103))
            .unwrap();
        assert!((cost - 0.05017).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn an_unknown_model_is_priced_at_its_providers_highest_price() {
        let table = PriceTable::default();
        assert_eq!(table.basis("claude-opus-5-5"), PriceBasis::Table);
        assert_eq!(table.basis("claude-opus-9"), PriceBasis::Conservative);
        assert_eq!(
            table.basis("anthropic/claude-opus-9"),
            PriceBasis::Conservative
        );
        assert_eq!(table.basis("gpt-9"), PriceBasis::Conservative);
        assert_eq!(table.basis("my-local-llama"), PriceBasis::Unknown);
        // A newer minor version is not a dated variant of an older model.
        assert_eq!(table.lookup("claude-opus-5-7"), None);
        let high = table.conservative("claude-opus-9").unwrap();
        for (id, p) in SHIPPED.iter().filter(|(id, _)| id.starts_with("claude-")) {
            assert!(high.input >= p.input && high.output >= p.output, "{id}");
            assert!(high.cached_input >= p.cached_input, "{id}");
        }
        assert_eq!((high.input, high.output), (15.0, 75.0));
        let one = tokens(1_000_000, 0, 0, 0);
        let (cost, source) = table.price_with_source("claude-opus-9", &one).unwrap();
        assert_eq!((cost, source), (15.0, CostSource::Conservative));
        let (cost, source) = table.price_with_source("claude-opus-5-5", &one).unwrap();
        assert_eq!((cost, source), (4.0, CostSource::Estimated));
        assert_eq!(table.price_with_source("my-local-llama", &one), None);
        let mine = PriceTable::new(BTreeMap::from([(
            "claude-opus-9".to_owned(),
            openai(1.0, 0.0, 2.0),
        )]));
        assert_eq!(mine.basis("claude-opus-9"), PriceBasis::User);
        assert_eq!(mine.conservative("claude-opus-9"), None);
    }

    #[test]
    fn every_shipped_model_has_a_provider_whose_prices_were_checked() {
        for (id, _) in SHIPPED {
            let provider = provider_of(id).unwrap_or_else(|| panic!("{id}: no provider"));
            assert!(CHECKED.iter().any(|c| c.provider == provider), "{id}");
        }
        for c in CHECKED {
            assert!(c.date.len() == 10 && c.date.starts_with("20"), "{c:?}");
        }
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
