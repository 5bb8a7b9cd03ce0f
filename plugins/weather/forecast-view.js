// The forecast's MCP Apps view: one self-contained page (no network: the host's default CSP)
// that speaks the extension's postMessage protocol to its host by hand (JSON-RPC 2.0:
// ui/initialize, then ui/notifications/initialized; it draws each ui/notifications/tool-result
// as a line of temperatures, and says its size with ui/notifications/size-changed).

export const FORECAST_VIEW = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Forecast</title>
<style>
  :root { color-scheme: light dark; }
  body { margin: 0; padding: 8px; font: 13px var(--font-sans, system-ui, sans-serif);
         color: var(--color-text-primary, #1a1a1a); }
  h1 { font-size: 14px; margin: 0 0 4px; }
  .line { fill: none; stroke: var(--color-ring-primary, #e8590c); stroke-width: 2; }
  .dot { fill: var(--color-ring-primary, #e8590c); }
  .label { font-size: 10px; fill: currentColor; }
</style>
</head>
<body>
<h1 id="title">Waiting for the forecast...</h1>
<div id="chart"></div>
<script>
"use strict";
(() => {
  const host = window.parent;
  let nextId = 1;
  const waiting = new Map();
  const post = (message) => host.postMessage(message, "*");
  const notify = (method, params) => post({ jsonrpc: "2.0", method, ...(params ? { params } : {}) });
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, { resolve, reject });
    post({ jsonrpc: "2.0", id, method, params });
  });

  const SVG = "http://www.w3.org/2000/svg";
  // textContent and attributes only: what the tool returned never becomes markup.
  function node(name, attributes, text) {
    const made = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, String(value));
    if (text !== undefined) made.textContent = text;
    return made;
  }

  function draw(result) {
    const title = document.getElementById("title");
    const forecast = result.structuredContent || {};
    const points = Array.isArray(forecast.points) ? forecast.points : [];
    if (result.isError || points.length === 0) {
      title.textContent = "No forecast";
      return;
    }
    const unit = forecast.units === "imperial" ? "°F" : "°C";
    title.textContent = "Forecast for " + forecast.city + (forecast.country ? ", " + forecast.country : "");
    const width = 360, height = 150, pad = 28;
    const temps = points.map((p) => Number(p.temperature) || 0);
    const low = Math.min(...temps), high = Math.max(...temps), span = Math.max(high - low, 1);
    const x = (i) => pad + (points.length === 1 ? 0 : i * (width - 2 * pad) / (points.length - 1));
    const y = (t) => height - pad - (t - low) * (height - 2 * pad) / span;
    const svg = node("svg", { id: "forecast", width, height, viewBox: "0 0 " + width + " " + height, role: "img" });
    svg.append(node("polyline", { class: "line", points: temps.map((t, i) => x(i) + "," + y(t)).join(" ") }));
    points.forEach((point, i) => {
      const t = temps[i];
      svg.append(node("circle", { class: "dot", cx: x(i), cy: y(t), r: 3, "data-temperature": t }));
      svg.append(node("text", { class: "label", x: x(i), y: y(t) - 6, "text-anchor": "middle" }, Math.round(t) + unit));
      svg.append(node("text", { class: "label", x: x(i), y: height - 8, "text-anchor": "middle" }, String(point.time).slice(11, 16)));
    });
    document.getElementById("chart").replaceChildren(svg);
  }

  let reported = "";
  function reportSize() {
    const root = document.documentElement;
    const size = { width: Math.ceil(window.innerWidth), height: Math.ceil(root.getBoundingClientRect().height) };
    if (JSON.stringify(size) !== reported) {
      reported = JSON.stringify(size);
      notify("ui/notifications/size-changed", size);
    }
  }

  window.addEventListener("message", (event) => {
    if (event.source !== host) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined) {
      const call = waiting.get(message.id);
      if (!call) return;
      waiting.delete(message.id);
      if (message.error) call.reject(new Error(message.error.message));
      else call.resolve(message.result);
      return;
    }
    if (message.id !== undefined) {
      const known = message.method === "ping" || message.method === "ui/resource-teardown";
      post(known
        ? { jsonrpc: "2.0", id: message.id, result: {} }
        : { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
      return;
    }
    if (message.method === "ui/notifications/tool-result") draw(message.params || {});
  });

  request("ui/initialize", {
    appInfo: { name: "weather-forecast", version: "1.0.0" },
    appCapabilities: {},
    protocolVersion: "2026-01-26",
  }).then(() => {
    notify("ui/notifications/initialized");
    reportSize();
    new ResizeObserver(reportSize).observe(document.body);
  }, (error) => {
    document.getElementById("title").textContent = "The host did not answer: " + error.message;
  });
})();
</script>
</body>
</html>
`;
