//! Errors, each mapped to the MPI_T return code the standard names for it.
//!
//! Every fallible operation returns [`Error`]; [`Error::code`] gives the
//! [`ErrorCode`] (with the MPI 5.0 standard-ABI value) that the C interface
//! returns. Errors produced on async-signal-safe paths never allocate: only
//! registration errors carry an owned message.

use core::fmt;

/// The MPI_T return codes, with their MPI 5.0 standard-ABI values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum ErrorCode {
    /// `MPI_SUCCESS`: the call completed successfully.
    Success = 0,
    /// `MPI_T_ERR_CANNOT_INIT`: interface not in the state to be initialized.
    CannotInit = 1001,
    /// `MPI_T_ERR_NOT_ACCESSIBLE`: requested functionality not accessible.
    NotAccessible = 1002,
    /// `MPI_T_ERR_NOT_INITIALIZED`: interface not initialized.
    NotInitialized = 1003,
    /// `MPI_T_ERR_NOT_SUPPORTED`: requested functionality not supported.
    NotSupported = 1004,
    /// `MPI_T_ERR_MEMORY`: out of memory.
    Memory = 1005,
    /// `MPI_T_ERR_INVALID`: invalid use of the interface or bad parameter value.
    Invalid = 1006,
    /// `MPI_T_ERR_INVALID_INDEX`: the index is invalid, or the variable is
    /// no longer active.
    InvalidIndex = 1007,
    /// `MPI_T_ERR_INVALID_ITEM`: deprecated since MPI 4.0 (out-of-range
    /// enumeration items return `InvalidIndex`); never returned by pvar.
    InvalidItem = 1008,
    /// `MPI_T_ERR_INVALID_SESSION`: session argument is not a valid session.
    InvalidSession = 1009,
    /// `MPI_T_ERR_INVALID_HANDLE`: the handle is invalid.
    InvalidHandle = 1010,
    /// `MPI_T_ERR_INVALID_NAME`: the variable or category name is invalid.
    InvalidName = 1011,
    /// `MPI_T_ERR_OUT_OF_HANDLES`: no more handles available.
    OutOfHandles = 1012,
    /// `MPI_T_ERR_OUT_OF_SESSIONS`: no more sessions available.
    OutOfSessions = 1013,
    /// `MPI_T_ERR_CVAR_SET_NOT_NOW`: the control variable cannot be set now.
    CvarSetNotNow = 1014,
    /// `MPI_T_ERR_CVAR_SET_NEVER`: the control variable can never be set.
    CvarSetNever = 1015,
    /// `MPI_T_ERR_PVAR_NO_WRITE`: the variable cannot be written or reset.
    PvarNoWrite = 1016,
    /// `MPI_T_ERR_PVAR_NO_STARTSTOP`: the variable cannot be started or stopped.
    PvarNoStartstop = 1017,
    /// `MPI_T_ERR_PVAR_NO_ATOMIC`: the variable cannot be read and reset atomically.
    PvarNoAtomic = 1018,
}

impl ErrorCode {
    /// Every code, in ascending order of value.
    pub const ALL: [ErrorCode; 19] = [
        Self::Success,
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

    /// The code with this integer value, if there is one.
    pub fn from_raw(raw: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.raw() == raw)
    }

    /// The constant's name in the C interface, e.g. `"MPI_T_ERR_INVALID_HANDLE"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Success => "MPI_SUCCESS",
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
        }
    }

    /// A readable sentence describing the code (the standard's wording).
    pub const fn description(self) -> &'static str {
        match self {
            Self::Success => "call completed successfully",
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
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name(), self.description())
    }
}

/// An error from any pvar operation.
///
/// Most variants correspond one to one to an MPI_T return code; the others
/// say more about the cause and map to the code the standard names for it
/// (see [`Error::code`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// An error fully described by its MPI_T return code.
    Code(ErrorCode),
    /// A bad argument; the message says which (`MPI_T_ERR_INVALID`).
    Invalid(&'static str),
    /// The variable exists but is no longer active (its component was
    /// unloaded, or the bound object instance was dropped). The standard asks
    /// for "a corresponding return code": `MPI_T_ERR_INVALID_INDEX`, whose
    /// table entry reads "the variable index is invalid or has been deleted".
    Inactive,
    /// A registration was refused (`MPI_T_ERR_INVALID`); the message names
    /// the variable and the rule it broke.
    Registration(String),
}

impl Error {
    /// The MPI_T return code for this error.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Code(c) => *c,
            Self::Invalid(_) | Self::Registration(_) => ErrorCode::Invalid,
            Self::Inactive => ErrorCode::InvalidIndex,
        }
    }

    pub(crate) const fn invalid_index() -> Self {
        Self::Code(ErrorCode::InvalidIndex)
    }
    pub(crate) const fn invalid_handle() -> Self {
        Self::Code(ErrorCode::InvalidHandle)
    }
    pub(crate) const fn invalid_session() -> Self {
        Self::Code(ErrorCode::InvalidSession)
    }
}

impl From<ErrorCode> for Error {
    fn from(code: ErrorCode) -> Self {
        Self::Code(code)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Code(c) => write!(f, "{c}"),
            Self::Invalid(why) => write!(f, "{}: {why}", ErrorCode::Invalid.name()),
            Self::Inactive => write!(
                f,
                "{}: the variable is no longer active",
                ErrorCode::InvalidIndex.name()
            ),
            Self::Registration(msg) => {
                write!(
                    f,
                    "{}: registration refused: {msg}",
                    ErrorCode::Invalid.name()
                )
            }
        }
    }
}

impl std::error::Error for Error {}

/// The result type of every fallible pvar operation.
pub type Result<T, E = Error> = core::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_standard_abi_and_round_trip() {
        assert_eq!(ErrorCode::Success.raw(), 0);
        assert_eq!(ErrorCode::CannotInit.raw(), 1001);
        assert_eq!(ErrorCode::PvarNoAtomic.raw(), 1018);
        for (i, c) in ErrorCode::ALL.iter().enumerate().skip(1) {
            assert_eq!(c.raw(), 1000 + i as i32);
            assert_eq!(ErrorCode::from_raw(c.raw()), Some(*c));
        }
        assert_eq!(ErrorCode::from_raw(1019), None);
    }

    #[test]
    fn errors_map_to_codes() {
        assert_eq!(Error::Inactive.code(), ErrorCode::InvalidIndex);
        assert_eq!(Error::Registration("x".into()).code(), ErrorCode::Invalid);
        assert!(
            Error::Invalid("null buffer")
                .to_string()
                .contains("null buffer")
        );
    }
}
