//! The enumerated kinds of the MPI_T interface: performance-variable
//! classes, verbosity levels, object binding, cvar scope and thread levels.
//!
//! Each carries its MPI 5.0 standard-ABI value ([`PvarClass::raw`] etc.) so
//! the C interface can pass them through unchanged.

abi_enum! {
    /// The class of a performance variable (MPI 4.1 §15.3.7): its basic
    /// semantics, allowed datatypes and starting value.
    PvarClass {
        /// A set of discrete states (`MPI_INT`, optionally an enumeration).
        State = 1, "MPI_T_PVAR_CLASS_STATE";
        /// Utilisation level of a resource.
        Level = 2, "MPI_T_PVAR_CLASS_LEVEL";
        /// Fixed size of a resource.
        Size = 3, "MPI_T_PVAR_CLASS_SIZE";
        /// Percentage utilisation, a double in [0, 1].
        Percentage = 4, "MPI_T_PVAR_CLASS_PERCENTAGE";
        /// Highest level since start or reset.
        HighWatermark = 5, "MPI_T_PVAR_CLASS_HIGHWATERMARK";
        /// Lowest level since start or reset.
        LowWatermark = 6, "MPI_T_PVAR_CLASS_LOWWATERMARK";
        /// Number of occurrences of an event; starts at 0.
        Counter = 7, "MPI_T_PVAR_CLASS_COUNTER";
        /// Sum of arbitrary non-negative amounts; starts at 0.
        Aggregate = 8, "MPI_T_PVAR_CLASS_AGGREGATE";
        /// Aggregated time; starts at 0.
        Timer = 9, "MPI_T_PVAR_CLASS_TIMER";
        /// Anything else; implementation-defined semantics.
        Generic = 10, "MPI_T_PVAR_CLASS_GENERIC";
    }
}

impl PvarClass {
    /// The class without the C constant's prefix: `COUNTER` for
    /// `MPI_T_PVAR_CLASS_COUNTER`, as tables and reports show it.
    ///
    /// ```
    /// assert_eq!(pvar::PvarClass::HighWatermark.short_name(), "HIGHWATERMARK");
    /// ```
    pub fn short_name(self) -> &'static str {
        let n = self.c_name();
        n.strip_prefix("MPI_T_PVAR_CLASS_").unwrap_or(n)
    }

    /// COUNTER, AGGREGATE and TIMER: values accumulate with `+`, and a
    /// handle keeps `accum / offset` state.
    pub const fn is_sum(self) -> bool {
        matches!(self, Self::Counter | Self::Aggregate | Self::Timer)
    }

    /// HIGHWATERMARK and LOWWATERMARK: a handle tracks max/min since start.
    pub const fn is_watermark(self) -> bool {
        matches!(self, Self::HighWatermark | Self::LowWatermark)
    }

    /// STATE, LEVEL, SIZE, PERCENTAGE: no history; every session reads the
    /// current value.
    pub const fn is_memoryless(self) -> bool {
        matches!(
            self,
            Self::State | Self::Level | Self::Size | Self::Percentage
        )
    }

    /// Whether values of the class may overflow their datatype: COUNTER,
    /// AGGREGATE and TIMER ("variables of this class can overflow"), and
    /// GENERIC (the standard promises nothing). For STATE, LEVEL, SIZE,
    /// PERCENTAGE and the watermarks the standard says the implementation
    /// "must ensure that variables of this class cannot overflow".
    ///
    /// What a tool reads of an `MPI_UNSIGNED` (32-bit) variable whose
    /// 64-bit value is past `u32::MAX` follows from it: a class that may
    /// overflow wraps (a tool that takes differences of successive reads
    /// gets them right modulo 2^32); one that may not saturates at
    /// `u32::MAX` (a level of at least 4294967295, never a small wrong
    /// one), and reads the exact value again once it is back in range.
    pub const fn can_overflow(self) -> bool {
        matches!(
            self,
            Self::Counter | Self::Aggregate | Self::Timer | Self::Generic
        )
    }
}

abi_enum! {
    /// Verbosity level: intended audience and level of detail (Table 14.1).
    /// Ordered: `UserBasic < UserDetail < … < MpidevAll`.
    Verbosity {
        /// Basic information of interest to users.
        UserBasic = 0x09, "MPI_T_VERBOSITY_USER_BASIC";
        /// Detailed information of interest to users.
        UserDetail = 0x0a, "MPI_T_VERBOSITY_USER_DETAIL";
        /// All remaining information of interest to users.
        UserAll = 0x0c, "MPI_T_VERBOSITY_USER_ALL";
        /// Basic information required for tuning.
        TunerBasic = 0x11, "MPI_T_VERBOSITY_TUNER_BASIC";
        /// Detailed information required for tuning.
        TunerDetail = 0x12, "MPI_T_VERBOSITY_TUNER_DETAIL";
        /// All remaining information required for tuning.
        TunerAll = 0x14, "MPI_T_VERBOSITY_TUNER_ALL";
        /// Basic information for implementors.
        MpidevBasic = 0x21, "MPI_T_VERBOSITY_MPIDEV_BASIC";
        /// Detailed information for implementors.
        MpidevDetail = 0x22, "MPI_T_VERBOSITY_MPIDEV_DETAIL";
        /// All remaining information for implementors.
        MpidevAll = 0x24, "MPI_T_VERBOSITY_MPIDEV_ALL";
    }
}

abi_enum! {
    /// The kind of object a variable is bound to (Table 14.2).
    BindKind {
        /// Applies to the whole process.
        NoObject = 1, "MPI_T_BIND_NO_OBJECT";
        /// Communicators.
        Comm = 2, "MPI_T_BIND_MPI_COMM";
        /// Datatypes.
        Datatype = 3, "MPI_T_BIND_MPI_DATATYPE";
        /// Error handlers.
        Errhandler = 4, "MPI_T_BIND_MPI_ERRHANDLER";
        /// File handles.
        File = 5, "MPI_T_BIND_MPI_FILE";
        /// Groups.
        Group = 6, "MPI_T_BIND_MPI_GROUP";
        /// Reduction operators.
        Op = 7, "MPI_T_BIND_MPI_OP";
        /// Requests.
        Request = 8, "MPI_T_BIND_MPI_REQUEST";
        /// One-sided windows.
        Win = 9, "MPI_T_BIND_MPI_WIN";
        /// Message objects.
        Message = 10, "MPI_T_BIND_MPI_MESSAGE";
        /// Info objects.
        Info = 11, "MPI_T_BIND_MPI_INFO";
        /// Sessions (MPI 4).
        Session = 12, "MPI_T_BIND_MPI_SESSION";
    }
}

abi_enum! {
    /// The scope of a control variable: where and when it may be changed.
    Scope {
        /// Read-only, cannot be changed.
        Constant = 1, "MPI_T_SCOPE_CONSTANT";
        /// Read-only, may change over time.
        Readonly = 2, "MPI_T_SCOPE_READONLY";
        /// May be written, local to the process.
        Local = 3, "MPI_T_SCOPE_LOCAL";
        /// Must be set consistently within a group.
        Group = 4, "MPI_T_SCOPE_GROUP";
        /// Must be set to the same value within a group.
        GroupEq = 5, "MPI_T_SCOPE_GROUP_EQ";
        /// Must be set consistently across connected processes.
        All = 6, "MPI_T_SCOPE_ALL";
        /// Must be set to the same value across connected processes.
        AllEq = 7, "MPI_T_SCOPE_ALL_EQ";
    }
}

impl Scope {
    /// CONSTANT and READONLY variables can never be written by a tool.
    pub const fn is_read_only(self) -> bool {
        matches!(self, Self::Constant | Self::Readonly)
    }
}

abi_enum! {
    /// Callback safety (MPI 4.1 §15.3.8, `MPI_T_cb_safety`): what a callback
    /// can cope with when a tool registers it, and what a point of delivery
    /// demands when the engine calls it. Ordered: each level includes the
    /// guarantees of the ones below it (`None < MpiRestricted < ThreadSafe <
    /// AsyncSignalSafe`), and a callback registered at level `l` may be
    /// called wherever the requirement is at most `l`.
    CbSafety {
        /// No requirement: the callback may do anything, including call MPI.
        None = 0x00, "MPI_T_CB_REQUIRE_NONE";
        /// The callback calls only the MPI functions allowed in restricted
        /// contexts (the MPI_T query and event-access functions).
        MpiRestricted = 0x03, "MPI_T_CB_REQUIRE_MPI_RESTRICTED";
        /// As `MpiRestricted`, and it may run on several threads at once.
        ThreadSafe = 0x0F, "MPI_T_CB_REQUIRE_THREAD_SAFE";
        /// As `ThreadSafe`, and it may run in a signal handler: only
        /// async-signal-safe calls.
        AsyncSignalSafe = 0x3F, "MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE";
    }
}

impl CbSafety {
    /// 0 for `None` … 3 for `AsyncSignalSafe`: the slot of a callback
    /// registered at this level.
    pub const fn rank(self) -> usize {
        match self {
            Self::None => 0,
            Self::MpiRestricted => 1,
            Self::ThreadSafe => 2,
            Self::AsyncSignalSafe => 3,
        }
    }
}

abi_enum! {
    /// Whether the timestamps of an event source are ordered in time across
    /// its events (`MPI_T_source_order`).
    SourceOrder {
        /// Timestamps taken later are never smaller.
        Ordered = 1, "MPI_T_SOURCE_ORDERED";
        /// No order between timestamps is guaranteed.
        Unordered = 2, "MPI_T_SOURCE_UNORDERED";
    }
}

/// `MPI_THREAD_SINGLE` (MPI 5.0 standard ABI).
pub const THREAD_SINGLE: i32 = 0;
/// `MPI_THREAD_FUNNELED`.
pub const THREAD_FUNNELED: i32 = 1024;
/// `MPI_THREAD_SERIALIZED`.
pub const THREAD_SERIALIZED: i32 = 2048;
/// `MPI_THREAD_MULTIPLE`. The engine supports it whatever level a tool
/// requires, and provides the level required (see
/// [`init_thread`](crate::process::init_thread)).
pub const THREAD_MULTIPLE: i32 = 4096;

/// An MPI object a variable handle can be bound to: its kind and the value
/// of its handle (e.g. a communicator's handle value).
///
/// The C interface receives "the address of a variable holding the object's
/// handle"; it reads the handle value there and builds an `ObjectRef`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    /// What kind of object.
    pub kind: BindKind,
    /// The object's handle value, as the component registered it.
    pub handle: u64,
}

impl ObjectRef {
    /// An object of `kind` with handle value `handle`.
    pub const fn new(kind: BindKind, handle: u64) -> Self {
        Self { kind, handle }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_values_match_the_standard() {
        assert_eq!(PvarClass::State.raw(), 1);
        assert_eq!(PvarClass::Generic.raw(), 10);
        assert_eq!(Verbosity::MpidevAll.raw(), 0x24);
        assert_eq!(CbSafety::MpiRestricted.raw(), 0x03);
        assert_eq!(CbSafety::AsyncSignalSafe.raw(), 0x3F);
        assert!(CbSafety::ThreadSafe < CbSafety::AsyncSignalSafe);
        assert_eq!(SourceOrder::Unordered.raw(), 2);
        assert_eq!(BindKind::Session.raw(), 12);
        assert_eq!(Scope::AllEq.raw(), 7);
        for c in PvarClass::ALL {
            assert_eq!(PvarClass::from_raw(c.raw()), Some(*c));
        }
        assert_eq!(PvarClass::from_raw(11), None);
        assert!(Verbosity::UserBasic < Verbosity::TunerBasic);
    }
}
