//! The library's observers: a Rust closure given an owned copy of every event and its meta, on a
//! thread of its own, or an async one whose futures run one after another on a task of its own.
//! Either sits behind a bounded queue, so the run never waits for it; its panics are caught and
//! counted.

use std::future::Future;
use std::io;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

use super::{Meta, MetaLine, QUEUE, Tally};
use crate::consumer::{Consumer, Delivery};
use crate::event::Event;

/// An async observer's future.
pub(crate) type Observed = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A program's own observer of a run.
pub(crate) enum Callback {
    /// Called for each event, in order, on a thread of its own.
    Blocking(Box<dyn FnMut(Event, Meta) + Send>),
    /// Each event's future awaited in order on a task of its own.
    Async(Box<dyn Fn(Event, Meta) -> Observed + Send + Sync>),
}

/// What a callback observer leaves the run to wait for at its end.
pub(crate) enum Pending {
    Thread(JoinHandle<()>),
    Task(tokio::task::JoinHandle<()>),
}

impl Callback {
    /// How the receipt names it.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Callback::Blocking(_) => "on_event callback",
            Callback::Async(_) => "on_event_async callback",
        }
    }

    /// Starts its thread or task; the consumer that feeds it, and what to wait for at the end.
    pub(crate) fn observe(
        self,
        tally: Arc<Tally>,
        meta: MetaLine,
    ) -> io::Result<(Box<dyn Consumer>, Pending)> {
        match self {
            Callback::Blocking(mut f) => {
                let (queue, events) = sync_channel::<(Event, Meta)>(QUEUE);
                let worker_tally = Arc::clone(&tally);
                let thread = std::thread::Builder::new()
                    .name(format!("observer-{}", tally.index))
                    .spawn(move || {
                        for (event, meta) in events {
                            let called = std::panic::catch_unwind(AssertUnwindSafe(|| {
                                f(event, meta);
                            }));
                            worker_tally.called(called.is_ok());
                        }
                    })?;
                let observer = Feeder {
                    tally,
                    meta,
                    queue: Some(Sender::Thread(queue)),
                };
                Ok((Box::new(observer), Pending::Thread(thread)))
            }
            Callback::Async(f) => {
                let (queue, mut events) = tokio::sync::mpsc::channel::<(Event, Meta)>(QUEUE);
                let worker_tally = Arc::clone(&tally);
                let task = tokio::spawn(async move {
                    while let Some((event, meta)) = events.recv().await {
                        // Spawned, so that a panic ends that future only.
                        let called = tokio::spawn(f(event, meta)).await;
                        worker_tally.called(called.is_ok());
                    }
                });
                let observer = Feeder {
                    tally,
                    meta,
                    queue: Some(Sender::Task(queue)),
                };
                Ok((Box::new(observer), Pending::Task(task)))
            }
        }
    }
}

enum Sender {
    Thread(SyncSender<(Event, Meta)>),
    Task(tokio::sync::mpsc::Sender<(Event, Meta)>),
}

/// Hands each event to a callback's queue, never waiting for room.
struct Feeder {
    tally: Arc<Tally>,
    meta: MetaLine,
    queue: Option<Sender>,
}

impl Consumer for Feeder {
    fn event(&mut self, delivery: &Delivery<'_>) -> io::Result<()> {
        let Some(queue) = &self.queue else {
            return Ok(());
        };
        let item = (delivery.event.clone(), self.meta.of(delivery.event.turn));
        let (full, gone) = match queue {
            Sender::Thread(q) => match q.try_send(item) {
                Ok(()) => (false, false),
                Err(TrySendError::Full(_)) => (true, false),
                Err(TrySendError::Disconnected(_)) => (false, true),
            },
            Sender::Task(q) => match q.try_send(item) {
                Ok(()) => (false, false),
                Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => (true, false),
                Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => (false, true),
            },
        };
        if full {
            self.tally.dropped("fell behind");
        } else if gone {
            self.queue = None;
            self.tally.failed("stopped".to_owned());
        } else {
            self.tally.queued();
        }
        Ok(())
    }

    fn close(&mut self) -> io::Result<()> {
        // The end of the events: its thread or task ends once it has taken what is queued.
        self.tally.closing();
        self.queue = None;
        Ok(())
    }

    fn news(&mut self) -> Option<crate::event::EventKind> {
        self.tally.news()
    }

    fn name(&self) -> &'static str {
        "observer"
    }
}
