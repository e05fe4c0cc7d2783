//! The SHA-256 of a file's exact bytes: what a trust record keeps of a repository file, so that
//! a file trusted once is trusted only for as long as it says the same.

use sha2::{Digest as _, Sha256};

/// The SHA-256 of some bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct Digest([u8; 32]);

impl Digest {
    /// The digest of `bytes`.
    pub(crate) fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// Lower-case hexadecimal, 64 digits.
    pub(crate) fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Reads [`Digest::hex`] back; `None` unless `text` is 64 hexadecimal digits.
    pub(crate) fn from_hex(text: &str) -> Option<Self> {
        if text.len() != 64 || !text.is_ascii() {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Self(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256_in_hex_and_reads_back() {
        let d = Digest::of(b"abc");
        assert_eq!(
            d.hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Digest::from_hex(&d.hex()), Some(d));
        assert_eq!(Digest::from_hex("ba78"), None);
        assert_eq!(Digest::from_hex(&"zz".repeat(32)), None);
        assert_ne!(Digest::of(b"abc "), d);
    }
}
