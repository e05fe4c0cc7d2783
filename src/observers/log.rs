//! How much of an observer's output its logs keep: each of its stdout and stderr at most
//! [`LOG_CAP`] bytes, its first and last (see [`crate::redact::capped`]), so that an observer that
//! writes without end fills neither the disk nor memory.

/// The most an observer's log (each of stdout and stderr) holds, the line about the cut included.
pub(crate) const LOG_CAP: u64 = 8 * 1024 * 1024;

pub(crate) use crate::redact::capped::Cut;
