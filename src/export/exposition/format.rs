//! The two text formats, and choosing one from an HTTP `Accept` header as
//! the Prometheus client libraries do.

/// A text format of a Prometheus scrape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// OpenMetrics 1.0 (`application/openmetrics-text; version=1.0.0`):
    /// `# UNIT` lines, state sets, counters as families named without
    /// `_total`, ending with `# EOF`. What Prometheus asks for first.
    OpenMetrics,
    /// The classic Prometheus text format 0.0.4 (`text/plain;
    /// version=0.0.4`): what `promtool check metrics`, the Pushgateway and
    /// the node exporter's textfile collector read. State sets become
    /// gauges, units stay in the names only.
    Prometheus,
}

impl Format {
    /// The `Content-Type` of a response in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
        }
    }

    /// The format a scraper asks for in its `Accept` header: OpenMetrics
    /// if it accepts `application/openmetrics-text` (version 1.0.0 or
    /// 0.0.1, or none given) at least as much as any media range the
    /// classic format answers (`text/plain` of version 0.0.4 or none,
    /// `text/*`, `*/*`); the classic format otherwise, and when there is
    /// no header — as `prometheus/client_golang` and `prometheus_client`
    /// negotiate. A range with `q=0` is not accepted.
    ///
    /// ```
    /// use pvar::export::exposition::Format;
    /// let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
    ///                   version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    /// assert_eq!(Format::from_accept(Some(prometheus)), Format::OpenMetrics);
    /// assert_eq!(Format::from_accept(Some("*/*")), Format::Prometheus);
    /// assert_eq!(Format::from_accept(None), Format::Prometheus);
    /// ```
    pub fn from_accept(accept: Option<&str>) -> Format {
        let Some(accept) = accept else {
            return Format::Prometheus;
        };
        let mut best: Option<(f64, Format)> = None;
        for range in accept.split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let (mut q, mut version) = (1.0f64, None);
            for p in parts {
                let Some((k, v)) = p.split_once('=') else {
                    continue;
                };
                let v = v.trim().trim_matches('"');
                match k.trim().to_ascii_lowercase().as_str() {
                    "q" => {
                        q = v
                            .parse::<f64>()
                            .ok()
                            .filter(|q| q.is_finite())
                            .unwrap_or(0.0)
                    }
                    "version" => version = Some(v.to_string()),
                    _ => {}
                }
            }
            if q <= 0.0 {
                continue;
            }
            let format = match media.as_str() {
                "application/openmetrics-text"
                    if version
                        .as_deref()
                        .is_none_or(|v| v == "1.0.0" || v == "0.0.1") =>
                {
                    Format::OpenMetrics
                }
                "text/plain" if version.as_deref().is_none_or(|v| v == "0.0.4") => {
                    Format::Prometheus
                }
                "text/*" | "*/*" => Format::Prometheus,
                _ => continue,
            };
            let better = match best {
                None => true,
                Some((bq, bf)) => {
                    q > bq || (q == bq && format == Format::OpenMetrics && bf != format)
                }
            };
            if better {
                best = Some((q, format));
            }
        }
        best.map_or(Format::Prometheus, |(_, f)| f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_follows_the_client_libraries() {
        let om = Format::OpenMetrics;
        let classic = Format::Prometheus;
        for (accept, want) in [
            ("application/openmetrics-text", om),
            ("application/openmetrics-text; version=1.0.0", om),
            ("application/openmetrics-text;version=0.0.1", om),
            ("application/openmetrics-text;version=2.0.0", classic),
            ("text/plain;version=0.0.4", classic),
            (
                "text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.5",
                classic,
            ),
            ("text/plain;q=0.5,application/openmetrics-text;q=0.5", om),
            ("application/openmetrics-text;q=0", classic),
            ("application/json", classic),
            ("", classic),
            ("garbage;;;,", classic),
        ] {
            assert_eq!(Format::from_accept(Some(accept)), want, "{accept}");
        }
    }
}
