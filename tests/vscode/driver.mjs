// Drives real VS Code (code-server) in Debian's headless Chromium with playwright-core and records
// what a person would see. Run by test_vscode_e2e.py:
//
//   node driver.mjs CONFIG.json
//
// CONFIG: {mode: "ui" | "host" | "missing" | "bundled" | "bundledFailure" | "budget" | "tiktoken" |
//          "switch" | "compare" | "large" | "chat" | "typing", url,
//          playwright, chromium, artifacts, workspace, files: {...}, hostResult, timeoutMs}. It
// prints one JSON object on its last stdout line: what each step saw (or the error it met), so the
// Python tests assert on each thing separately.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as path from 'node:path';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const require = createRequire(import.meta.url);
const { chromium } = require(config.playwright);

// `(budget)` follows when the project configuration gives the file a budget.
const STATUS_RE = /^(Sel [\d,]+ · )?[\d,]+ \/ [\d,]+( tokens)?( \(budget\))?$/;
const results = { steps: {}, console: [] };
const T = config.timeoutMs ?? 60000;

function log(msg) {
  process.stderr.write(`[driver ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);
}

async function step(name, fn) {
  log(`step ${name}`);
  try {
    results.steps[name] = { ok: true, ...(await fn()) };
  } catch (err) {
    log(`step ${name} failed: ${err?.stack ?? err}`);
    results.steps[name] = { ok: false, error: String(err?.message ?? err) };
    await shot(`${name}-FAILED`).catch(() => undefined);
  }
}

let page;
async function shot(name) {
  const file = path.join(config.artifacts, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** The Tokenline status bar item: its text, classes and background. */
async function statusItem() {
  return page.evaluate((reSrc) => {
    const re = new RegExp(reSrc);
    for (const el of document.querySelectorAll('#workbench\\.parts\\.statusbar .statusbar-item')) {
      const text = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
      if (re.test(text) || el.id.includes('tokenline')) {
        return {
          id: el.id,
          text,
          className: el.className,
          background: getComputedStyle(el).backgroundColor,
          title: el.getAttribute('aria-label') ?? '',
        };
      }
    }
    return null;
  }, STATUS_RE.source);
}

async function waitForStatus(predicate, what, timeout = T) {
  const end = Date.now() + timeout;
  let last = null;
  while (Date.now() < end) {
    last = await statusItem();
    if (last && STATUS_RE.test(last.text) && predicate(last)) {
      return last;
    }
    await page.waitForTimeout(150);
  }
  throw new Error(`status bar never showed ${what}; last seen: ${JSON.stringify(last)}`);
}

async function openFile(name) {
  const row = page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${name}"]`).first();
  try {
    await row.waitFor({ state: 'visible', timeout: 15000 });
    await row.click();
  } catch {
    log(`no explorer row for ${name}; using Quick Open`);
    await page.keyboard.press('Control+P');
    await page.keyboard.type(name);
    await page.waitForTimeout(500);
    await page.keyboard.press('Enter');
  }
  await page.locator(`.tabs-container .tab.active[aria-label^="${name}"], .tabs-container .tab.active:has-text("${name}")`).first().waitFor({ timeout: 15000 });
  await page.locator('.monaco-editor .view-lines').first().waitFor({ timeout: 15000 });
}

/** The quick-input row whose label is exactly `label`. */
function quickPickRow(label) {
  const exact = new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
  return page
    .locator('.quick-input-widget .quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: exact }) })
    .first();
}

async function runCommand(title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(`>${title}`);
  const row = quickPickRow(title);
  await row.waitFor({ timeout: 10000 });
  await row.click();
}

/** Colours of the rendered spans on the first visible lines of the active editor. */
async function lineColours(lines = 3) {
  return page.evaluate((n) => {
    const editor = document.querySelector('.editor-group-container.active .monaco-editor') ?? document.querySelector('.monaco-editor');
    const rows = [...editor.querySelectorAll('.view-lines .view-line')]
      .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
      .slice(0, n);
    return rows.map((row) =>
      [...row.querySelectorAll(':scope > span > span')].map((s) => ({ text: s.textContent, color: getComputedStyle(s).color })),
    );
  }, lines);
}

/**
 * The first `n` lines once every colour in `want` shows on them and, given `unlike`, they are
 * coloured otherwise than it (new boundaries); whatever shows after T otherwise.
 */
async function boundaryLines(want, n = 3, unlike = undefined) {
  const key = (lines) => JSON.stringify(lines);
  const end = Date.now() + T;
  let lines = [];
  while (Date.now() < end) {
    lines = await lineColours(n);
    const seen = new Set(lines.flat().map((s) => s.color));
    if (want.every((c) => seen.has(c.toLowerCase())) && (!unlike || key(lines) !== key(unlike))) {
      break;
    }
    await page.waitForTimeout(250);
  }
  return lines;
}

/** Hovers the Tokenline status bar item: the tooltip's text. */
async function statusTooltip() {
  const item = page.locator('[id="tokenline.tokenline.tokenline.status"]');
  await item.hover();
  const hover = page.locator('.workbench-hover-container, .monaco-hover').last();
  await hover.waitFor({ state: 'visible', timeout: 10000 });
  return (await hover.textContent()) ?? '';
}

/** The rows of the open quick pick in list order: label, description, separator, check mark. */
async function quickPickRows() {
  const rows = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  await rows.first().waitFor({ state: 'visible', timeout: 15000 });
  await page.waitForTimeout(300);
  return page.evaluate(() =>
    [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row')]
      .map((row) => {
        const text = (sel) => row.querySelector(sel)?.textContent?.trim() ?? '';
        return {
          index: Number(row.dataset.index),
          label: text('.label-name'),
          description: text('.label-description'),
          // A group's heading (a separator's label) shows on its first row.
          separator: text('.quick-input-list-separator'),
          checked: !!row.querySelector('.codicon-check'),
        };
      })
      .sort((a, b) => a.index - b.index),
  );
}

async function notificationsText() {
  return page.evaluate(() =>
    [...document.querySelectorAll('.notifications-toasts .notification-list-item-message, .notifications-center .notification-list-item-message')]
      .map((e) => e.textContent?.trim() ?? ''),
  );
}

const started = Date.now();

async function main() {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(config.url).origin });
    page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && results.console.length < 50) {
        results.console.push(m.text().slice(0, 300));
      }
    });
    await page.goto(config.url, { timeout: T });
    await page.locator('.monaco-workbench').waitFor({ timeout: T });
    if (config.mode === 'host') {
      await hostMode();
    } else if (config.mode === 'missing') {
      await missingMode();
    } else if (config.mode === 'bundled') {
      await bundledMode();
    } else if (config.mode === 'bundledFailure') {
      await bundledFailureMode();
    } else if (config.mode === 'budget') {
      await budgetMode();
    } else if (config.mode === 'tiktoken') {
      await tiktokenMode();
    } else if (config.mode === 'switch') {
      await switchMode();
    } else if (config.mode === 'compare') {
      await compareMode();
    } else if (config.mode === 'large') {
      await largeMode();
    } else if (config.mode === 'chat') {
      await chatMode();
    } else if (config.mode === 'typing') {
      await typingMode();
    } else {
      await uiMode();
    }
  } finally {
    await browser.close();
  }
}

async function hostMode() {
  await step('host', async () => {
    // host/index.js polls for up to 45 s per check itself.
    const end = Date.now() + Math.max(T, 180000);
    while (Date.now() < end) {
      if (fs.existsSync(config.hostResult)) {
        await shot('host-run');
        return { result: JSON.parse(fs.readFileSync(config.hostResult, 'utf8')) };
      }
      await page.waitForTimeout(250);
    }
    throw new Error(`the extension-host test module wrote no result to ${config.hostResult}`);
  });
}

async function missingMode() {
  await step('missing', async () => {
    await openFile(config.files.prompt);
    const end = Date.now() + T;
    let notifications = [];
    while (Date.now() < end) {
      notifications = await notificationsText();
      if (notifications.some((t) => t.includes('not importable'))) {
        break;
      }
      await page.waitForTimeout(200);
    }
    const buttons = await page
      .locator('.notifications-toasts .notification-list-item-buttons-container .monaco-button')
      .allTextContents();
    // Give a restart loop, if there were one, time to show itself in the log.
    await page.waitForTimeout(3000);
    const status = await statusItem();
    await shot('20-server-package-missing');
    return { notifications, buttons: buttons.map((b) => b.trim()), status };
  });
}

/** No tokenline.python: the bundled server, installed on the first start, reused on the next. */
async function bundledMode() {
  await step('bundled', async () => {
    const workbench = Date.now();
    await openFile(config.files.prompt);
    // Until the count shows: look for the install's progress notification and photograph it.
    const end = Date.now() + (config.installTimeoutMs ?? 600000);
    let progress = null;
    let status = null;
    while (Date.now() < end) {
      const texts = await notificationsText();
      const shown = texts.find((t) => t.includes('installing its server'));
      if (shown && !progress) {
        // Let the toast finish sliding in before the photograph.
        await page.waitForTimeout(800);
        progress = { text: shown, screenshot: await shot(`${config.shotPrefix}-progress`) };
      }
      const item = await statusItem();
      if (item && STATUS_RE.test(item.text) && !item.text.startsWith('Sel')) {
        status = item;
        break;
      }
      await page.waitForTimeout(150);
    }
    if (!status) {
      throw new Error(`no token count in the status bar; last notifications: ${JSON.stringify(await notificationsText())}`);
    }
    // From the browser's start, and from the workbench being there (the file about to open).
    const msToCount = Date.now() - started;
    const msWorkbenchToCount = Date.now() - workbench;
    const tooltip = await statusTooltip();
    const screenshot = await shot(`${config.shotPrefix}-count`);
    return { status, msToCount, msWorkbenchToCount, progress, tooltip, screenshot, notifications: await notificationsText() };
  });
  if (config.restart) {
    // Tokenline: Restart Language Server, as a person would: the count comes back.
    await step('restart', async () => {
      await runCommand('Tokenline: Restart Language Server');
      await page.waitForTimeout(1500);
      const status = await waitForStatus((s) => STATUS_RE.test(s.text) && !s.text.startsWith('Sel'), 'the count after a restart');
      return { status };
    });
  }
}

/** The bundled server's install fails: the notification, its buttons, the status bar. */
async function bundledFailureMode() {
  await step('failure', async () => {
    await openFile(config.files.prompt);
    const end = Date.now() + (config.installTimeoutMs ?? 600000);
    let message = null;
    while (Date.now() < end && !message) {
      message = (await notificationsText()).find((t) => t.includes(config.expect)) ?? null;
      await page.waitForTimeout(200);
    }
    if (!message) {
      throw new Error(`no notification with ${JSON.stringify(config.expect)}: ${JSON.stringify(await notificationsText())}`);
    }
    const toast = page.locator('.notifications-toasts .notification-list-item', { hasText: config.expect }).first();
    const buttons = (await toast.locator('.notification-list-item-buttons-container .monaco-button').allTextContents()).map((b) => b.trim());
    // Give a reinstall loop, if there were one, time to show itself in the log.
    await page.waitForTimeout(4000);
    const status = await statusItem();
    const screenshot = await shot(config.shotPrefix);
    return { message, buttons, status, screenshot };
  });
}

/** A file with a budget from the project's pyproject.toml: the status bar, the Error, the Problems panel. */
async function budgetMode() {
  await step('budget', async () => {
    // The file is in a folder (prompts/): unfold it so that its row is there to click.
    await page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${config.files.folder}"]`).first().click();
    await openFile(config.files.prompt);
    const status = await waitForStatus((s) => s.text.endsWith('(budget)'), 'a count against the budget');
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 20000 });
    const squiggles = await page.locator('.monaco-editor .squiggly-error').count();
    await page.keyboard.press('Control+Shift+M');
    const marker = page.locator('.markers-panel .monaco-list-row', { hasText: 'budget' }).first();
    await marker.waitFor({ timeout: 15000 });
    const problem = ((await marker.textContent()) ?? '').trim();
    const errorIcon = (await marker.locator('.codicon-error').count()) > 0;
    // The status bar as the photograph shows it, with the Problems panel open.
    const shown = await statusItem();
    const screenshot = await shot(config.shotName);
    return { status, shown, squiggles, problem, errorIcon, screenshot };
  });
}

async function uiMode() {
  const f = config.files;

  await step('open', async () => {
    await openFile(f.prompt);
    const status = await waitForStatus((s) => !s.text.startsWith('Sel'), 'a token count');
    return { status };
  });

  await step('colours', async () => {
    // Semantic tokens arrive after the first paint; wait until the lines show both colours.
    const lines = await boundaryLines(config.boundaryColours);
    const file = await shot('01-prompt-open');
    return { lines, screenshot: file };
  });

  await step('tooltip', async () => {
    const text = await statusTooltip();
    await shot('02-status-tooltip');
    await page.mouse.move(400, 400);
    return { text };
  });

  await step('typing', async () => {
    const before = await statusItem();
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+End');
    const t0 = Date.now();
    await page.keyboard.type(config.typed, { delay: 15 });
    const typedMs = Date.now() - t0;
    const after = await waitForStatus((s) => s.text !== before.text && !s.text.startsWith('Sel'), 'a new count after typing');
    await page.keyboard.press('Control+S');
    await page.waitForTimeout(800);
    // The count for the saved text (the server may still be catching up when the first change shows).
    await page.waitForTimeout(500);
    const settled = await statusItem();
    await shot('03-after-typing');
    return { before, after: settled, firstChange: after, typedMs };
  });

  await step('selection', async () => {
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('Shift+End');
    const single = await waitForStatus((s) => s.text.startsWith('Sel '), 'a selection count');
    await shot('04-selection');
    // Multi-cursor: the first word and its next occurrence.
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('Control+Shift+ArrowRight');
    const word = await waitForStatus((s) => s.text.startsWith('Sel ') && s.text !== single.text, 'a word selection count');
    await page.keyboard.press('Control+D');
    const multi = await waitForStatus((s) => s.text.startsWith('Sel ') && s.text !== word.text, 'a multi-cursor selection count');
    await shot('05-multi-selection');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+End');
    const cleared = await waitForStatus((s) => !s.text.startsWith('Sel '), 'the count without selection');
    return { single, word, multi, cleared };
  });

  await step('tokenAt', async () => {
    await page.keyboard.press('Control+Home');
    await runCommand('Tokenline: Show Token Details at Cursor');
    const end = Date.now() + 15000;
    let texts = [];
    while (Date.now() < end) {
      texts = await notificationsText();
      if (texts.some((t) => t.includes('Token '))) {
        break;
      }
      await page.waitForTimeout(200);
    }
    await shot('06-token-at-cursor');
    return { notifications: texts };
  });

  await step('toggle', async () => {
    await page.keyboard.press('Escape');
    await runCommand('Tokenline: Toggle Token Boundaries');
    const want = config.boundaryColours.map((c) => c.toLowerCase());
    const end = Date.now() + 20000;
    let off = [];
    while (Date.now() < end) {
      off = await lineColours(1);
      const seen = new Set(off.flat().map((s) => s.color));
      if (!want.some((c) => seen.has(c))) {
        break;
      }
      await page.waitForTimeout(250);
    }
    await shot('07-boundaries-off');
    await runCommand('Tokenline: Toggle Token Boundaries');
    const end2 = Date.now() + 20000;
    let on = [];
    while (Date.now() < end2) {
      on = await lineColours(1);
      const seen = new Set(on.flat().map((s) => s.color));
      if (want.every((c) => seen.has(c))) {
        break;
      }
      await page.waitForTimeout(250);
    }
    return { off, on };
  });

  await step('models', async () => {
    await page.locator('[id="tokenline.tokenline.tokenline.status"]').click();
    const rows = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
    await rows.first().waitFor({ state: 'visible', timeout: 15000 });
    await page.waitForTimeout(300);
    const items = await rows.allTextContents();
    const title = (await page.locator('.quick-input-widget .quick-input-title').textContent()) ?? '';
    await shot('08-model-picker');
    await page.keyboard.press('Escape');
    return { items, title };
  });

  await step('contextWindow', async () => {
    // Tokenline: Set Context Window -> 4,096: the setting goes to the server, which re-counts.
    const before = await statusItem();
    const pick = async (label) => {
      await runCommand('Tokenline: Set Context Window');
      const row = quickPickRow(label);
      await row.waitFor({ timeout: 10000 });
      await row.click();
    };
    let changed;
    try {
      await pick('4,096');
      changed = await waitForStatus((s) => s.text.includes('/ 4,096'), 'the new context window');
      await shot('085-context-window');
    } finally {
      await page.keyboard.press('Escape');
      await pick('8,192');
    }
    const restored = await waitForStatus((s) => s.text.includes('/ 8,192'), 'the context window restored');
    return { before, changed, restored };
  });

  if (f.warn) {
    await step('warn', async () => {
      await openFile(f.warn);
      const status = await waitForStatus((s) => s.className.includes('warning-kind'), 'the warning colour');
      await shot('09-warning');
      return { status };
    });
  }

  await step('over', async () => {
    await openFile(f.big);
    const status = await waitForStatus((s) => s.className.includes('error-kind'), 'the error colour');
    // The Error runs from the first token past the window to the end: look at the end.
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+End');
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 20000 });
    const squiggles = await page.locator('.monaco-editor .squiggly-error').count();
    // The Problems panel lists the Error.
    await page.keyboard.press('Control+Shift+M');
    const marker = page.locator('.markers-panel .monaco-list-row', { hasText: 'context window' }).first();
    await marker.waitFor({ timeout: 15000 });
    const problem = ((await marker.textContent()) ?? '').trim();
    await shot('10-over-window');
    await page.keyboard.press('Control+Shift+M');
    return { status, squiggles, problem };
  });

  await step('themes', async () => {
    // Pick each colour theme as a person would (Preferences: Color Theme) and look at the boundary
    // colours; the last one is the theme the session started with.
    await openFile(f.prompt);
    const names = Object.keys(config.themes).filter((n) => n !== config.startTheme);
    names.push(config.startTheme);
    const themes = {};
    let previous = '';
    for (const [i, name] of names.entries()) {
      await runCommand('Preferences: Color Theme');
      const input = page.locator('.quick-input-widget input');
      await page.locator('.quick-input-widget .quick-input-list .monaco-list-row').first().waitFor({ timeout: 10000 });
      // The picker shows labels ("Light High Contrast"); settings use ids ("Default High Contrast Light").
      const label = config.themeLabels[name];
      await input.fill(label);
      const row = quickPickRow(label);
      await row.waitFor({ timeout: 10000 });
      await row.click();
      // A theme without Tokenline rules (want = null): wait until the colours are not the last theme's.
      const want = config.themes[name];
      const end = Date.now() + 20000;
      let spans = [];
      while (Date.now() < end) {
        spans = (await lineColours(1))[0] ?? [];
        const seen = new Set(spans.map((s) => s.color));
        const key = [...seen].sort().join();
        if (want ? want.every((c) => seen.has(c)) : key !== previous && seen.size >= 2) {
          break;
        }
        await page.waitForTimeout(250);
      }
      previous = [...new Set(spans.map((s) => s.color))].sort().join();
      const slug = name.toLowerCase().replace(/[^a-z]+/g, '-');
      themes[name] = { spans, screenshot: await shot(`${11 + i}-theme-${slug}`) };
    }
    return { themes };
  });
}

/** tokenline.model set to a tiktoken encoding (from a seeded cache); a workspace tokenizer.json. */
async function tiktokenMode() {
  const f = config.files;
  await step('open', async () => {
    await openFile(f.prompt);
    const status = await waitForStatus((s) => !s.text.startsWith('Sel'), 'a token count');
    return { status };
  });

  let opened = [];
  await step('colours', async () => {
    opened = await boundaryLines(config.boundaryColours, 1);
    return { lines: opened };
  });

  await step('tooltip', async () => {
    const text = await statusTooltip();
    // The editor's boundaries, the status bar and its tooltip in one picture (for the README).
    const screenshot = await shot(`${config.shotPrefix}-tooltip`);
    await page.mouse.move(400, 400);
    return { text, screenshot };
  });

  await step('models', async () => {
    // A click on the status bar: the model picker (1/2), then the context window (2/2).
    await page.locator('[id="tokenline.tokenline.tokenline.status"]').click();
    const rows = await quickPickRows();
    const title = (await page.locator('.quick-input-widget .quick-input-title').textContent()) ?? '';
    const screenshot = await shot(`${config.shotPrefix}-model-picker`);
    return { rows, title, screenshot };
  });

  await step('pick', async () => {
    const before = await statusItem();
    const row = page
      .locator('.quick-input-widget .quick-input-list .monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: config.pick }) })
      .first();
    await row.click();
    // The context window step: keep the window as it is.
    await page.locator('.quick-input-widget .quick-input-title', { hasText: '(2/2)' }).waitFor({ timeout: 10000 });
    await page.keyboard.press('Escape');
    const status = await waitForStatus((s) => s.text !== before.text && !s.text.startsWith('Sel'), 'the count with the picked model');
    const lines = await boundaryLines(config.boundaryColours, 1, opened);
    const tooltip = await statusTooltip();
    const screenshot = await shot(`${config.shotPrefix}-picked`);
    return { before, status, lines, tooltip, screenshot };
  });
}

/** Clicks the status bar, photographs the model picker (1/2), picks `label` and keeps the window (2/2). */
async function pickModel(label, shotName) {
  await page.locator('[id="tokenline.tokenline.tokenline.status"]').click();
  const rows = await quickPickRows();
  const placeholder = (await page.locator('.quick-input-widget input').getAttribute('placeholder')) ?? '';
  const screenshot = await shot(shotName);
  await quickPickRow(label).click();
  await page.locator('.quick-input-widget .quick-input-title', { hasText: '(2/2)' }).waitFor({ timeout: 10000 });
  await page.keyboard.press('Escape');
  return { rows, placeholder, screenshot };
}

/** The status bar item with its warning icon, if it shows one. */
async function statusWithIcon() {
  const item = await statusItem();
  const icon = await page.locator('[id="tokenline.tokenline.tokenline.status"] .codicon-warning').count();
  return item && { ...item, warningIcon: icon > 0 };
}

/**
 * tiktoken's cache empty and no network: choosing o200k_base fails and leaves the warning state;
 * the cache seeded meanwhile (config.seed), choosing it again loads it and the warning goes.
 */
async function switchMode() {
  await step('open', async () => {
    await openFile(config.files.prompt);
    return { status: await waitForStatus((s) => !s.text.startsWith('Sel'), 'a token count') };
  });

  await step('failed', async () => {
    const before = await statusItem();
    const picker = await pickModel(config.model, `${config.shotPrefix}-picker`);
    const end = Date.now() + T;
    let status = null;
    while (Date.now() < end && !(status?.warningIcon && status.className.includes('warning-kind'))) {
      await page.waitForTimeout(200);
      status = await statusWithIcon();
    }
    const notifications = await notificationsText();
    const tooltip = await statusTooltip();
    const screenshot = await shot(`${config.shotPrefix}-warning`);
    await page.mouse.move(400, 400);
    // Later changes keep the warning: the model in use is still not the chosen one.
    await page.waitForTimeout(1500);
    const later = await statusWithIcon();
    return { before, picker, status, notifications, tooltip, screenshot, later };
  });

  await step('again', async () => {
    execFileSync(config.seed.python, [config.seed.tool, config.seed.cache], { stdio: 'pipe', timeout: 300000 });
    const before = await statusWithIcon();
    const picker = await pickModel(config.model, `${config.shotPrefix}-picker-again`);
    const status = await waitForStatus((s) => s.text !== before.text && !s.text.startsWith('Sel'), 'the count with the model chosen again');
    await page.waitForTimeout(500);
    const settled = await statusWithIcon();
    const tooltip = await statusTooltip();
    const screenshot = await shot(`${config.shotPrefix}-loaded`);
    return { before, picker, status, settled, tooltip, screenshot };
  });
}

/** The rows of the tooltip's table (header first), each a list of its cells' text. */
async function tooltipTable() {
  return page.evaluate(() => {
    const hover = [...document.querySelectorAll('.workbench-hover-container, .monaco-hover')].pop();
    return [...(hover?.querySelectorAll('tr') ?? [])].map((tr) => [...tr.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').trim()));
  });
}

/** tokenline.compareModels: the tooltip's table with a selection, and Tokenline: Compare Models. */
async function compareMode() {
  const f = config.files;
  await step('open', async () => {
    await openFile(f.prompt);
    const status = await waitForStatus((s) => !s.text.startsWith('Sel'), 'a token count');
    return { status };
  });

  await step('select', async () => {
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Home');
    for (let i = 0; i < config.selectLines; i++) {
      await page.keyboard.press('Shift+ArrowDown');
    }
    const status = await waitForStatus((s) => s.text.startsWith('Sel'), 'the selection count');
    return { status };
  });

  await step('tooltip', async () => {
    // The table's selection column comes with the server's next status (after tokenline/selection).
    const end = Date.now() + T;
    let rows = [];
    let text = '';
    while (Date.now() < end) {
      text = await statusTooltip();
      rows = await tooltipTable();
      const full = rows.length === config.models + 2 && rows[0].includes('Selection') && rows.slice(1).every((r) => r[4] !== '');
      if (full) {
        break;
      }
      await page.mouse.move(400, 400);
      await page.waitForTimeout(500);
    }
    const screenshot = await shot(`${config.shotPrefix}-tooltip`);
    await page.mouse.move(400, 400);
    return { text, rows, screenshot };
  });

  await step('command', async () => {
    await runCommand('Tokenline: Compare Models');
    const rows = await page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
    await rows.nth(config.models).waitFor({ state: 'visible', timeout: 15000 });
    await page.waitForTimeout(300);
    const items = await page.evaluate(() =>
      [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row')]
        .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
        .map((row) => ({
          label: row.querySelector('.label-name')?.textContent?.trim() ?? '',
          description: row.querySelector('.label-description')?.textContent?.trim() ?? '',
          text: (row.textContent ?? '').replace(/\s+/g, ' ').trim(),
        })),
    );
    const placeholder = (await page.locator('.quick-input-widget input').getAttribute('placeholder')) ?? '';
    const screenshot = await shot(`${config.shotPrefix}-command`);
    await page.keyboard.press('Escape');
    return { items, placeholder, screenshot };
  });
}

/** A document too large for full semantic-token results: its colours come by visible range. */
async function largeMode() {
  await step('open', async () => {
    await openFile(config.files.large);
    const status = await waitForStatus((s) => !s.text.startsWith('Sel'), 'a token count');
    return { status };
  });

  await step('top', async () => {
    const lines = await boundaryLines(config.boundaryColours);
    return { lines, screenshot: await shot('60-large-top') };
  });

  await step('middle', async () => {
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10000 });
    await input.fill(`:${config.middleLine}`);
    await page.keyboard.press('Enter');
    const lines = await boundaryLines(config.boundaryColours);
    return { lines, screenshot: await shot('61-large-middle') };
  });
}

/** A JSONL chat file: the inlay hints of its messages and conversations, and its status bar. */
async function chatMode() {
  await step('open', async () => {
    await openFile(config.files.chat);
    const end = Date.now() + T;
    let status = null;
    while (Date.now() < end) {
      status = await statusItem();
      if (status && /conversations? ·/.test(status.text) && !status.text.includes('…')) {
        break;
      }
      await page.waitForTimeout(150);
    }
    if (!status || !/conversations? ·/.test(status.text)) {
      throw new Error(`the status bar never showed the conversations; last seen: ${JSON.stringify(status)}`);
    }
    return { status };
  });

  await step('hints', async () => {
    await runCommand('View: Close Primary Side Bar').catch(() => undefined);
    // Inlay hints are drawn into the lines as injected text: read each line's text as shown.
    const end = Date.now() + T;
    let lines = [];
    while (Date.now() < end) {
      lines = await page.evaluate(() =>
        [...document.querySelectorAll('.monaco-editor .view-lines .view-line')]
          .map((el) => ({ top: parseFloat(el.style.top || '0'), text: (el.textContent ?? '').replace(/\u00a0/g, ' ') }))
          .sort((a, b) => a.top - b.top)
          .map((l) => l.text),
      );
      if (lines.filter((l) => /\d tok/.test(l)).length >= config.hintLines) {
        break;
      }
      await page.waitForTimeout(300);
    }
    await page.mouse.move(700, 600);
    const screenshot = await shot(`${config.shotPrefix}-hints`);
    return { lines, screenshot };
  });

  await step('tooltip', async () => {
    const text = await statusTooltip();
    const screenshot = await shot(`${config.shotPrefix}-tooltip`);
    await page.mouse.move(400, 400);
    return { text, screenshot };
  });
}

/**
 * What a user feels, timed on the page's clock by recorder.js (typing_timing.py reads it): for each
 * target file, Quick Open's Enter to the count in the status bar; then, at the end of a given line,
 * keys typed one every `interval` ms, each key's echo and count; the colours on screen; then Save.
 */
async function typingMode() {
  const src = fs.readFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), 'recorder.js'), 'utf8');
  const recorder = new Function(`return (\n${src}\n);`)();
  await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: T });
  await page.waitForTimeout(2000);
  await page.evaluate(recorder, {});
  for (const target of config.targets) {
    await step(target.name, () => typeInto(target));
  }
}

async function quickOpen(text, wait = 800) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(text);
  // Enter before the file is listed would open nothing.
  await page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: text }).first().waitFor({ timeout: T });
  await page.waitForTimeout(wait);
  await page.keyboard.press('Enter');
}

/** Polls until the status bar shows `count` (null: any count); the text, or null at the timeout. */
async function waitForCount(count, timeout) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    const text = await page.evaluate(() => window.__tlrec.statusText());
    const m = text && /^(?:Sel [\d,]+ · )?([\d,]+) \//.exec(text);
    if (m && (count === null || Number(m[1].replace(/,/g, '')) === count)) {
      return text;
    }
    await page.waitForTimeout(100);
  }
  return null;
}

async function typeInto(t) {
  await runCommand('View: Close All Editors');
  await page.waitForTimeout(1500);
  // The file's first line: when it shows, the editor has the text.
  await page.evaluate((line) => window.__tlrec.reset(line), config.firstLine ?? null);
  await quickOpen(t.file);
  const opened = await waitForCount(t.initial, t.openTimeoutMs ?? T);
  await page.waitForTimeout(1000);
  const open = await page.evaluate(() => window.__tlrec.take());
  const out = { opened, open };
  if (t.line) {
    await page.keyboard.press('Control+G');
    await page.locator('.quick-input-widget input').fill(`:${t.line}`);
    await page.waitForTimeout(500);
    await page.keyboard.press('Enter');
    await page.keyboard.press('End');
    await page.waitForTimeout(t.settleMs ?? 2000);
    await page.evaluate((line) => window.__tlrec.reset(line), t.lineText);
    const start = Date.now();
    for (let i = 0; i < t.typed.length; i++) {
      const wait = start + i * config.interval - Date.now();
      if (wait > 0) await page.waitForTimeout(wait);
      await page.keyboard.type(t.typed[i]);
    }
    out.final = await waitForCount(t.final, t.finalTimeoutMs ?? T);
    await page.waitForTimeout(1000);
    out.typing = await page.evaluate(() => window.__tlrec.take());
  }
  // With colours off the boundary colours never come: the lines as they are.
  out.colours = t.colours ? await boundaryLines(config.boundaryColours, 5) : await lineColours(5);
  out.screenshot = await shot(`${config.shotPrefix ?? '70-typing'}-${t.name}`);
  if (t.line && t.save) {
    await page.keyboard.press('Control+S');
    await page.waitForTimeout(1500);
  } else if (t.line) {
    await runCommand('File: Revert File');
    await page.waitForTimeout(1000);
  }
  return out;
}

main()
  .catch((err) => {
    results.fatal = String(err?.stack ?? err);
  })
  .finally(() => {
    process.stdout.write(`${JSON.stringify(results)}\n`);
  });
