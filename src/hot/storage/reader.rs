//! A reader of one variable's storage, with the one lifecycle every reader
//! follows — a tool's handle (`tool/handle.rs`) and the exporter's observer
//! (`export/snapshot.rs`) alike.
//!
//! Beyond reading values, a reader may hold two things in the storage: its
//! own **marks** (an engine HIGH/LOWWATERMARK: a subscription in the
//! variable's [`WatermarkStore`], which updates push while the reader is
//! started) and, for a variable computed by **callback**, the component's
//! attention (it is told `Start`, `Stop` and `Free`; `Bind` was told when
//! the storage was resolved). The lifecycle:
//!
//! 1. [`Reader::new`] when the reader binds: subscribes to a watermark;
//! 2. [`Reader::started`] / [`Reader::stopped`] each time the reader's run
//!    moves, with the run's new tag (the caller's run word decides who
//!    moves it, exactly once per move): the marks start or stop following,
//!    the component hears `Start` / `Stop`;
//! 3. [`Reader::release`] when it ends, after its last `stopped`: the
//!    subscription is given back, the component hears `Free`.
//!
//! Everything here is lock-free and allocation-free after `new`, so a
//! started reader may be started, stopped and read from a signal handler
//! (as far as a callback variable's functions are async-signal-safe).

use super::watermark::{SubKey, WatermarkStore};
use super::{Backing, Storage};
use crate::lockfree::tagged::RunTag;
use crate::sync::Arc;
use crate::vocabulary::callback::Notify;

/// One reader's hold on a storage. See the module documentation.
pub(crate) struct Reader {
    storage: Arc<Storage>,
    /// The reader's subscription (engine watermarks only).
    marks: Option<SubKey>,
}

impl Reader {
    /// Binds a reader to `storage`: subscribes to an engine watermark (the
    /// marks follow updates once [`Reader::started`]). Allocates at most
    /// a subscription slot; not signal-safe. Whoever makes one must end it
    /// with [`Reader::release`].
    pub(crate) fn new(storage: Arc<Storage>) -> Reader {
        let marks = match &storage.backing {
            Backing::Watermark(w) => Some(w.subscribe()),
            _ => None,
        };
        Reader { storage, marks }
    }

    /// The storage read.
    #[inline]
    pub(crate) fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    /// The watermark store and this reader's subscription in it.
    #[inline]
    fn subscription(&self) -> Option<(&WatermarkStore, SubKey)> {
        match (&self.storage.backing, self.marks) {
            (Backing::Watermark(w), Some(key)) => Some((w, key)),
            _ => None,
        }
    }

    /// Whether the reader has marks of its own (an engine watermark).
    #[inline]
    pub(crate) fn has_marks(&self) -> bool {
        self.marks.is_some()
    }

    /// The reader's run moved to started, with tag `tag`: its marks start
    /// at the current levels and follow updates; a callback variable is
    /// told `Start`. Async-signal-safe.
    pub(crate) fn started(&self, tag: RunTag) {
        if let Some((w, key)) = self.subscription() {
            w.start(key, tag);
        }
        self.notify(Notify::Start);
    }

    /// The reader's run moved to stopped, with tag `tag`: its marks stay as
    /// they are; a callback variable is told `Stop`. Async-signal-safe.
    pub(crate) fn stopped(&self, tag: RunTag) {
        if let Some((w, key)) = self.subscription() {
            w.stop(key, tag);
        }
        self.notify(Notify::Stop);
    }

    /// Element `i`'s mark (cell representation); `None` without marks.
    /// Async-signal-safe.
    #[inline]
    pub(crate) fn mark(&self, i: usize) -> Option<u64> {
        self.subscription().map(|(w, key)| w.read(key, i))
    }

    /// Resets element `i`'s mark to the current level and returns the mark
    /// it had; `None` without marks. Async-signal-safe.
    pub(crate) fn reset_mark(&self, i: usize) -> Option<u64> {
        self.subscription().map(|(w, key)| w.reset(key, i))
    }

    /// Sets element `i`'s mark to `v`; `false` without marks.
    /// Async-signal-safe.
    pub(crate) fn write_mark(&self, i: usize, v: u64) -> bool {
        self.subscription()
            .map(|(w, key)| w.write(key, i, v))
            .is_some()
    }

    /// Ends the reader, after its last [`Reader::stopped`]: gives the
    /// subscription back and tells a callback variable `Free`.
    pub(crate) fn release(&self) {
        if let Some((w, key)) = self.subscription() {
            w.unsubscribe(key);
        }
        self.notify(Notify::Free);
    }

    fn notify(&self, event: Notify) {
        if let Backing::Callback { callbacks, object } = &self.storage.backing {
            callbacks.notify(event, *object);
        }
    }
}

/// A reader started when made and followed to its end, for readers that
/// have no run word of their own: the exporter's observer
/// (`export/snapshot.rs`) and a component's own
/// [`WatermarkMark`](crate::WatermarkMark). Made: [`Reader::new`] then
/// [`Reader::started`]; dropped: [`Reader::stopped`] then
/// [`Reader::release`] — the lifecycle of a tool's handle, from the same
/// code.
pub(crate) struct Following {
    reader: Reader,
    started: RunTag,
}

impl Following {
    /// Binds and starts a reader of `storage`. Allocates (see
    /// [`Reader::new`]): not async-signal-safe.
    pub(crate) fn new(storage: Arc<Storage>) -> Following {
        let reader = Reader::new(storage);
        let started = RunTag::INITIAL.next(true);
        reader.started(started);
        Following { reader, started }
    }

    /// The started reader.
    #[inline]
    pub(crate) fn reader(&self) -> &Reader {
        &self.reader
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.reader.stopped(self.started.next(false));
        self.reader.release();
    }
}
