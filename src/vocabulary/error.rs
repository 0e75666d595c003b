//! Errors: one enum whose variants are the MPI_T return codes, one to one.
//!
//! [`Error`] is what every fallible operation returns. Each variant is one
//! MPI_T error code (MPI 4.1 §15.3.10, values of the MPI 5.0 standard ABI),
//! plus `MPI_ERR_ARG`, the MPI error class `MPI_T_init_thread` returns for
//! a thread level that is not one of the four (as MPICH does; the standard
//! names no MPI_T code for it);
//! the three codes whose cause takes explaining, `MPI_T_ERR_INVALID`,
//! `MPI_T_ERR_INVALID_INDEX` and `MPI_T_ERR_INVALID_NAME`, carry the
//! reason. [`ErrorCode`] is the same
//! list without data (as `std::io::ErrorKind` is to `std::io::Error`), for
//! matching and for the C interface; success is not an error, and is
//! neither. Errors made on async-signal-safe paths carry only `'static`
//! text: they never allocate.

use std::borrow::Cow;
use std::fmt;

/// Why an argument or an index was refused: static text, or (for
/// registrations, which may allocate) a message naming the variable.
pub type Reason = Cow<'static, str>;

/// An error from any pvar operation: one MPI_T return code.
///
/// Two errors are equal when their codes are (the reason is commentary).
#[derive(Debug, Clone, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `MPI_T_ERR_CANNOT_INIT`: the interface is not in the state to be
    /// initialized.
    CannotInit,
    /// `MPI_T_ERR_NOT_ACCESSIBLE`: the requested functionality is not
    /// accessible.
    NotAccessible,
    /// `MPI_T_ERR_NOT_INITIALIZED`: the interface is not initialized.
    NotInitialized,
    /// `MPI_T_ERR_NOT_SUPPORTED`: the requested functionality is not
    /// supported.
    NotSupported,
    /// `MPI_T_ERR_MEMORY`: out of memory (or of per-thread cell space).
    Memory,
    /// `MPI_T_ERR_INVALID`: invalid use of the interface or a bad parameter
    /// value; the reason says which (a refused registration names the
    /// variable and the rule it broke).
    Invalid(Reason),
    /// `MPI_T_ERR_INVALID_INDEX`: the index is invalid, or the variable is
    /// no longer active (its component was unloaded, or the bound object's
    /// instance dropped: the standard asks for "a corresponding return
    /// code", and this is the one whose table entry reads "the variable
    /// index is invalid or has been deleted").
    InvalidIndex(Reason),
    /// `MPI_T_ERR_INVALID_ITEM`: deprecated since MPI 4.0 (an out-of-range
    /// enumeration item is `InvalidIndex`); never returned by pvar.
    InvalidItem,
    /// `MPI_T_ERR_INVALID_SESSION`: not a live session of this registry.
    InvalidSession,
    /// `MPI_T_ERR_INVALID_HANDLE`: not a live handle of this session.
    InvalidHandle,
    /// `MPI_T_ERR_INVALID_NAME`: no variable, category or enumeration has
    /// this name; the reason names what was looked up and, where it can,
    /// why it is not there (a use-site variable not yet registered, a
    /// variable of that name in another class).
    InvalidName(Reason),
    /// `MPI_T_ERR_OUT_OF_HANDLES`: no more handles available.
    OutOfHandles,
    /// `MPI_T_ERR_OUT_OF_SESSIONS`: no more sessions available.
    OutOfSessions,
    /// `MPI_T_ERR_CVAR_SET_NOT_NOW`: the control variable cannot be set
    /// now.
    CvarSetNotNow,
    /// `MPI_T_ERR_CVAR_SET_NEVER`: the control variable can never be set.
    CvarSetNever,
    /// `MPI_T_ERR_PVAR_NO_WRITE`: the variable cannot be written or reset.
    PvarNoWrite,
    /// `MPI_T_ERR_PVAR_NO_STARTSTOP`: the variable cannot be started or
    /// stopped.
    PvarNoStartstop,
    /// `MPI_T_ERR_PVAR_NO_ATOMIC`: the variable cannot be read and reset
    /// atomically.
    PvarNoAtomic,
    /// `MPI_ERR_ARG` (an MPI error class, not an MPI_T code): an argument
    /// of no other kind is invalid. Returned only by `MPI_T_init_thread`
    /// ([`init_thread`](crate::process::init_thread)) for a `required`
    /// thread level that is none of `MPI_THREAD_SINGLE`, `_FUNNELED`,
    /// `_SERIALIZED`, `_MULTIPLE`: the code MPICH returns there.
    Arg,
}

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.code() == other.code()
    }
}

impl Error {
    /// `MPI_T_ERR_INVALID` with a static reason (allocation-free).
    pub const fn invalid(why: &'static str) -> Self {
        Self::Invalid(Cow::Borrowed(why))
    }

    /// `MPI_T_ERR_INVALID` for a refused registration, naming the variable
    /// and the rule.
    pub fn refused(message: String) -> Self {
        Self::Invalid(Cow::Owned(message))
    }

    /// `MPI_T_ERR_INVALID_INDEX`: no variable (or category, enumeration
    /// item) has this index.
    pub const fn no_such_index() -> Self {
        Self::InvalidIndex(Cow::Borrowed("no such index"))
    }

    /// `MPI_T_ERR_INVALID_INDEX`: the variable exists but is no longer
    /// active.
    pub const fn inactive() -> Self {
        Self::InvalidIndex(Cow::Borrowed("the variable is no longer active"))
    }

    /// `MPI_T_ERR_INVALID_NAME` for a lookup of `name` that found
    /// nothing, saying why (the message names the name).
    pub fn no_such_name(message: String) -> Self {
        Self::InvalidName(Cow::Owned(message))
    }

    /// The reason given with `Invalid`, `InvalidIndex` or `InvalidName`,
    /// if any.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::Invalid(r) | Self::InvalidIndex(r) | Self::InvalidName(r) => Some(r),
            _ => None,
        }
    }

    /// The MPI_T return code.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::CannotInit => ErrorCode::CannotInit,
            Self::NotAccessible => ErrorCode::NotAccessible,
            Self::NotInitialized => ErrorCode::NotInitialized,
            Self::NotSupported => ErrorCode::NotSupported,
            Self::Memory => ErrorCode::Memory,
            Self::Invalid(_) => ErrorCode::Invalid,
            Self::InvalidIndex(_) => ErrorCode::InvalidIndex,
            Self::InvalidItem => ErrorCode::InvalidItem,
            Self::InvalidSession => ErrorCode::InvalidSession,
            Self::InvalidHandle => ErrorCode::InvalidHandle,
            Self::InvalidName(_) => ErrorCode::InvalidName,
            Self::OutOfHandles => ErrorCode::OutOfHandles,
            Self::OutOfSessions => ErrorCode::OutOfSessions,
            Self::CvarSetNotNow => ErrorCode::CvarSetNotNow,
            Self::CvarSetNever => ErrorCode::CvarSetNever,
            Self::PvarNoWrite => ErrorCode::PvarNoWrite,
            Self::PvarNoStartstop => ErrorCode::PvarNoStartstop,
            Self::PvarNoAtomic => ErrorCode::PvarNoAtomic,
            Self::Arg => ErrorCode::Arg,
        }
    }
}

impl From<ErrorCode> for Error {
    /// The error of a code, with a generic reason where one is carried.
    fn from(code: ErrorCode) -> Self {
        match code {
            ErrorCode::CannotInit => Self::CannotInit,
            ErrorCode::NotAccessible => Self::NotAccessible,
            ErrorCode::NotInitialized => Self::NotInitialized,
            ErrorCode::NotSupported => Self::NotSupported,
            ErrorCode::Memory => Self::Memory,
            ErrorCode::Invalid => Self::invalid(ErrorCode::Invalid.description()),
            ErrorCode::InvalidIndex => Self::no_such_index(),
            ErrorCode::InvalidItem => Self::InvalidItem,
            ErrorCode::InvalidSession => Self::InvalidSession,
            ErrorCode::InvalidHandle => Self::InvalidHandle,
            ErrorCode::InvalidName => Self::InvalidName(Cow::Borrowed("no such name")),
            ErrorCode::OutOfHandles => Self::OutOfHandles,
            ErrorCode::OutOfSessions => Self::OutOfSessions,
            ErrorCode::CvarSetNotNow => Self::CvarSetNotNow,
            ErrorCode::CvarSetNever => Self::CvarSetNever,
            ErrorCode::PvarNoWrite => Self::PvarNoWrite,
            ErrorCode::PvarNoStartstop => Self::PvarNoStartstop,
            ErrorCode::PvarNoAtomic => Self::PvarNoAtomic,
            ErrorCode::Arg => Self::Arg,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason() {
            Some(why) => write!(f, "{}: {why}", self.code().name()),
            None => write!(f, "{}", self.code()),
        }
    }
}

impl std::error::Error for Error {}

/// The result type of every fallible pvar operation.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// The MPI_T error codes (and `MPI_ERR_ARG`), with their MPI 5.0
/// standard-ABI values: the kind of an [`Error`], without its reason.
/// (`MPI_SUCCESS`, 0, is not an error.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorCode {
    /// `MPI_ERR_ARG` (an MPI error class): `MPI_T_init_thread`'s answer to
    /// a thread level that is not one of the four.
    Arg = 13,
    /// `MPI_T_ERR_CANNOT_INIT`.
    CannotInit = 1001,
    /// `MPI_T_ERR_NOT_ACCESSIBLE`.
    NotAccessible = 1002,
    /// `MPI_T_ERR_NOT_INITIALIZED`.
    NotInitialized = 1003,
    /// `MPI_T_ERR_NOT_SUPPORTED`.
    NotSupported = 1004,
    /// `MPI_T_ERR_MEMORY`.
    Memory = 1005,
    /// `MPI_T_ERR_INVALID`.
    Invalid = 1006,
    /// `MPI_T_ERR_INVALID_INDEX`.
    InvalidIndex = 1007,
    /// `MPI_T_ERR_INVALID_ITEM` (deprecated; never returned).
    InvalidItem = 1008,
    /// `MPI_T_ERR_INVALID_SESSION`.
    InvalidSession = 1009,
    /// `MPI_T_ERR_INVALID_HANDLE`.
    InvalidHandle = 1010,
    /// `MPI_T_ERR_INVALID_NAME`.
    InvalidName = 1011,
    /// `MPI_T_ERR_OUT_OF_HANDLES`.
    OutOfHandles = 1012,
    /// `MPI_T_ERR_OUT_OF_SESSIONS`.
    OutOfSessions = 1013,
    /// `MPI_T_ERR_CVAR_SET_NOT_NOW`.
    CvarSetNotNow = 1014,
    /// `MPI_T_ERR_CVAR_SET_NEVER`.
    CvarSetNever = 1015,
    /// `MPI_T_ERR_PVAR_NO_WRITE`.
    PvarNoWrite = 1016,
    /// `MPI_T_ERR_PVAR_NO_STARTSTOP`.
    PvarNoStartstop = 1017,
    /// `MPI_T_ERR_PVAR_NO_ATOMIC`.
    PvarNoAtomic = 1018,
}

impl ErrorCode {
    /// Every code, in ascending order of value.
    pub const ALL: [ErrorCode; 19] = [
        Self::Arg,
        Self::CannotInit,
        Self::NotAccessible,
        Self::NotInitialized,
        Self::NotSupported,
        Self::Memory,
        Self::Invalid,
        Self::InvalidIndex,
        Self::InvalidItem,
        Self::InvalidSession,
        Self::InvalidHandle,
        Self::InvalidName,
        Self::OutOfHandles,
        Self::OutOfSessions,
        Self::CvarSetNotNow,
        Self::CvarSetNever,
        Self::PvarNoWrite,
        Self::PvarNoStartstop,
        Self::PvarNoAtomic,
    ];

    /// The integer value of the code.
    pub const fn raw(self) -> i32 {
        self as i32
    }

    /// The code with this integer value, if there is one (0, success, is
    /// not a code).
    pub fn from_raw(raw: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.raw() == raw)
    }

    /// The constant's name in the C interface, e.g. `"MPI_T_ERR_INVALID_HANDLE"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::CannotInit => "MPI_T_ERR_CANNOT_INIT",
            Self::NotAccessible => "MPI_T_ERR_NOT_ACCESSIBLE",
            Self::NotInitialized => "MPI_T_ERR_NOT_INITIALIZED",
            Self::NotSupported => "MPI_T_ERR_NOT_SUPPORTED",
            Self::Memory => "MPI_T_ERR_MEMORY",
            Self::Invalid => "MPI_T_ERR_INVALID",
            Self::InvalidIndex => "MPI_T_ERR_INVALID_INDEX",
            Self::InvalidItem => "MPI_T_ERR_INVALID_ITEM",
            Self::InvalidSession => "MPI_T_ERR_INVALID_SESSION",
            Self::InvalidHandle => "MPI_T_ERR_INVALID_HANDLE",
            Self::InvalidName => "MPI_T_ERR_INVALID_NAME",
            Self::OutOfHandles => "MPI_T_ERR_OUT_OF_HANDLES",
            Self::OutOfSessions => "MPI_T_ERR_OUT_OF_SESSIONS",
            Self::CvarSetNotNow => "MPI_T_ERR_CVAR_SET_NOT_NOW",
            Self::CvarSetNever => "MPI_T_ERR_CVAR_SET_NEVER",
            Self::PvarNoWrite => "MPI_T_ERR_PVAR_NO_WRITE",
            Self::PvarNoStartstop => "MPI_T_ERR_PVAR_NO_STARTSTOP",
            Self::PvarNoAtomic => "MPI_T_ERR_PVAR_NO_ATOMIC",
            Self::Arg => "MPI_ERR_ARG",
        }
    }

    /// A readable sentence describing the code (the standard's wording).
    pub const fn description(self) -> &'static str {
        match self {
            Self::CannotInit => "interface not in the state to be initialized",
            Self::NotAccessible => "requested functionality is not accessible",
            Self::NotInitialized => "interface not initialized",
            Self::NotSupported => "requested functionality is not supported",
            Self::Memory => "out of memory",
            Self::Invalid => "invalid use of the interface or bad parameter value",
            Self::InvalidIndex => "the index is invalid or the variable is no longer active",
            Self::InvalidItem => "the item index queried is out of range",
            Self::InvalidSession => "session argument is not a valid session",
            Self::InvalidHandle => "the handle is invalid",
            Self::InvalidName => "the variable or category name is invalid",
            Self::OutOfHandles => "no more handles available",
            Self::OutOfSessions => "no more sessions available",
            Self::CvarSetNotNow => "variable cannot be set at this moment",
            Self::CvarSetNever => "variable cannot be set until end of execution",
            Self::PvarNoWrite => "variable cannot be written or reset",
            Self::PvarNoStartstop => "variable cannot be started or stopped",
            Self::PvarNoAtomic => "variable cannot be read and written atomically",
            Self::Arg => "invalid argument of some other kind",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name(), self.description())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_standard_abi_and_round_trip() {
        assert_eq!(ErrorCode::CannotInit.raw(), 1001);
        assert_eq!(ErrorCode::PvarNoAtomic.raw(), 1018);
        assert_eq!(ErrorCode::Arg.raw(), 13, "MPI_ERR_ARG of the standard ABI");
        assert_eq!(ErrorCode::ALL[0], ErrorCode::Arg);
        for (i, c) in ErrorCode::ALL[1..].iter().enumerate() {
            assert_eq!(c.raw(), 1001 + i as i32);
        }
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_raw(c.raw()), Some(c));
            // Each code is one variant, and back.
            assert_eq!(Error::from(c).code(), c);
        }
        assert_eq!(ErrorCode::from_raw(0), None, "success is not an error");
        assert_eq!(ErrorCode::from_raw(1019), None);
    }

    #[test]
    fn errors_compare_by_code_and_show_their_reason() {
        assert_eq!(Error::inactive(), Error::no_such_index());
        assert_eq!(Error::inactive().code(), ErrorCode::InvalidIndex);
        assert_eq!(Error::refused("x".into()).code(), ErrorCode::Invalid);
        assert!(
            Error::invalid("null buffer")
                .to_string()
                .contains("MPI_T_ERR_INVALID: null buffer")
        );
        assert_ne!(Error::InvalidHandle, Error::InvalidSession);
    }
}
