//! Updates (`void`, cheap, no-ops on NULL / out of range / unsupported)
//! and the component's own reads.

use core::ffi::c_void;
use std::time::Duration;

use super::deref;
use super::register::{Var, VarHandle, var_of};
use crate::sync::unmodelled::AtomicU64;

macro_rules! update {
    ($(#[$m:meta])* $name:ident, $name_at:ident ( $($arg:ident : $ty:ty),* ) => |$v:ident, $i:ident| $body:expr) => {
        $(#[$m])*
        ///
        /// # Safety
        /// `var` is NULL or a live `pvar_var`.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub unsafe extern "C" fn $name(var: *mut c_void $(, $arg: $ty)*) {
            // SAFETY: caller's contract.
            if let Some($v) = unsafe { var_of(var) } {
                let $i = 0usize;
                $body
            }
        }

        $(#[$m])*
        /// (Element `i` of an array variable.)
        ///
        /// # Safety
        /// `var` is NULL or a live `pvar_var`.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub unsafe extern "C" fn $name_at(var: *mut c_void, i: usize $(, $arg: $ty)*) {
            // SAFETY: caller's contract.
            if let Some($v) = unsafe { var_of(var) } {
                if i < $v.count() {
                    let $i = i;
                    $body
                }
            }
        }
    };
}

update! {
    /// Adds 1: COUNTER, AGGREGATE, LEVEL.
    pvar_inc, pvar_inc_at() => |v, i| match v {
        Var::Counter(x) => x.inc_at(i),
        Var::AggU32(x) => x.add_at(i, 1),
        Var::AggU64(x) => x.add_at(i, 1),
        Var::AggF64(x) => x.add_at(i, 1.0),
        Var::LevelU32(x) => x.inc_at(i),
        Var::LevelU64(x) => x.inc_at(i),
        Var::LevelF64(x) => x.inc_at(i),
        _ => {}
    }
}

update! {
    /// Subtracts 1: LEVEL.
    pvar_dec, pvar_dec_at() => |v, i| match v {
        Var::LevelU32(x) => x.dec_at(i),
        Var::LevelU64(x) => x.dec_at(i),
        Var::LevelF64(x) => x.dec_at(i),
        _ => {}
    }
}

update! {
    /// Adds `n`: COUNTER, AGGREGATE.
    pvar_add, pvar_add_at(n: u64) => |v, i| match v {
        Var::Counter(x) => x.add_at(i, n),
        Var::AggU32(x) => x.add_at(i, n as u32),
        Var::AggU64(x) => x.add_at(i, n),
        Var::AggF64(x) => x.add_at(i, n as f64),
        _ => {}
    }
}

update! {
    /// Adds `x`: AGGREGATE of `MPI_DOUBLE` (integer aggregates add `x`
    /// truncated).
    pvar_add_double, pvar_add_double_at(d: f64) => |v, i| match v {
        Var::AggF64(x) => x.add_at(i, d),
        Var::AggU32(x) => x.add_at(i, d as u32),
        Var::AggU64(x) => x.add_at(i, d as u64),
        _ => {}
    }
}

update! {
    /// Sets an integer value: LEVEL, SIZE, STATE, GENERIC.
    pvar_set, pvar_set_at(n: u64) => |v, i| match v {
        // `MPI_UNSIGNED` LEVEL and SIZE keep the whole value (reads
        // saturate at 2^32 - 1; these classes must not overflow).
        Var::LevelU32(x) => x.set_bits_at(i, n),
        Var::LevelU64(x) => x.set_at(i, n),
        Var::LevelF64(x) => x.set_at(i, n as f64),
        Var::SizeU32(x) => x.set_bits_at(i, n),
        Var::SizeU64(x) => x.set_at(i, n),
        Var::SizeF64(x) => x.set_at(i, n as f64),
        Var::State(x) => x.set_at(i, n as i32),
        Var::GenI32(x) => x.set_at(i, n as i32),
        Var::GenU32(x) => x.set_at(i, n as u32),
        Var::GenU64(x) => x.set_at(i, n),
        Var::GenI64(x) => x.set_at(i, n as i64),
        Var::GenF64(x) => x.set_at(i, n as f64),
        _ => {}
    }
}

update! {
    /// Sets a signed value: STATE and signed GENERIC (others as `pvar_set`).
    pvar_set_int, pvar_set_int_at(n: i64) => |v, i| match v {
        Var::State(x) => x.set_at(i, n as i32),
        Var::GenI32(x) => x.set_at(i, n as i32),
        Var::GenI64(x) => x.set_at(i, n),
        Var::GenF64(x) => x.set_at(i, n as f64),
        Var::LevelF64(x) => x.set_at(i, n as f64),
        Var::SizeF64(x) => x.set_at(i, n as f64),
        Var::LevelU32(x) => x.set_bits_at(i, n.max(0) as u64),
        Var::LevelU64(x) => x.set_at(i, n.max(0) as u64),
        Var::SizeU32(x) => x.set_bits_at(i, n.max(0) as u64),
        Var::SizeU64(x) => x.set_at(i, n.max(0) as u64),
        Var::GenU32(x) => x.set_at(i, n as u32),
        Var::GenU64(x) => x.set_at(i, n as u64),
        _ => {}
    }
}

update! {
    /// Sets a double value: PERCENTAGE and `MPI_DOUBLE` LEVEL, SIZE,
    /// GENERIC.
    pvar_set_double, pvar_set_double_at(d: f64) => |v, i| match v {
        Var::Percentage(x) => x.set_at(i, d),
        Var::LevelF64(x) => x.set_at(i, d),
        Var::SizeF64(x) => x.set_at(i, d),
        Var::GenF64(x) => x.set_at(i, d),
        _ => {}
    }
}

update! {
    /// Records the current level of a HIGH/LOWWATERMARK (integer).
    pvar_watermark_update, pvar_watermark_update_at(n: u64) => |v, i| match v {
        // `MPI_UNSIGNED`: the whole level (reads saturate at 2^32 - 1).
        Var::HighU32(x) => x.update_bits_at(i, n),
        Var::HighU64(x) => x.update_at(i, n),
        Var::HighF64(x) => x.update_at(i, n as f64),
        Var::LowU32(x) => x.update_bits_at(i, n),
        Var::LowU64(x) => x.update_at(i, n),
        Var::LowF64(x) => x.update_at(i, n as f64),
        _ => {}
    }
}

update! {
    /// Records the current level of a HIGH/LOWWATERMARK (double).
    pvar_watermark_update_double, pvar_watermark_update_double_at(d: f64) => |v, i| match v {
        Var::HighF64(x) => x.update_at(i, d),
        Var::LowF64(x) => x.update_at(i, d),
        Var::HighU32(x) => x.update_at(i, d as u32),
        Var::HighU64(x) => x.update_at(i, d as u64),
        Var::LowU32(x) => x.update_at(i, d as u32),
        Var::LowU64(x) => x.update_at(i, d as u64),
        _ => {}
    }
}

update! {
    /// Starts timing on the calling thread: TIMER.
    pvar_timer_start, pvar_timer_start_at() => |v, i| if let Var::Timer(x) = v { x.start_at(i) }
}

update! {
    /// Stops timing on the calling thread and adds the elapsed time: TIMER.
    pvar_timer_stop, pvar_timer_stop_at() => |v, i| if let Var::Timer(x) = v { x.stop_at(i) }
}

update! {
    /// Adds an externally measured duration in nanoseconds: TIMER.
    pvar_timer_add_ns, pvar_timer_add_ns_at(ns: u64) => |v, i| if let Var::Timer(x) = v {
        x.add_ticks_at(i, x.clock().duration_to_ticks(Duration::from_nanos(ns)))
    }
}

/// Sets every element's current level of a watermark (MPICH's `INIT`).
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_watermark_init(var: *mut c_void, d: f64) {
    // SAFETY: caller's contract.
    match unsafe { var_of(var) } {
        Some(Var::HighU32(x)) => x.init(d as u32),
        Some(Var::HighU64(x)) => x.init(d as u64),
        Some(Var::HighF64(x)) => x.init(d),
        Some(Var::LowU32(x)) => x.init(d as u32),
        Some(Var::LowU64(x)) => x.init(d as u64),
        Some(Var::LowF64(x)) => x.init(d),
        _ => {}
    }
}

/// The component's own view of element `i`, as a double (integers
/// converted; TIMER in seconds). 0 for NULL or out of range.
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_get_double_at(var: *mut c_void, i: usize) -> f64 {
    // SAFETY: caller's contract.
    let Some(v) = (unsafe { var_of(var) }) else {
        return 0.0;
    };
    if i >= v.count() {
        return 0.0;
    }
    match v {
        Var::Counter(x) => x.get_at(i) as f64,
        Var::AggU32(x) => x.get_at(i) as f64,
        Var::AggU64(x) => x.get_at(i) as f64,
        Var::AggF64(x) => x.get_at(i),
        Var::Timer(x) => x.get_seconds_at(i),
        Var::LevelU32(x) => x.get_at(i) as f64,
        Var::LevelU64(x) => x.get_at(i) as f64,
        Var::LevelF64(x) => x.get_at(i),
        Var::SizeU32(x) => x.get_at(i) as f64,
        Var::SizeU64(x) => x.get_at(i) as f64,
        Var::SizeF64(x) => x.get_at(i),
        Var::Percentage(x) => x.get_at(i),
        Var::State(x) => x.get_at(i) as f64,
        Var::HighU32(x) => x.level_at(i) as f64,
        Var::HighU64(x) => x.level_at(i) as f64,
        Var::HighF64(x) => x.level_at(i),
        Var::LowU32(x) => x.level_at(i) as f64,
        Var::LowU64(x) => x.level_at(i) as f64,
        Var::LowF64(x) => x.level_at(i),
        Var::GenI32(x) => x.get_at(i) as f64,
        Var::GenU32(x) => x.get_at(i) as f64,
        Var::GenU64(x) => x.get_at(i) as f64,
        Var::GenI64(x) => x.get_at(i) as f64,
        Var::GenF64(x) => x.get_at(i),
    }
}

/// The component's own view of element `i` as an unsigned integer
/// (doubles truncated, TIMER in nanoseconds). 0 for NULL or out of range.
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_get_at(var: *mut c_void, i: usize) -> u64 {
    // SAFETY: caller's contract.
    let Some(v) = (unsafe { var_of(var) }) else {
        return 0;
    };
    if i >= v.count() {
        return 0;
    }
    match v {
        Var::Counter(x) => x.get_at(i),
        Var::AggU32(x) => x.get_at(i) as u64,
        Var::AggU64(x) => x.get_at(i),
        Var::LevelU32(x) => x.get_at(i) as u64,
        Var::LevelU64(x) => x.get_at(i),
        Var::SizeU32(x) => x.get_at(i) as u64,
        Var::SizeU64(x) => x.get_at(i),
        Var::HighU32(x) => x.level_at(i) as u64,
        Var::HighU64(x) => x.level_at(i),
        Var::LowU32(x) => x.level_at(i) as u64,
        Var::LowU64(x) => x.level_at(i),
        Var::GenU32(x) => x.get_at(i) as u64,
        Var::GenU64(x) => x.get_at(i),
        Var::GenI32(x) => x.get_at(i) as u64,
        Var::GenI64(x) => x.get_at(i) as u64,
        Var::State(x) => x.get_at(i) as u64,
        Var::Timer(x) => (x.get_seconds_at(i) * 1e9) as u64,
        // SAFETY: same live handle.
        _ => (unsafe { pvar_get_double_at(var, i) }) as u64,
    }
}

/// Where `pvar_local_cell` points when updates are compiled out
/// (`pvar_compile_out` cfg): writes there are never read.
static DISCARD: AtomicU64 = AtomicU64::new(0);

/// The calling thread's own cell of element `i` of an integer COUNTER,
/// AGGREGATE or LEVEL (NULL for other classes, doubles, NULL handles,
/// `i` out of range, or a thread that is exiting). `pvar.h`'s inline `pvar_local_add/inc/dec` update it
/// with a relaxed load and a relaxed store and no call — what Rust's
/// `Counter::local` does. The pointer is valid only on the calling thread,
/// until that thread exits, and while `var` is not freed. The first call
/// on a thread may allocate the thread's cells.
///
/// # Safety
/// `var` is NULL or a live `pvar_var`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pvar_local_cell(var: *mut c_void, i: usize) -> *mut u64 {
    // SAFETY: caller's contract.
    let Some(h) = (unsafe { deref::<VarHandle>(var) }) else {
        return core::ptr::null_mut();
    };
    // The integer sums only: a caller adds integers to the cell in place.
    let owned = match &h.var {
        Var::Counter(x) if i < x.count() => x.owned_cell_at(i),
        Var::AggU32(x) if i < x.count() => x.owned_cell_at(i),
        Var::AggU64(x) if i < x.count() => x.owned_cell_at(i),
        Var::LevelU32(x) if i < x.count() => x.owned_cell_at(i),
        Var::LevelU64(x) if i < x.count() => x.owned_cell_at(i),
        _ => return core::ptr::null_mut(),
    };
    // An exiting thread (a pthread-key destructor) has no cell of its own
    // any more: NULL, and the caller uses the update functions.
    let Some(cell) = owned.map(|o| o.cell) else {
        return core::ptr::null_mut();
    };
    if crate::pvar::ENABLED {
        cell.as_ptr()
    } else {
        DISCARD.as_ptr()
    }
}
