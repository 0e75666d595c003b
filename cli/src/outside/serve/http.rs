//! The little of HTTP/1.x `pvar serve` speaks: a request head parsed from
//! bytes as they arrive, and a response written whole.

/// Longest request head accepted.
pub const MAX_HEAD: usize = 8 << 10;

/// What a request head said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `HEAD`, …
    pub method: String,
    /// The path, query string removed.
    pub path: String,
    /// The `Accept` header, if any (several are joined with commas).
    pub accept: Option<String>,
}

/// The head of `buf` so far: `Ok(None)` while incomplete, else the request
/// or why it is refused (a 400).
pub fn parse_head(buf: &[u8]) -> Result<Option<Request>, &'static str> {
    let end = find(buf, b"\r\n\r\n").or_else(|| find(buf, b"\n\n"));
    let Some(end) = end else {
        return if buf.len() > MAX_HEAD {
            Err("request head too large")
        } else {
            Ok(None)
        };
    };
    if end > MAX_HEAD {
        return Err("request head too large");
    }
    let Ok(head) = std::str::from_utf8(&buf[..end]) else {
        return Err("request head is not UTF-8");
    };
    let mut lines = head.lines();
    let line = lines.next().unwrap_or("");
    let parts: Vec<&str> = line.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return Err("malformed request line");
    };
    if method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
        || !target.starts_with('/')
        || !version.starts_with("HTTP/1.")
    {
        return Err("malformed request line");
    }
    let mut accept: Option<String> = None;
    for l in lines {
        if let Some((k, v)) = l.split_once(':')
            && k.trim().eq_ignore_ascii_case("accept")
        {
            let v = v.trim();
            accept = Some(match accept {
                Some(a) => format!("{a},{v}"),
                None => v.to_string(),
            });
        }
    }
    let path = target.split(['?', '#']).next().unwrap_or(target);
    Ok(Some(Request {
        method: method.to_string(),
        path: path.to_string(),
        accept,
    }))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A response.
pub struct Response {
    pub status: u16,
    pub reason: &'static str,
    pub content_type: &'static str,
    pub body: std::rc::Rc<Vec<u8>>,
    /// Extra header lines, each ending in `\r\n`.
    pub extra: String,
}

impl Response {
    /// A plain-text response.
    pub fn text(status: u16, reason: &'static str, body: impl Into<String>) -> Response {
        Response {
            status,
            reason,
            content_type: "text/plain; charset=utf-8",
            body: std::rc::Rc::new(body.into().into_bytes()),
            extra: String::new(),
        }
    }

    /// The head's bytes (and whether the body follows: not for `HEAD`).
    pub fn head(&self) -> Vec<u8> {
        format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nConnection: close\r\n{}\r\n",
            self.status,
            self.reason,
            self.content_type,
            self.body.len(),
            self.extra
        )
        .into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_as_they_arrive() {
        assert_eq!(parse_head(b"GET /met"), Ok(None));
        let r =
            parse_head(b"GET /metrics?x=1 HTTP/1.1\r\nAccept: text/plain\r\naccept: a/b\r\n\r\n")
                .unwrap()
                .unwrap();
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/metrics");
        assert_eq!(r.accept.as_deref(), Some("text/plain,a/b"));
        assert_eq!(
            parse_head(b"nonsense\r\n\r\n"),
            Err("malformed request line")
        );
        assert_eq!(
            parse_head(b"GET /metrics SMTP/2\r\n\r\n"),
            Err("malformed request line")
        );
        assert_eq!(
            parse_head(&[b'x'; MAX_HEAD + 1]),
            Err("request head too large")
        );
        assert_eq!(
            parse_head(b"GET / HTTP/1.0\n\n").unwrap().unwrap().path,
            "/"
        );
    }
}
