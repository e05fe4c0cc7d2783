//! Bytes the masker has been over, and a stream of foreign bytes masked as it comes: the only
//! things the masking writer ([`super::write`]) writes.

use std::borrow::Cow;

use super::Redactor;

/// Bytes with every secret masked. Only a [`Redactor`] makes one from foreign bytes; runbook's own
/// text built from masked parts says so with [`Masked::made_of_masked`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Masked<'a>(Cow<'a, [u8]>);

impl<'a> Masked<'a> {
    /// Nothing at all.
    pub(crate) const EMPTY: Masked<'static> = Masked(Cow::Borrowed(b""));

    /// Bytes made only of what a masker already went over, joined with runbook's own text: the
    /// events an adapter made of the agent's masked lines, encoded as JSON. Used where masking
    /// again would scan every event twice (the dispatcher's hot path); everything else is masked
    /// by a [`Redactor`].
    pub(crate) fn made_of_masked(bytes: &'a [u8]) -> Self {
        Self(Cow::Borrowed(bytes))
    }

    /// runbook's own constant bytes: nothing foreign in them.
    pub(crate) const fn own(bytes: &'static [u8]) -> Masked<'static> {
        Masked(Cow::Borrowed(bytes))
    }

    /// Masked by `redactor`.
    pub(super) fn by(redactor: &Redactor, bytes: &'a [u8]) -> Self {
        Self(redactor.bytes(bytes))
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The same bytes, borrowed.
    pub(crate) fn borrowed(&self) -> Masked<'_> {
        Masked(Cow::Borrowed(&self.0))
    }

    /// The same bytes, owned.
    pub(crate) fn into_owned(self) -> Masked<'static> {
        Masked(Cow::Owned(self.0.into_owned()))
    }

    /// What is left of these bytes after the first `n` were written: the reader gets the whole,
    /// in two writes.
    pub(crate) fn rest(&self, n: usize) -> Masked<'_> {
        Masked(Cow::Borrowed(&self.0[n.min(self.0.len())..]))
    }

    /// [`Masked::rest`], keeping the borrow of `masked`.
    pub(crate) fn rest_of(masked: Masked<'a>, n: usize) -> Masked<'a> {
        match masked.0 {
            Cow::Borrowed(b) => Masked(Cow::Borrowed(&b[n.min(b.len())..])),
            Cow::Owned(mut v) => {
                v.drain(..n.min(v.len()));
                Masked(Cow::Owned(v))
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Masked lines, collected: whole masked pieces joined are masked.
#[derive(Debug, Default)]
pub(crate) struct MaskedBuf(Vec<u8>);

impl MaskedBuf {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }

    /// Adds a whole masked piece (a line: no secret straddles two of them).
    pub(crate) fn push(&mut self, piece: &Masked<'_>) {
        self.0.extend_from_slice(piece.as_bytes());
    }

    pub(crate) fn as_masked(&self) -> Masked<'_> {
        Masked(Cow::Borrowed(&self.0))
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

/// Within a line longer than this, held-back bytes are masked and let go anyway.
const CARRY_LIMIT: usize = 1024 * 1024;

/// Foreign bytes as they arrive (a pipe read after read), masked: bytes are held back until a
/// newline, or within a very long line until no secret can straddle the cut, so that a secret
/// split across two reads is masked all the same.
pub(crate) struct MaskedStream {
    redactor: std::sync::Arc<Redactor>,
    carry: Vec<u8>,
    /// Let go of whole lines only (within [`CARRY_LIMIT`]), even with nothing to mask.
    pub whole_lines: bool,
}

impl MaskedStream {
    pub(crate) fn new(redactor: std::sync::Arc<Redactor>) -> Self {
        Self {
            redactor,
            carry: Vec::new(),
            whole_lines: false,
        }
    }

    /// What of the bytes so far can be written now, masked.
    pub(crate) fn push<'b>(&mut self, bytes: &'b [u8]) -> Masked<'b> {
        if !self.redactor.is_active() && !self.whole_lines {
            return Masked(Cow::Borrowed(bytes));
        }
        self.carry.extend_from_slice(bytes);
        let cut = match memchr::memrchr(b'\n', &self.carry) {
            Some(nl) => nl + 1,
            None if self.carry.len() > CARRY_LIMIT => self.redactor.safe_cut(&self.carry),
            None => return Masked::EMPTY,
        };
        let done: Vec<u8> = self.carry.drain(..cut).collect();
        Masked(Cow::Owned(self.redactor.bytes(&done).into_owned()))
    }

    /// The rest, masked: the stream has ended.
    pub(crate) fn finish(&mut self) -> Masked<'static> {
        let rest = std::mem::take(&mut self.carry);
        Masked(Cow::Owned(self.redactor.bytes(&rest).into_owned()))
    }
}
