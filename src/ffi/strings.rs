//! The string convention of MPI_T (MPI 3.1 §14.3.3), in one helper that
//! every function returning a string uses, and C string arguments.

use core::ffi::{CStr, c_char, c_int};

use super::boundary::{CResult, ERR_INVALID};

/// Returns `s` through a `(buf, len)` pair as §14.3.3 requires:
///
/// - `len` NULL: the buffer is ignored and nothing is returned;
/// - `buf` NULL or `*len <= 0`: only `*len = strlen(s) + 1`;
/// - otherwise at most `*len − 1` bytes of `s` and a NUL are written to
///   `buf`, and `*len = strlen(s) + 1` (the full length plus one, also when
///   the string was truncated).
///
/// Allocation-free.
///
/// # Safety
/// `len` is NULL or valid for reads and writes of an `int`; if `len` is not
/// NULL and `*len > 0`, `buf` is NULL or valid for writes of `*len` bytes.
pub(crate) unsafe fn put_string(s: &str, buf: *mut c_char, len: *mut c_int) {
    // SAFETY: `len` is NULL or valid (contract); `out` checks NULL and
    // alignment.
    let Some(len) = (unsafe { super::boundary::out(len) }) else {
        return;
    };
    let n = *len;
    if !buf.is_null() && n > 0 {
        let k = s.len().min(n as usize - 1);
        // SAFETY: `buf` is valid for `n` bytes (contract) and `k + 1 <= n`;
        // `s` is valid for `k <= s.len()` bytes; the regions cannot overlap
        // (`s` is engine memory the caller never owns).
        unsafe {
            core::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), k);
            *buf.add(k) = 0;
        }
    }
    *len = super::boundary::to_int(s.len().saturating_add(1));
}

/// A NUL-terminated C string argument as `&str`: `MPI_T_ERR_INVALID` if
/// NULL; a name that is not UTF-8 cannot match any variable, so it is
/// `not_utf8`.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, not_utf8: c_int) -> CResult<&'a str> {
    if p.is_null() {
        return Err(ERR_INVALID);
    }
    // SAFETY: non-NULL and NUL-terminated (contract).
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str().map_err(|_| not_utf8)
}

/// An optional C string argument (NULL → `None`); non-UTF-8 → INVALID.
///
/// # Safety
/// As [`arg_str`].
pub(crate) unsafe fn opt_str<'a>(p: *const c_char) -> CResult<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { arg_str(p, ERR_INVALID) }.map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(s: &str, cap: Option<usize>, len_in: c_int) -> (Vec<u8>, c_int) {
        let mut buf = vec![0x55u8; 16];
        let mut len = len_in;
        let p = match cap {
            Some(_) => buf.as_mut_ptr().cast::<c_char>(),
            None => core::ptr::null_mut(),
        };
        // SAFETY: `buf` has 16 bytes and every `len_in` used is <= 16.
        unsafe { put_string(s, p, &mut len) };
        (buf, len)
    }

    #[test]
    fn follows_the_convention() {
        let (b, l) = call("hello", Some(16), 16);
        assert_eq!((&b[..6], l), (&b"hello\0"[..], 6));
        let (b, l) = call("hello", Some(16), 3);
        assert_eq!(
            (&b[..4], l),
            (&b"he\0\x55"[..], 6),
            "truncated, full length"
        );
        let (b, l) = call("hello", Some(16), 1);
        assert_eq!((b[0], l), (0, 6));
        let (b, l) = call("hello", Some(16), 0);
        assert_eq!((b[0], l), (0x55, 6), "zero length: only the length");
        let (_, l) = call("hello", None, 16);
        assert_eq!(l, 6, "NULL buffer: only the length");
        let (b, l) = call("", Some(16), 16);
        assert_eq!((b[0], l), (0, 1), "no description: NUL and 1");
        let mut b = [0x55u8; 4];
        // SAFETY: NULL length pointer: nothing is touched.
        unsafe { put_string("x", b.as_mut_ptr().cast(), core::ptr::null_mut()) };
        assert_eq!(b, [0x55; 4]);
    }
}
