//! The tool side of the demo: one session with a handle per variable,
//! found by name as any MPI_T tool would, and snapshots read from it.

use pvar::{BindKind, HandleId, ObjectRef, PvarClass, Registry, Session, SessionId};

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

/// The session's handles: plain keys, `Copy`, so the signal handler can
/// hold them in a static.
#[derive(Debug, Clone, Copy)]
pub struct Handles {
    pub session: SessionId,
    pub ids: [HandleId; K],
    pub counts: [usize; K],
}

impl Handles {
    /// Finds every watched variable by name and class and allocates a
    /// handle for it in `session` (the per-peer counts bound to
    /// [`COMM_WORLD`]).
    pub fn alloc(session: &Session) -> pvar::Result<Self> {
        let reg = session.registry();
        let mut ids = [HandleId::from_raw(0); K];
        let mut counts = [0; K];
        for (i, (name, class)) in NAMES.iter().enumerate() {
            let index = reg.pvar_index(name, *class)?;
            let object =
                (ALL[i] == V::PerPeer).then_some(ObjectRef::new(BindKind::Comm, COMM_WORLD));
            let (h, count) = session.alloc(index, object)?;
            if count > MAX_ELEMS {
                return Err(pvar::Error::Invalid("more elements than the demo reads"));
            }
            ids[i] = h;
            counts[i] = count;
        }
        Ok(Self {
            session: session.id(),
            ids,
            counts,
        })
    }

    /// Reads variable `v` into `out[..count]` and returns the count.
    /// Async-signal-safe: no allocation, no lock.
    #[inline]
    pub fn read(&self, reg: &Registry, v: V, out: &mut [u64; MAX_ELEMS]) -> pvar::Result<usize> {
        let i = v as usize;
        let n = self.counts[i];
        reg.read(self.session, self.ids[i], &mut out[..n])?;
        Ok(n)
    }
}

/// All watched values at one instant.
#[derive(Clone)]
pub struct Snapshot {
    /// Seconds since the run started.
    pub t: f64,
    vals: [[u64; MAX_ELEMS]; K],
    counts: [usize; K],
}

impl Snapshot {
    /// Reads every handle.
    pub fn take(reg: &Registry, h: &Handles, t: f64) -> pvar::Result<Self> {
        let mut s = Self {
            t,
            vals: [[0; MAX_ELEMS]; K],
            counts: h.counts,
        };
        for v in ALL {
            h.read(reg, v, &mut s.vals[v as usize])?;
        }
        Ok(s)
    }

    /// The elements of `v`.
    pub fn elems(&self, v: V) -> &[u64] {
        &self.vals[v as usize][..self.counts[v as usize]]
    }

    /// Element 0 of an integer variable.
    pub fn u(&self, v: V) -> u64 {
        self.vals[v as usize][0]
    }

    /// Element 0 of a double variable.
    pub fn f(&self, v: V) -> f64 {
        f64::from_bits(self.vals[v as usize][0])
    }

    /// The elements of a double variable.
    pub fn fs(&self, v: V) -> Vec<f64> {
        self.elems(v).iter().map(|b| f64::from_bits(*b)).collect()
    }

    /// The elements of an `MPI_INT` variable.
    pub fn ints(&self, v: V) -> Vec<i32> {
        self.elems(v).iter().map(|b| *b as i64 as i32).collect()
    }

    /// Sum of the elements of an integer variable.
    pub fn sum(&self, v: V) -> u64 {
        self.elems(v).iter().sum()
    }

    /// Largest element of an integer variable.
    pub fn max(&self, v: V) -> u64 {
        self.elems(v).iter().copied().max().unwrap_or(0)
    }
}
