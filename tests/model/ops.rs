//! The operations a sequence is made of. Raw selector bytes are decoded
//! against the current state by the harness (a variable, session or handle
//! *selector* picks among the ones that exist, were freed, or a made-up
//! key), so every byte string is a meaningful sequence.

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
}

impl VarKind {
    pub const ALL: [VarKind; 17] = [
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
    ];
}

/// Which session key an operation passes.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub struct SRef {
    /// < 232: the n-th session ever created (live or freed); 232..244: a
    /// known key with a wrong generation; 244..: a made-up raw key.
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
