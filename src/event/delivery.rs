//! Raising an event and delivering it: at once on the raising thread, or
//! later from the thread's buffer at a delivery point ([`Delivery`]). See
//! the module documentation of `event` for the rules; `docs/events.md` for
//! why.

use super::buffer::{Buffers, Pending, RECORD_WORDS, Ring};
use super::instance::{EventInstance, at_point, current_requirement};
use super::registration::{Callback, Registration};
use super::types::{EventType, Tables};
use crate::lockfree::striped::StripedCounter;
use crate::sync::{AtomicBool, AtomicU64, Ordering};
use crate::vocabulary::event_info::MAX_RECORD_BYTES;
use crate::vocabulary::kinds::{BindKind, CbSafety, ObjectRef};

/// Counts of what happened to raised events, over the registry's life.
/// Each raise counts once per registration it is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventStats {
    /// Deliveries attempted: raises × matching registrations that observe
    /// the event (have a callback or a dropped handler).
    pub raised: u64,
    /// Callbacks run (at once or later).
    pub delivered: u64,
    /// Deliveries that waited in a thread's buffer.
    pub deferred: u64,
    /// Deliveries lost: no callback at a level the point allows and no
    /// room or no buffer to wait in, no callback at all (a registration
    /// with only a dropped handler), or nested deliveries too deep.
    pub dropped: u64,
    /// Waiting deliveries whose registration was freed first.
    pub discarded: u64,
}

/// Striped, so that threads raising at once do not share one counter's
/// cache line. A delivery attempt at a raise ends in exactly one of
/// `direct`, `deferred` and `dropped_at_raise`, so `raised` is their sum
/// and a delivery at the raise pays one counter, not two; a deferred one
/// later ends in `delivered_later`, `dropped_later` or `discarded`.
#[derive(Default)]
struct Counters {
    /// Callbacks run at the raise.
    direct: StripedCounter,
    /// Callbacks run from a buffer.
    delivered_later: StripedCounter,
    deferred: StripedCounter,
    /// Lost at the raise (with a callback that failed there, or none that
    /// could run and no room to wait).
    dropped_at_raise: StripedCounter,
    /// Lost at a delivery point, after waiting.
    dropped_later: StripedCounter,
    discarded: StripedCounter,
}

/// Where a delivery is counted: at the raise, or from a buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum When {
    AtRaise,
    Later,
}

/// Bit 63 of a buffered entry's event word: the raise had an object.
const HAS_OBJECT: u64 = 1 << 63;

/// A record being raised: the element bytes at their displacements,
/// padding zeroed, in words (so a buffer entry holds it as atomics).
pub(crate) struct RecordBuf(pub(crate) [u64; RECORD_WORDS]);

impl RecordBuf {
    /// Copies the elements of `info` out of the record at `src`.
    ///
    /// # Safety
    /// `src` must point to a record with every element of `elements`
    /// initialised at its displacement.
    #[inline]
    pub(crate) unsafe fn gather(
        elements: &[(crate::vocabulary::datatype::Datatype, usize)],
        src: *const u8,
    ) -> Self {
        let mut words = [0u64; RECORD_WORDS];
        let dst = words.as_mut_ptr().cast::<u8>();
        for &(dt, disp) in elements {
            // SAFETY: `disp + size <= extent <= MAX_RECORD_BYTES` (checked
            // when the type was declared), so the destination is inside
            // `words`; the source bytes are initialised (contract).
            unsafe { core::ptr::copy_nonoverlapping(src.add(disp), dst.add(disp), dt.size()) };
        }
        Self(words)
    }

    fn bytes(&self, extent: usize) -> &[u8] {
        debug_assert!(extent <= MAX_RECORD_BYTES);
        // SAFETY: `words` is `MAX_RECORD_BYTES` initialised bytes and
        // `extent` is at most that; u8 has no alignment requirement.
        unsafe { core::slice::from_raw_parts(self.0.as_ptr().cast::<u8>(), extent) }
    }
}

/// One raised event, as every registration's delivery sees it.
struct Occurrence<'a> {
    ty: &'a EventType,
    index: usize,
    object: Option<ObjectRef>,
    record: &'a RecordBuf,
    timestamp: u64,
}

impl Occurrence<'_> {
    /// The buffer entry that makes it wait for registration `key`.
    fn pending(&self, key: u64) -> Pending {
        Pending {
            registration: key,
            event: self.index as u64 | if self.object.is_some() { HAS_OBJECT } else { 0 },
            timestamp: self.timestamp,
            object: self.object.map_or(0, |o| o.handle),
            record: self.record.0,
        }
    }
}

/// Raising and delivering for one registry: the thread buffers, the
/// delivery token and the counts. Its methods take the [`Tables`] they
/// look events and registrations up in.
pub(crate) struct Delivery {
    pub(crate) buffers: Buffers,
    /// Entries pushed into buffers and not yet taken out (a hint for
    /// delivery points: zero means nothing to look at).
    waiting: AtomicU64,
    /// The delivery token (see the module documentation of `event`).
    token: AtomicBool,
    /// A registration without callbacks has losses its dropped handler has
    /// not heard of (set where they could not be reported at once; the
    /// next delivery point with requirement `NONE` reports them).
    unreported: AtomicBool,
    counters: Counters,
}

impl Delivery {
    pub(crate) fn new() -> Self {
        Self {
            buffers: Buffers::new(),
            waiting: AtomicU64::new(0),
            token: AtomicBool::new(false),
            unreported: AtomicBool::new(false),
            counters: Counters::default(),
        }
    }

    /// What happened to raised events so far.
    pub(crate) fn stats(&self) -> EventStats {
        let c = &self.counters;
        // Each sum's parts read once, so that `raised` and the others
        // agree on the counts they share.
        let (direct, deferred, dropped_at_raise) = (
            c.direct.total(),
            c.deferred.total(),
            c.dropped_at_raise.total(),
        );
        EventStats {
            raised: direct.wrapping_add(deferred).wrapping_add(dropped_at_raise),
            delivered: direct.wrapping_add(c.delivered_later.total()),
            deferred,
            dropped: dropped_at_raise.wrapping_add(c.dropped_later.total()),
            discarded: c.discarded.total(),
        }
    }

    /// Deliveries waiting in thread buffers.
    pub(crate) fn waiting(&self) -> u64 {
        self.waiting.load(Ordering::Relaxed)
    }

    /// The raise after the one-load check found subscribers: timestamps the
    /// event once and delivers or defers it for every registration of the
    /// type (bound events: those for `object`). `required` is what the
    /// raising point demands of a callback. Async-signal-safe when
    /// `required` is `AsyncSignalSafe` (as far as the callbacks and the
    /// source's timestamp function are).
    #[cold]
    #[inline(never)]
    pub(crate) fn raise(
        &self,
        t: &Tables,
        index: usize,
        object: Option<ObjectRef>,
        record: &RecordBuf,
        required: CbSafety,
        timestamp: Option<u64>,
    ) {
        let Some(ty) = t.types.get(index) else {
            return;
        };
        // A source without a clock needs the raise's timestamp; without one
        // the event cannot be delivered: every matching registration counts
        // it as dropped (below).
        let timestamp = timestamp.or_else(|| t.sources.get(ty.info.source)?.now());
        let object = if ty.info.bind == BindKind::NoObject {
            None
        } else {
            object
        };
        at_point(required.max(CbSafety::ThreadSafe), || {
            for (_, key) in ty.subs.iter() {
                let key = key.load(Ordering::Acquire);
                if key == 0 {
                    continue;
                }
                let Some(reg) = t.regs.get(key) else {
                    continue;
                };
                // Only registrations that observe the event (a callback or
                // a dropped handler) are concerned: what happens to one
                // never depends on the others.
                if reg.object != object || !reg.subscribed.load(Ordering::Relaxed) {
                    continue;
                }
                match timestamp {
                    Some(timestamp) => {
                        let event = Occurrence {
                            ty,
                            index,
                            object,
                            record,
                            timestamp,
                        };
                        self.deliver_or_defer(&event, key, &reg, required)
                    }
                    None => self.drop_one(&reg, ty.info.source, required, When::AtRaise),
                }
            }
        });
        if self.waiting.load(Ordering::Relaxed) != 0
            || (required == CbSafety::None && self.unreported.load(Ordering::Relaxed))
        {
            // Every raise is a delivery point for what waits (at its own
            // requirement, if the token is free): waiting events, which
            // later raises of their registrations queue behind, move on,
            // and at a NONE point losses no delivery will report are.
            self.deliver(t, required);
        }
    }

    fn deliver_or_defer(
        &self,
        event: &Occurrence<'_>,
        key: u64,
        reg: &Registration,
        required: CbSafety,
    ) {
        // Behind earlier deliveries to this registration that wait in a
        // buffer or are being run from one: wait too, so that they keep
        // their order. (A signal handler that interrupts this raise before
        // its event is delivered or buffered raises events that may come
        // first: they are concurrent with it.)
        let queued = reg.waiting.load(Ordering::Acquire) != 0;
        // The standard's rule: the callback at the lowest level valid here.
        // NONE / MPI_RESTRICTED callbacks are valid only while deliveries
        // are serialised (the token); without it, concurrent raises make
        // the point at least THREAD_SAFE.
        if !queued
            && required < CbSafety::ThreadSafe
            && let Some((cb, level)) = reg.pick(required)
            && level < CbSafety::ThreadSafe
            && self.take_token()
        {
            self.run(event, key, reg, cb, required, When::AtRaise);
            self.give_token();
            return;
        }
        let unserialised = required.max(CbSafety::ThreadSafe);
        if !queued && let Some((cb, _)) = reg.pick(unserialised) {
            self.run(event, key, reg, cb, unserialised, When::AtRaise);
            return;
        }
        if !reg.has_any_callback() {
            self.drop_one(reg, event.ty.info.source, required, When::AtRaise);
            return;
        }
        let pending = event.pending(key);
        // Counted before it is visible, so that a consumer that takes it
        // at once never brings the count below zero.
        self.waiting.fetch_add(1, Ordering::Relaxed);
        reg.waiting.fetch_add(1, Ordering::AcqRel);
        let pushed = self
            .buffers
            .ring_for(required != CbSafety::AsyncSignalSafe)
            .is_some_and(|ring| ring.push(&pending));
        if pushed {
            self.counters.deferred.inc();
        } else {
            // Lost: recorded before the count that makes later raises wait
            // is lowered, so that the next delivery reports it.
            self.drop_one(reg, event.ty.info.source, required, When::AtRaise);
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            reg.waiting.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// One lost delivery for `reg`, at a point whose requirement is
    /// `required`: counted in the statistics and, if the registration has
    /// a dropped handler, for it. A registration with callbacks hears of it
    /// before its next delivery ([`Delivery::run`]); one without has no
    /// delivery to wait for and hears of it at the first point where its
    /// handler may run ([`Delivery::report_without_callback`]).
    fn drop_one(&self, reg: &Registration, source: usize, required: CbSafety, when: When) {
        match when {
            When::AtRaise => self.counters.dropped_at_raise.inc(),
            When::Later => self.counters.dropped_later.inc(),
        }
        if reg.note_drop() && !reg.has_any_callback() {
            self.report_without_callback(reg, source, required);
        }
    }

    /// Reports the losses of `reg`, a registration without callbacks, here
    /// if this is a point where its dropped handler may run, else flags
    /// them for the next delivery point that is one. The handler says
    /// nothing of what it can cope with, and no callback of the
    /// registration gives a level or a `user_data` to go by, so it runs
    /// only where a `NONE` callback could: at a point whose requirement is
    /// `NONE`, holding the delivery token; it is told `NONE`, with
    /// `user_data` 0.
    fn report_without_callback(&self, reg: &Registration, source: usize, required: CbSafety) {
        if required == CbSafety::None && self.take_token() {
            reg.report_drops(source, CbSafety::None, 0);
            self.give_token();
        } else {
            // Release: a delivery point that sees the flag sees the count.
            self.unreported.store(true, Ordering::Release);
        }
    }

    /// At a delivery point with requirement `NONE`, holding the token:
    /// reports the losses flagged by [`Delivery::report_without_callback`] of
    /// every live registration that has no callback. (One that has gained
    /// a callback since reports them before its next delivery.)
    fn report_flagged(&self, t: &Tables) {
        if !self.unreported.swap(false, Ordering::AcqRel) {
            return;
        }
        t.regs.for_each_live(|_, reg| {
            if !reg.has_any_callback()
                && reg.has_unreported()
                && let Some(ty) = t.types.get(reg.event)
            {
                reg.report_drops(ty.info.source, CbSafety::None, 0);
            }
        });
    }

    /// When registration `reg` is freed: reports its losses that no
    /// delivery reported, if the free is made where a `NONE` callback could
    /// run (normal code: not inside a delivery or a raise on this thread,
    /// and the token free), with the `user_data` of the callback a `NONE`
    /// point would choose. Elsewhere they stay in the statistics only.
    pub(crate) fn report_at_free(&self, t: &Tables, reg: &Registration) {
        if !reg.has_unreported() || current_requirement() != CbSafety::None || !self.take_token() {
            return;
        }
        if let Some(ty) = t.types.get(reg.event) {
            let user_data = reg.pick(CbSafety::None).map_or(0, |(cb, _)| cb.user_data);
            reg.report_drops(ty.info.source, CbSafety::None, user_data);
        }
        self.give_token();
    }

    /// Runs one callback: first the registration's dropped handler if
    /// deliveries were lost (the standard wants losses reported before the
    /// next event), then the callback with a live instance.
    fn run(
        &self,
        event: &Occurrence<'_>,
        key: u64,
        reg: &Registration,
        cb: &Callback,
        ctx: CbSafety,
        when: When,
    ) {
        let ty = event.ty;
        reg.report_drops(ty.info.source, ctx, cb.user_data);
        let inst = EventInstance {
            info: &ty.info,
            event: event.index,
            registration: key,
            timestamp: event.timestamp,
            object: event.object,
            record: event.record.bytes(ty.info.extent),
        };
        if inst.with_live(ctx, |i| (cb.f)(i, ctx)).is_some() {
            match when {
                When::AtRaise => self.counters.direct.inc(),
                When::Later => self.counters.delivered_later.inc(),
            }
        } else {
            self.drop_one(reg, ty.info.source, ctx, when);
        }
    }

    /// Frees the entry `ring.peek()` returned and uncounts it from what
    /// waits in buffers. Its registration still counts it, until
    /// [`Delivery::done_with`].
    fn take_out(&self, ring: &Ring) {
        ring.pop();
        self.waiting.fetch_sub(1, Ordering::Relaxed);
    }

    /// Uncounts a delivery taken out of a buffer from its registration, once
    /// it has been run (dropped handler and callback returned) or recorded
    /// as lost: only then may the registration's new raises stop waiting
    /// behind it. Release: a raise that sees the count lowered sees what
    /// the callback did.
    fn done_with(&self, reg: &Registration) {
        reg.waiting.fetch_sub(1, Ordering::AcqRel);
    }

    fn take_token(&self) -> bool {
        self.token
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    fn give_token(&self) {
        self.token.store(false, Ordering::Release);
    }

    /// A delivery point: delivers the events waiting in every thread's
    /// buffer whose registration has a callback allowed where the
    /// requirement is `required` (give `CbSafety::None` where the caller
    /// holds no lock and anything may run). Returns the number of callbacks
    /// run; 0 at once if another thread is delivering (the token is taken
    /// without waiting). Per thread, events are delivered in the order they
    /// were raised; an event whose callbacks all need a lower requirement
    /// than `required` stops its thread's buffer until a later point.
    ///
    /// At requirement `NONE` it also reports the losses of registrations
    /// without callbacks to their dropped handlers (they have no delivery
    /// to report them before; see `docs/events.md`).
    pub(crate) fn deliver(&self, t: &Tables, required: CbSafety) -> usize {
        let report = required == CbSafety::None && self.unreported.load(Ordering::Relaxed);
        if (!report && self.waiting.load(Ordering::Relaxed) == 0) || !self.take_token() {
            return 0;
        }
        let n = at_point(required, || {
            let n = self.deliver_holding_token(t, required);
            if required == CbSafety::None {
                self.report_flagged(t);
            }
            n
        });
        self.give_token();
        n
    }

    fn deliver_holding_token(&self, t: &Tables, required: CbSafety) -> usize {
        let mut n = 0;
        for ring in self.buffers.iter() {
            while let Some(pending) = ring.peek() {
                let index = (pending.event & !HAS_OBJECT) as usize;
                let reg = t.regs.get(pending.registration);
                let ty = t.types.get(index);
                let (Some(reg), Some(ty)) = (reg, ty) else {
                    // A freed registration (whose count went with it).
                    self.take_out(ring);
                    self.counters.discarded.inc();
                    continue;
                };
                let Some((cb, _)) = reg.pick(required) else {
                    if reg.has_any_callback() {
                        break; // keep order: a later point may deliver it
                    }
                    self.take_out(ring);
                    self.drop_one(&reg, ty.info.source, required, When::Later);
                    self.done_with(&reg);
                    continue;
                };
                self.take_out(ring);
                // Between taking the entry out and running its callback:
                // where a signal handler raising for the same registration
                // must find it still counted.
                #[cfg(loom)]
                crate::sync::signal::point();
                let record = RecordBuf(pending.record);
                let event = Occurrence {
                    ty,
                    index,
                    object: (pending.event & HAS_OBJECT != 0)
                        .then(|| ObjectRef::new(ty.info.bind, pending.object)),
                    record: &record,
                    timestamp: pending.timestamp,
                };
                self.run(
                    &event,
                    pending.registration,
                    &reg,
                    cb,
                    required,
                    When::Later,
                );
                self.done_with(&reg);
                n += 1;
            }
        }
        n
    }
}
