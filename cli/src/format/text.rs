//! Text on its way to a terminal: control characters and bidirectional
//! overrides made visible, widths counted, long names shortened in the
//! middle.
//!
//! Threat: names, labels, descriptions and values come from other
//! processes (an export region, a component's registration, a `metrics`
//! label value taken from a request path). Written raw, an ESC or C1
//! control starts a terminal escape sequence (clear the screen, set the
//! window title, OSC 52 clipboard writes on some terminals), and a
//! bidirectional override reorders what the operator reads. Every such
//! character is shown as a visible escape (`\x1b`, `\u{202e}`) instead.

use std::borrow::Cow;

/// True for a character that must not reach a terminal raw: C0 and C1
/// controls, DEL, and the Unicode bidirectional embeddings, overrides,
/// isolates and marks.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every character a terminal would act on written as a visible
/// escape: `\n`, `\t`, `\x1b`, `\u{202e}`, and `\\` for a backslash that
/// precedes one (so an escape in the output is never ambiguous with the
/// same text in the input). Borrowed when nothing needs escaping.
///
/// For example `a` ESC `[2Jb` becomes the text `a\x1b[2Jb`.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if unsafe_char(c) && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` made safe for a terminal line by line: each line as
/// [`terminal_safe`] makes it, the line feeds between them kept (for
/// output that is lines of text, such as an exposition).
pub fn terminal_safe_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && unsafe_char(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&terminal_safe(line));
    }
    Cow::Owned(out)
}

/// JSON text (`serde_json`'s output) with the characters a terminal acts
/// on that JSON leaves raw — C1 controls, DEL, bidirectional overrides —
/// written as `\uXXXX` escapes: the same JSON value, safe on a terminal.
/// (C0 controls are escaped by `serde_json` already.)
pub fn json_safe(json: String) -> String {
    // Below DEL: `serde_json` escapes them in strings, and outside strings
    // they are the document's own line feeds and spaces.
    let raw = |c: char| unsafe_char(c) && c >= '\x7f';
    if !json.chars().any(raw) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if raw(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` escaped for HTML text and attribute values: `&`, `<`, `>`, `"`
/// and `'` as character references, and controls as visible escapes (as
/// [`terminal_safe`] shows them), so that a name from another process
/// can neither add markup nor end an attribute.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in terminal_safe(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The columns `s` takes on a terminal, counted in characters (what the
/// tables align by; names here are ASCII in practice, and a wide
/// character only shifts its own row).
pub fn width(s: &str) -> usize {
    s.chars().count()
}

/// `s` in at most `max` columns: as it is if it fits, else its start and
/// its end around a `…`, so that names that differ only at the end
/// (`queue_depth_hwm`, `queue_depth_lwm`) stay distinguishable.
pub fn shorten_middle(s: &str, max: usize) -> Cow<'_, str> {
    let n = width(s);
    if n <= max {
        return Cow::Borrowed(s);
    }
    if max <= 1 {
        return Cow::Owned("…".chars().take(max).collect());
    }
    let keep = max - 1;
    let tail = keep / 2;
    let head = keep - tail;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    Cow::Owned(format!("{start}…{end}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_are_made_visible() {
        assert_eq!(terminal_safe("plain name_1"), "plain name_1");
        assert!(matches!(terminal_safe("plain"), Cow::Borrowed(_)));
        // ESC (clear screen), OSC 52 with BEL, a C1 CSI, DEL, newline.
        assert_eq!(terminal_safe("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(terminal_safe("\x1b]52;c;aGk=\x07"), "\\x1b]52;c;aGk=\\x07");
        assert_eq!(terminal_safe("x\u{9b}31m"), "x\\x9b31m");
        assert_eq!(terminal_safe("d\x7f"), "d\\x7f");
        assert_eq!(terminal_safe("two\nlines"), "two\\nlines");
        assert_eq!(terminal_safe("rtl\u{202e}txt"), "rtl\\u{202e}txt");
        // A backslash is doubled only where escaping happens, so the text
        // `\x1b` and a real ESC never look the same.
        assert_eq!(terminal_safe("\\x1b\x1b"), "\\\\x1b\\x1b");
        for out in [
            terminal_safe("\x1b\u{85}\u{2066}"),
            terminal_safe("\0\x08\x0c"),
        ] {
            assert!(!out.chars().any(unsafe_char), "{out:?}");
        }
    }

    #[test]
    fn lines_keep_their_line_feeds() {
        assert_eq!(terminal_safe_lines("a\nb\n"), "a\nb\n");
        assert!(matches!(terminal_safe_lines("a\nb\n"), Cow::Borrowed(_)));
        assert_eq!(
            terminal_safe_lines("x{p=\"\x1b]0;t\x07\"} 1\ny 2\n"),
            "x{p=\"\\x1b]0;t\\x07\"} 1\ny 2\n"
        );
    }

    #[test]
    fn json_stays_json_without_terminal_controls() {
        let raw = serde_json::to_string("a\u{9b}31m\u{202e}b\x7f\x1b").unwrap();
        let safe = json_safe(raw.clone());
        assert!(!safe.chars().any(unsafe_char), "{safe:?}");
        let back: String = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, "a\u{9b}31m\u{202e}b\x7f\x1b");
        assert_eq!(json_safe("\"plain\"".into()), "\"plain\"");
        assert_eq!(json_safe("[\n  1\n]".into()), "[\n  1\n]");
    }

    #[test]
    fn html_has_no_markup_left() {
        assert_eq!(html_escape("plain"), "plain");
        assert_eq!(
            html_escape("<script>alert('x')</script>&\"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;q&quot;"
        );
        assert_eq!(html_escape("a\x1b[2J"), "a\\x1b[2J");
        for s in ["<b>", "\"onload=\"", "x'y", "&amp;"] {
            let e = html_escape(s);
            assert!(!e.contains(['<', '>', '"', '\'']), "{e}");
        }
    }

    #[test]
    fn long_names_keep_both_ends() {
        assert_eq!(shorten_middle("short", 10), "short");
        assert_eq!(shorten_middle("demo_queue_depth_hwm", 12), "demo_q…h_hwm");
        assert_eq!(width(&shorten_middle("demo_queue_depth_hwm", 12)), 12);
        assert_ne!(
            shorten_middle("demo_queue_depth_hwm", 12),
            shorten_middle("demo_queue_depth_lwm", 12)
        );
        assert_eq!(shorten_middle("abc", 1), "…");
        assert_eq!(shorten_middle("abc", 0), "");
    }
}
