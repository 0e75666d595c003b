//! MPI 4 events raised from a real signal handler (the events counterpart
//! of `tests/signal_safety.rs`, whose techniques it reuses).
//!
//! Worker threads prepare their buffers and raise one event type at
//! `NONE` and `THREAD_SAFE` points in a loop; a driver thread aims a
//! real-time signal (`SIGRTMIN`, queued, from `pthread_kill`) at them, and
//! the handler raises the same event with `raise_in(ASYNC_SIGNAL_SAFE)`. A
//! tool thread keeps calling `deliver(NONE)`. Two registrations:
//!
//! - one with only an `ASYNC_SIGNAL_SAFE` callback: every raise is
//!   delivered at once, on the raising thread, in the raising context
//!   (inside the handler for the handler's raises), never dropped;
//! - one with only a `NONE` callback: delivered where the token allows,
//!   deferred from `THREAD_SAFE` points and from the handler, dropped when
//!   a (deliberately small) buffer is full, drops reported to its dropped
//!   handler.
//!
//! The global allocator aborts if entered while the handler runs on the
//! calling thread: the handler's raise and the deliveries it makes are
//! allocation-free. Callbacks only touch atomics and `const` thread-locals.
//! Records are `(tag, sequence, checksum)`; callbacks check the checksum,
//! the sum of the checksums the signal-safe registration saw equals the
//! sum of those raised, and the NONE registration sees each raised record
//! at most once (a bitmap per worker and origin). The end checks exact
//! accounting: delivered (+ dropped) equals raised, and the dropped
//! handler heard every drop.
//!
//! The run lasts until every party has made its progress (see
//! [`PROGRESS`]); wall-clock limits only make it fail loudly ([`RUN_CAP`],
//! and a watchdog that aborts with the phase that hung).
//!
//! `EVENT_SIGNALS_SELFTEST=alloc` makes the signal-safe callback allocate,
//! to show that the allocator check fires (the run must then abort).
//!
//! Linux only (`pthread_kill`, real-time signals, `__errno_location`).
#![cfg(target_os = "linux")]

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use pvar::{CbSafety, Event, EventInstance, Registry};

// ---------------------------------------------------------------------------
// The allocator that aborts inside a signal handler.

#[path = "support/abort_in_handler.rs"]
mod abort_in_handler;
use abort_in_handler::{IN_HANDLER, die};
abort_in_handler::install!("event_signals");

thread_local! {
    /// This thread's number in record tags (1..=WORKERS for workers).
    static ME: Cell<u64> = const { Cell::new(0) };
    /// Sequence of the handler's raises on this thread.
    static HANDLER_SEQ: Cell<u64> = const { Cell::new(0) };
}

// ---------------------------------------------------------------------------
// Records, counts and progress.

/// `(tag, sequence, checksum)`; tag = thread number << 1 | raised in the handler.
type Rec = (u64, u64, u64);

const WORKERS: usize = 3;
/// The main thread's number in tags (its one final raise).
const MAIN_ME: u64 = WORKERS as u64 + 1;
/// Entries of each worker's buffer: small, so that drops happen.
const BUFFER_ENTRIES: usize = 4;
/// One raise in this many is at a `NONE` point, the others `THREAD_SAFE`.
const NONE_EVERY: u64 = 32;
/// Sequences a worker raises at most, in its loop and in its handler
/// (beyond, it stops raising): the size of the bitmaps of [`SEEN`].
const MAX_SEQ: u64 = 1 << 22;
const SEEN_WORDS: usize = (MAX_SEQ / 64) as usize;

fn mix(tag: u64, seq: u64) -> u64 {
    // splitmix64's finaliser over both fields.
    let mut z = tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seq;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn record(me: u64, from_handler: bool, seq: u64) -> Rec {
    let tag = me << 1 | from_handler as u64;
    (tag, seq, mix(tag, seq))
}

/// The event the handler raises (leaked; set before the handler is armed).
static EV: AtomicPtr<Event<Rec>> = AtomicPtr::new(core::ptr::null_mut());
static ARMED: AtomicBool = AtomicBool::new(false);
static STOP_SIGNALS: AtomicBool = AtomicBool::new(false);
static STOP_WORK: AtomicBool = AtomicBool::new(false);
static STOP_TOOL: AtomicBool = AtomicBool::new(false);
static DONE: AtomicBool = AtomicBool::new(false);
static SELFTEST_ALLOC: AtomicBool = AtomicBool::new(false);
/// Workers' pthread_t (0: not running).
static TARGETS: [AtomicUsize; WORKERS] = [const { AtomicUsize::new(0) }; WORKERS];

// Raisers' counts.
static RAISED_NORMAL: [AtomicU64; WORKERS] = [const { AtomicU64::new(0) }; WORKERS];
static RAISED_HANDLER: [AtomicU64; WORKERS] = [const { AtomicU64::new(0) }; WORKERS];
static RAISED_SUM: AtomicU64 = AtomicU64::new(0);
static SENT: AtomicU64 = AtomicU64::new(0);
static HANDLED: AtomicU64 = AtomicU64::new(0);

// The signal-safe registration's callback.
static AS_DELIVERED: AtomicU64 = AtomicU64::new(0);
static AS_IN_HANDLER: AtomicU64 = AtomicU64::new(0);
static AS_SUM: AtomicU64 = AtomicU64::new(0);
/// Not at once: another thread, or another context than the raise's.
static AS_MISPLACED: AtomicU64 = AtomicU64::new(0);
static AS_DROPS_REPORTED: AtomicU64 = AtomicU64::new(0);

// The NONE registration's callback.
static NONE_DELIVERED: AtomicU64 = AtomicU64::new(0);
static NONE_FROM_HANDLER: AtomicU64 = AtomicU64::new(0);
static NONE_IN_HANDLER: AtomicU64 = AtomicU64::new(0);
static NONE_DROPS_REPORTED: AtomicU64 = AtomicU64::new(0);
/// Which records the NONE callback saw, by worker and origin (loop,
/// handler): one bit per sequence (1..=MAX_SEQ).
static SEEN: [[AtomicU64; SEEN_WORDS]; 2 * WORKERS] =
    [const { [const { AtomicU64::new(0) }; SEEN_WORDS] }; 2 * WORKERS];
/// Records the NONE callback saw twice.
static NONE_DUPLICATES: AtomicU64 = AtomicU64::new(0);

// Either callback.
static BAD_RECORDS: AtomicU64 = AtomicU64::new(0);
static BAD_CONTEXT: AtomicU64 = AtomicU64::new(0);

static TOOL_DELIVERED: AtomicU64 = AtomicU64::new(0);

/// What the run waits for: raises per worker in its loop and in its
/// handler, NONE deliveries of records raised in a handler (deferred, then
/// delivered), deliveries made by the tool thread, drops.
struct Progress {
    raises_per_worker: u64,
    handler_raises_per_worker: u64,
    none_from_handler: u64,
    tool_delivered: u64,
    dropped: u64,
}

const PROGRESS: Progress = Progress {
    raises_per_worker: 100_000,
    handler_raises_per_worker: 4_000,
    none_from_handler: 1_000,
    tool_delivered: 500,
    dropped: 50,
};
/// The run fails if the targets are not reached by then (tens of times
/// what they take on a loaded 2-core machine).
const RUN_CAP: Duration = Duration::from_secs(60);
/// Waiting for every queued signal to be handled before the workers stop.
const SIGNAL_DRAIN_CAP: Duration = Duration::from_secs(20);
/// The watchdog aborts the process after this long, naming the phase.
const WATCHDOG: Duration = Duration::from_secs(120);

static PHASE: AtomicUsize = AtomicUsize::new(0);
const PHASES: [&str; 4] = [
    "\nevent_signals: FATAL: watchdog: hung in setup\n",
    "\nevent_signals: FATAL: watchdog: hung in the run\n",
    "\nevent_signals: FATAL: watchdog: hung winding down\n",
    "\nevent_signals: FATAL: watchdog: hung in the final drain or checks\n",
];

fn sum(a: &[AtomicU64]) -> u64 {
    a.iter().map(|x| x.load(SeqCst)).sum()
}

fn progress(reg: &Registry) -> (bool, String) {
    let p = &PROGRESS;
    let normal: Vec<u64> = RAISED_NORMAL.iter().map(|x| x.load(Relaxed)).collect();
    let handler: Vec<u64> = RAISED_HANDLER.iter().map(|x| x.load(Relaxed)).collect();
    let from_handler = NONE_FROM_HANDLER.load(Relaxed);
    let tool = TOOL_DELIVERED.load(Relaxed);
    let dropped = reg.events().stats().dropped;
    let reached = normal.iter().all(|&n| n >= p.raises_per_worker)
        && handler.iter().all(|&n| n >= p.handler_raises_per_worker)
        && from_handler >= p.none_from_handler
        && tool >= p.tool_delivered
        && dropped >= p.dropped;
    let summary = format!(
        "raises per worker {normal:?} (each of {}), in the handler {handler:?} (each of {}); \
         NONE deliveries of handler raises {from_handler} of {}; tool deliveries {tool} of {}; \
         drops {dropped} of {}",
        p.raises_per_worker,
        p.handler_raises_per_worker,
        p.none_from_handler,
        p.tool_delivered,
        p.dropped
    );
    (reached, summary)
}

// ---------------------------------------------------------------------------
// Callbacks and the handler: atomics and `const` thread-locals only.

/// The record if it arrived intact.
fn intact(inst: &EventInstance<'_>) -> Option<Rec> {
    let tag = inst.read::<u64>(0).ok()?;
    let seq = inst.read::<u64>(1).ok()?;
    let chk = inst.read::<u64>(2).ok()?;
    (chk == mix(tag, seq) && (1..=MAX_SEQ).contains(&seq)).then_some((tag, seq, chk))
}

/// The bitmap of a worker's tag (`None` for other threads' tags).
fn seen_map(tag: u64) -> Option<&'static [AtomicU64; SEEN_WORDS]> {
    let me = tag >> 1;
    (1..=WORKERS as u64)
        .contains(&me)
        .then(|| &SEEN[2 * (me as usize - 1) + (tag & 1) as usize])
}

fn on_signal_safe_event(inst: &EventInstance<'_>, ctx: CbSafety) {
    let in_handler = IN_HANDLER.get();
    AS_DELIVERED.fetch_add(1, Relaxed);
    if in_handler {
        AS_IN_HANDLER.fetch_add(1, Relaxed);
    }
    let expected = if in_handler {
        CbSafety::AsyncSignalSafe
    } else {
        CbSafety::ThreadSafe
    };
    if ctx != expected {
        BAD_CONTEXT.fetch_add(1, Relaxed);
    }
    match intact(inst) {
        Some((tag, _, chk)) => {
            AS_SUM.fetch_add(chk, Relaxed);
            // At once: on the raising thread, in the raising context.
            if tag >> 1 != ME.get() || (tag & 1 == 1) != in_handler {
                AS_MISPLACED.fetch_add(1, Relaxed);
            }
        }
        None => {
            BAD_RECORDS.fetch_add(1, Relaxed);
        }
    }
    if SELFTEST_ALLOC.load(Relaxed) {
        drop(std::hint::black_box(Box::new(1u64)));
    }
}

fn on_none_event(inst: &EventInstance<'_>, ctx: CbSafety) {
    NONE_DELIVERED.fetch_add(1, Relaxed);
    if IN_HANDLER.get() {
        NONE_IN_HANDLER.fetch_add(1, Relaxed);
    }
    if ctx != CbSafety::None {
        BAD_CONTEXT.fetch_add(1, Relaxed);
    }
    let Some((tag, seq, _)) = intact(inst) else {
        BAD_RECORDS.fetch_add(1, Relaxed);
        return;
    };
    if tag & 1 == 1 {
        NONE_FROM_HANDLER.fetch_add(1, Relaxed);
    }
    if let Some(map) = seen_map(tag) {
        let (word, bit) = ((seq - 1) / 64, 1u64 << ((seq - 1) % 64));
        if map[word as usize].fetch_or(bit, Relaxed) & bit != 0 {
            NONE_DUPLICATES.fetch_add(1, Relaxed);
        }
    }
}

extern "C" fn on_signal(_sig: libc::c_int) {
    // SAFETY: the calling thread's errno location.
    let errno = unsafe { *libc::__errno_location() };
    let outer = IN_HANDLER.replace(true);
    HANDLED.fetch_add(1, SeqCst);
    let me = ME.get();
    let ev = EV.load(Acquire);
    let seq = HANDLER_SEQ.get() + 1;
    if ARMED.load(SeqCst) && !ev.is_null() && (1..=WORKERS as u64).contains(&me) && seq <= MAX_SEQ {
        HANDLER_SEQ.set(seq);
        let rec = record(me, true, seq);
        // SAFETY: leaked in the test, never freed.
        unsafe { &*ev }.raise_in(CbSafety::AsyncSignalSafe, None, &rec);
        RAISED_SUM.fetch_add(rec.2, Relaxed);
        RAISED_HANDLER[me as usize - 1].fetch_add(1, Relaxed);
    }
    IN_HANDLER.set(outer);
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

fn install() -> libc::sigaction {
    // SAFETY: plain sigaction(2) with initialised structures.
    unsafe {
        let mut sa: libc::sigaction = core::mem::zeroed();
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        let mut old: libc::sigaction = core::mem::zeroed();
        assert_eq!(
            libc::sigaction(libc::SIGRTMIN(), &sa, &mut old),
            0,
            "sigaction"
        );
        old
    }
}

// ---------------------------------------------------------------------------

#[test]
fn events_raised_in_a_signal_handler_are_delivered_deferred_or_counted_without_allocating() {
    let started = Instant::now();
    let watchdog = std::thread::spawn(|| {
        let deadline = Instant::now() + WATCHDOG;
        while !DONE.load(SeqCst) {
            if Instant::now() > deadline {
                die(PHASES[PHASE.load(SeqCst).min(PHASES.len() - 1)]);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    if std::env::var("EVENT_SIGNALS_SELFTEST").as_deref() == Ok("alloc") {
        SELFTEST_ALLOC.store(true, SeqCst);
    }

    let reg = Registry::new();
    reg.events().set_buffer_entries(BUFFER_ENTRIES);
    let ev = reg
        .event::<Rec>("sig_event")
        .description("tag, sequence, checksum")
        .register()
        .unwrap();
    let always = reg.event_registration(ev.index(), None).unwrap();
    always
        .on_event(CbSafety::AsyncSignalSafe, on_signal_safe_event)
        .unwrap();
    always
        .on_dropped(|n, _| {
            AS_DROPS_REPORTED.fetch_add(n, Relaxed);
        })
        .unwrap();
    let later = reg.event_registration(ev.index(), None).unwrap();
    later.on_event(CbSafety::None, on_none_event).unwrap();
    later
        .on_dropped(|n, _| {
            NONE_DROPS_REPORTED.fetch_add(n, Relaxed);
        })
        .unwrap();
    EV.store(Box::into_raw(Box::new(ev.clone())), Release);
    let old_action = install();
    ARMED.store(true, SeqCst);

    let ready = Arc::new(Barrier::new(WORKERS + 2));
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (reg, ev, ready) = (reg.clone(), ev.clone(), ready.clone());
            std::thread::spawn(move || {
                reg.prepare_thread();
                let me = w as u64 + 1;
                ME.set(me);
                // SAFETY: always safe.
                TARGETS[w].store(unsafe { libc::pthread_self() } as usize, SeqCst);
                ready.wait();
                let mut seq = 0u64;
                while !STOP_WORK.load(Relaxed) {
                    if seq == MAX_SEQ {
                        std::thread::sleep(Duration::from_millis(1));
                        continue;
                    }
                    seq += 1;
                    let rec = record(me, false, seq);
                    if seq.is_multiple_of(NONE_EVERY) {
                        ev.raise(&rec);
                    } else {
                        ev.raise_in(CbSafety::ThreadSafe, None, &rec);
                    }
                    RAISED_SUM.fetch_add(rec.2, Relaxed);
                    RAISED_NORMAL[w].fetch_add(1, Relaxed);
                }
                TARGETS[w].store(0, SeqCst);
            })
        })
        .collect();
    let tool = {
        let (reg, ready) = (reg.clone(), ready.clone());
        std::thread::spawn(move || {
            ready.wait();
            while !STOP_TOOL.load(Relaxed) {
                let n = reg.events().deliver(CbSafety::None);
                TOOL_DELIVERED.fetch_add(n as u64, Relaxed);
                if n == 0 {
                    std::thread::yield_now();
                }
            }
        })
    };
    ready.wait();
    let driver = std::thread::spawn(|| {
        while !STOP_SIGNALS.load(SeqCst) {
            for t in &TARGETS {
                let pt = t.load(SeqCst);
                if pt == 0 {
                    continue;
                }
                // SAFETY: workers clear their entry only after STOP_WORK,
                // which is set after this thread is joined, so `pt` names
                // a live thread.
                if unsafe { libc::pthread_kill(pt as libc::pthread_t, libc::SIGRTMIN()) } == 0 {
                    SENT.fetch_add(1, SeqCst);
                }
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    });

    // Run until every party has made its progress.
    PHASE.store(1, SeqCst);
    let run_start = Instant::now();
    let (reached, progress_at_end) = loop {
        let (reached, summary) = progress(&reg);
        if reached || run_start.elapsed() > RUN_CAP {
            break (reached, summary);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let run_time = run_start.elapsed();

    // Wind down: no new signals; every queued one handled (the workers
    // still run); then the workers, then the tool thread.
    PHASE.store(2, SeqCst);
    STOP_SIGNALS.store(true, SeqCst);
    driver.join().unwrap();
    let drain_start = Instant::now();
    while HANDLED.load(SeqCst) < SENT.load(SeqCst) && drain_start.elapsed() < SIGNAL_DRAIN_CAP {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (sent, handled) = (SENT.load(SeqCst), HANDLED.load(SeqCst));
    STOP_WORK.store(true, SeqCst);
    workers.into_iter().for_each(|w| w.join().unwrap());
    STOP_TOOL.store(true, SeqCst);
    tool.join().unwrap();
    ARMED.store(false, SeqCst);
    // SAFETY: restores the action `install` returned.
    unsafe { libc::sigaction(libc::SIGRTMIN(), &old_action, core::ptr::null_mut()) };

    // Final drain: nothing raises any more.
    PHASE.store(3, SeqCst);
    while reg.events().waiting() > 0 {
        reg.events().deliver(CbSafety::None);
    }
    let st = reg.events().stats();
    let (normal, in_handler) = (sum(&RAISED_NORMAL), sum(&RAISED_HANDLER));
    let total = normal + in_handler;
    println!(
        "event_signals: run {:.2} s: {normal} raises at NONE/THREAD_SAFE points, {in_handler} \
         in the handler ({handled} of {sent} signals handled); {st:?}; tool delivered {}",
        run_time.as_secs_f64(),
        TOOL_DELIVERED.load(SeqCst),
    );
    println!("event_signals: progress at the end of the run: {progress_at_end}");

    assert!(
        reached,
        "the run did not reach its progress targets within {} s: {progress_at_end}",
        RUN_CAP.as_secs()
    );
    assert_eq!(handled, sent, "every queued signal was handled");
    assert_eq!(BAD_RECORDS.load(SeqCst), 0, "records arrived damaged");
    assert_eq!(
        BAD_CONTEXT.load(SeqCst),
        0,
        "a callback was told the wrong requirement"
    );

    // ASYNC_SIGNAL_SAFE: every raise, at once, in place, intact.
    assert_eq!(
        AS_DELIVERED.load(SeqCst),
        total,
        "signal-safe: every raise delivered"
    );
    assert_eq!(
        AS_IN_HANDLER.load(SeqCst),
        in_handler,
        "signal-safe: every handler raise delivered inside the handler"
    );
    assert!(AS_IN_HANDLER.load(SeqCst) > 0);
    assert_eq!(
        AS_MISPLACED.load(SeqCst),
        0,
        "signal-safe: not delivered at once"
    );
    assert_eq!(
        AS_SUM.load(SeqCst),
        RAISED_SUM.load(SeqCst),
        "signal-safe: checksums"
    );

    // NONE: never in the handler; delivered or dropped, exactly once.
    assert_eq!(
        NONE_IN_HANDLER.load(SeqCst),
        0,
        "a NONE callback ran in the handler"
    );
    let none = NONE_DELIVERED.load(SeqCst);
    assert_eq!(
        none + st.dropped,
        total,
        "NONE: delivered + dropped = raised"
    );
    assert!(st.deferred >= NONE_FROM_HANDLER.load(SeqCst) && st.deferred <= none);
    assert_eq!(st.raised, 2 * total);
    assert_eq!(st.delivered, AS_DELIVERED.load(SeqCst) + none);
    assert_eq!(st.discarded, 0);
    assert_eq!(
        NONE_DUPLICATES.load(SeqCst),
        0,
        "NONE: a record delivered twice"
    );
    let mut distinct = 0;
    for (i, map) in SEEN.iter().enumerate() {
        let raised = [&RAISED_NORMAL, &RAISED_HANDLER][i % 2][i / 2].load(SeqCst);
        for (w, word) in map.iter().enumerate() {
            let word = word.load(SeqCst);
            distinct += u64::from(word.count_ones());
            if word != 0 {
                let highest = w as u64 * 64 + 64 - u64::from(word.leading_zeros());
                assert!(
                    highest <= raised,
                    "NONE: sequence {highest} delivered, {raised} raised"
                );
            }
        }
    }
    assert_eq!(
        distinct, none,
        "NONE: every delivery a distinct raised record"
    );

    // One more raise at a NONE point (token free) reports the drops left.
    ME.set(MAIN_ME);
    let rec = record(MAIN_ME, false, 1);
    ev.raise(&rec);
    RAISED_SUM.fetch_add(rec.2, Relaxed);
    let st = reg.events().stats();
    assert_eq!(AS_DELIVERED.load(SeqCst), total + 1);
    assert_eq!(NONE_DELIVERED.load(SeqCst), none + 1);
    assert_eq!(AS_SUM.load(SeqCst), RAISED_SUM.load(SeqCst));
    assert_eq!(
        AS_DROPS_REPORTED.load(SeqCst),
        0,
        "signal-safe: nothing dropped"
    );
    assert_eq!(
        NONE_DROPS_REPORTED.load(SeqCst),
        st.dropped - AS_DROPS_REPORTED.load(SeqCst),
        "NONE: the dropped handler heard every drop"
    );

    DONE.store(true, SeqCst);
    watchdog.join().unwrap();
    println!(
        "event_signals: total test time {:.2} s",
        started.elapsed().as_secs_f64()
    );
}
