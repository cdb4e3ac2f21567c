// fanout's dashboard: one page, no framework. Everything shown comes from
// fanout's own admin endpoints and is put on the page as text (never as
// HTML), so names, bodies and tags holding markup stay inert.
'use strict';
(() => {
  const POLL_MS = 2000;
  const view = document.getElementById('view');
  let pollTimer = 0;
  let refresh = null; // the current view's update function, called by the poller
  let carried = ''; // a success message to show after the next route

  // ---- DOM helpers ---------------------------------------------------------

  // h builds an element: attrs (class, href, data-*, on* handlers) and
  // children (strings become text nodes).
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  const SVG = 'http://www.w3.org/2000/svg';
  function s(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function setAttrs(e, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  function append(e, children) {
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }
  // fill replaces e's children, flattening arrays and skipping nulls.
  function fill(e, ...children) {
    e.replaceChildren();
    append(e, children);
    return e;
  }
  const enc = encodeURIComponent;

  function status(msg, ok) {
    const el = document.getElementById('status');
    el.textContent = msg;
    el.className = ok ? 'ok' : '';
    el.hidden = !msg;
  }

  // api calls an admin endpoint. POSTs send JSON, which the state-changing
  // endpoints require (a cross-site form cannot send it).
  async function api(method, path, body) {
    const opts = { method, headers: {} };
    if (method !== 'GET') {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body || {});
    }
    const resp = await fetch(path, opts);
    let data = null;
    try { data = await resp.json(); } catch (e) { data = null; }
    if (!resp.ok) {
      const msg = (data && (data.error || data.message)) || resp.statusText;
      const err = new Error((data && data.code ? data.code + ': ' : '') + msg);
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  // confirmStep asks before a destructive action. The buttons answer
  // directly (not through the dialog's close event, which arrives a task
  // later and could answer the next question).
  function confirmStep(text) {
    const dlg = document.getElementById('confirm');
    const ok = document.getElementById('confirm-ok');
    const cancel = document.getElementById('confirm-cancel');
    document.getElementById('confirm-text').textContent = text;
    return new Promise((resolve) => {
      const done = (answer) => (ev) => {
        ev.preventDefault();
        ok.onclick = cancel.onclick = dlg.oncancel = null;
        dlg.close();
        resolve(answer);
      };
      ok.onclick = done(true);
      cancel.onclick = done(false);
      dlg.oncancel = done(false); // Escape
      dlg.showModal();
    });
  }


  function fmtTime(t) {
    if (!t) return '';
    const d = new Date(t);
    return isNaN(d) ? String(t) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }
  function fmtAge(sec) {
    if (!sec) return '';
    if (sec < 90) return Math.round(sec) + ' s';
    if (sec < 5400) return Math.round(sec / 60) + ' min';
    if (sec < 172800) return (sec / 3600).toFixed(1) + ' h';
    return (sec / 86400).toFixed(1) + ' d';
  }
  const shortArn = (arn) => (arn || '').split(':').slice(5).join(':') || arn;

  // ---- namespaces ------------------------------------------------------------
  // Each (account, region) is its own namespace. The selector in the header
  // narrows every view to one ('' is all of them); rows name theirs.

  let scope = sessionStorage.getItem('fanout-namespace') || ''; // 'account/region' or ''
  const nsOf = (x) => x.account + '/' + x.region;
  // nsQuery is the ?account=&region= of one namespace ('' for none).
  const nsQuery = (ns) => (ns ? '?account=' + enc(ns.split('/')[0]) + '&region=' + enc(ns.split('/')[1]) : '');
  const withNs = (path, ns) => path + (ns ? (path.includes('?') ? '&' : '?') + nsQuery(ns).slice(1) : '');
  const nsText = (x) => x.account + ' · ' + x.region;
  // arnNs is the 'account/region' of an ARN.
  const arnNs = (arn) => { const p = (arn || '').split(':'); return p.length >= 6 ? p[4] + '/' + p[3] : ''; };
  const arnName = (arn) => (arn || '').split(':').pop();
  // queueLink and topicLink open one queue or topic of a namespace.
  const queueLink = (name, ns) => '#/queue/' + (ns ? enc(ns.split('/')[0]) + '/' + enc(ns.split('/')[1]) + '/' : '') + enc(name);
  const topicLink = (name, ns) => '#/topic/' + (ns ? enc(ns.split('/')[0]) + '/' + enc(ns.split('/')[1]) + '/' : '') + enc(name);

  let shownNamespaces = '';
  // showNamespaces fills the selector from the graph's namespace list.
  function showNamespaces(list) {
    if (!list) return;
    const key = JSON.stringify(list);
    if (key === shownNamespaces) return;
    shownNamespaces = key;
    const sel = document.getElementById('namespace');
    const known = list.map(nsOf);
    if (scope && !known.includes(scope)) known.push(scope); // chosen, but emptied meanwhile
    fill(sel, h('option', { value: '' }, 'All namespaces (' + list.length + ')'),
      known.map((ns) => {
        const n = list.find((x) => nsOf(x) === ns);
        return h('option', { value: ns, selected: ns === scope },
          ns.replace('/', ' · ') + (n ? ' — ' + n.queues + ' queues, ' + n.topics + ' topics' : '') + (n && n.default ? ' (default)' : ''));
      }));
    sel.value = scope;
  }
  document.getElementById('namespace').addEventListener('change', async (ev) => {
    scope = ev.target.value;
    sessionStorage.setItem('fanout-namespace', scope);
    lastDrawn = '';
    if (refresh) { try { await refresh(); } catch (e) { status(e.message); } }
  });
  // graph fetches what the views draw, for the chosen namespace.
  async function graph() {
    const g = await api('GET', 'graph' + nsQuery(scope));
    showNamespaces(g.namespaces);
    return g;
  }

  // parseAttributes reads the AWS CLI's attribute JSON from a text box.
  function parseAttributes(text) {
    text = text.trim();
    if (!text) return {};
    const v = JSON.parse(text);
    if (typeof v !== 'object' || Array.isArray(v) || v === null) throw new Error('attributes must be a JSON object');
    return v;
  }

  // ---- the clock -------------------------------------------------------------

  function showClock(c) {
    if (!c) return;
    document.getElementById('clock-now').textContent = fmtTime(c.now);
    document.getElementById('clock-offset').textContent = c.mode + (c.offsetSeconds ? ' +' + c.offset : '');
  }

  document.getElementById('advance-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const by = document.getElementById('advance').value.trim();
    try {
      showClock(await api('POST', 'clock', { advance: by }));
      status('Advanced the clock by ' + by + '; everything that fell due has run.', true);
      if (refresh) await refresh();
    } catch (e) { status(e.message); }
  });

  document.getElementById('reset').addEventListener('click', async () => {
    const account = scope ? scope.split('/')[0] : '';
    const question = account
      ? 'Reset account ' + account + '? Its queues, topics and subscriptions in every region are deleted.'
      : 'Reset everything? Every queue, topic, subscription, message and delivery record is deleted.';
    if (!await confirmStep(question)) return;
    try {
      await api('POST', account ? 'reset?account=' + enc(account) : 'reset', {});
      if (location.hash.replace(/^#\/?/, '') !== '') {
        carried = account ? 'Reset: account ' + account + ' is empty.' : 'Reset: fanout is empty.'; // shown once the overview is back
        location.hash = '#/';
        return;
      }
      await overview();
      status(account ? 'Reset: account ' + account + ' is empty.' : 'Reset: fanout is empty.', true);
    } catch (e) { status('Reset failed: ' + e.message); }
  });

  // ---- polling ---------------------------------------------------------------
  // Polling rather than server-sent events: fanout keeps nothing per open
  // page (no subscriber lists, no buffers), so a page left open for hours
  // costs one snapshot every two seconds and no memory; it pauses while the
  // tab is hidden.

  // schedule waits POLL_MS, or three times what the last update took when
  // that is longer (a very large topology), so the page stays responsive.
  let lastUpdateMs = 0;
  function schedule() {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(tick, Math.max(POLL_MS, 3 * lastUpdateMs));
  }
  async function tick() {
    const live = document.getElementById('live');
    if (document.hidden || !refresh) {
      live.classList.add('paused');
      schedule();
      return;
    }
    live.classList.remove('paused');
    const t0 = performance.now();
    try { await refresh(); } catch (e) { /* the next tick tries again */ }
    lastUpdateMs = performance.now() - t0;
    schedule();
  }
  document.addEventListener('visibilitychange', () => { if (!document.hidden) tick(); });

  // ---- the topology picture --------------------------------------------------

  const NODE_W = 210, NODE_H = 42, GAP = 12, COL = [16, 336, 656, 976], TOP = 34;

  // layout places topics, subscriptions, endpoints and DLQs in four
  // columns, each endpoint next to the first subscription that leads to it.
  function layout(g) {
    const cols = [[], [], [], []];
    const nodes = new Map();
    const edges = [];
    const add = (col, key, node) => {
      if (nodes.has(key)) return nodes.get(key);
      node.key = key; node.col = col;
      nodes.set(key, node);
      cols[col].push(node);
      return node;
    };
    // Queues are keyed by ARN: a name may repeat across namespaces.
    const queues = new Map(g.queues.map((q) => [q.arn, q]));
    const dlqArn = (q) => q.arn.slice(0, q.arn.lastIndexOf(':') + 1) + q.deadLetterQueue; // a DLQ is of its source's namespace
    const dlqs = new Set();
    for (const q of g.queues) if (q.deadLetterQueue) dlqs.add(dlqArn(q));
    for (const t of g.topics) for (const sub of t.subscriptions) if (sub.deadLetterArn) dlqs.add(sub.deadLetterArn);
    const subscribed = new Set();
    for (const t of g.topics) for (const sub of t.subscriptions) if (sub.protocol === 'sqs') subscribed.add(sub.endpoint);
    const many = new Set([...g.queues.map(nsOf), ...g.topics.map(nsOf)]).size > 1;
    const queueNode = (arn, col) => {
      const q = queues.get(arn);
      const ns = arnNs(arn);
      return add(col, 'queue:' + arn, {
        kind: dlqs.has(arn) && !subscribed.has(arn) ? 'dlq' : 'queue',
        title: arnName(arn) + (many ? ' · ' + ns.replace('/', ' ') : ''),
        detail: q ? q.visible + ' visible · ' + q.inFlight + ' in flight · ' + q.delayed + ' delayed' : 'not in this view',
        tip: arn, href: queueLink(arnName(arn), ns),
      });
    };
    for (const t of g.topics) {
      const tn = add(0, 'topic:' + t.arn, { kind: 'topic', title: t.name + (many ? ' · ' + nsText(t).replace(' · ', ' ') : ''), detail: t.published + ' published · ' + t.subscriptions.length + ' subscriptions', tip: t.arn, href: topicLink(t.name, nsOf(t)) });
      for (const sub of t.subscriptions) {
        const badges = [];
        if (sub.filterPolicy) badges.push('filter');
        if (sub.raw) badges.push('raw');
        if (sub.pending) badges.push('pending');
        const sn = add(1, 'sub:' + sub.arn, {
          kind: 'sub', title: sub.protocol + (badges.length ? ' · ' + badges.join(' · ') : ''),
          detail: sub.protocol === 'sqs' ? '→ ' + sub.queue : sub.endpoint,
          tip: sub.arn + (sub.filterPolicy ? '\nFilterPolicy (' + (sub.filterPolicyScope || 'MessageAttributes') + '): ' + sub.filterPolicy : ''),
          href: topicLink(t.name, nsOf(t)),
        });
        edges.push({ from: tn, to: sn, key: 'sub:' + sub.arn, label: sub.matched + (sub.filtered ? ' · ' + sub.filtered + ' filtered' : ''), count: sub.matched });
        let target;
        if (sub.protocol === 'sqs') target = queueNode(sub.endpoint, 2);
        else target = add(2, 'ext:' + sub.protocol + ':' + sub.endpoint, { kind: 'ext', title: sub.protocol, detail: sub.endpoint });
        const sent = sub.delivered;
        const failing = sub.failed ? ' · ' + sub.failed + ' failed' : '';
        edges.push({ from: sn, to: target, key: 'delivery:' + sub.arn, label: sent + failing + (sub.dropped ? ' · ' + sub.dropped + ' dropped' : ''), count: sent });
        if (sub.deadLetterArn) {
          edges.push({ from: sn, to: queueNode(sub.deadLetterArn, 3), key: 'subdlq:' + sub.arn, label: String(sub.deadLettered), dead: true, count: sub.deadLettered });
        }
      }
    }
    for (const q of g.queues) queueNode(q.arn, dlqs.has(q.arn) && !subscribed.has(q.arn) ? 3 : 2);
    for (const q of g.queues) {
      if (q.deadLetterQueue) {
        edges.push({ from: nodes.get('queue:' + q.arn), to: queueNode(dlqArn(q), 3), key: 'redrive:' + q.arn, label: String(q.deadLettered), dead: true, count: q.deadLettered });
      }
    }
    for (const col of cols) col.forEach((n, i) => { n.x = COL[n.col]; n.y = TOP + i * (NODE_H + GAP); });
    const rows = Math.max(1, ...cols.map((c) => c.length));
    return { nodes: [...nodes.values()], edges, width: COL[3] + NODE_W + 16, height: TOP + rows * (NODE_H + GAP) + 10 };
  }

  let lastCounts = new Map(); // edge key -> count, to highlight edges that moved

  function drawTopology(g) {
    const lay = layout(g);
    const svg = s('svg', { width: lay.width, height: lay.height, viewBox: '0 0 ' + lay.width + ' ' + lay.height, role: 'img', 'aria-label': 'topology' });
    ['Topics', 'Subscriptions', 'Queues and endpoints', 'Dead-letter queues'].forEach((t, i) => svg.append(s('text', { x: COL[i], y: 18, class: 'column-title' }, t)));
    const labels = s('g', {});
    const counts = new Map();
    for (const e of lay.edges) {
      const x1 = e.from.x + NODE_W, y1 = e.from.y + NODE_H / 2;
      let x2 = e.to.x, y2 = e.to.y + NODE_H / 2;
      if (e.to.col <= e.from.col) { x2 = e.to.x + NODE_W; } // within a column: enter from the right
      const mx = (x1 + x2) / 2;
      const d = e.to.col <= e.from.col
        ? `M${x1},${y1} C${x1 + 60},${y1} ${x2 + 60},${y2} ${x2},${y2}`
        : `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
      const moved = lastCounts.has(e.key) && lastCounts.get(e.key) !== e.count;
      counts.set(e.key, e.count);
      svg.append(s('path', { d, class: 'edge' + (e.dead ? ' dead' : '') + (moved ? ' active' : ''), 'data-edge': e.key }));
      const lx = e.to.col <= e.from.col ? x1 + 45 : mx, ly = (y1 + y2) / 2;
      const w = 10 + 6.2 * e.label.length;
      labels.append(s('g', { class: 'edge-label', 'data-edge-label': e.key },
        s('rect', { x: lx - w / 2, y: ly - 8, width: w, height: 16 }),
        s('text', { x: lx, y: ly + 4, 'text-anchor': 'middle' }, e.label)));
    }
    lastCounts = counts;
    for (const n of lay.nodes) {
      const g2 = s('g', { class: 'node ' + n.kind, 'data-node': n.key, transform: `translate(${n.x},${n.y})` },
        s('title', {}, n.tip || n.title),
        s('rect', { width: NODE_W, height: NODE_H }),
        s('text', { x: 8, y: 17 }, clip(n.title, 34)),
        s('text', { x: 8, y: 33, class: 'sub-text' }, clip(n.detail || '', 40)));
      svg.append(n.href ? s('a', { href: n.href }, g2) : g2);
    }
    svg.append(labels);
    return svg;
  }
  const clip = (t, n) => (t.length > n ? t.slice(0, n - 1) + '…' : t);

  // ---- views -----------------------------------------------------------------

  function queueTable(queues) {
    return h('table', { id: 'queues' },
      h('thead', {}, h('tr', {}, ['Queue', 'Account · region', 'Visible', 'In flight', 'Delayed', 'Oldest', 'DLQ', 'Redrive sources'].map((t, i) => h('th', { class: i > 1 && i < 6 ? 'num' : '' }, t)))),
      h('tbody', {}, queues.map((q) => h('tr', { 'data-queue': q.name, 'data-account': q.account, 'data-region': q.region },
        h('td', {}, h('a', { href: queueLink(q.name, nsOf(q)) }, q.name), q.fifo ? h('span', { class: 'badge' }, 'fifo') : null),
        h('td', { class: 'muted namespace' }, nsText(q)),
        h('td', { class: 'num' }, q.visible), h('td', { class: 'num' }, q.inFlight), h('td', { class: 'num' }, q.delayed),
        h('td', { class: 'num' }, fmtAge(q.oldestAgeSeconds)),
        h('td', {}, q.deadLetterQueue ? h('a', { href: queueLink(q.deadLetterQueue, nsOf(q)) }, q.deadLetterQueue) : '', q.maxReceiveCount ? h('span', { class: 'muted' }, ' after ' + q.maxReceiveCount) : ''),
        h('td', {}, q.sources.map((src, i) => [i ? ', ' : '', h('a', { href: queueLink(src, nsOf(q)) }, src)]))))));
  }

  function topicTable(topics) {
    return h('table', { id: 'topics' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Topic'), h('th', {}, 'Account · region'), h('th', { class: 'num' }, 'Published'), h('th', {}, 'Subscriptions'))),
      h('tbody', {}, topics.map((t) => h('tr', { 'data-topic': t.name, 'data-account': t.account, 'data-region': t.region },
        h('td', {}, h('a', { href: topicLink(t.name, nsOf(t)) }, t.name), t.fifo ? h('span', { class: 'badge' }, 'fifo') : null),
        h('td', { class: 'muted namespace' }, nsText(t)),
        h('td', { class: 'num' }, t.published),
        h('td', {}, t.subscriptions.map((sub) => h('div', {}, sub.protocol + ' ', h('span', { class: 'mono' }, sub.protocol === 'sqs' ? sub.queue : sub.endpoint),
          sub.filterPolicy ? h('span', { class: 'badge' }, 'filter') : null, sub.pending ? h('span', { class: 'badge warn' }, 'pending') : null)))))));
  }

  let lastDrawn = ''; // what the overview last drew, to skip unchanged polls

  async function overview() {
    const started = performance.now();
    const g = await graph();
    const fetched = performance.now();
    showClock(g.clock);
    // Ages as shown: an idle topology draws nothing new on a poll.
    const drawn = JSON.stringify([scope, g.topics, g.queues.map((q) => [q, fmtAge(q.oldestAgeSeconds)])], (k, v) => (k === 'oldestAgeSeconds' ? undefined : v));
    if (drawn === lastDrawn && document.getElementById('topology')) {
      view.dataset.renderMs = String(Math.round(performance.now() - started));
      view.dataset.drawn = 'unchanged';
      return;
    }
    lastDrawn = drawn;
    const pic = h('div', { class: 'topology', id: 'topology' }, drawTopology(g));
    const pictured = performance.now();
    const old = document.getElementById('topology');
    const scroll = old ? [old.scrollLeft, old.scrollTop] : [0, 0];
    fill(view, 
      h('h1', {}, 'Topology', scope ? h('span', { class: 'muted namespace' }, ' ' + scope.replace('/', ' · ')) : null),
      g.topics.length || g.queues.length ? pic : h('p', { class: 'muted' }, 'Nothing yet: create a queue or a topic with any AWS client.'),
      h('div', { class: 'row' },
        h('div', { class: 'card' }, h('h2', {}, 'Queues (' + g.queues.length + ')'), queueTable(g.queues)),
        h('div', { class: 'card' }, h('h2', {}, 'Topics (' + g.topics.length + ')'), topicTable(g.topics))));
    pic.scrollLeft = scroll[0]; pic.scrollTop = scroll[1];
    view.dataset.fetchMs = String(Math.round(fetched - started));
    view.dataset.svgMs = String(Math.round(pictured - fetched));
    view.dataset.renderMs = String(Math.round(performance.now() - started));
    view.dataset.drawn = 'drawn';
  }

  async function queuesView() {
    const g = await graph();
    showClock(g.clock);
    fill(view, h('h1', {}, 'Queues'), queueTable(g.queues));
  }

  async function topicsView() {
    const g = await graph();
    showClock(g.clock);
    fill(view, h('h1', {}, 'Topics'), topicTable(g.topics));
  }

  // ---- one queue -----------------------------------------------------------------

  function attrTable(attrs, id) {
    const names = Object.keys(attrs || {}).sort();
    if (!names.length) return h('p', { class: 'muted', id }, 'none');
    return h('table', { id }, h('tbody', {}, names.map((n) => {
      const a = attrs[n];
      const v = typeof a === 'object' && a !== null ? (a.StringValue !== undefined ? a.StringValue : a.BinaryValue) : a;
      const type = typeof a === 'object' && a !== null ? a.DataType : '';
      return h('tr', {}, h('td', { class: 'mono' }, n), h('td', { class: 'muted' }, type || ''), h('td', { class: 'mono' }, v === undefined ? '' : String(v)));
    })));
  }

  // queueView shows one queue; ns ('account/region') says whose, '' the
  // default namespace's or the one that has it.
  async function queueView(name, ns) {
    const state = { selected: null, states: ['visible', 'inflight', 'delayed'] };
    const title = h('h1', {}, 'Queue ', h('span', { class: 'mono', id: 'queue-name' }, name), ' ', h('span', { class: 'muted namespace', id: 'queue-namespace' }, ns ? ns.replace('/', ' · ') : ''));
    const counts = h('p', { id: 'queue-counts' });
    const links = h('p', { id: 'queue-links' });
    const tags = h('div', { id: 'queue-tags' });
    const tasks = h('div', { id: 'move-tasks' });
    const list = h('div', { id: 'messages' });
    const detail = h('div', { id: 'message-detail', class: 'card' }, h('p', { class: 'muted' }, 'Select a message to see it.'));
    const checks = ['visible', 'inflight', 'delayed'].map((st) => h('label', { class: 'inline' },
      h('input', { type: 'checkbox', value: st, checked: true, onchange: () => { state.states = checks.map((c) => c.querySelector('input')).filter((c) => c.checked).map((c) => c.value); update(); } }), ' ' + st));
    const body = h('textarea', { id: 'send-body', rows: 4, placeholder: 'message body' });
    const attrs = h('textarea', { id: 'send-attributes', rows: 2, placeholder: '{"store":{"DataType":"String","StringValue":"eu-west"}}' });
    const delay = h('input', { id: 'send-delay', type: 'number', min: 0, max: 900, placeholder: 'queue default', size: 8 });
    const sendForm = h('form', { id: 'send-form', onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        const req = { body: body.value, attributes: parseAttributes(attrs.value) };
        if (delay.value !== '') req.delaySeconds = Number(delay.value);
        const res = await api('POST', withNs('sqs/queues/' + enc(name) + '/send', ns), req);
        status('Sent ' + res.messageId, true);
        await update();
      } catch (e) { status(e.message); }
    } }, h('label', {}, 'Body'), body, h('label', {}, 'Message attributes (AWS CLI JSON)'), attrs,
    h('label', {}, 'Delay seconds'), delay, ' ', h('button', { class: 'primary', id: 'send' }, 'Send'));
    const purge = h('button', { class: 'danger', id: 'purge', type: 'button', onclick: async () => {
      if (!await confirmStep('Purge ' + name + '? Every message in it is deleted.')) return;
      try { await api('POST', withNs('sqs/queues/' + enc(name) + '/purge', ns), {}); status('Purged ' + name, true); await update(); } catch (e) { status(e.message); }
    } }, 'Purge…');
    const redrive = h('button', { id: 'redrive', type: 'button', hidden: true, onclick: async () => {
      if (!await confirmStep('Start a redrive of ' + name + '? Its messages move back to the queues they came from.')) return;
      try {
        const res = await api('POST', withNs('sqs/queues/' + enc(name) + '/redrive', ns), {});
        status('Redrive started: ' + res.taskHandle, true);
        await update();
      } catch (e) { status(e.message); }
    } }, 'Redrive to sources…');

    fill(view, title, counts, links, h('div', { class: 'row' },
      h('div', { class: 'card' }, h('h2', {}, 'Messages (peek: nothing changes)'), h('div', {}, checks), list),
      detail),
    h('div', { class: 'row' },
      h('div', { class: 'card' }, h('h2', {}, 'Send a message'), sendForm),
      h('div', { class: 'card' }, h('h2', {}, 'Actions'), h('p', {}, purge, ' ', redrive), tasks, h('h2', {}, 'Tags'), tags)));

    function showMessage(m) {
      fill(detail, 
        h('h2', {}, 'Message ', h('span', { class: 'mono' }, m.messageId)),
        h('p', {}, h('span', { class: 'badge' }, m.state), ' received ' + m.receiveCount + ' times',
          m.stateEnds ? ' · ' + m.state + ' until ' + fmtTime(m.stateEnds) : ''),
        h('label', {}, 'Body'), h('pre', { id: 'message-body' }, m.body),
        h('label', {}, 'Message attributes'), attrTable(m.attributes, 'message-attributes'),
        h('label', {}, 'System attributes'), attrTable(m.systemAttributes, 'message-system-attributes'));
    }

    async function update() {
      const g = await api('GET', 'graph' + nsQuery(ns));
      showNamespaces(g.namespaces);
      showClock(g.clock);
      const q = g.queues.find((x) => x.name === name && (!ns || nsOf(x) === ns)) ;
      if (!q) { counts.textContent = 'This queue does not exist (any more).'; fill(list); return; }
      if (!ns) document.getElementById('queue-namespace').textContent = nsText(q);
      fill(counts, h('span', { class: 'badge good' }, q.visible + ' visible'), h('span', { class: 'badge' }, q.inFlight + ' in flight'),
        h('span', { class: 'badge' }, q.delayed + ' delayed'), q.oldestAgeSeconds ? h('span', { class: 'badge' }, 'oldest ' + fmtAge(q.oldestAgeSeconds)) : null);
      fill(links, 
        q.deadLetterQueue ? ['DLQ: ', h('a', { href: queueLink(q.deadLetterQueue, nsOf(q)) }, q.deadLetterQueue), ' after ' + q.maxReceiveCount + ' receives; ' + q.deadLettered + ' moved. '] : null,
        q.sources.length ? ['Dead-letter queue of: ', q.sources.map((src, i) => [i ? ', ' : '', h('a', { href: queueLink(src, nsOf(q)) }, src)])] : null);
      redrive.hidden = !q.sources.length;
      if (q.sources.length) {
        const mt = await api('GET', withNs('sqs/movetasks', nsOf(q)));
        const mine = mt.tasks.filter((x) => x.queue === name);
        fill(tasks, mine.length ? h('table', { id: 'move-task-list' }, h('tbody', {}, mine.map((x) => h('tr', { 'data-status': x.status },
          h('td', {}, h('span', { class: 'badge' + (x.status === 'RUNNING' ? ' warn' : x.status === 'COMPLETED' ? ' good' : '') }, x.status)),
          h('td', { class: 'num' }, x.moved + ' of ' + x.toMove + ' moved'),
          h('td', { class: 'muted' }, fmtTime(x.started) + (x.failureReason ? ' · ' + x.failureReason : '')))))) : null);
      } else fill(tasks);
      fill(tags, attrTable(q.tags, 'tags'));
      const peek = state.states.length ? await api('GET', withNs('sqs/queues/' + enc(name) + '/messages?state=' + state.states.join(',') + '&limit=50', nsOf(q))) : { messages: [] };
      fill(list, peek.messages.length ? h('table', { id: 'message-list' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Message'), h('th', {}, 'State'), h('th', { class: 'num' }, 'Receives'), h('th', {}, 'Body'))),
        h('tbody', {}, peek.messages.map((m) => h('tr', { class: 'clickable' + (m.messageId === state.selected ? ' selected' : ''), 'data-message': m.messageId,
          onclick: () => { state.selected = m.messageId; showMessage(m); update(); } },
        h('td', { class: 'mono' }, m.messageId.slice(0, 8)), h('td', {}, m.state, m.stateEnds ? h('div', { class: 'muted' }, 'until ' + fmtTime(m.stateEnds)) : null),
        h('td', { class: 'num' }, m.receiveCount), h('td', { class: 'mono' }, clip(m.body, 60)))))) : h('p', { class: 'muted' }, 'No messages in these states.'));
      const sel = peek.messages.find((m) => m.messageId === state.selected);
      if (sel) showMessage(sel);
    }
    await update();
    return update;
  }

  // ---- one topic -----------------------------------------------------------------

  async function topicView(name, ns) {
    const subs = h('div', { id: 'subscriptions' });
    const recent = h('div', { id: 'recent' });
    const msg = h('textarea', { id: 'publish-message', rows: 4, placeholder: 'message' });
    const subject = h('input', { id: 'publish-subject', placeholder: 'subject (optional)', size: 40 });
    const attrs = h('textarea', { id: 'publish-attributes', rows: 3, placeholder: '{"store":{"DataType":"String","StringValue":"eu-west"}}' });
    const form = h('form', { id: 'publish-form', onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        const req = { message: msg.value, attributes: parseAttributes(attrs.value) };
        if (subject.value) req.subject = subject.value;
        const res = await api('POST', withNs('sns/topics/' + enc(name) + '/publish', ns), req);
        status('Published ' + res.messageId, true);
        await update();
      } catch (e) { status(e.message); }
    } }, h('label', {}, 'Message'), msg, h('label', {}, 'Subject'), subject, h('label', {}, 'Message attributes (AWS CLI JSON)'), attrs, h('p', {}, h('button', { class: 'primary', id: 'publish' }, 'Publish')));
    fill(view, h('h1', {}, 'Topic ', h('span', { class: 'mono' }, name), ' ', h('span', { class: 'muted namespace', id: 'topic-namespace' }, ns ? ns.replace('/', ' · ') : '')), h('div', { class: 'row' },
      h('div', { class: 'card' }, h('h2', {}, 'Publish'), form),
      h('div', { class: 'card' }, h('h2', {}, 'Subscriptions'), subs)),
    h('div', { class: 'card' }, h('h2', {}, 'Recent messages'), recent));

    async function update() {
      const g = await api('GET', 'graph' + nsQuery(ns));
      showNamespaces(g.namespaces);
      showClock(g.clock);
      const t = g.topics.find((x) => x.name === name && (!ns || nsOf(x) === ns));
      if (!t) { subs.textContent = 'This topic does not exist (any more).'; return; }
      if (!ns) document.getElementById('topic-namespace').textContent = nsText(t);
      fill(subs, h('table', {}, h('tbody', {}, t.subscriptions.map((sub) => h('tr', {},
        h('td', {}, sub.protocol, sub.raw ? h('span', { class: 'badge' }, 'raw') : null, sub.pending ? h('span', { class: 'badge warn' }, 'pending') : null),
        h('td', { class: 'mono' }, sub.protocol === 'sqs' ? h('a', { href: queueLink(sub.queue, arnNs(sub.endpoint)) }, sub.queue, arnNs(sub.endpoint) !== nsOf(t) ? ' (' + arnNs(sub.endpoint).replace('/', ' · ') + ')' : '') : sub.endpoint,
          sub.filterPolicy ? h('pre', {}, sub.filterPolicy) : null),
        h('td', { class: 'num' }, sub.matched + ' matched · ' + sub.filtered + ' filtered · ' + sub.delivered + ' delivered'))))));
      const d = await api('GET', 'deliveries?topic=' + enc(t.arn) + '&limit=500');
      const byMessage = new Map();
      for (const r of d.deliveries) {
        if (r.type && r.type !== 'Notification') continue;
        if (!byMessage.has(r.messageId)) byMessage.set(r.messageId, []);
        byMessage.get(r.messageId).push(r);
      }
      fill(recent, byMessage.size ? h('table', { id: 'recent-messages' }, h('tbody', {}, [...byMessage.entries()].slice(0, 50).map(([id, rs]) => h('tr', { 'data-message': id },
        h('td', {}, h('a', { class: 'mono', href: '#/message/' + enc(id) }, id)), h('td', {}, fmtTime(rs[0].created)),
        h('td', {}, rs.map((r) => h('span', { class: 'badge ' + statusClass(r.status) }, r.status))))))) : h('p', { class: 'muted' }, 'No deliveries recorded yet.'));
    }
    await update();
    return update;
  }

  function statusClass(st) {
    if (st === 'delivered') return 'good';
    if (st === 'dropped' || st === 'dead-lettered') return 'bad';
    if (st === 'retrying' || st === 'pending') return 'warn';
    if (st === 'filtered-out') return 'muted';
    return '';
  }

  // ---- one message's timeline ------------------------------------------------------

  // playgroundLink opens the playground with the policy and the message,
  // through the URL fragment it reads its inputs from.
  function playgroundLink(policy, scope, body, attributes) {
    const state = { p: policy || '', s: scope || 'MessageAttributes', m: body || '', a: attributes ? JSON.stringify(attributes, null, 1) : '' };
    return 'playground#' + enc(JSON.stringify(state));
  }

  // cliAttributes turns the records' attribute list into the AWS CLI's
  // JSON shape, which the playground and the publish form take.
  function cliAttributes(list) {
    const out = {};
    for (const a of list || []) {
      out[a.name] = a.binaryValue !== undefined ? { DataType: a.dataType, BinaryValue: a.binaryValue } : { DataType: a.dataType, StringValue: a.stringValue || '' };
    }
    return out;
  }

  // explanationTable shows the filter's verdict per key, branch by branch.
  function explanationTable(ex) {
    if (!ex) return null;
    const branches = ex.branches || [];
    return h('div', { class: 'explain' },
      ex.reason ? h('p', {}, ex.reason) : null,
      branches.map((b, i) => h('div', {},
        branches.length > 1 ? h('p', { class: 'muted' }, 'alternative ' + (i + 1) + (b.matched ? ' matches' : ' does not match') + (b.reason ? ': ' + b.reason : '')) : (b.reason ? h('p', {}, b.reason) : null),
        h('table', {}, h('tbody', {}, (b.keys || []).map((k) => h('tr', { class: k.matched ? 'good' : 'bad' },
          h('td', { class: 'mono key ' + (k.matched ? 'good' : 'bad') }, k.key),
          h('td', {}, k.matched ? 'matches' : 'fails'),
          h('td', { class: 'mono' }, (k.conditions || []).join(' or ')),
          h('td', { class: 'mono' }, k.present ? (k.values || []).join(', ') : '(absent)'),
          h('td', { class: 'muted' }, k.reason || (k.matchedValue ? k.matchedValue + ' matches ' + k.condition : '')))))))));
  }

  async function messageView(id) {
    const box = h('div', { id: 'timeline' });
    fill(view, h('h1', {}, 'Message ', h('span', { class: 'mono' }, id)), box);
    async function update() {
      const d = await api('GET', 'deliveries?message=' + enc(id));
      const recs = (d.deliveries || []).filter((r) => !r.type || r.type === 'Notification');
      const m = (d.messages || []).find((x) => x.messageId === id);
      if (!recs.length && !m) { fill(box, h('p', { class: 'muted' }, 'No deliveries recorded for this message (the records keep the newest).')); return; }
      const attrs = cliAttributes(m && m.attributes);
      fill(box,
        m ? h('div', { class: 'card' }, h('p', { class: 'muted' }, 'published ' + fmtTime(m.timestamp) + ' to ' + shortArn(m.topicArn)),
          h('label', {}, 'Body'), h('pre', { id: 'timeline-body' }, m.body + (m.bodyTruncated ? ' …' : '')),
          h('label', {}, 'Attributes'), attrTable(attrs, 'timeline-attributes')) : null,
        recs.slice().reverse().map((r) => h('div', { class: 'card', 'data-subscription': r.subscriptionArn, 'data-status': r.status },
          h('h2', {}, r.protocol + ' ', h('span', { class: 'mono' }, r.endpoint), h('span', { class: 'badge ' + statusClass(r.status) }, r.status)),
          h('p', { class: 'muted mono' }, r.subscriptionArn),
          r.reason ? h('p', {}, r.reason) : null,
          r.nextAttempt ? h('p', {}, 'next attempt ', h('b', {}, fmtTime(r.nextAttempt))) : null,
          r.deadLetterQueue ? h('p', {}, 'sent to DLQ ', h('a', { href: queueLink(arnName(r.deadLetterQueue), arnNs(r.deadLetterQueue)) }, shortArn(r.deadLetterQueue))) : null,
          (r.attempts || []).length ? h('ol', { class: 'timeline' }, r.attempts.map((a) => h('li', {},
            fmtTime(a.time) + ' ', h('span', { class: 'badge ' + (a.outcome === 'delivered' ? 'good' : 'bad') }, a.outcome),
            a.httpStatus ? ' HTTP ' + a.httpStatus : '', a.error && a.error !== 'HTTP ' + a.httpStatus ? ' ' + a.error : '',
            a.nextAttempt ? h('span', { class: 'muted' }, ' · next try ' + fmtTime(a.nextAttempt)) : null))) : null,
          r.status === 'filtered-out' ? [
            h('p', {}, 'Skipped by its filter policy (' + (r.filterScope || 'MessageAttributes') + '): ', h('code', {}, r.filterPolicy || '')),
            explanationTable(r.filter),
            h('p', {}, h('a', { class: 'playground-link', href: playgroundLink(r.filterPolicy, r.filterScope, m ? m.body : '', m ? attrs : null) }, 'Open in the filter playground')),
          ] : null)));
    }
    await update();
    return update;
  }

  // ---- the clock page --------------------------------------------------------------

  async function clockView() {
    const box = h('div', { id: 'due' });
    fill(view, h('h1', {}, 'Clock'), h('p', { class: 'muted' }, 'Advance the clock from the header; what falls due runs, in order, before it answers.'), h('div', { class: 'card' }, h('h2', {}, 'Falls due next'), box));
    async function update() {
      const c = await api('GET', 'clock');
      showClock(c);
      const d = await api('GET', withNs('clock/due?limit=50', scope));
      fill(box, d.due.length ? h('table', { id: 'due-list' }, h('thead', {}, h('tr', {}, h('th', {}, 'When'), h('th', {}, 'In'), h('th', {}, 'What'), h('th', {}, 'Where'))),
        h('tbody', {}, d.due.map((x) => h('tr', {}, h('td', {}, fmtTime(x.at)), h('td', {}, x.in), h('td', {}, x.kind),
          h('td', {},  x.queue ? [h('a', { href: queueLink(x.queue, x.account + '/' + x.region) }, x.queue), h('span', { class: 'muted' }, ' ' + x.account + ' · ' + x.region)] : x.messageId ? h('a', { href: '#/message/' + enc(x.messageId) }, shortArn(x.subscriptionArn)) : '', x.detail ? h('span', { class: 'muted' }, ' ' + x.detail) : null))))) : h('p', { class: 'muted' }, 'Nothing is waiting on the clock.'));
    }
    await update();
    return update;
  }

  // ---- routing -----------------------------------------------------------------------

  async function route() {
    const parts = location.hash.replace(/^#\/?/, '').split('/');
    const arg = decodeURIComponent(parts.slice(1).join('/'));
    // #/queue/<account>/<region>/<name> names a namespace; #/queue/<name> does not.
    const named = parts.length === 4 ? [decodeURIComponent(parts[3]), decodeURIComponent(parts[1]) + '/' + decodeURIComponent(parts[2])] : [arg, ''];
    refresh = null;
    status(carried, true);
    carried = '';
    try {
      switch (parts[0]) {
        case 'queue': refresh = await queueView(...named); break;
        case 'topic': refresh = await topicView(...named); break;
        case 'message': refresh = await messageView(arg); break;
        case 'queues': await queuesView(); refresh = queuesView; break;
        case 'topics': await topicsView(); refresh = topicsView; break;
        case 'clock': refresh = await clockView(); break;
        default: await overview(); refresh = overview;
      }
    } catch (e) {
      status(e.message);
    }
    view.dataset.view = parts[0] || 'overview';
    schedule();
  }
  window.addEventListener('hashchange', route);
  route();
})();
