//! Hot storage of variable values, one [`Storage`] per unbound variable or
//! per bound object instance.
//!
//! - **Sharded** (COUNTER, AGGREGATE, TIMER, LEVEL): per-thread cells in the
//!   registry's `CellSpace` (see [`cells`](super::cells)), merged when read.
//! - **Shared** (STATE, SIZE, PERCENTAGE, GENERIC): one atomic per element,
//!   written with plain stores; these classes describe one process-wide
//!   value, not a sum.
//! - **Watermark** (HIGH/LOWWATERMARK): the level plus subscriber marks.
//! - **Callback**: values computed by the component's read function.
//!
//! Values are kept as `u64` bit patterns in one of two representations
//! ([`Repr`]): wrapping integers (unsigned, or signed two's complement),
//! or `f64` bits. TIMER cells count clock ticks; they are converted when read.

pub(crate) mod reader;
pub(crate) mod watermark;

use super::cells::{CellRange, CellSpace};
use super::clock::Clock;
use crate::lockfree::var_table::ActiveFlag;
use crate::sync::{Arc, AtomicBool, AtomicU64, Ordering};
use crate::vocabulary::callback::Callbacks;
use crate::vocabulary::datatype::Datatype;
use crate::vocabulary::datatype::Repr;
use crate::vocabulary::kinds::PvarClass;
use watermark::WatermarkStore;

/// The engine state every storage needs: the cell space and the clock.
pub(crate) struct Hot {
    pub(crate) cells: Arc<CellSpace>,
    pub(crate) clock: Clock,
}

impl Hot {
    pub(crate) fn new(clock: Clock) -> Self {
        Self {
            cells: Arc::new(CellSpace::new()),
            clock,
        }
    }
}

/// What backs a storage's values.
pub(crate) enum Backing {
    /// Per-thread cells, one per element; a TIMER has `count` more, its
    /// thread-owned start ticks (`cells` is then `2 * count` long).
    Sharded { cells: CellRange },
    /// One atomic per element.
    Shared { values: Box<[AtomicU64]> },
    /// The level and the subscriptions' marks.
    Watermark(Arc<WatermarkStore>),
    /// The component's functions, with the bound object if any.
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
    /// The variable's active flag (shared with its table entry).
    active: ActiveFlag,
    /// `false` once the bound object's instance was dropped.
    pub(crate) live: AtomicBool,
    pub(crate) backing: Backing,
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
        active: &ActiveFlag,
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
        let backing = if let Some((callbacks, object)) = callback {
            Backing::Callback { callbacks, object }
        } else if class.is_sum() || class == PvarClass::Level {
            // A TIMER's start ticks follow its sums: an interval in
            // progress is its thread's, not its record's (thread-owned).
            // Fresh or recycled, the range is zero in every thread's record.
            let starts = if class == PvarClass::Timer { count } else { 0 };
            Backing::Sharded {
                cells: CellRange::new_in(&hot.cells, count + starts, starts)?,
            }
        } else if class.is_watermark() {
            Backing::Watermark(Arc::new(WatermarkStore::new(
                class == PvarClass::HighWatermark,
                repr,
                count,
                0,
            )))
        } else {
            Backing::Shared {
                values: (0..count).map(|_| AtomicU64::new(0)).collect(),
            }
        };
        Ok(Storage {
            class,
            datatype,
            repr,
            count,
            active: active.clone(),
            live: AtomicBool::new(true),
            backing,
            hot: hot.clone(),
        })
    }

    /// Whether a tool may still use these values: the variable is active
    /// and (bound) the object's instance was not dropped. Two loads,
    /// async-signal-safe.
    #[inline]
    pub(crate) fn is_live(&self) -> bool {
        self.active.load(Ordering::Acquire) && self.live.load(Ordering::Acquire)
    }

    /// The current value of element `i` in cell representation (TIMER: ticks).
    /// Async-signal-safe for every kind but `Callback`, whose safety is the
    /// component's read function's.
    pub(crate) fn current(&self, i: usize) -> u64 {
        // Between the load of a handle's word and its compare-and-swap.
        #[cfg(loom)]
        crate::sync::signal::point();
        match &self.backing {
            Backing::Sharded { cells } => match self.repr {
                Repr::Float => cells.sum_f64(i).to_bits(),
                _ => cells.sum(i),
            },
            Backing::Shared { values } => values[i].load(Ordering::Relaxed),
            Backing::Watermark(w) => w.level(i),
            Backing::Callback { callbacks, object } => callbacks.read(*object, i),
        }
    }

    /// Converts a cell-representation value of this storage to the value a
    /// tool reads (and the component's own `get`): the one place where a
    /// value is fitted to its class and datatype. Cells keep 64 bits, so
    /// nothing here touches an update path, and a value that comes back in
    /// range reads exactly again.
    ///
    /// - Engine TIMER: ticks become nanoseconds (unsigned datatypes) or
    ///   seconds (`MPI_DOUBLE`). A callback TIMER returns its datatype's
    ///   units, unconverted.
    /// - Engine LEVEL of an unsigned datatype: the merged sum of per-thread
    ///   deltas can be transiently negative; it reads 0.
    /// - `MPI_DOUBLE` LEVEL, SIZE, HIGH/LOWWATERMARK, engine or callback: the
    ///   standard wants them non-negative; a negative value (or NaN) reads
    ///   0.
    /// - PERCENTAGE, engine or callback: clamped to [0, 1], NaN reads 0 (as
    ///   [`Percentage::set`](crate::Percentage::set) stores it).
    /// - `MPI_UNSIGNED` (32 bits): a class that may overflow
    ///   ([`PvarClass::can_overflow`]: COUNTER, AGGREGATE, TIMER, GENERIC)
    ///   wraps at 2^32; the others (LEVEL, SIZE, the watermarks) saturate at
    ///   `u32::MAX`.
    pub(crate) fn to_output(&self, v: u64) -> u64 {
        let callback = matches!(self.backing, Backing::Callback { .. });
        let float = self.repr == Repr::Float;
        let v = match self.class {
            PvarClass::Timer if !callback => {
                let nanos = self.hot.clock.ticks_to_nanos(v);
                if self.datatype == Datatype::Double {
                    (nanos as f64 / 1e9).to_bits()
                } else {
                    nanos
                }
            }
            PvarClass::Level if !float && !callback => {
                // Per-thread deltas: a merged sum can be transiently negative.
                if (v as i64) < 0 { 0 } else { v }
            }
            PvarClass::Level
            | PvarClass::Size
            | PvarClass::HighWatermark
            | PvarClass::LowWatermark
                if float =>
            {
                // `!(f >= 0)`: negative or NaN.
                if f64::from_bits(v) >= 0.0 {
                    v
                } else {
                    0f64.to_bits()
                }
            }
            PvarClass::Percentage => {
                let p = f64::from_bits(v);
                if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) }.to_bits()
            }
            _ => v,
        };
        self.fit_unsigned(v)
    }

    /// An `MPI_UNSIGNED` value past `u32::MAX`: wrapped for a class that
    /// may overflow, saturated for one that may not (see
    /// [`Storage::to_output`]); other datatypes unchanged.
    #[inline]
    fn fit_unsigned(&self, v: u64) -> u64 {
        const MAX: u64 = u32::MAX as u64;
        match self.datatype {
            Datatype::Unsigned if self.class.can_overflow() => v & MAX,
            Datatype::Unsigned => v.min(MAX),
            _ => v,
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
        self.fit_unsigned(v)
    }

    /// Converts a tool-written value to cell representation (inverse of
    /// [`Storage::to_output`] for timers).
    pub(crate) fn to_cells(&self, v: u64) -> u64 {
        if self.class == PvarClass::Timer && !matches!(self.backing, Backing::Callback { .. }) {
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
        if let Backing::Sharded { cells } = &self.backing {
            // Every handle to this storage is gone (they hold it in an
            // `Arc`), so nothing updates or reads the range any more:
            // `release` may zero it (a TIMER's start ticks too, so no later
            // instance inherits a running interval).
            let owned = if self.class == PvarClass::Timer {
                self.count
            } else {
                0
            };
            cells.release(owned);
        }
    }
}
