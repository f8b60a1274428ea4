// The terminal page's script: an xterm.js Terminal joined to the page's WebSocket. Keystrokes go out as
// binary frames, the container's TTY output comes back as binary frames; resizes and the exit are small JSON
// text frames (src/terminal/session.ts). Plain ES2017; the WebSocket URL (with its CSRF token) is in the page.
export const TERMINAL_CLIENT = `(function () {
  'use strict';
  var box = document.getElementById('terminal');
  var state = document.getElementById('terminal-state');
  if (!box || !window.Terminal) return;
  var term = new window.Terminal({ cursorBlink: true, convertEol: false, fontSize: 14, scrollback: 5000 });
  term.open(box);
  function fit() {
    var cell = box.querySelector('.xterm-rows > div');
    var h = cell ? cell.getBoundingClientRect().height : 17;
    var w = term._core && term._core._renderService ? term._core._renderService.dimensions.css.cell.width : 9;
    var cols = Math.max(20, Math.floor((box.clientWidth - 8) / (w || 9)));
    var rows = Math.max(5, Math.floor((box.clientHeight - 8) / (h || 17)));
    if (cols !== term.cols || rows !== term.rows) term.resize(cols, rows);
  }
  fit();
  var url = new URL(box.getAttribute('data-ws'), location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('cols', String(term.cols));
  url.searchParams.set('rows', String(term.rows));
  var ws = new WebSocket(url.toString());
  ws.binaryType = 'arraybuffer';
  var enc = new TextEncoder();
  function say(text) { if (state) state.textContent = text; }
  ws.onopen = function () { say('Connected.'); box.setAttribute('data-connected', '1'); term.focus(); };
  ws.onmessage = function (m) {
    if (typeof m.data === 'string') {
      var msg = JSON.parse(m.data);
      if (msg.type === 'exit') say('The session ended (exit ' + msg.code + ').');
      if (msg.type === 'error') say(msg.error);
      return;
    }
    term.write(new Uint8Array(m.data));
  };
  ws.onclose = function () { box.removeAttribute('data-connected'); if (state && state.textContent === 'Connected.') say('Disconnected.'); };
  term.onData(function (d) { if (ws.readyState === 1) ws.send(enc.encode(d)); });
  term.onResize(function (s) { if (ws.readyState === 1) ws.send(JSON.stringify({ type: 'resize', cols: s.cols, rows: s.rows })); });
  window.addEventListener('resize', fit);
})();
`;
