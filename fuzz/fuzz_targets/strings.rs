//! The string convention (MPI 4.1 §15.3.3) on every C getter that returns
//! strings — pvar, cvar and category `get_info`, `enum_get_info`,
//! `enum_get_item` — with random indices and buffer lengths (negative,
//! zero, one, short, exact, long), NULL buffers and NULL length pointers.
//!
//! For a string `s` and length `n`: NULL length pointer → nothing written;
//! NULL buffer or `n <= 0` → only `*len = strlen(s) + 1`; otherwise the
//! first `min(strlen(s), n − 1)` bytes and a NUL, nothing past `n` bytes,
//! and `*len = strlen(s) + 1`. `s` itself is taken from a call with a large
//! buffer and must be the same every time (and non-empty for names).
#![no_main]

use core::ffi::{c_char, c_int};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

mod c_common;
use c_common::*;

#[derive(Debug, Clone, Copy, Arbitrary)]
enum Getter {
    Pvar,
    Cvar,
    Category,
    Enum,
    EnumItem(i16),
}

#[derive(Debug, Clone, Copy, Arbitrary)]
struct Arg {
    /// 0: NULL buffer; 1: NULL length pointer; otherwise a buffer.
    mode: u8,
    len: i16,
}

#[derive(Debug, Clone, Copy, Arbitrary)]
struct Call {
    getter: Getter,
    index: i16,
    name: Arg,
    desc: Arg,
}

const BIG: usize = 8192;
const CANARY: u8 = 0xA5;
const UNTOUCHED: c_int = -7777;

/// One `(buf, len)` argument pair with canaries, as the caller sets it up.
struct Out {
    buf: Vec<u8>,
    cap: usize,
    len: c_int,
    /// The length the caller passed.
    n_in: c_int,
    null_buf: bool,
    null_len: bool,
}

impl Out {
    fn new(a: Arg) -> Out {
        let null_buf = a.mode == 0;
        let null_len = a.mode == 1;
        // Lengths mostly small, sometimes negative or large.
        let len = match a.len.rem_euclid(8) {
            0 => c_int::from(a.len % 8),
            1 => 0,
            2 => 1,
            3 | 4 => c_int::from(a.len.rem_euclid(16)),
            _ => c_int::from(a.len.rem_euclid(400)),
        };
        let cap = len.max(0) as usize;
        Out {
            buf: vec![CANARY; cap + 16],
            cap,
            len: if null_len { UNTOUCHED } else { len },
            n_in: len,
            null_buf,
            null_len,
        }
    }
    fn buf_ptr(&mut self) -> *mut c_char {
        if self.null_buf {
            core::ptr::null_mut()
        } else {
            self.buf.as_mut_ptr().cast()
        }
    }
    fn len_ptr(&mut self) -> *mut c_int {
        if self.null_len {
            core::ptr::null_mut()
        } else {
            &mut self.len
        }
    }

    /// Checks the convention against the full string `s`.
    fn check(&self, what: &str, s: &[u8]) {
        let n = self.n_in;
        if self.null_len {
            assert!(
                self.buf.iter().all(|b| *b == CANARY),
                "{what}: NULL len, buffer written"
            );
            return;
        }
        assert_eq!(
            self.len as usize,
            s.len() + 1,
            "{what}: *len must be strlen + 1"
        );
        if self.null_buf || n <= 0 {
            assert!(
                self.buf.iter().all(|b| *b == CANARY),
                "{what}: n = {n}: buffer written"
            );
            return;
        }
        let k = s.len().min(n as usize - 1);
        assert_eq!(&self.buf[..k], &s[..k], "{what}: n = {n}: wrong prefix");
        assert_eq!(self.buf[k], 0, "{what}: n = {n}: no NUL after {k} bytes");
        assert!(
            self.buf[self.cap..].iter().all(|b| *b == CANARY),
            "{what}: n = {n}: wrote past the buffer"
        );
    }
}

/// A large output buffer for the reference string.
fn reference(
    f: impl FnOnce(*mut c_char, *mut c_int, *mut c_char, *mut c_int) -> c_int,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut name = vec![0u8; BIG];
    let mut desc = vec![0u8; BIG];
    let (mut nl, mut dl) = (BIG as c_int, BIG as c_int);
    let rc = f(
        name.as_mut_ptr().cast(),
        &mut nl,
        desc.as_mut_ptr().cast(),
        &mut dl,
    );
    check_code("reference", rc);
    if rc != SUCCESS {
        return None;
    }
    let cut = |b: &[u8], l: c_int| {
        let z = b.iter().position(|c| *c == 0).expect("NUL-terminated");
        assert_eq!(z + 1, l as usize, "reference: *len is strlen + 1");
        b[..z].to_vec()
    };
    Some((cut(&name, nl), cut(&desc, dl)))
}

/// A NULL OUT pointer of any type.
fn nul<T>() -> *mut T {
    core::ptr::null_mut()
}

fn enum_handle(index: i16) -> Ptr {
    // `MPI_T_enum` values are an enumeration index + 1; made-up ones too.
    (index.rem_euclid(6) as usize) as Ptr
}

fn run(calls: &[Call]) {
    let _ = vars();
    for c in calls {
        let index = if c.index >= 0 {
            c_int::from(c.index % 64)
        } else {
            c_int::from(c.index)
        };
        let mut name = Out::new(c.name);
        let mut desc = Out::new(c.desc);
        let (np, nl, dp, dl) = (
            name.buf_ptr(),
            name.len_ptr(),
            desc.buf_ptr(),
            desc.len_ptr(),
        );
        // SAFETY: every buffer is NULL or holds at least the length passed
        // with it; other OUT pointers are NULL (ignored).
        // `MPI_T_enum_get_item`'s `value` is a required OUT argument.
        let mut value: c_int = 0;
        let (rc, reference, has_desc) = unsafe {
            match c.getter {
                Getter::Pvar => (
                    MPI_T_pvar_get_info(
                        index,
                        np,
                        nl,
                        nul(),
                        nul(),
                        nul(),
                        nul(),
                        dp,
                        dl,
                        nul(),
                        nul(),
                        nul(),
                        nul(),
                    ),
                    reference(|a, b, x, y| {
                        MPI_T_pvar_get_info(
                            index,
                            a,
                            b,
                            nul(),
                            nul(),
                            nul(),
                            nul(),
                            x,
                            y,
                            nul(),
                            nul(),
                            nul(),
                            nul(),
                        )
                    }),
                    true,
                ),
                Getter::Cvar => (
                    MPI_T_cvar_get_info(index, np, nl, nul(), nul(), nul(), dp, dl, nul(), nul()),
                    reference(|a, b, x, y| {
                        MPI_T_cvar_get_info(index, a, b, nul(), nul(), nul(), x, y, nul(), nul())
                    }),
                    true,
                ),
                Getter::Category => (
                    MPI_T_category_get_info(index, np, nl, dp, dl, nul(), nul(), nul()),
                    reference(|a, b, x, y| {
                        MPI_T_category_get_info(index, a, b, x, y, nul(), nul(), nul())
                    }),
                    true,
                ),
                Getter::Enum => (
                    MPI_T_enum_get_info(enum_handle(c.index), nul(), np, nl),
                    reference(|a, b, _, y| {
                        *y = 1;
                        MPI_T_enum_get_info(enum_handle(c.index), nul(), a, b)
                    }),
                    false,
                ),
                Getter::EnumItem(item) => (
                    MPI_T_enum_get_item(
                        enum_handle(c.index),
                        c_int::from(item % 8),
                        &mut value,
                        np,
                        nl,
                    ),
                    reference(|a, b, _, y| {
                        *y = 1;
                        let mut value: c_int = 0;
                        MPI_T_enum_get_item(
                            enum_handle(c.index),
                            c_int::from(item % 8),
                            &mut value,
                            a,
                            b,
                        )
                    }),
                    false,
                ),
            }
        };
        check_code("getter", rc);
        let Some((rname, rdesc)) = reference else {
            assert_ne!(rc, SUCCESS, "{c:?}: succeeded only with small buffers");
            continue;
        };
        assert_eq!(rc, SUCCESS, "{c:?}: failed only with small buffers");
        if std::env::var_os("PVAR_FUZZ_VERBOSE").is_some() {
            eprintln!(
                "{c:?}: name {:?} (n = {}), desc {:?} (n = {})",
                String::from_utf8_lossy(&rname),
                name.n_in,
                String::from_utf8_lossy(&rdesc),
                desc.n_in
            );
        }
        if matches!(c.getter, Getter::Pvar | Getter::Cvar | Getter::Category) {
            assert!(
                !rname.is_empty(),
                "{c:?}: a name has at least one character"
            );
        }
        name.check(&format!("{c:?} name"), &rname);
        if has_desc {
            desc.check(&format!("{c:?} desc"), &rdesc);
        }
    }
}

fuzz_target!(|data: &[u8]| run(&decode_all::<Call>(data, 64)));
