//! Hot storage of variable values, one [`Storage`] per unbound variable or
//! per bound object instance.
//!
//! - **Sharded** (COUNTER, AGGREGATE, TIMER, LEVEL): per-thread cells in the
//!   registry's [`CellSpace`](crate::cells), merged when read.
//! - **Shared** (STATE, SIZE, PERCENTAGE, GENERIC): one atomic per element,
//!   written with plain stores; these classes describe one process-wide
//!   value, not a sum.
//! - **Watermark** (HIGH/LOWWATERMARK): the level plus subscriber marks.
//! - **Callback**: values computed by the component's read function.
//!
//! Values are kept as `u64` bit patterns in one of two representations
//! ([`Repr`]): wrapping integers (unsigned, or signed two's complement), or
//! `f64` bits. TIMER cells count clock ticks; they are converted when read.

pub(crate) mod watermark;

use std::sync::Arc;

use crate::callback::Callbacks;
use crate::cells::{CellSpace, Slot};
use crate::clock::Clock;
use crate::kinds::{Datatype, PvarClass};
use crate::sync::{AtomicBool, AtomicU64, Ordering};
use watermark::WatermarkStore;

/// How a `u64` cell encodes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repr {
    /// Unsigned integer (wrapping).
    Unsigned,
    /// Signed integer, two's complement (wrapping).
    Signed,
    /// `f64` bits.
    Float,
}

impl Repr {
    pub(crate) fn of(datatype: Datatype) -> Repr {
        match datatype {
            Datatype::Double => Repr::Float,
            Datatype::Int | Datatype::Count => Repr::Signed,
            _ => Repr::Unsigned,
        }
    }

    #[inline]
    pub(crate) fn add(self, a: u64, b: u64) -> u64 {
        match self {
            Repr::Float => (f64::from_bits(a) + f64::from_bits(b)).to_bits(),
            _ => a.wrapping_add(b),
        }
    }

    #[inline]
    pub(crate) fn sub(self, a: u64, b: u64) -> u64 {
        match self {
            Repr::Float => (f64::from_bits(a) - f64::from_bits(b)).to_bits(),
            _ => a.wrapping_sub(b),
        }
    }

    /// Whether `v` passes mark `m`: is above it (`high`) or below it.
    #[inline]
    pub(crate) fn passes(self, v: u64, m: u64, high: bool) -> bool {
        let ord = match self {
            Repr::Float => f64::from_bits(v).partial_cmp(&f64::from_bits(m)),
            Repr::Signed => (v as i64).partial_cmp(&(m as i64)),
            Repr::Unsigned => v.partial_cmp(&m),
        };
        match ord {
            Some(core::cmp::Ordering::Greater) => high,
            Some(core::cmp::Ordering::Less) => !high,
            _ => false,
        }
    }
}

/// The engine state every storage needs: the cell space and the clock.
pub(crate) struct Hot {
    pub(crate) cells: CellSpace,
    pub(crate) clock: Clock,
}

pub(crate) enum Kind {
    Sharded {
        slot: Slot,
        /// TIMER only: per-thread start ticks for `start`/`stop`.
        starts: Option<Slot>,
    },
    Shared {
        cells: Box<[AtomicU64]>,
    },
    Watermark(Box<WatermarkStore>),
    Callback {
        callbacks: Arc<Callbacks>,
        object: Option<u64>,
    },
}

/// The values of one variable (or one bound object instance). Opaque
/// outside the crate (it appears in the sealed builder trait only).
pub struct Storage {
    pub(crate) class: PvarClass,
    pub(crate) datatype: Datatype,
    pub(crate) repr: Repr,
    pub(crate) count: usize,
    pub(crate) live: AtomicBool,
    pub(crate) kind: Kind,
    pub(crate) hot: Arc<Hot>,
}

impl Storage {
    /// Builds storage for `count` elements of `class`/`datatype`; for sharded
    /// classes reserves cell slots (reusing a released range if one fits).
    pub(crate) fn new(
        hot: &Arc<Hot>,
        class: PvarClass,
        datatype: Datatype,
        count: usize,
        callback: Option<(Arc<Callbacks>, Option<u64>)>,
    ) -> Result<Storage, &'static str> {
        // TIMER cells count integer clock ticks whatever the datatype a tool
        // reads (seconds as a double, or nanoseconds): the conversion happens
        // on output, so the representation is unsigned. A callback TIMER
        // instead returns values in its datatype's units (seconds as a
        // double, or nanoseconds), which tools read unconverted.
        let repr = if class == PvarClass::Timer && callback.is_none() {
            Repr::Unsigned
        } else {
            Repr::of(datatype)
        };
        let kind = if let Some((callbacks, object)) = callback {
            Kind::Callback { callbacks, object }
        } else if class.is_sum() || class == PvarClass::Level {
            let timer = class == PvarClass::Timer;
            let len = if timer { 2 * count } else { count };
            // Fresh or recycled, the range is zero in every thread's record.
            let slot = hot.cells.alloc(len)?;
            let starts = timer.then(|| slot.at(count));
            if let Some(starts) = starts {
                // An interval in progress is its thread's, not its record's.
                hot.cells.mark_thread_owned(starts, count);
            }
            Kind::Sharded { slot, starts }
        } else if class.is_watermark() {
            Kind::Watermark(Box::new(WatermarkStore::new(
                class == PvarClass::HighWatermark,
                repr,
                count,
                0,
            )))
        } else {
            Kind::Shared {
                cells: (0..count).map(|_| AtomicU64::new(0)).collect(),
            }
        };
        Ok(Storage {
            class,
            datatype,
            repr,
            count,
            live: AtomicBool::new(true),
            kind,
            hot: hot.clone(),
        })
    }

    #[inline]
    pub(crate) fn is_live(&self) -> bool {
        self.live.load(Ordering::Acquire)
    }

    /// The current value of element `i` in cell representation (TIMER: ticks).
    /// Async-signal-safe for every kind but `Callback`, whose safety is the
    /// component's read function's.
    pub(crate) fn current(&self, i: usize) -> u64 {
        // Between the load of a handle's word and its compare-and-swap.
        #[cfg(loom)]
        crate::sync::signal::point();
        match &self.kind {
            Kind::Sharded { slot, .. } => {
                let cells = &self.hot.cells;
                match self.repr {
                    Repr::Float => cells.sum_f64(slot.at(i)).to_bits(),
                    _ => cells.sum(slot.at(i)),
                }
            }
            Kind::Shared { cells } => cells[i].load(Ordering::Relaxed),
            Kind::Watermark(w) => w.level(i),
            Kind::Callback { callbacks, object } => callbacks.read(*object, i),
        }
    }

    /// Converts a cell-representation value of this storage to the value a
    /// tool reads: ticks become nanoseconds (unsigned timers) or seconds
    /// (double timers); a LEVEL's signed sum is clamped at zero; a 4-byte
    /// unsigned datatype (`MPI_UNSIGNED`) wraps at 32 bits, as the
    /// component's own `get` and the C interface do. Callback variables
    /// return their datatype's units: neither converted nor clamped.
    pub(crate) fn to_output(&self, v: u64) -> u64 {
        let callback = matches!(self.kind, Kind::Callback { .. });
        let v = match self.class {
            PvarClass::Timer if !callback => {
                let nanos = self.hot.clock.ticks_to_nanos(v);
                if self.datatype == Datatype::Double {
                    (nanos as f64 / 1e9).to_bits()
                } else {
                    nanos
                }
            }
            PvarClass::Level if self.repr == Repr::Unsigned && !callback => {
                // Per-thread deltas: a merged sum can be transiently negative.
                if (v as i64) < 0 { 0 } else { v }
            }
            PvarClass::Level if self.repr == Repr::Float && !callback => {
                let f = f64::from_bits(v);
                if f < 0.0 { 0f64.to_bits() } else { v }
            }
            _ => v,
        };
        if self.datatype == Datatype::Unsigned {
            v & u64::from(u32::MAX)
        } else {
            v
        }
    }

    /// The value a tool reads for `v` ticks of an engine TIMER element of
    /// which `reported` ticks were handed out before (by a handle's
    /// readresets): `ns(reported + v) − ns(reported)`, in the datatype's
    /// unit. Successive deltas converted this way sum to the conversion of
    /// their total, exactly: no nanosecond is lost to truncation per delta.
    pub(crate) fn timer_output_after(&self, reported: u64, v: u64) -> u64 {
        let clock = &self.hot.clock;
        let nanos = clock
            .ticks_to_nanos(reported.wrapping_add(v))
            .wrapping_sub(clock.ticks_to_nanos(reported));
        let v = if self.datatype == Datatype::Double {
            (nanos as f64 / 1e9).to_bits()
        } else {
            nanos
        };
        if self.datatype == Datatype::Unsigned {
            v & u64::from(u32::MAX)
        } else {
            v
        }
    }

    /// Converts a tool-written value to cell representation (inverse of
    /// [`Storage::to_output`] for timers).
    pub(crate) fn to_cells(&self, v: u64) -> u64 {
        if self.class == PvarClass::Timer && !matches!(self.kind, Kind::Callback { .. }) {
            let nanos = if self.datatype == Datatype::Double {
                (f64::from_bits(v) * 1e9).max(0.0) as u64
            } else {
                v
            };
            self.hot.clock.nanos_to_ticks(nanos)
        } else {
            v
        }
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Kind::Sharded { slot, starts } = &self.kind {
            // Every handle to this storage is gone, so no thread updates or
            // reads the range any more: `release` may zero it (a TIMER's
            // start ticks too, so no later instance inherits a running
            // interval).
            let len = match starts {
                Some(starts) => {
                    self.hot.cells.unmark_thread_owned(*starts);
                    2 * self.count
                }
                None => self.count,
            };
            self.hot.cells.release(*slot, len);
        }
    }
}
