// The UI's one script (progressive enhancement: every page works without it). It follows the SSE endpoints
// the API already has (deploy events, logs), refreshes the parts of a page marked `data-live` while
// something is in flight, fetches secrets on demand for "Reveal" and "Show credentials", and previews a
// job's next runs while its schedule is typed. Plain ES2017,
// no framework; all text goes in through textContent.
export const CLIENT = `(function () {
  'use strict';
  var FINAL = { success: 1, failed: 1, auto_rollback: 1, cancelled: 1 };
  var streams = {};

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function clock(iso) { return (iso || '').replace(/^.*T/, '').replace(/Z$/, ''); }

  function eventRow(ev) {
    var li = el('li', 'l-' + ev.level);
    li.setAttribute('data-event-id', ev.id);
    var t = el('time', '', clock(ev.timestamp)); t.setAttribute('datetime', ev.timestamp);
    li.appendChild(t); li.appendChild(el('span', 'mono', ev.step)); li.appendChild(el('span', '', ev.message));
    return li;
  }

  function statusBadges(id, status) {
    var words = { success: 's-ok', active: 's-ok', failed: 's-bad', error: 's-bad', auto_rollback: 's-bad', cancelled: 's-idle', pending: 's-warn', running: 's-warn' };
    document.querySelectorAll('[data-deploy-status="' + id + '"]').forEach(function (b) {
      b.textContent = status; b.className = 'badge ' + (words[status] || 's-idle');
    });
  }

  function followDeploy(list) {
    var id = list.getAttribute('data-deploy-stream');
    if (streams[id]) return;
    var last = Number(list.getAttribute('data-last-id') || 0);
    var es = new EventSource('/api/deploys/' + id + '/events/stream');
    streams[id] = es;
    es.addEventListener('deploy_event', function (m) {
      var ev = JSON.parse(m.data);
      if (ev.id <= last) return;
      last = ev.id;
      var target = document.querySelector('[data-deploy-stream="' + id + '"]') || list;
      var empty = target.querySelector('.empty'); if (empty) empty.remove();
      target.appendChild(eventRow(ev));
      if (ev.step !== 'pull') statusBadges(id, 'running');
    });
    es.addEventListener('done', function (m) {
      es.close(); delete streams[id];
      var st = JSON.parse(m.data).status;
      statusBadges(id, st);
      refresh();
    });
  }

  function followLogs(pre) {
    if (pre.getAttribute('data-following')) return;
    pre.setAttribute('data-following', '1');
    var state = document.querySelector('[data-logs-state]');
    // data-tail: the lines of history the page does not hold already (the Logs tab holds its last lines).
    var es = new EventSource('/api/apps/' + pre.getAttribute('data-logs') + '/logs/stream?tail=' + (pre.getAttribute('data-tail') || '100'));
    // A whole log (no inner scroll box) grows the page: it keeps to the page's end, before its #newest anchor.
    var whole = pre.classList.contains('whole');
    var root = document.documentElement;
    function line(text, cls) {
      var stick = whole ? window.scrollY + window.innerHeight >= root.scrollHeight - 8 : pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
      var empty = pre.querySelector('.empty'); if (empty) empty.remove();
      pre.insertBefore(el('span', cls, text + '\\n'), whole ? document.getElementById('newest') : null);
      while (pre.childNodes.length > 1000) pre.removeChild(pre.firstChild);
      if (stick && whole) window.scrollTo(0, root.scrollHeight);
      else if (stick) pre.scrollTop = pre.scrollHeight;
    }
    es.addEventListener('stdout', function (m) { line(m.data, ''); });
    // stderr is where many programs write their ordinary log: marked, not painted as an error.
    es.addEventListener('stderr', function (m) { line(m.data, 'stderr'); });
    es.addEventListener('status', function (m) {
      if (m.data === 'switched') line('--- now following the new live container ---', 'muted');
      if (state) state.textContent = 'Following live logs.';
    });
    es.onerror = function () { if (state) state.textContent = 'Log stream interrupted; reconnecting...'; };
  }

  function connect(root) {
    root.querySelectorAll('[data-deploy-stream]').forEach(followDeploy);
    root.querySelectorAll('[data-logs]').forEach(followLogs);
  }

  var refreshing = false;
  function refresh() {
    if (refreshing || !document.querySelector('[data-live]')) return;
    refreshing = true;
    fetch(location.pathname + location.search, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, 'text/html');
        document.querySelectorAll('[data-live]').forEach(function (old) {
          var fresh = doc.getElementById(old.id);
          if (!fresh || old.contains(document.activeElement)) return;
          var running = old.querySelector('[data-deploy-stream]');
          var next = fresh.querySelector('[data-deploy-stream]');
          if (running && next && streams[running.getAttribute('data-deploy-stream')] &&
              running.getAttribute('data-deploy-stream') === next.getAttribute('data-deploy-stream')) return;
          old.replaceWith(document.importNode(fresh, true));
        });
        connect(document);
      })
      .catch(function () {})
      .then(function () { refreshing = false; });
  }

  function onReveal(e) {
    var form = e.target.closest('form[data-reveal]');
    if (!form) return;
    e.preventDefault();
    var out = document.getElementById(form.getAttribute('data-target'));
    var button = form.querySelector('button');
    if (form.getAttribute('data-shown')) {
      out.textContent = out.getAttribute('data-mask') || '';
      if (form.hasAttribute('data-credentials')) out.hidden = true;
      form.removeAttribute('data-shown'); button.textContent = 'Reveal';
      return;
    }
    fetch(form.getAttribute('data-reveal'), { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, b: b }; }); })
      .then(function (res) {
        if (!res.ok) { out.textContent = res.b.error || 'could not fetch'; return; }
        if (form.hasAttribute('data-credentials')) {
          out.textContent = '';
          var dl = el('dl', 'facts');
          Object.keys(res.b).forEach(function (k) { dl.appendChild(el('dt', '', k)); dl.appendChild(el('dd', 'mono', String(res.b[k]))); });
          out.appendChild(dl);
          out.hidden = false;
        } else {
          if (!out.getAttribute('data-mask')) out.setAttribute('data-mask', out.textContent);
          out.textContent = res.b.value;
        }
        form.setAttribute('data-shown', '1'); button.textContent = 'Hide';
      });
  }

  // The job editor: the schedule's next runs while it is typed (the same fragment the server renders).
  function previewRuns(input) {
    var timer;
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        fetch(input.getAttribute('data-next-runs') + '?schedule=' + encodeURIComponent(input.value), { credentials: 'same-origin', headers: { accept: 'text/html' } })
          .then(function (r) { return r.ok ? r.text() : null; })
          .then(function (html) {
            if (html === null) return;
            var fresh = new DOMParser().parseFromString(html, 'text/html').getElementById('next-runs');
            var old = document.getElementById('next-runs');
            if (fresh && old) old.replaceWith(document.importNode(fresh, true));
          })
          .catch(function () {});
      }, 300);
    });
  }

  document.addEventListener('submit', onReveal);
  document.querySelectorAll('[data-next-runs]').forEach(previewRuns);
  connect(document);
  // The log page opens at its newest line even when reached without the #newest anchor.
  // (once laid out: the log is the end of the page, so the page's end is its newest line).
  if (document.getElementById('newest') && !location.hash) {
    window.addEventListener('load', function () { window.scrollTo(0, document.documentElement.scrollHeight); });
  }
  var every = Number(document.body.getAttribute('data-refresh') || 0);
  if (every > 0) setInterval(function () { if (!document.hidden) refresh(); }, every * 1000);
})();
`;
