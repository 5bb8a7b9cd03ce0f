// The Palisade console's only script: live updates. The page says what it shows
// (<main data-topics="...">); when one of those topics changes, or on a tick for pages
// with charts, the page's <main> is fetched again and put in place. Everything it puts in
// the page was rendered, and escaped, by the server.
'use strict';
(() => {
  const main = document.querySelector('main[data-topics]');
  const badge = document.getElementById('live');
  if (!main || !window.EventSource) return;
  const topics = new Set(main.dataset.topics.split(' ').filter(Boolean));
  let busy = false;
  let again = false;
  let last = 0;
  // At most one refresh a second, and none while the operator is typing in a field of <main>.
  const refresh = async () => {
    if (busy) { again = true; return; }
    const wait = 1000 - (Date.now() - last);
    if (wait > 0) { busy = true; setTimeout(() => { busy = false; refresh(); }, wait); return; }
    const focused = document.activeElement;
    if (focused && main.contains(focused) && /^(INPUT|TEXTAREA|SELECT)$/.test(focused.tagName)) {
      again = true; return;
    }
    busy = true;
    last = Date.now();
    try {
      const response = await fetch(location.href, {
        headers: { 'X-Console-Part': 'main' }, credentials: 'same-origin', redirect: 'error',
      });
      if (response.ok) {
        const open = new Set([...main.querySelectorAll('details[open]')].map(d => d.textContent.slice(0, 80)));
        main.innerHTML = await response.text();
        main.querySelectorAll('details').forEach(d => { if (open.has(d.textContent.slice(0, 80))) d.open = true; });
        main.dataset.refreshed = String(Number(main.dataset.refreshed || 0) + 1);
      } else if (response.status === 401 || response.status === 403) {
        location.href = '/console/login';
      }
    } catch (_) {
      // The server is away; the event stream's reconnection says so.
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  };
  const events = new EventSource('/console/events');
  events.addEventListener('open', () => { if (badge) badge.className = 'live on'; });
  events.addEventListener('error', () => { if (badge) badge.className = 'live off'; });
  events.addEventListener('change', e => {
    if (e.data.split(' ').some(t => topics.has(t))) refresh();
  });
  events.addEventListener('tick', () => { if (topics.has('tick')) refresh(); });
})();
