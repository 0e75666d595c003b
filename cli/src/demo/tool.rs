//! The tool side of the demo: one session with a handle per variable,
//! found by name as any MPI_T tool would, and snapshots read from it.

use pvar::{
    BindKind, Handle, HandleId, ObjectRef, PvarClass, Registry, Session, SessionId, Tool, Values,
};

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pvar::{CbSafety, EventRegistration};

use super::vars::{COMM_WORLD, INBOX_DEEP};

/// Largest element count the demo reads (a `threads²` peer matrix).
pub const MAX_ELEMS: usize = 64;

/// The variables the tool watches, in [`NAMES`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V {
    Sent,
    Recv,
    BytesSent,
    BytesRecv,
    SendTime,
    RecvTime,
    Depth,
    Hwm,
    Lwm,
    State,
    Busy,
    PerPeer,
    Matrix,
    MsgSize,
    InFlight,
}

/// Number of watched variables.
pub const K: usize = 15;

/// Every watched variable, in [`V`] order.
pub const ALL: [V; K] = [
    V::Sent,
    V::Recv,
    V::BytesSent,
    V::BytesRecv,
    V::SendTime,
    V::RecvTime,
    V::Depth,
    V::Hwm,
    V::Lwm,
    V::State,
    V::Busy,
    V::PerPeer,
    V::Matrix,
    V::MsgSize,
    V::InFlight,
];

/// Name and class of each watched variable, in [`V`] order.
pub const NAMES: [(&str, PvarClass); K] = [
    ("demo_msgs_sent", PvarClass::Counter),
    ("demo_msgs_received", PvarClass::Counter),
    ("demo_bytes_sent", PvarClass::Aggregate),
    ("demo_bytes_received", PvarClass::Aggregate),
    ("demo_send_time", PvarClass::Timer),
    ("demo_recv_time", PvarClass::Timer),
    ("demo_queue_depth", PvarClass::Level),
    ("demo_queue_depth_hwm", PvarClass::HighWatermark),
    ("demo_queue_depth_lwm", PvarClass::LowWatermark),
    ("demo_worker_state", PvarClass::State),
    ("demo_worker_busy", PvarClass::Percentage),
    ("demo_msgs_to_peer", PvarClass::Counter),
    ("demo_msgs_matrix", PvarClass::Counter),
    ("demo_message_size", PvarClass::Size),
    ("demo_msgs_in_flight", PvarClass::Level),
];

/// The keys of the session's handles: plain `Copy` values, so the signal
/// handler can hold them in a static and read through the keyed API.
#[derive(Debug, Clone, Copy)]
pub struct Keys {
    pub session: SessionId,
    pub ids: [HandleId; K],
    pub counts: [usize; K],
}

impl Keys {
    /// Reads variable `v` into `out[..count]` through the keyed API and
    /// returns the count. Async-signal-safe: no allocation, no lock.
    #[inline]
    pub fn read(&self, tool: &Tool, v: V, out: &mut [u64; MAX_ELEMS]) -> pvar::Result<usize> {
        let i = v as usize;
        let n = self.counts[i];
        tool.read(self.session, self.ids[i], 0, &mut out[..n])?;
        Ok(n)
    }
}

/// The session's typed handles, one per watched variable (freed when
/// dropped), and their keys for the sampler.
pub struct Handles<'s> {
    handles: Vec<Handle<'s>>,
    pub keys: Keys,
}

impl<'s> Handles<'s> {
    /// Finds every watched variable by name and class, as any MPI_T tool
    /// would, and allocates a handle for it in `session` (the per-peer
    /// counts bound to [`COMM_WORLD`]).
    pub fn alloc(reg: &Registry, session: &'s Session) -> pvar::Result<Self> {
        let mut handles = Vec::with_capacity(K);
        let mut keys = Keys {
            session: session.id(),
            ids: [HandleId::from_raw(0); K],
            counts: [0; K],
        };
        for (i, (name, class)) in NAMES.iter().enumerate() {
            let index = reg.pvars().index(name, *class)?;
            let h = if ALL[i] == V::PerPeer {
                session.handle_for(index, ObjectRef::new(BindKind::Comm, COMM_WORLD))?
            } else {
                session.handle(index)?
            };
            if h.count() > MAX_ELEMS {
                return Err(pvar::Error::invalid("more elements than the demo reads"));
            }
            keys.ids[i] = h.id();
            keys.counts[i] = h.count();
            handles.push(h);
        }
        Ok(Self { handles, keys })
    }
}

/// All watched values at one instant, as their handles typed them.
#[derive(Clone)]
pub struct Snapshot {
    /// Seconds since the run started.
    pub t: f64,
    vals: Vec<Values>,
}

impl Snapshot {
    /// Reads every handle.
    pub fn take(h: &Handles<'_>, t: f64) -> pvar::Result<Self> {
        let vals = h
            .handles
            .iter()
            .map(|h| h.read())
            .collect::<pvar::Result<_>>()?;
        Ok(Self { t, vals })
    }

    /// The elements of an unsigned variable (COUNTER, AGGREGATE, LEVEL,
    /// SIZE, watermarks).
    pub fn elems(&self, v: V) -> Vec<u64> {
        match &self.vals[v as usize] {
            Values::U64(x) => x.clone(),
            Values::U32(x) => x.iter().map(|&e| e as u64).collect(),
            other => panic!("{v:?} is not unsigned: {other:?}"),
        }
    }

    /// Element 0 of an unsigned variable.
    pub fn u(&self, v: V) -> u64 {
        self.elems(v)[0]
    }

    /// Element 0 of a double variable (a TIMER in seconds).
    pub fn f(&self, v: V) -> f64 {
        self.fs(v)[0]
    }

    /// The elements of a double variable.
    pub fn fs(&self, v: V) -> Vec<f64> {
        match &self.vals[v as usize] {
            Values::F64(x) => x.clone(),
            other => panic!("{v:?} is not MPI_DOUBLE: {other:?}"),
        }
    }

    /// The elements of an `MPI_INT` variable.
    pub fn ints(&self, v: V) -> Vec<i32> {
        match &self.vals[v as usize] {
            Values::I32(x) => x.clone(),
            other => panic!("{v:?} is not MPI_INT: {other:?}"),
        }
    }

    /// Sum of the elements of an unsigned variable.
    pub fn sum(&self, v: V) -> u64 {
        self.elems(v).iter().sum()
    }

    /// Largest element of an unsigned variable.
    pub fn max(&self, v: V) -> u64 {
        self.elems(v).iter().copied().max().unwrap_or(0)
    }
}

/// What the event callbacks saw.
#[derive(Default)]
struct Tally {
    delivered: AtomicU64,
    max_depth: AtomicU64,
    dropped: AtomicU64,
}

/// The tool's MPI 4 event listener: a registration for
/// `demo_inbox_deep` whose `THREAD_SAFE` callback tallies deliveries on
/// the raising worker (atomics only) and whose dropped handler counts
/// losses.
pub struct DeepListener {
    registration: EventRegistration,
    tally: Arc<Tally>,
    reg: &'static Registry,
}

impl DeepListener {
    /// Finds the event by name and registers the callbacks.
    pub fn attach(reg: &'static Registry) -> pvar::Result<Self> {
        let index = reg.events().index(INBOX_DEEP)?;
        let registration = reg.event_registration(index, None)?;
        let tally = Arc::new(Tally::default());
        let t = tally.clone();
        registration.on_event(CbSafety::ThreadSafe, move |inst, _| {
            t.delivered.fetch_add(1, Ordering::Relaxed);
            if let Ok(depth) = inst.read::<u64>(0) {
                t.max_depth.fetch_max(depth, Ordering::Relaxed);
            }
        })?;
        let t = tally.clone();
        registration.on_dropped(move |n, _| {
            t.dropped.fetch_add(n, Ordering::Relaxed);
        })?;
        Ok(Self {
            registration,
            tally,
            reg,
        })
    }

    /// Frees the registration and returns what it saw.
    pub fn finish(self) -> EventCounts {
        let stats = self.reg.events().stats();
        drop(self.registration);
        EventCounts {
            index: self.reg.events().index(INBOX_DEEP).unwrap_or(0),
            delivered: self.tally.delivered.load(Ordering::Relaxed),
            dropped: self.tally.dropped.load(Ordering::Relaxed),
            engine_dropped: stats.dropped,
            max_depth: self.tally.max_depth.load(Ordering::Relaxed),
        }
    }
}

/// What the tool's event registration saw over the run.
#[derive(Debug, Clone, Copy)]
pub struct EventCounts {
    /// The event's index, found by name.
    pub index: usize,
    /// Callbacks run.
    pub delivered: u64,
    /// Deliveries the dropped handler heard of.
    pub dropped: u64,
    /// Deliveries the engine dropped, all registrations.
    pub engine_dropped: u64,
    /// Deepest inbox the callbacks read from the records.
    pub max_depth: u64,
}
