// Page-side recorder of what a user sees while typing (installed by driver.mjs's "typing" mode;
// read by typing_timing.py). On the page's own clock (performance.now): every keydown's event time,
// every change of the Tokenline status bar text, and every change of how many characters follow
// `line` (the text the typed line had before typing) on the rendered editor line: its echo. A
// MutationObserver sees each DOM change as it lands; a 5 ms poll backs it up.
(cfg) => {
  if (window.__tlrec) {
    Object.assign(window.__tlrec.cfg, cfg);
    return 'updated';
  }
  const R = { keys: [], status: [], echo: [], cfg: { line: null, ...cfg } };
  const statusRe = /^(Sel [\d,]+ · )?[\d,]+…? \/ [\d,]+/;
  let lastStatus;
  let lastEcho;
  R.statusText = () => {
    for (const el of document.querySelectorAll('#workbench\\.parts\\.statusbar .statusbar-item')) {
      const t = (el.textContent || '').replace(/\s+/g, ' ').trim();
      if (statusRe.test(t)) return t;
    }
    return null;
  };
  R.echoLen = () => {
    const line = R.cfg.line;
    if (!line) return -1;
    let best = -1;
    for (const el of document.querySelectorAll('.editor-instance .view-lines .view-line')) {
      const t = (el.textContent || '').replace(/\u00a0/g, ' ');
      if (t.startsWith(line)) best = Math.max(best, t.length - line.length);
    }
    return best;
  };
  R.check = (src) => {
    const now = performance.now();
    const s = R.statusText();
    if (s !== lastStatus) {
      R.status.push([now, s, src]);
      lastStatus = s;
    }
    const e = R.echoLen();
    if (e !== lastEcho) {
      R.echo.push([now, e, src]);
      lastEcho = e;
    }
  };
  R.reset = (line) => {
    R.cfg.line = line;
    R.keys.length = 0;
    R.status.length = 0;
    R.echo.length = 0;
    lastStatus = undefined;
    lastEcho = undefined;
    R.check('reset');
    return performance.now();
  };
  R.take = () => ({ origin: performance.timeOrigin, keys: R.keys.slice(), status: R.status.slice(), echo: R.echo.slice(), now: performance.now() });
  window.addEventListener('keydown', (ev) => R.keys.push([ev.timeStamp, performance.now(), ev.key]), true);
  new MutationObserver(() => R.check('mo')).observe(document.body, { subtree: true, childList: true, characterData: true });
  setInterval(() => R.check('poll'), 5);
  window.__tlrec = R;
  return 'installed';
}
