//! The operations a sequence is made of. Raw selector bytes are decoded
//! against the current state by the harness (a variable, session or handle
//! *selector* picks among the ones that exist, were freed, belong to the
//! other registry, or a made-up key), so every byte string is a meaningful
//! sequence.
//!
//! The harness drives two registries; [`Op::Switch`] moves the following
//! operations to the other one. [`Op::Foreign`] applies a key of the other
//! registry to this one, and [`Op::Cycle`] runs a start / update / stop /
//! update / read / write / update / read / reset / update / read script on
//! one handle, interleaved with updates of its variable.

use arbitrary::{Arbitrary, Unstructured};

/// The Rust component types the harness registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    Counter,
    AggU64,
    AggU32,
    AggF64,
    Timer,
    LevelU64,
    LevelF64,
    HighU64,
    HighF64,
    LowU64,
    LowF64,
    State,
    SizeU64,
    SizeF64,
    Percentage,
    /// A COUNTER bound to communicators, per-object count.
    BoundCounter,
    /// An `f64` AGGREGATE bound to communicators, per-object count.
    BoundAggF64,
    /// GENERIC (engine storage, one shared value per element): continuous
    /// by default, a snapshot while stopped when registered not continuous.
    GenU64,
    GenF64,
    GenI32,
    /// Computed by callback (values the harness keeps in atomics): a
    /// HIGHWATERMARK (`u64` levels), a LOWWATERMARK (`f64` levels), a
    /// GENERIC (`MPI_COUNT`) and a COUNTER (a running total). The
    /// watermarks are not continuous by default: snapshot handles.
    CbHighU64,
    CbLowF64,
    CbGeneric,
    CbCounter,
}

impl VarKind {
    pub const ALL: [VarKind; 24] = [
        VarKind::Counter,
        VarKind::AggU64,
        VarKind::AggU32,
        VarKind::AggF64,
        VarKind::Timer,
        VarKind::LevelU64,
        VarKind::LevelF64,
        VarKind::HighU64,
        VarKind::HighF64,
        VarKind::LowU64,
        VarKind::LowF64,
        VarKind::State,
        VarKind::SizeU64,
        VarKind::SizeF64,
        VarKind::Percentage,
        VarKind::BoundCounter,
        VarKind::BoundAggF64,
        VarKind::GenU64,
        VarKind::GenF64,
        VarKind::GenI32,
        VarKind::CbHighU64,
        VarKind::CbLowF64,
        VarKind::CbGeneric,
        VarKind::CbCounter,
    ];

    /// Computed by callback.
    pub fn is_callback(self) -> bool {
        matches!(
            self,
            VarKind::CbHighU64 | VarKind::CbLowF64 | VarKind::CbGeneric | VarKind::CbCounter
        )
    }
}

/// Selector values of [`SRef::sel`] and [`HRef::sel`]: below [`FOREIGN`],
/// the n-th session (handle) of this registry ever created.
pub mod sel {
    /// From here: a key of the *other* registry (`raw % len` over its
    /// sessions or handles).
    pub const FOREIGN: u8 = 216;
    /// From here: a known key with a wrong generation or a neighbouring
    /// slot.
    pub const WRONG_GENERATION: u8 = 232;
    /// From here: a made-up raw key.
    pub const MADE_UP: u8 = 244;
}

/// Which session key an operation passes.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub struct SRef {
    /// < 216: the n-th session of this registry ever created (live or
    /// freed); 216..232: a session key of the other registry; 232..244: a
    /// known key with a wrong generation; 244..: a made-up raw key (see
    /// [`sel`]).
    pub sel: u8,
    pub raw: u64,
}

/// Which handle key an operation passes.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub struct HRef {
    /// As [`SRef::sel`], over all handles ever allocated.
    pub sel: u8,
    pub raw: u64,
}

/// A registration request.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub struct RegOp {
    pub kind: u8,
    pub name: u8,
    /// Element count: `count % 4` (0 is refused).
    pub count: u8,
    pub continuous: Option<bool>,
    pub readonly: Option<bool>,
    pub atomic: Option<bool>,
    /// >= 200: override the datatype (mostly with one the class refuses).
    pub datatype: u8,
}

/// A component-side update of one element.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub struct Upd {
    pub comp: u8,
    pub elem: u8,
    pub how: u8,
    pub amount: u32,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Op {
    Register(RegOp),
    Update(Upd),
    /// The same update from a new thread (its own cells; the thread exits).
    UpdateOnThread(Upd),
    /// Create the instance of bound variable `b` for object `obj % 4` with
    /// `count % 4` elements (0 is refused).
    CreateInstance {
        b: u8,
        obj: u8,
        count: u8,
    },
    DropInstance {
        b: u8,
        obj: u8,
    },
    /// Advance the mocked clock by this many nanoseconds.
    Advance(u16),
    Deactivate(u8),
    SessionCreate,
    SessionFree(SRef),
    /// Variable selector: `sel % (N + 2)` (so out-of-range indices too);
    /// object selector: < 200 a communicator `0x100 + obj % 4`, < 230 no
    /// object, else an object of the wrong kind.
    HandleAlloc(SRef, u8, u8),
    HandleFree(SRef, HRef),
    Start(SRef, HRef),
    Stop(SRef, HRef),
    /// Buffer selector: mostly the handle's count, sometimes shorter.
    Read(SRef, HRef, u8),
    ReadFirst(SRef, HRef),
    Write(SRef, HRef, u8, u32),
    Reset(SRef, HRef),
    ReadReset(SRef, HRef, u8),
    StartAll(SRef),
    StopAll(SRef),
    ResetAll(SRef),
    /// The following operations go to the other registry.
    Switch,
    /// A handle key of the other registry (`h` over its handles), with its
    /// own session there (or, with `own_session`, a session of this
    /// registry), passed to operation `what % 14` of this registry: read,
    /// readreset, write, start, stop, reset, free, read_first; 8 to 12 use
    /// the session key alone: session_free, start_all, stop_all, reset_all,
    /// handle_alloc; 13: the queries and range operations (is_started,
    /// handle_info, and read, write and readreset of an element range).
    /// Must be refused (`INVALID_SESSION`,
    /// or `INVALID_HANDLE` with an own live session) and change nothing in
    /// either registry.
    Foreign {
        what: u8,
        h: HRef,
        own_session: bool,
        arg: u8,
    },
    /// Registers a variable of kind `kind` (name `name`, `count % 3 + 1`
    /// elements, continuous if given, otherwise its class's flags),
    /// creates a session if this registry has none, an instance for object
    /// `0x100 + session % 4` if the kind is bound, and allocates a handle
    /// for the variable of that name and class in session `session`: the
    /// way to a live handle in four operations.
    Setup {
        kind: u8,
        name: u8,
        continuous: Option<bool>,
        session: u8,
        count: u8,
    },
    /// A script on one handle of this registry (`h` over its handles; with
    /// `how & 0x40`, over the live ones of engine watermarks and snapshot
    /// handles), with its own session, updating the handle's variable in
    /// between: `[start] upd stop upd read write upd read reset upd read`,
    /// varied by `how` (start and stop twice, readreset instead of reset,
    /// a second start at the end, the written values).
    Cycle {
        h: HRef,
        how: u8,
        amounts: [u32; 4],
    },
}

/// Decodes a whole byte string into operations (at most `max`).
pub fn decode(data: &[u8], max: usize) -> Vec<Op> {
    let mut u = Unstructured::new(data);
    let mut ops = Vec::new();
    while ops.len() < max && !u.is_empty() {
        match Op::arbitrary(&mut u) {
            Ok(op) => ops.push(op),
            Err(_) => break,
        }
    }
    ops
}
