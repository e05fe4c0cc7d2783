//! The agent's raw logs (`stdout.log`, `stderr.log`): the files every turn of a run appends to,
//! and the sinks the pipe readers write them through, which keep the first write that failed
//! for the supervisor.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::redact::MaskedWriter;

/// Where the agent's raw output goes (appended; shared by all turns of a run).
#[derive(Clone, Copy)]
pub(crate) struct RawLogs<'a> {
    pub stdout: &'a RawFile,
    pub stderr: &'a RawFile,
}

/// One of the agent's raw logs: the file, where it is, and the first write to it that failed.
pub(crate) struct RawFile {
    file: MaskedWriter<File>,
    pub path: PathBuf,
    failure: Arc<Mutex<Option<io::Error>>>,
}

/// What a reader writes a raw log through.
pub(super) struct RawSink {
    pub file: MaskedWriter<File>,
    failure: Arc<Mutex<Option<io::Error>>>,
}

impl RawFile {
    pub(crate) fn new(file: MaskedWriter<File>, path: PathBuf) -> Self {
        Self {
            file,
            path,
            failure: Arc::default(),
        }
    }

    pub(super) fn sink(&self) -> io::Result<RawSink> {
        Ok(RawSink {
            file: self.file.try_clone()?,
            failure: Arc::clone(&self.failure),
        })
    }

    /// The first write that failed, once.
    pub(super) fn take_failure(&self) -> Option<io::Error> {
        self.failure.lock().ok()?.take()
    }
}

impl RawSink {
    /// Keeps the first failure for the supervisor, which stops the run over it.
    pub(super) fn failed(&self, error: io::Error) {
        if let Ok(mut failure) = self.failure.lock() {
            failure.get_or_insert(error);
        }
    }
}
