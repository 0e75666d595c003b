//! The tool side of the demo: one session with a handle per variable,
//! found by name as any MPI_T tool would, and snapshots read from it.

use pvar::{
    BindKind, Handle, HandleId, ObjectRef, PvarClass, Registry, Session, SessionId, Tool, Values,
};

use super::vars::COMM_WORLD;

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
