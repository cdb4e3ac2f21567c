// The playground page: sends the policy, message and attributes to
// POST /_fanout/filter/test as the user types and shows the verdict and
// the per-key explanation. Plain DOM code, no build step.
'use strict';

(() => {
  // Wait this long after the last keystroke before asking the server, so
  // that typing a policy does not send one request per character.
  const DEBOUNCE_MS = 250;

  const $ = (id) => document.getElementById(id);
  const ui = {
    example: $('example'),
    exampleSource: $('example-source'),
    policy: $('policy'),
    policyStatus: $('policy-status'),
    policyError: $('policy-error'),
    message: $('message'),
    messageField: $('message-field'),
    attributes: $('attributes'),
    attributesField: $('attributes-field'),
    attributesError: $('attributes-error'),
    verdict: $('verdict'),
    explanation: $('explanation'),
    shellCli: $('shell-cli'),
    shellCurl: $('shell-curl'),
  };

  let examples = [];
  let timer = 0;
  // Each request gets a number; a reply that is not for the latest one is
  // dropped, so a slow early reply never overwrites a newer verdict.
  let latest = 0;

  // el builds an element with a class and text; text goes through
  // textContent, never HTML, since it comes from what the user typed.
  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function scope() {
    return document.querySelector('input[name="scope"]:checked').value;
  }

  function setScope(value) {
    for (const r of document.querySelectorAll('input[name="scope"]')) r.checked = r.value === value;
    ui.messageField.classList.toggle('ignored', value !== 'MessageBody');
    ui.attributesField.classList.toggle('ignored', value === 'MessageBody');
  }

  // schedule runs after every edit. It marks the verdict stale at once and
  // drops replies to requests sent before the edit, so the verdict shown
  // is never for text that is no longer there.
  function schedule() {
    latest++;
    ui.verdict.dataset.stale = 'true';
    clearTimeout(timer);
    timer = setTimeout(evaluate, DEBOUNCE_MS);
  }

  async function post(body) {
    const resp = await fetch('filter/test', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: resp.status, data: await resp.json() };
  }

  // readAttributes parses the attributes box; the server checks the shape.
  function readAttributes() {
    const text = ui.attributes.value.trim();
    if (text === '') return { value: null, error: '' };
    try {
      return { value: JSON.parse(text), error: '' };
    } catch (e) {
      return { value: null, error: 'The attributes are not valid JSON: ' + e.message };
    }
  }

  async function evaluate() {
    const mine = ++latest;
    const attrs = readAttributes();
    const req = { policy: ui.policy.value, scope: scope(), message: ui.message.value, attributes: attrs.value };
    let attributesError = attrs.error;
    saveState();
    try {
      let reply = await post(req);
      if (reply.status === 400 && req.attributes !== null) {
        // The attributes are at fault: say so, and still check the policy.
        attributesError = reply.data.error;
        reply = await post({ ...req, attributes: null });
      }
      if (mine !== latest) return;
      if (reply.status !== 200) throw new Error(reply.data.error || 'HTTP ' + reply.status);
      render(reply.data, req.scope, attributesError);
    } catch (e) {
      if (mine !== latest) return;
      showVerdict('error', 'Cannot test', String(e.message || e));
    }
    delete ui.verdict.dataset.stale;
    showShell(req);
  }

  function render(res, sc, attributesError) {
    ui.policyStatus.dataset.state = res.valid ? 'valid' : 'invalid';
    ui.policyStatus.textContent = res.valid ? 'valid' : 'invalid';
    ui.policy.classList.toggle('invalid', !res.valid);
    showPolicyError(res);
    showProblem(ui.attributesError, attributesError);

    if (!res.valid) {
      showVerdict('invalid', 'Invalid policy', 'SNS refuses it: ' + res.error);
    } else if (attributesError && sc === 'MessageAttributes') {
      showVerdict('error', 'Cannot test', 'Fix the message attributes first.');
    } else if (res.matched) {
      showVerdict('match', 'Match', 'SNS delivers this message to the subscription.');
    } else {
      showVerdict('no-match', 'No match', 'SNS does not deliver this message to the subscription.');
    }
    renderExplanation(res.valid ? res.explanation : null);
  }

  function showVerdict(state, word, detail) {
    ui.verdict.dataset.state = state;
    ui.verdict.querySelector('.verdict-word').textContent = word;
    ui.verdict.querySelector('.verdict-detail').textContent = detail;
    if (state === 'error' || state === 'invalid') ui.explanation.replaceChildren();
  }

  function showProblem(box, text) {
    box.hidden = !text;
    box.querySelector('.aws-message').textContent = text || '';
  }

  // The server gives a byte offset (UTF-8); the textarea counts UTF-16
  // units.
  function charIndex(text, byteOffset) {
    const bytes = new TextEncoder().encode(text);
    return new TextDecoder().decode(bytes.slice(0, byteOffset)).length;
  }

  function showPolicyError(res) {
    showProblem(ui.policyError, res.valid ? '' : res.error);
    const locate = ui.policyError.querySelector('.locate');
    const snippet = ui.policyError.querySelector('.snippet');
    const hasSpot = !res.valid && typeof res.errorOffset === 'number';
    locate.hidden = snippet.hidden = !hasSpot;
    if (!hasSpot) return;

    const text = ui.policy.value;
    const at = charIndex(text, res.errorOffset);
    const start = text.lastIndexOf('\n', at - 1) + 1;
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    const line = text.slice(0, start).split('\n').length;
    const column = at - start + 1;
    locate.textContent = 'line ' + line + ', column ' + column + ': show in the policy';
    locate.onclick = () => {
      ui.policy.focus();
      ui.policy.setSelectionRange(at, Math.min(at + 1, text.length));
    };
    // At the end of the text there is no character to mark: mark a space.
    const spot = at < end ? text.slice(at, at + 1) : ' ';
    snippet.replaceChildren(text.slice(start, at), el('mark', '', spot), text.slice(at + 1, end));
  }

  function renderExplanation(ex) {
    ui.explanation.replaceChildren();
    if (!ex) return;
    if (ex.reason) ui.explanation.append(el('p', 'note', ex.reason));
    const branches = ex.branches || [];
    if (branches.length > 1) {
      ui.explanation.append(el('p', 'rule',
        'The policy uses $or, so it reads as ' + branches.length +
        ' alternatives: the message passes if every key of any one alternative matches.'));
    } else if (branches.length === 1) {
      ui.explanation.append(el('p', 'rule',
        'The message passes if every key matches; a key matches if any of its conditions does.'));
    }
    branches.forEach((br, i) => {
      const card = el('section', 'branch ' + (br.matched ? 'ok' : 'bad'));
      if (branches.length > 1) {
        const head = el('div', 'branch-head');
        head.append(el('span', '', 'Alternative ' + (i + 1) + ' of ' + branches.length),
          el('span', 'badge', br.matched ? 'match' : 'no match'));
        head.lastChild.dataset.state = br.matched ? 'valid' : 'invalid';
        card.append(head);
      }
      card.append(keyTable(br.keys || []));
      if (br.reason) card.append(el('p', 'note', br.reason));
      ui.explanation.append(card);
    });
  }

  function keyTable(keys) {
    const table = el('table', 'keys');
    const head = el('tr');
    for (const h of ['', 'Key', 'Conditions (any one)', 'Message value', 'Why']) head.append(el('th', '', h));
    table.append(el('thead'), el('tbody'));
    table.tHead.append(head);
    for (const k of keys) {
      const row = el('tr', k.matched ? 'ok' : 'bad');
      row.append(el('td', 'icon', k.matched ? '✓' : '✗'));
      const key = el('td', 'key');
      key.append(el('code', '', k.key));
      row.append(key);

      const conds = el('td');
      for (const c of k.conditions || []) conds.append(el('code', 'chip' + (k.matched && c === k.condition ? ' hit' : ''), c));
      row.append(conds);

      const values = el('td');
      if (!k.present) values.append(el('span', 'absent', 'absent'));
      for (const v of k.values || []) values.append(el('code', 'chip' + (v === k.matchedValue ? ' hit' : ''), v));
      row.append(values);

      row.append(el('td', 'why', why(k)));
      table.tBodies[0].append(row);
    }
    return table;
  }

  function why(k) {
    if (!k.matched) return k.reason || 'no condition matches';
    if (k.matchedValue === '(every element)') return 'every element passes ' + k.condition;
    if (k.matchedValue) return k.matchedValue + ' matches ' + k.condition;
    if (k.present && k.values && k.values.length === 1) return k.values[0] + ' matches ' + k.condition;
    return (k.present ? 'present: ' : 'absent: ') + 'matches ' + k.condition;
  }

  // showShell writes the current test as a CLI call and a curl call, for
  // people who want to script it.
  function showShell(req) {
    const q = (s) => "'" + s.replace(/'/g, "'\\''") + "'";
    const flat = (s) => s.replace(/\s*\n\s*/g, ' ').trim();
    let cli = 'fanout filter --policy ' + q(flat(req.policy));
    if (req.scope === 'MessageBody') cli += ' --scope MessageBody --message ' + q(flat(req.message));
    else if (req.attributes) cli += ' --attributes ' + q(JSON.stringify(req.attributes));
    ui.shellCli.textContent = cli;
    const url = new URL('filter/test', location.href).href;
    ui.shellCurl.textContent = 'curl -s ' + url + ' -d ' + q(JSON.stringify(req));
  }

  // The state lives in the URL's fragment so that a test can be shared as
  // a link; nothing leaves the browser but the requests to this server.
  function saveState() {
    const state = { p: ui.policy.value, s: scope(), m: ui.message.value, a: ui.attributes.value };
    history.replaceState(null, '', '#' + encodeURIComponent(JSON.stringify(state)));
  }

  function loadState() {
    if (location.hash.length < 2) return false;
    try {
      const state = JSON.parse(decodeURIComponent(location.hash.slice(1)));
      ui.policy.value = state.p || '';
      ui.message.value = state.m || '';
      ui.attributes.value = state.a || '';
      setScope(state.s === 'MessageBody' ? 'MessageBody' : 'MessageAttributes');
      return true;
    } catch (e) {
      return false;
    }
  }

  function useExample(i) {
    const ex = examples[i];
    if (!ex) return;
    ui.policy.value = ex.policy;
    ui.message.value = ex.message;
    ui.attributes.value = ex.attributes;
    setScope(ex.scope);
    ui.exampleSource.hidden = false;
    ui.exampleSource.textContent = 'Expected: ' + ex.expect + ' · source: ' + ex.source;
    clearTimeout(timer);
    evaluate();
  }

  async function loadExamples() {
    try {
      const resp = await fetch('playground/examples.json');
      examples = await resp.json();
    } catch (e) {
      examples = [];
    }
    examples.forEach((ex, i) => {
      const o = el('option', '', ex.name + ' — ' + ex.expect);
      o.value = String(i);
      ui.example.append(o);
    });
  }

  async function start() {
    for (const box of [ui.policy, ui.message, ui.attributes]) {
      box.addEventListener('input', () => {
        // Once edited, the text is no longer the example it came from.
        ui.example.value = '';
        ui.exampleSource.hidden = true;
        schedule();
      });
    }
    for (const r of document.querySelectorAll('input[name="scope"]')) {
      r.addEventListener('change', () => { setScope(scope()); schedule(); });
    }
    ui.example.addEventListener('change', () => { if (ui.example.value !== '') useExample(Number(ui.example.value)); });
    await loadExamples();
    if (loadState()) {
      evaluate();
    } else if (examples.length > 0) {
      ui.example.value = '0';
      useExample(0);
    } else {
      setScope('MessageAttributes');
      evaluate();
    }
  }

  start();
})();
