//! The console's charts: an hour of per-minute figures as small SVG line charts, drawn on the
//! server (no script, no inline style: classes colour them).

use maud::{Markup, html};

use crate::telemetry::activity::{Figures, LIMIT_KINDS};

const WIDTH: f64 = 240.0;
const HEIGHT: f64 = 56.0;

/// One line: its class (colour) and a value per minute (`None`: nothing that minute).
struct Line<'a> {
    class: &'a str,
    values: Vec<Option<f64>>,
}

/// A chart of `lines` over the hour, titled `title`, its latest values said by `now`.
fn chart(title: &str, now: &str, lines: &[Line<'_>]) -> Markup {
    let top = lines
        .iter()
        .flat_map(|l| l.values.iter().flatten())
        .fold(0.0f64, |a, &b| a.max(b));
    let scale = if top > 0.0 { (HEIGHT - 4.0) / top } else { 0.0 };
    let points = |values: &[Option<f64>]| {
        let step = WIDTH / (values.len().max(2) - 1) as f64;
        values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                format!(
                    "{:.1},{:.1}",
                    i as f64 * step,
                    HEIGHT - 2.0 - v.unwrap_or(0.0) * scale
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    html! {
        figure.chart {
            figcaption { span.title { (title) } " " span.now { (now) } }
            svg viewBox={"0 0 " (WIDTH) " " (HEIGHT)} role="img" aria-label=(title) {
                line.axis x1="0" y1=(HEIGHT - 1.0) x2=(WIDTH) y2=(HEIGHT - 1.0) {}
                @for line in lines {
                    polyline class=(line.class) points=(points(&line.values)) {}
                }
            }
            div.scale { "last hour · max " (round(top)) }
        }
    }
}

fn round(v: f64) -> String {
    if v >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The charts of `figures`: calls per second, error rate, p50/p99 latency, limit hits by kind.
pub(super) fn charts(figures: &Figures) -> Markup {
    let minutes = &figures.minutes;
    let per_second: Vec<Option<f64>> = minutes
        .iter()
        .map(|m| Some(f64::from(m.calls) / 60.0))
        .collect();
    let error_rate: Vec<Option<f64>> = minutes
        .iter()
        .map(|m| (m.calls > 0).then(|| 100.0 * f64::from(m.errors) / f64::from(m.calls)))
        .collect();
    let ms = |d: Option<std::time::Duration>| d.map(|d| d.as_secs_f64() * 1e3);
    let p50: Vec<Option<f64>> = minutes.iter().map(|m| ms(m.p50)).collect();
    let p99: Vec<Option<f64>> = minutes.iter().map(|m| ms(m.p99)).collect();
    let last = minutes.last().cloned().unwrap_or_default();
    let (calls, errors, limits) = figures.totals();
    let limit_lines: Vec<Line<'_>> = LIMIT_KINDS
        .iter()
        .enumerate()
        .map(|(i, _)| Line {
            class: ["k0", "k1", "k2", "k3", "k4"][i],
            values: minutes
                .iter()
                .map(|m| Some(f64::from(m.limits[i])))
                .collect(),
        })
        .collect();
    let limits_now = LIMIT_KINDS
        .iter()
        .zip(limits)
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect::<Vec<_>>()
        .join(" · ");
    html! {
        div.charts {
            (chart("calls/s", &format!("{} this minute · {} in the hour", last.calls, calls), &[Line { class: "k0", values: per_second }]))
            (chart("error rate %", &format!("{} errors in the hour", errors), &[Line { class: "k2", values: error_rate }]))
            (chart("latency ms (p50, p99)", &format!(
                "{} / {}",
                last.p50.map(super::pages::span).unwrap_or_else(|| "—".into()),
                last.p99.map(super::pages::span).unwrap_or_else(|| "—".into())
            ), &[Line { class: "k1", values: p50 }, Line { class: "k3", values: p99 }]))
            (chart("limit hits", &limits_now, &limit_lines))
        }
        p.legend {
            @for (i, kind) in LIMIT_KINDS.iter().enumerate() {
                span class={"swatch k" (i)} {} " " (kind) " "
            }
        }
    }
}
