//! The terminal of `pvar top`'s interactive mode: raw input through libc
//! termios (no line editing, no echo, and no signal from Ctrl-C — it
//! arrives as a byte), the alternate screen, frames drawn in place, keys
//! decoded from the bytes a terminal sends, and the window size.
//!
//! The terminal is always given back as it was: when the [`Terminal`] is
//! dropped (also while unwinding), by a panic hook that restores it
//! *before* the panic message is printed (else the message would go to
//! the alternate screen and vanish), and on `SIGTERM`, `SIGHUP` and
//! `SIGINT`, which only set a flag the main loop reads ([`quit_requested`]);
//! their handlers are installed without `SA_RESTART`, so a wait for input
//! returns at once.

use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A key (or key sequence) read from the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A character typed.
    Char(char),
    /// Ctrl-C.
    CtrlC,
    /// Return / Enter.
    Enter,
    /// Escape on its own.
    Esc,
    /// Backspace (DEL or ^H).
    Backspace,
    /// Arrow up / down.
    Up,
    /// See [`Key::Up`].
    Down,
    /// Page up / down.
    PageUp,
    /// See [`Key::PageUp`].
    PageDown,
    /// Home / End.
    Home,
    /// See [`Key::Home`].
    End,
}

/// What to put back on the terminal: the input's file descriptor and its
/// settings before raw mode. Taken (and so used once) by [`restore`].
struct Saved {
    fd: Option<RawFd>,
    termios: Option<libc::termios>,
}

static SAVED: Mutex<Option<Saved>> = Mutex::new(None);
static QUIT: AtomicBool = AtomicBool::new(false);
static RESIZED: AtomicBool = AtomicBool::new(false);
static HOOK: std::sync::Once = std::sync::Once::new();

/// Leaves the alternate screen, shows the cursor and puts back the input
/// settings, if the terminal was taken; otherwise does nothing (so it may
/// run more than once: from `Drop`, from the panic hook).
pub fn restore() {
    let saved = SAVED.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(s) = saved {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"\x1b[?25h\x1b[?1049l");
        let _ = out.flush();
        if let (Some(fd), Some(t)) = (s.fd, s.termios) {
            // SAFETY: `t` is the termios tcgetattr filled for this fd,
            // which is still open (the Terminal owning it restores before
            // closing it).
            unsafe { libc::tcsetattr(fd, libc::TCSANOW, &t) };
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe: stores to atomics only.
    if sig == libc::SIGWINCH {
        RESIZED.store(true, Ordering::Relaxed);
    } else {
        QUIT.store(true, Ordering::Relaxed);
    }
}

/// Whether a `SIGTERM`, `SIGHUP` or `SIGINT` asked to stop.
pub fn quit_requested() -> bool {
    QUIT.load(Ordering::Relaxed)
}

/// Whether the window changed size since the last call.
pub fn take_resized() -> bool {
    RESIZED.swap(false, Ordering::Relaxed)
}

fn install_handlers() {
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGWINCH] {
        // SAFETY: a zeroed sigaction is valid (empty mask, no flags); the
        // handler only stores to atomics, which is async-signal-safe. No
        // SA_RESTART: a poll in progress returns EINTR, so the loop sees
        // the flag at once.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Columns and rows of the terminal on standard output (80 × 24 if
/// unknown).
pub fn size() -> (usize, usize) {
    // SAFETY: `winsize` is plain integers, for which all-zero is valid.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes a `winsize` into `ws` and nothing else.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    let cols = if ok && ws.ws_col > 0 {
        usize::from(ws.ws_col)
    } else {
        80
    };
    let rows = if ok && ws.ws_row > 0 {
        usize::from(ws.ws_row)
    } else {
        24
    };
    (cols, rows)
}

/// The terminal in full-screen mode with raw input; dropping it restores
/// the terminal.
pub struct Terminal {
    /// Where keys come from: standard input if it is a terminal, else
    /// `/dev/tty`, else none (then no keys; signals still quit).
    input: Option<Input>,
}

enum Input {
    Stdin,
    Tty(std::fs::File),
}

impl Input {
    fn fd(&self) -> RawFd {
        match self {
            Input::Stdin => libc::STDIN_FILENO,
            Input::Tty(f) => f.as_raw_fd(),
        }
    }
}

impl Terminal {
    /// Takes the terminal: raw input, alternate screen, hidden cursor;
    /// installs the panic hook and the signal handlers.
    pub fn enter() -> std::io::Result<Terminal> {
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                previous(info);
            }));
        });
        install_handlers();
        // SAFETY: isatty only inspects the descriptor.
        let input = if unsafe { libc::isatty(libc::STDIN_FILENO) } == 1 {
            Some(Input::Stdin)
        } else {
            std::fs::File::open("/dev/tty").ok().map(Input::Tty)
        };
        let fd = input.as_ref().map(Input::fd);
        let termios = fd.and_then(|fd| {
            // SAFETY: all-zero is a valid termios for tcgetattr to fill.
            let mut t: libc::termios = unsafe { std::mem::zeroed() };
            // SAFETY: `fd` is open; `t` is writable.
            (unsafe { libc::tcgetattr(fd, &mut t) } == 0).then_some(t)
        });
        // Saved before anything changes, so that a failure below still
        // restores.
        *SAVED.lock().unwrap_or_else(|p| p.into_inner()) = Some(Saved { fd, termios });
        if let (Some(fd), Some(old)) = (fd, termios) {
            let mut raw = old;
            raw.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN);
            raw.c_cc[libc::VMIN] = 1;
            raw.c_cc[libc::VTIME] = 0;
            // SAFETY: `fd` is open, `raw` a termios derived from its own.
            unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) };
        }
        let mut out = std::io::stdout().lock();
        out.write_all(b"\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J")?;
        out.flush()?;
        Ok(Terminal { input })
    }

    /// Draws `lines` from the top left corner, each cut to `cols`
    /// characters, and clears the rest of the screen.
    pub fn draw(&mut self, lines: &[String], cols: usize) {
        let mut s = String::from("\x1b[H");
        for (i, l) in lines.iter().enumerate() {
            if i > 0 {
                s.push_str("\r\n");
            }
            s.extend(l.chars().take(cols));
            s.push_str("\x1b[K");
        }
        s.push_str("\x1b[J");
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(s.as_bytes());
        let _ = out.flush();
    }

    /// Waits up to `timeout` for keys; returns those read (none on a
    /// timeout or a signal).
    pub fn keys(&mut self, timeout: Duration) -> Vec<Key> {
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        let Some(input) = &self.input else {
            // No input: a wait that a signal interrupts.
            // SAFETY: poll with no descriptors is a sleep.
            unsafe { libc::poll(std::ptr::null_mut(), 0, ms) };
            return Vec::new();
        };
        let mut pfd = libc::pollfd {
            fd: input.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n <= 0 {
            return Vec::new();
        }
        if pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
            && pfd.revents & libc::POLLIN == 0
        {
            // The terminal went away: nothing more will come.
            QUIT.store(true, Ordering::Relaxed);
            return Vec::new();
        }
        let mut buf = [0u8; 64];
        // SAFETY: reads at most buf.len() bytes into buf.
        let got = unsafe { libc::read(input.fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if got <= 0 {
            if got == 0 {
                QUIT.store(true, Ordering::Relaxed);
            }
            return Vec::new();
        }
        decode(&buf[..got as usize])
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        restore();
    }
}

/// The keys in `bytes`, one read's worth of terminal input. An escape
/// byte that ends the read is the Escape key; one followed by `[` or `O`
/// starts a sequence (arrows, pages, home, end; others are skipped).
pub fn decode(bytes: &[u8]) -> Vec<Key> {
    let mut keys = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        i += 1;
        match b {
            0x03 => keys.push(Key::CtrlC),
            b'\r' | b'\n' => keys.push(Key::Enter),
            0x7f | 0x08 => keys.push(Key::Backspace),
            0x1b => {
                if i < bytes.len() && (bytes[i] == b'[' || bytes[i] == b'O') {
                    i += 1;
                    let start = i;
                    while i < bytes.len() && !(0x40..=0x7e).contains(&bytes[i]) {
                        i += 1;
                    }
                    let Some(&last) = bytes.get(i) else { break };
                    let params = &bytes[start..i];
                    i += 1;
                    let key = match (last, params) {
                        (b'A', _) => Some(Key::Up),
                        (b'B', _) => Some(Key::Down),
                        (b'H', _) => Some(Key::Home),
                        (b'F', _) => Some(Key::End),
                        (b'~', b"5") => Some(Key::PageUp),
                        (b'~', b"6") => Some(Key::PageDown),
                        (b'~', b"1" | b"7") => Some(Key::Home),
                        (b'~', b"4" | b"8") => Some(Key::End),
                        _ => None,
                    };
                    keys.extend(key);
                } else {
                    keys.push(Key::Esc);
                }
            }
            b if b < 0x20 => {}
            _ => {
                // A UTF-8 character: its length from the first byte.
                let len = match b {
                    0xc0..=0xdf => 2,
                    0xe0..=0xef => 3,
                    0xf0..=0xf7 => 4,
                    _ => 1,
                };
                let end = (i - 1 + len).min(bytes.len());
                if let Ok(s) = std::str::from_utf8(&bytes[i - 1..end]) {
                    keys.extend(s.chars().map(Key::Char));
                }
                i = end;
            }
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_sequences_are_decoded() {
        assert_eq!(decode(b"q"), [Key::Char('q')]);
        assert_eq!(decode(b"\x03"), [Key::CtrlC]);
        assert_eq!(decode(b"\x1b"), [Key::Esc]);
        assert_eq!(decode(b"\x1b[A\x1b[B"), [Key::Up, Key::Down]);
        assert_eq!(decode(b"\x1b[5~\x1b[6~"), [Key::PageUp, Key::PageDown]);
        assert_eq!(
            decode(b"ab\r"),
            [Key::Char('a'), Key::Char('b'), Key::Enter]
        );
        assert_eq!(decode(b"\x7f"), [Key::Backspace]);
        assert_eq!(decode("é".as_bytes()), [Key::Char('é')]);
        // An unknown sequence is skipped, what follows is kept.
        assert_eq!(decode(b"\x1b[1;5Cx"), [Key::Char('x')]);
    }
}
