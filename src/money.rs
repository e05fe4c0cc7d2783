//! Money as runbook writes it: US dollars rounded to a billionth, so that receipts, event logs
//! and `--json` say `0.01071`, never the float noise `0.010709999999999999`, while the price of a
//! single cheap token (a few billionths) is still there. Sums are kept exact in memory; only what
//! is written is rounded.

use serde::Serializer;

/// The precision money is written with: a billionth of a dollar.
const PER_DOLLAR: f64 = 1e9;

/// `usd` rounded to a billionth; what is not a finite amount, or too large for a billionth to
/// be kept exactly, is left as it is.
pub(crate) fn round(usd: f64) -> f64 {
    if usd.is_finite() && usd.abs() < 1e6 {
        (usd * PER_DOLLAR).round() / PER_DOLLAR
    } else {
        usd
    }
}

/// `#[serde(serialize_with = "crate::money::usd")]`.
pub(crate) fn usd<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round(*value))
}

/// `#[serde(serialize_with = "crate::money::usd_opt")]`.
#[expect(
    clippy::ref_option,
    reason = "serde's serialize_with hands the field by reference"
)]
pub(crate) fn usd_opt<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => s.serialize_some(&round(*v)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_rounded_to_a_billionth_and_the_rest_left_alone() {
        assert_eq!(round(0.010_709_999_999_999_999), 0.01071);
        assert_eq!(round(0.1 + 0.2), 0.3);
        assert_eq!(round(0.011_037_5), 0.011_037_5);
        assert_eq!(round(7.5e-8), 7.5e-8);
        assert_eq!(round(1e-10), 0.0);
        assert_eq!(round(12.345_678_912_3), 12.345_678_912);
        assert!(round(f64::NAN).is_nan());
        assert_eq!(round(f64::INFINITY), f64::INFINITY);
        assert_eq!(round(1e300), 1e300);
    }

    #[test]
    fn written_json_holds_no_float_noise() {
        #[derive(serde::Serialize)]
        struct Cost {
            #[serde(serialize_with = "usd")]
            usd: f64,
            #[serde(serialize_with = "usd_opt")]
            step: Option<f64>,
        }
        let json = serde_json::to_string(&Cost {
            usd: 0.00357 * 3.0,
            step: Some(0.1 + 0.2),
        })
        .unwrap();
        assert_eq!(json, r#"{"usd":0.01071,"step":0.3}"#);
    }
}
