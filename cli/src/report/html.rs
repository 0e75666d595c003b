//! `pvar report html`: a `pvar.report.v2` JSON report drawn as one
//! self-contained HTML page — inline CSS, inline SVG, one inline script
//! that paints the matrices on canvases; nothing is fetched.
//!
//! Every string from the report (names, labels, programs, descriptions:
//! whatever the ranks' variables were called) reaches the page through
//! [`escape`]; the script's data are numbers only, in `application/json`
//! blocks.
//!
//! What it shows:
//!
//! - the job: ranks, programs, wall time, the share of it in MPI;
//! - per per-peer array (messages, bytes): the rank × rank matrix as a
//!   heatmap on a log colour scale — one cell per rank up to 256 ranks,
//!   blocks of consecutive ranks beyond (the report's binning), with the
//!   rank at each axis tick, a colour legend, hover details, and the
//!   largest pairs;
//! - per profile series (time in MPI, in collectives, what each rank
//!   sent): a bar per rank (per block of ranks: the mean, and its range
//!   from min to max behind it), the mean drawn across, the busiest rank and the
//!   imbalance named;
//! - the time per collective kind (TIMER arrays with named elements,
//!   summed over communicators) and the most imbalanced figures;
//! - the table of every variable.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;

use super::Res;
use crate::format::{group, significant};

/// Options of `pvar report html`.
#[derive(clap::Args)]
pub struct Args {
    /// The JSON report (schema pvar.report.v2).
    #[arg(value_name = "REPORT.json")]
    report: PathBuf,
    /// Where to write the page (default: the report's path with `.html`).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Runs `pvar report html`.
pub fn run(args: Args) -> Res<()> {
    let text = std::fs::read_to_string(&args.report)
        .map_err(|e| format!("reading {}: {e}", args.report.display()))?;
    let json: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not JSON: {e}", args.report.display()))?;
    let page = page(&json).map_err(|e| format!("{}: {e}", args.report.display()))?;
    let out = args
        .output
        .unwrap_or_else(|| args.report.with_extension("html"));
    pvar::report::write_atomically(&out, |w| w.write_all(page.as_bytes()))
        .map_err(|e| format!("writing {}: {e}", out.display()))?;
    println!("{}", out.display());
    Ok(())
}

/// Text for HTML: `&`, `<`, `>`, `"` and `'` as entities, control
/// characters but tab and newline as `?`. Safe in element content and in
/// quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// The colour scale: light to dark, perceptually ordered (a
/// viridis-like ramp); the page's legend and its script use these stops.
const PALETTE: [&str; 9] = [
    "#fde725", "#a5db36", "#4ec36b", "#1f9e89", "#26828e", "#365c8d", "#46327e", "#440154",
    "#2b0033",
];

/// The page of report `json`.
pub fn page(json: &Value) -> Res<String> {
    if json["schema"] != "pvar.report.v2" {
        return Err(format!("not a pvar.report.v2 report (schema {})", json["schema"]).into());
    }
    let nranks = json["nranks"].as_u64().ok_or("no nranks")?;
    let mut h = String::new();
    h.push_str(HEAD);
    let _ = write!(
        h,
        "<title>pvar report: {} ranks</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        group(nranks)
    );
    header(&mut h, json, nranks);
    let matrices = json["matrices"].as_array().map_or(&[][..], Vec::as_slice);
    if !matrices.is_empty() {
        h.push_str("<h2 id=\"matrices\">Communication matrices</h2>\n<div class=\"figures\">\n");
        for (n, m) in matrices.iter().enumerate() {
            matrix(&mut h, m, n);
        }
        h.push_str("</div>\n");
    }
    profiles(&mut h, json);
    collective_times(&mut h, json);
    imbalanced(&mut h, json);
    variables(&mut h, json);
    let _ = write!(
        h,
        "<footer>Written by <code>pvar report html</code> from a {} report; nothing on this \
         page is fetched from the network.</footer>\n<div id=\"tip\" hidden></div>\n",
        escape(json["schema"].as_str().unwrap_or(""))
    );
    let palette: Vec<String> = PALETTE.iter().map(|c| format!("\"{c}\"")).collect();
    let _ = write!(
        h,
        "<script>\nconst PALETTE = [{}];\n{SCRIPT}</script>\n</body>\n</html>\n",
        palette.join(",")
    );
    Ok(h)
}

const HEAD: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";

const CSS: &str = "
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1240px;padding:16px 24px;color:#1d1d1f;background:#fff}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:4px}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}
.facts dt{color:#555}.facts dd{margin:0}
.problem{background:#fff3cd;border:1px solid #e0b000;padding:6px 10px;margin:8px 0}
.figures{display:flex;flex-wrap:wrap;gap:24px}
figure{margin:0}figcaption{color:#444;font-size:12px;max-width:560px;margin-top:4px}
.plot{position:relative;width:590px;height:570px}
canvas.heat{position:absolute;width:520px;height:520px;image-rendering:pixelated;outline:1px solid #bbb}
svg text{font:11px system-ui,sans-serif;fill:#333}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{padding:2px 8px;text-align:right;border-bottom:1px solid #eee;white-space:nowrap}
th{background:#f5f5f7;position:sticky;top:0}
td.l,th.l{text-align:left}
.bar{fill:#365c8d}.range{fill:#b9c9e4}.mean{stroke:#d62728;stroke-width:1.5;stroke-dasharray:5 3}
#tip{position:fixed;pointer-events:none;background:#222;color:#fff;padding:3px 6px;font-size:12px;border-radius:3px}
footer{margin-top:32px;color:#777;font-size:12px}
";

/// The page's script: paints each `canvas.heat` from the numbers in its
/// `application/json` block and shows what is under the pointer.
const SCRIPT: &str = r##"
function lerp(a, b, t) { return Math.round(a + (b - a) * t); }
function rgb(hex) { return [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16)); }
function colour(t) {
  const x = Math.min(Math.max(t, 0), 1) * (PALETTE.length - 1);
  const i = Math.min(Math.floor(x), PALETTE.length - 2);
  const a = rgb(PALETTE[i]), b = rgb(PALETTE[i + 1]);
  return "rgb(" + [0, 1, 2].map(k => lerp(a[k], b[k], x - i)).join(",") + ")";
}
const tip = document.getElementById("tip");
for (const canvas of document.querySelectorAll("canvas.heat")) {
  const d = JSON.parse(document.getElementById(canvas.dataset.src).textContent);
  const n = d.bins, px = Math.max(1, Math.floor(1040 / n));
  canvas.width = n * px; canvas.height = n * px;
  const g = canvas.getContext("2d");
  g.fillStyle = "#f4f4f6"; g.fillRect(0, 0, canvas.width, canvas.height);
  const lo = Math.log10(d.min), span = Math.log10(d.max) - lo;
  const value = new Map();
  for (const [r, c, v] of d.cells) {
    g.fillStyle = colour(span > 0 ? (Math.log10(v) - lo) / span : 1);
    g.fillRect(c * px, r * px, px, px);
    value.set(r * n + c, v);
  }
  const ranks = b => {
    const a = d.starts[b], z = (b + 1 < n ? d.starts[b + 1] : d.nranks) - 1;
    return a === z ? "rank " + a : "ranks " + a + "\u2013" + z;
  };
  canvas.addEventListener("mousemove", e => {
    const box = canvas.getBoundingClientRect();
    const c = Math.floor((e.clientX - box.left) / box.width * n);
    const r = Math.floor((e.clientY - box.top) / box.height * n);
    if (r < 0 || c < 0 || r >= n || c >= n) { tip.hidden = true; return; }
    tip.textContent = "from " + ranks(r) + " to " + ranks(c) + ": " +
      (value.get(r * n + c) || 0).toLocaleString("en-US") + " " + d.what;
    tip.style.left = (e.clientX + 12) + "px"; tip.style.top = (e.clientY + 12) + "px";
    tip.hidden = false;
  });
  canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
  canvas.setAttribute("data-drawn", String(d.cells.length));
}
"##;

/// A JSON number for a person: integers grouped, doubles with four
/// significant digits, `-` for null.
fn num(v: &Value) -> String {
    if let Some(u) = v.as_u64() {
        group(u)
    } else if let Some(i) = v.as_i64() {
        format!("-{}", group(i.unsigned_abs()))
    } else if let Some(d) = v.as_f64() {
        significant(d)
    } else {
        "-".into()
    }
}

fn header(h: &mut String, json: &Value, nranks: u64) {
    let ranks = &json["ranks"];
    let _ = write!(h, "<h1>pvar cross-rank report</h1>\n<dl class=\"facts\">\n");
    let fact = |h: &mut String, k: &str, v: String| {
        let _ = writeln!(h, "<dt>{k}</dt><dd>{v}</dd>");
    };
    let reporting = ranks["reporting"].as_u64().unwrap_or(0);
    fact(
        h,
        "Ranks",
        if reporting == nranks {
            group(nranks)
        } else {
            format!("{} ({} reported)", group(nranks), group(reporting))
        },
    );
    let programs: Vec<String> = ranks["programs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            format!(
                "{} ({} ranks)",
                escape(p["name"].as_str().unwrap_or("?")),
                num(&p["ranks"])
            )
        })
        .collect();
    fact(h, "Programs", programs.join("; "));
    if let Some(wall) = json["wall_seconds"].as_f64() {
        fact(
            h,
            "Wall time",
            format!("{} s (longest rank)", significant(wall)),
        );
    }
    let mean_elapsed = ranks["elapsed_seconds"]["mean"].as_f64();
    for p in json["profile"].as_array().into_iter().flatten() {
        if p["unit"] != "seconds" {
            continue;
        }
        let o = &p["overall"];
        let share = match (o["mean"].as_f64(), mean_elapsed) {
            (Some(t), Some(w)) if w > 0.0 => {
                format!(", {:.1} % of the mean wall time", 100.0 * t / w)
            }
            _ => String::new(),
        };
        fact(
            h,
            &escape(p["name"].as_str().unwrap_or("")),
            format!(
                "{} s in total; per rank mean {} s, max {} s (rank {}){share}",
                num(&o["total"]),
                num(&o["mean"]),
                num(&o["max"]),
                num(&o["max_rank"])
            ),
        );
    }
    let skipped = json["skipped_zero"].as_array().map_or(0, Vec::len);
    fact(
        h,
        "Variables",
        format!(
            "{} reported, {skipped} zero on every rank left out",
            json["variables"].as_array().map_or(0, Vec::len)
        ),
    );
    h.push_str("</dl>\n");
    if let Some(p) = json["problems"].as_object() {
        let _ = writeln!(
            h,
            "<p class=\"problem\" id=\"problems\">{} rank(s) missing from the figures; rank {}: {}</p>",
            num(&p["ranks"]),
            num(&p["first_rank"]),
            escape(p["first"].as_str().unwrap_or(""))
        );
    }
}

fn instance_label(v: &Value) -> String {
    match &v["instance"] {
        Value::Null => String::new(),
        i => i["label"]
            .as_str()
            .map(str::to_string)
            .or_else(|| i["object"].as_str().map(|o| format!("object {o}")))
            .unwrap_or_default(),
    }
}

fn matrix(h: &mut String, m: &Value, n: usize) {
    let name = m["name"].as_str().unwrap_or("");
    let label = instance_label(m);
    let bins = m["bins"].as_u64().unwrap_or(0) as usize;
    let nranks = m["nranks"].as_u64().unwrap_or(0);
    let rows: Vec<Vec<f64>> = m["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            r.as_array()
                .into_iter()
                .flatten()
                .map(|x| x.as_f64().unwrap_or(0.0))
                .collect()
        })
        .collect();
    let starts: Vec<u64> = m["bin_starts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
        .collect();
    if bins == 0 || rows.len() != bins || starts.len() != bins {
        return;
    }
    let mut cells = String::new();
    let (mut lo, mut hi) = (f64::INFINITY, 0f64);
    for (r, row) in rows.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            if v > 0.0 {
                if !cells.is_empty() {
                    cells.push(',');
                }
                let _ = write!(cells, "[{r},{c},{v}]");
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    if hi == 0.0 {
        lo = 1.0;
        hi = 1.0;
    }
    let what = if name.contains("bytes") { "bytes" } else { "" };
    let starts_s: Vec<String> = starts.iter().map(u64::to_string).collect();
    let title = if label.is_empty() {
        escape(name)
    } else {
        format!("{} on {}", escape(name), escape(&label))
    };
    let per = if bins as u64 == nranks {
        "One cell per rank".to_string()
    } else {
        format!(
            "{bins} × {bins} blocks of about {} ranks, each the sum over its block",
            significant(nranks as f64 / bins as f64)
        )
    };
    let _ = write!(
        h,
        "<figure class=\"matrix\" id=\"matrix-{n}\">\n<h3>{title}</h3>\n\
         <script type=\"application/json\" id=\"matrix-data-{n}\">{{\"bins\":{bins},\"nranks\":{nranks},\
         \"min\":{lo},\"max\":{hi},\"what\":\"{what}\",\"starts\":[{}],\"cells\":[{cells}]}}</script>\n",
        starts_s.join(",")
    );
    // The canvas at (LEFT, TOP), the axes around it: the first rank of
    // the block at about eight ticks.
    const LEFT: f64 = 60.0;
    const TOP: f64 = 40.0;
    const SIZE: f64 = 520.0;
    let step = bins.div_ceil(8).max(1);
    let _ = write!(
        h,
        "<div class=\"plot\"><svg width=\"590\" height=\"570\" viewBox=\"0 0 590 570\" role=\"img\" \
         aria-label=\"{title}: row = sender, column = destination\">\n\
         <text x=\"{}\" y=\"14\" text-anchor=\"middle\">destination rank →</text>\n\
         <text x=\"12\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {})\">sending rank →</text>\n",
        LEFT + SIZE / 2.0,
        TOP + SIZE / 2.0,
        TOP + SIZE / 2.0
    );
    for b in (0..bins).step_by(step) {
        let at = (b as f64 + 0.5) * SIZE / bins as f64;
        let _ = writeln!(
            h,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT + at,
            TOP - 6.0,
            starts[b],
            LEFT - 6.0,
            TOP + at + 4.0,
            starts[b]
        );
    }
    let _ = writeln!(
        h,
        "</svg><canvas class=\"heat\" data-src=\"matrix-data-{n}\" width=\"{bins}\" height=\"{bins}\" \
         style=\"left:{LEFT}px;top:{TOP}px\"></canvas></div>"
    );
    legend(h, lo, hi, n);
    let total = num(&m["total"]);
    let sent = &m["sent"];
    let _ = writeln!(
        h,
        "<figcaption>Row: the sending rank; column: the destination. {per}; log colour scale, \
         grey: nothing. Total {total}. Sent per rank: mean {}, max {} (rank {}), Max/Mean {}.\
         </figcaption>",
        num(&sent["mean"]),
        num(&sent["max"]),
        num(&sent["max_rank"]),
        ratio(&sent["imbalance"])
    );
    let pairs = m["top_pairs"].as_array().map_or(&[][..], Vec::as_slice);
    if !pairs.is_empty() {
        h.push_str(
            "<table class=\"pairs\"><tr><th>#</th><th>from</th><th>to</th><th>value</th></tr>\n",
        );
        for (i, p) in pairs.iter().take(8).enumerate() {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                i + 1,
                num(&p["from"]),
                num(&p["to"]),
                num(&p["value"])
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("</figure>\n");
}

/// A horizontal colour legend for values from `lo` to `hi` on a log scale.
fn legend(h: &mut String, lo: f64, hi: f64, n: usize) {
    let _ = write!(
        h,
        "<svg class=\"legend\" width=\"520\" height=\"34\" viewBox=\"0 0 520 34\">\
         <defs><linearGradient id=\"ramp-{n}\">"
    );
    for (i, c) in PALETTE.iter().enumerate() {
        let _ = write!(
            h,
            "<stop offset=\"{:.3}\" stop-color=\"{c}\"/>",
            i as f64 / (PALETTE.len() - 1) as f64
        );
    }
    let mid = (lo.log10() + hi.log10()) / 2.0;
    let _ = writeln!(
        h,
        "</linearGradient></defs><rect x=\"0\" y=\"0\" width=\"520\" height=\"14\" fill=\"url(#ramp-{n})\"/>\
         <text x=\"0\" y=\"28\">{}</text><text x=\"260\" y=\"28\" text-anchor=\"middle\">{}</text>\
         <text x=\"520\" y=\"28\" text-anchor=\"end\">{}</text></svg>",
        significant(lo),
        significant(10f64.powf(mid)),
        significant(hi)
    );
}

fn ratio(v: &Value) -> String {
    v.as_f64().map_or("-".into(), |x| format!("{x:.2}"))
}

fn profiles(h: &mut String, json: &Value) {
    let series = json["profile"].as_array().map_or(&[][..], Vec::as_slice);
    if series.is_empty() {
        return;
    }
    h.push_str("<h2 id=\"profiles\">Per rank</h2>\n<div class=\"figures\">\n");
    for (i, p) in series.iter().enumerate() {
        bars(h, p, i);
    }
    h.push_str("</div>\n");
}

/// One profile series as bars.
fn bars(h: &mut String, p: &Value, i: usize) {
    let blocks = p["blocks"].as_array().map_or(&[][..], Vec::as_slice);
    let bins = p["bins"].as_u64().unwrap_or(1).max(1) as f64;
    let unit = p["unit"]
        .as_str()
        .map(|u| format!(" ({u})"))
        .unwrap_or_default();
    let o = &p["overall"];
    let max = blocks
        .iter()
        .filter_map(|b| b["max"].as_f64())
        .fold(0f64, f64::max);
    let (w, ht, left, top) = (500.0, 200.0, 76.0, 10.0);
    let _ = write!(
        h,
        "<figure class=\"profile\" id=\"profile-{i}\">\n<h3>{}{}</h3>\n\
         <svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{} per rank\">\n",
        escape(p["name"].as_str().unwrap_or("")),
        escape(&unit),
        w + left + 8.0,
        ht + top + 34.0,
        w + left + 8.0,
        ht + top + 34.0,
        escape(p["name"].as_str().unwrap_or(""))
    );
    let y = |v: f64| top + ht - if max > 0.0 { v / max * ht } else { 0.0 };
    let bw = w / bins;
    for b in blocks {
        let bin = b["bin"].as_f64().unwrap_or(0.0);
        let x = left + bin * bw;
        let mean = b["mean"].as_f64().unwrap_or(0.0);
        let first = num(&b["first_rank"]);
        let last = num(&b["last_rank"]);
        let who = if first == last {
            format!("rank {first}")
        } else {
            format!("ranks {first}–{last}")
        };
        let width = if bw >= 3.0 { bw * 0.85 } else { bw };
        if b["ranks"].as_u64().unwrap_or(1) > 1 {
            // The block's range, light, behind its mean.
            let (lo, hi) = (
                y(b["min"].as_f64().unwrap_or(0.0)),
                y(b["max"].as_f64().unwrap_or(0.0)),
            );
            let _ = writeln!(
                h,
                "<rect class=\"range\" x=\"{x:.2}\" y=\"{hi:.2}\" width=\"{width:.2}\" height=\"{:.2}\"/>",
                (lo - hi).max(0.5)
            );
        }
        let _ = writeln!(
            h,
            "<rect class=\"bar\" x=\"{x:.2}\" y=\"{:.2}\" width=\"{width:.2}\" height=\"{:.2}\">\
             <title>{who}: mean {}, min {}, max {}</title></rect>",
            y(mean),
            top + ht - y(mean),
            num(&b["mean"]),
            num(&b["min"]),
            num(&b["max"])
        );
    }
    if let Some(mean) = o["mean"].as_f64() {
        let _ = writeln!(
            h,
            "<line class=\"mean\" x1=\"{left}\" x2=\"{}\" y1=\"{:.2}\" y2=\"{:.2}\"><title>mean {}</title></line>",
            left + w,
            y(mean),
            y(mean),
            num(&o["mean"])
        );
    }
    let _ = write!(
        h,
        "<line x1=\"{left}\" x2=\"{left}\" y1=\"{top}\" y2=\"{}\" stroke=\"#888\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text>\
         <text x=\"{left}\" y=\"{}\">rank 0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">rank {}</text>\n</svg>\n",
        top + ht,
        left - 4.0,
        top + 10.0,
        significant(max),
        left - 4.0,
        top + ht,
        top + ht + 16.0,
        left + w,
        top + ht + 16.0,
        p["nranks"].as_u64().unwrap_or(1).saturating_sub(1)
    );
    let per = if p["exact"] == true {
        "A bar per rank".to_string()
    } else {
        format!(
            "A bar per block of about {} ranks: its mean, and light behind it its range (min to max)",
            significant(p["nranks"].as_f64().unwrap_or(0.0) / bins)
        )
    };
    let _ = writeln!(
        h,
        "<figcaption>{per}; dashed: the mean over ranks. Max {} on rank {}; Max/Mean {}, imbalance \
         (max − mean) / max {}.</figcaption>\n</figure>",
        num(&o["max"]),
        num(&o["max_rank"]),
        ratio(&o["imbalance"]),
        o["imbalance_fraction"]
            .as_f64()
            .map_or("-".into(), |x| format!("{:.1} %", x * 100.0))
    );
}

/// TIMER arrays with named elements (the interposer's per-collective
/// times), summed over their instances, as bars per element.
fn collective_times(h: &mut String, json: &Value) {
    let mut totals: Vec<(String, String, f64)> = Vec::new();
    for v in json["variables"].as_array().into_iter().flatten() {
        if v["class"] != "TIMER" {
            continue;
        }
        for e in v["elements"].as_array().into_iter().flatten() {
            let (Some(kind), Some(t)) = (e["name"].as_str(), e["total"].as_f64()) else {
                continue;
            };
            let name = v["name"].as_str().unwrap_or("").to_string();
            match totals.iter_mut().find(|x| x.0 == name && x.1 == kind) {
                Some(x) => x.2 += t,
                None => totals.push((name, kind.to_string(), t)),
            }
        }
    }
    totals.retain(|t| t.2 > 0.0);
    if totals.is_empty() {
        return;
    }
    totals.sort_by(|a, b| b.2.total_cmp(&a.2));
    let max = totals[0].2;
    h.push_str("<h2 id=\"collectives\">Time per collective kind</h2>\n");
    let row = 18.0;
    let _ = writeln!(
        h,
        "<svg width=\"760\" height=\"{}\" role=\"img\" aria-label=\"time per collective kind\">",
        row * totals.len() as f64 + 8.0
    );
    for (i, (var, kind, t)) in totals.iter().enumerate() {
        let y = i as f64 * row + 4.0;
        let _ = writeln!(
            h,
            "<text x=\"236\" y=\"{:.1}\" text-anchor=\"end\">{}[{}]</text>\
             <rect class=\"bar\" x=\"242\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{} s</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\">{} s</text>",
            y + 12.0,
            escape(var),
            escape(kind),
            (t / max * 420.0).max(1.0),
            row - 4.0,
            significant(*t),
            246.0 + (t / max * 420.0).max(1.0),
            y + 12.0,
            significant(*t)
        );
    }
    h.push_str("</svg>\n<p>Seconds summed over every rank and communicator.</p>\n");
}

/// The element label `name`, `name[i]` or `name[kind]`.
fn element_label(v: &Value, e: &Value) -> String {
    let name = v["name"].as_str().unwrap_or("");
    if v["count"].as_u64() == Some(1) {
        return name.to_string();
    }
    match e["name"].as_str() {
        Some(k) => format!("{name}[{k}]"),
        None => format!("{name}[{}]", num(&e["index"])),
    }
}

/// The figures with the largest imbalance, as bars.
fn imbalanced(h: &mut String, json: &Value) {
    let mut rows: Vec<(String, f64, String)> = Vec::new();
    for v in json["variables"].as_array().into_iter().flatten() {
        for e in v["elements"].as_array().into_iter().flatten() {
            let Some(f) = e["imbalance_fraction"].as_f64() else {
                continue;
            };
            if e["ranks"].as_u64().unwrap_or(0) < 2 || f <= 0.0 {
                continue;
            }
            let label = instance_label(v);
            let what = if label.is_empty() {
                element_label(v, e)
            } else {
                format!("{} @ {label}", element_label(v, e))
            };
            rows.push((
                what,
                f,
                format!(
                    "max {} on rank {}, mean {}",
                    num(&e["max"]),
                    num(&e["max_rank"]),
                    num(&e["mean"])
                ),
            ));
        }
    }
    if rows.is_empty() {
        return;
    }
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    rows.truncate(12);
    h.push_str("<h2 id=\"imbalance\">Most imbalanced</h2>\n");
    let row = 18.0;
    let _ = writeln!(
        h,
        "<svg width=\"1000\" height=\"{}\" role=\"img\" aria-label=\"imbalance\">",
        row * rows.len() as f64 + 8.0
    );
    for (i, (what, f, detail)) in rows.iter().enumerate() {
        let y = i as f64 * row + 4.0;
        let _ = writeln!(
            h,
            "<text x=\"396\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect class=\"bar\" x=\"402\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\">{:.1} % ({})</text>",
            y + 12.0,
            escape(what),
            (f * 300.0).max(1.0),
            row - 4.0,
            escape(detail),
            406.0 + (f * 300.0).max(1.0),
            y + 12.0,
            f * 100.0,
            escape(detail)
        );
    }
    h.push_str("</svg>\n<p>Imbalance as mpiP shows it: (max − mean) / max, 0 % balanced.</p>\n");
}

fn variables(h: &mut String, json: &Value) {
    h.push_str(
        "<h2 id=\"variables\">Variables</h2>\n<table id=\"variables-table\">\n<tr><th class=\"l\">Variable</th>\
         <th class=\"l\">Object</th><th class=\"l\">Class</th><th class=\"l\">Unit</th><th>Ranks</th>\
         <th>Total</th><th>Min</th><th>@rank</th><th>Mean</th><th>Max</th><th>@rank</th>\
         <th>Max/Mean</th><th>Imb%</th></tr>\n",
    );
    for v in json["variables"].as_array().into_iter().flatten() {
        let object = instance_label(v);
        let class = v["class"].as_str().unwrap_or("");
        let unit = v["unit"].as_str().unwrap_or("");
        let description = v["description"].as_str().unwrap_or("");
        let rows: Vec<(String, &Value)> = if v["peer_matrix"] == true {
            let m = json["matrices"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|m| m["name"] == v["name"] && m["instance"] == v["instance"]);
            m.map(|m| {
                vec![(
                    format!("{} (sent per rank)", v["name"].as_str().unwrap_or("")),
                    &m["sent"],
                )]
            })
            .unwrap_or_default()
        } else {
            v["elements"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| (element_label(v, e), e))
                .collect()
        };
        for (label, e) in rows {
            let total = match (&e["total"], &e["mark"]) {
                (t, _) if !t.is_null() => num(t),
                (_, m) if !m.is_null() => format!("mark {}", num(m)),
                _ => "-".into(),
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"l\" title=\"{}\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
                 <td class=\"l\">{}</td><td>{}</td><td>{total}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(description),
                escape(&label),
                escape(&object),
                escape(class),
                escape(unit),
                num(&e["ranks"]),
                num(&e["min"]),
                num(&e["min_rank"]),
                num(&e["mean"]),
                num(&e["max"]),
                num(&e["max_rank"]),
                ratio(&e["imbalance"]),
                e["imbalance_fraction"]
                    .as_f64()
                    .map_or("-".into(), |x| format!("{:.1}%", x * 100.0))
            );
        }
    }
    h.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\"\u{1}"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;?"
        );
    }

    #[test]
    fn a_report_of_another_schema_is_refused() {
        let v: Value = serde_json::json!({"schema": "pvar.report.v1", "nranks": 2});
        assert!(page(&v).unwrap_err().to_string().contains("pvar.report.v2"));
    }
}
