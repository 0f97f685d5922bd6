// coachgate dashboard: renders /api/dashboard (the server's signed records) and polls it for changes.
// Every piece of data reaches the DOM through textContent or an SVG attribute, never as markup: task
// text, test names and test output are untrusted.
'use strict';

const POLL_MS = 2000;
const TOKEN_KEY = 'coachgate-token';
const STATUS_ORDER = ['blocked', 'in_progress', 'approved', 'unknown', 'not started'];
const SVG = 'http://www.w3.org/2000/svg';

const state = { data: null, etag: null, selected: null, open: new Set(), logs: new Map() };

/** An element with a class, text (as text) and children; attributes never carry markup. */
function el(tag, options = {}, children = []) {
  const node = document.createElement(tag);
  if (options.class) node.className = options.class;
  if (options.text !== undefined) node.textContent = String(options.text);
  for (const [name, value] of Object.entries(options.attrs ?? {})) node.setAttribute(name, value);
  for (const child of children) if (child) node.append(child);
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

function label(status) {
  return String(status).replace('_', ' ');
}

function time(iso) {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

function headers() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

async function poll() {
  try {
    const response = await fetch('api/dashboard', {
      headers: { ...headers(), ...(state.etag ? { 'If-None-Match': state.etag } : {}) },
    });
    if (response.status === 401) return askForToken();
    if (response.status === 304) return live('up to date');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    state.etag = response.headers.get('ETag');
    state.data = await response.json();
    render();
    live('up to date');
  } catch (error) {
    live(`cannot reach the server (${error.message}); retrying`, true);
  }
}

function live(text, bad = false) {
  const node = document.getElementById('live');
  node.textContent = `${bad ? '' : '● live · '}${text} · ${new Date().toLocaleTimeString()}`;
  node.classList.toggle('bad', bad);
}

/** Under `serve --http` the data needs a coach token; it stays in this tab's sessionStorage only. */
function askForToken() {
  live('a coach token is needed', true);
  const main = document.getElementById('main');
  if (main.querySelector('.token')) return;
  const input = el('input', {
    attrs: { type: 'password', autocomplete: 'off', 'aria-label': 'Coach token' },
  });
  const button = el('button', { text: 'Show the dashboard' });
  button.addEventListener('click', () => {
    sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    main.replaceChildren(el('p', { class: 'muted', text: 'Loading…' }));
    void poll();
  });
  main.replaceChildren(
    el('section', { class: 'card token' }, [
      el('h2', { text: 'Coach token' }),
      el('p', { text: 'This server answers with data only to a coach (or all) bearer token.' }),
      input,
      button,
    ]),
  );
}

function render() {
  const data = state.data;
  document.getElementById('where').textContent = [
    data.root,
    `state ${data.state_directory}`,
    data.key_id ? `server key ${data.key_id}` : 'no signing key',
  ].join(' · ');
  const tasks = [...data.tasks, ...unstartedTasks(data)];
  if (!state.selected || !tasks.some((task) => task.id === state.selected)) {
    const fromHash = decodeURIComponent(location.hash.replace(/^#task=/, ''));
    state.selected = tasks.some((task) => task.id === fromHash)
      ? fromHash
      : (firstToShow(tasks)?.id ?? null);
  }
  rememberOpen();
  // replaceChildren would show a null as the text "null": absent sections are left out.
  const sections = [
    notice(data),
    tamperingBanner(data),
    board(data, tasks),
    graph(data.graph),
    taskDetail(tasks.find((task) => task.id === state.selected)),
  ];
  document.getElementById('main').replaceChildren(...sections.filter(Boolean));
  restoreOpen();
}

/** The graph's tasks without records (task files only): the board lists them too, as not started. */
function unstartedTasks(data) {
  return data.graph.nodes
    .filter((node) => !data.tasks.some((task) => task.id === node.id))
    .map((node) => ({
      id: node.id,
      title: 'no records yet',
      status: node.status,
      unstarted: true,
      worktree: data.worktrees[0],
      max_strikes: null,
      mirror_tampering: [],
      running: null,
    }));
}

/** What needs eyes first: a run going on, then a blocked task, then one in progress. */
function firstToShow(tasks) {
  return (
    tasks.find((task) => task.running) ??
    tasks.find((task) => task.status === 'blocked') ??
    tasks.find((task) => task.status === 'in_progress') ??
    tasks[0]
  );
}

/** No records of this repository in the state directory read: most likely another one was meant. */
function notice(data) {
  if (!data.notice) return null;
  return el('section', { class: 'notice', attrs: { role: 'status' } }, [
    el('h2', { text: data.notice }),
    el('p', {
      text:
        'Records are signed and kept per state directory. Start the dashboard with the one the MCP ' +
        'server uses (coachgate ui --state-dir DIR); a mirror under .guardkit/autobuild/ alone proves ' +
        'nothing, so nothing in it is shown as evidence or compared.',
    }),
  ]);
}

function tamperingBanner(data) {
  const tampered = data.tasks.filter((task) => task.mirror_tampering.length > 0);
  if (tampered.length === 0) return null;
  return el('section', { class: 'alert', attrs: { role: 'alert' } }, [
    el('h2', { text: '⚠ Worktree mirror tampered' }),
    el('p', {
      text:
        "The records under .guardkit/autobuild/ differ from the server's own signed copy, which is " +
        'what this page shows. An approval is refused while they differ. Find out who edited them:',
    }),
    ...tampered.map((task) =>
      el('div', {}, [
        el('strong', { text: `${task.id}: ` }),
        el(
          'ul',
          {},
          task.mirror_tampering.map((finding) =>
            el('li', { text: `${finding.file} ${finding.entry}: ${finding.difference}` }),
          ),
        ),
      ]),
    ),
  ]);
}

function board(data, tasks) {
  const statuses = [...new Set([...STATUS_ORDER, ...tasks.map((task) => task.status)])];
  const columns = statuses
    .map((status) => ({ status, tasks: tasks.filter((task) => task.status === status) }))
    .filter((column) => column.tasks.length > 0);
  return el('section', { class: 'board' }, [
    el('h2', { text: 'Tasks' }),
    data.worktrees.length > 1
      ? el('p', {
          class: 'muted worktrees',
          text: `Worktrees: ${data.worktrees.map(worktreeText).join(' · ')}`,
        })
      : null,
    el(
      'div',
      { class: 'columns' },
      columns.map((column) =>
        el('div', { class: 'column' }, [
          el('h3', { class: `status-${column.status.replace(' ', '_')}` }, [
            el('span', { text: label(column.status) }),
            el('span', { class: 'count', text: column.tasks.length }),
          ]),
          ...column.tasks.map(taskCard),
        ]),
      ),
    ),
  ]);
}

function worktreeText(worktree) {
  return worktree.branch ? `${worktree.label} (${worktree.branch})` : worktree.label;
}

function taskCard(task) {
  // With several worktrees, each card says where its task runs.
  const where = state.data.worktrees.length > 1;
  const button = el(
    'button',
    {
      class: `task-card${task.id === state.selected ? ' selected' : ''}`,
      attrs: { 'data-task': task.id, type: 'button' },
    },
    [
      el('span', { class: 'task-id', text: task.id }),
      el('span', { class: 'task-title', text: task.title }),
      where ? el('span', { class: 'task-where', text: `in ${task.worktree.label}` }) : null,
      el('span', { class: 'chips' }, [
        task.running ? el('span', { class: 'chip running', text: 'run in progress' }) : null,
        strikes(task),
        task.stall?.stalled
          ? el('span', { class: 'chip bad', text: `stalled: ${task.stall.reason}` })
          : null,
        task.mirror_tampering.length > 0
          ? el('span', { class: 'chip bad', text: '⚠ tampered' })
          : null,
        task.verdict_chain && !task.verdict_chain.intact
          ? el('span', { class: 'chip bad', text: 'chain broken' })
          : null,
        task.problem
          ? el('span', { class: 'chip warn', text: task.signed ? 'unreadable' : 'not signed' })
          : null,
      ]),
    ],
  );
  button.addEventListener('click', () => select(task.id));
  return button;
}

function select(id) {
  state.selected = id;
  history.replaceState(null, '', `#task=${encodeURIComponent(id)}`);
  render();
}

function strikes(task) {
  if (task.max_strikes === null) return null;
  const dots = el('span', {
    class: 'strikes',
    attrs: { title: `${task.strikes} of ${task.max_strikes} strikes` },
  });
  for (let index = 0; index < task.max_strikes; index++)
    dots.append(el('span', { class: index < task.strikes ? 'dot on' : 'dot' }));
  dots.append(
    el('span', { class: 'strike-text', text: `${task.strikes}/${task.max_strikes} strikes` }),
  );
  return dots;
}

// `side` leaves room for the arcs between members of one cycle, drawn beside their column.
const NODE = { width: 168, height: 44, column: 220, row: 64, pad: 16, side: 48 };

function graph(view) {
  const section = el('section', { class: 'card graph' }, [
    el('h2', { text: 'Dependency graph' }),
    el('p', {
      class: 'muted',
      text: view.acyclic
        ? 'Columns are waves: a task depends on tasks to its left.'
        : 'The graph has cycles (red): no wave order exists until one edge of each is cut.',
    }),
  ]);
  if (view.nodes.length === 0) {
    section.append(el('p', { class: 'muted', text: 'No task files and no records.' }));
    return section;
  }
  const columns = Math.max(...view.nodes.map((node) => node.column)) + 1;
  const rows = Math.max(...view.nodes.map((node) => node.row)) + 1;
  const width = NODE.side * 2 + (columns - 1) * NODE.column + NODE.width;
  const height = NODE.pad * 2 + 20 + (rows - 1) * NODE.row + NODE.height;
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img' });
  root.append(svg('title', {}, 'Task dependency graph'));
  const defs = svg('defs');
  for (const [id, cls] of [
    ['arrow', 'edge-head'],
    ['arrow-cycle', 'edge-head cycle'],
  ]) {
    const marker = svg('marker', {
      id,
      viewBox: '0 0 10 10',
      refX: 10,
      refY: 5,
      markerWidth: 8,
      markerHeight: 8,
      orient: 'auto-start-reverse',
    });
    marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: cls }));
    defs.append(marker);
  }
  root.append(defs);
  const position = new Map(
    view.nodes.map((node) => [
      node.id,
      { x: NODE.side + node.column * NODE.column, y: NODE.pad + 20 + node.row * NODE.row },
    ]),
  );
  for (let column = 0; column < columns; column++)
    root.append(
      svg(
        'text',
        { x: NODE.side + column * NODE.column, y: NODE.pad + 4, class: 'wave' },
        `wave ${column}`,
      ),
    );
  for (const edge of view.edges) {
    // `from` depends on `to`: the arrow points from the dependency to the task that waits for it.
    const a = position.get(edge.to);
    const b = position.get(edge.from);
    const cls = edge.in_cycle ? 'edge cycle' : 'edge';
    if (edge.from === edge.to) {
      root.append(
        svg('path', {
          d: `M ${a.x + 30} ${a.y} c -10 -18 30 -18 20 0`,
          class: cls,
          'marker-end': 'url(#arrow-cycle)',
        }),
      );
      continue;
    }
    const x1 = a.x + NODE.width;
    const y1 = a.y + NODE.height / 2;
    const x2 = b.x;
    const y2 = b.y + NODE.height / 2;
    root.append(
      svg('path', {
        d: edgePath(a, b, x1, y1, x2, y2),
        class: cls,
        'marker-end': edge.in_cycle ? 'url(#arrow-cycle)' : 'url(#arrow)',
      }),
    );
  }
  for (const node of view.nodes) {
    const { x, y } = position.get(node.id);
    const group = svg('g', {
      class: `node status-${node.status.replace(' ', '_')}${node.in_cycle ? ' in-cycle' : ''}${node.id === state.selected ? ' selected' : ''}`,
      tabindex: 0,
    });
    group.append(
      svg('title', {}, `${node.id}: ${label(node.status)}${node.in_cycle ? ' (in a cycle)' : ''}`),
    );
    group.append(svg('rect', { x, y, width: NODE.width, height: NODE.height, rx: 8 }));
    group.append(
      svg(
        'text',
        { x: x + 10, y: y + 18, class: 'node-id' },
        node.id.length > 22 ? `${node.id.slice(0, 21)}…` : node.id,
      ),
    );
    group.append(
      svg(
        'text',
        { x: x + 10, y: y + 34, class: 'node-status' },
        `${label(node.status)}${node.in_cycle ? ' · ↻ cycle' : ''}`,
      ),
    );
    group.addEventListener('click', () => select(node.id));
    root.append(group);
  }
  section.append(el('div', { class: 'graph-scroll' }, [root]));
  const notes = [
    ...view.cycles.map((cycle) => `cycle: ${cycle.path.join(' → ')}`),
    ...view.self_loops.map((id) => `${id} depends on itself`),
    ...view.dangling.map((edge) => `${edge.from} depends on ${edge.to}, which has no task file`),
    ...view.problems,
  ];
  if (notes.length > 0)
    section.append(
      el(
        'ul',
        { class: 'notes' },
        notes.map((note) => el('li', { text: note })),
      ),
    );
  return section;
}

/**
 * Left to right between waves; within one column (members of a cycle) an arc beside the nodes: on the
 * right going down, on the left going up, so the two edges of a two-node cycle stay apart.
 */
function edgePath(a, b, x1, y1, x2, y2) {
  if (x2 > x1) {
    const bend = (x2 - x1) / 2;
    return `M ${x1} ${y1} C ${x1 + bend} ${y1} ${x2 - bend} ${y2} ${x2} ${y2}`;
  }
  const down = b.y > a.y;
  const x = down ? a.x + NODE.width : a.x;
  const out = down ? 36 : -36;
  const ya = a.y + NODE.height / 2;
  const yb = b.y + NODE.height / 2;
  const xb = down ? b.x + NODE.width : b.x;
  return `M ${x} ${ya} C ${x + out} ${ya} ${xb + out} ${yb} ${xb} ${yb}`;
}

function taskDetail(task) {
  if (!task)
    return el('section', { class: 'card' }, [
      el('p', { class: 'muted', text: 'No task files and no records yet.' }),
    ]);
  if (task.unstarted)
    return el('section', { class: 'card detail', attrs: { 'data-detail': task.id } }, [
      el('h2', {}, [el('span', { class: 'task-id', text: task.id })]),
      el('p', {
        class: 'muted',
        text: 'Not started: its task file is in the graph; no run or verdict is recorded yet.',
      }),
    ]);
  const facts = [
    ['status', label(task.status)],
    ['worktree', worktreeText(task.worktree)],
    ['strikes', task.max_strikes === null ? '–' : `${task.strikes} / ${task.max_strikes}`],
    [
      'stall',
      task.stall
        ? task.stall.stalled
          ? `stalled: ${task.stall.reason} since turn ${task.stall.first_stalled_turn}`
          : 'no stall'
        : '–',
    ],
    [
      'verdict chain',
      task.verdict_chain
        ? task.verdict_chain.intact
          ? `intact, ${task.verdict_chain.entries} signed entries`
          : `BROKEN: ${task.verdict_chain.problems.join('; ')}`
        : '–',
    ],
    ['base', task.base ? `${task.base.commit.slice(0, 12)} (${task.base.source})` : '–'],
    ['latest run', latestRun(task.latest_run, task.merged)],
  ];
  if (task.running) facts.splice(1, 0, ['run in progress', runningText(task.running)]);
  if (task.merged) facts.push(['merged', mergedText(task.merged)]);
  if (task.block_reason) facts.splice(1, 0, ['blocked because', task.block_reason]);
  if (task.base_moved && !task.merged?.base_moved_by_merge)
    facts.push([
      'base moved',
      `pinned ${task.base_moved.pinned.slice(0, 12)}, now ${task.base_moved.resolved.slice(0, 12)}`,
    ]);
  return el('section', { class: 'card detail', attrs: { 'data-detail': task.id } }, [
    el('h2', {}, [
      el('span', { class: 'task-id', text: task.id }),
      el('span', { text: ` ${task.title}` }),
    ]),
    task.problem ? el('p', { class: 'problem', text: task.problem }) : null,
    el(
      'dl',
      { class: 'facts' },
      facts.flatMap(([term, value]) => [
        el('dt', { text: term }),
        el('dd', { class: /BROKEN|stalled/.test(value) ? 'bad-text' : '', text: value }),
      ]),
    ),
    task.mirror_tampering.length > 0
      ? el('div', { class: 'alert small' }, [
          el('strong', { text: '⚠ Mirror tampered — the server copy below is what counts:' }),
          el(
            'ul',
            {},
            task.mirror_tampering.map((finding) =>
              el('li', { text: `${finding.file} ${finding.entry}: ${finding.difference}` }),
            ),
          ),
        ])
      : null,
    task.unverified.length > 0
      ? el('div', { class: 'alert small' }, [
          el('strong', { text: 'Records that failed verification (not shown as evidence):' }),
          el(
            'ul',
            {},
            task.unverified.map((item) => el('li', { text: `${item.name}: ${item.problem}` })),
          ),
        ])
      : null,
    chart(task.turns),
    el('h3', { text: 'Turns' }),
    el(
      'ol',
      { class: 'timeline' },
      task.turns.map((turn) => turnItem(task, turn)),
    ),
  ]);
}

function latestRun(run, merged) {
  if (!run) return 'none';
  if (run.problem) return run.problem;
  // After the merge the run's tree is gone: the approved files, checked one by one, are what counts.
  const tree = run.fresh
    ? ''
    : merged && merged.changed_files.length === 0
      ? ' · its approved tree was merged'
      : ' · stale: the tree changed since';
  return `${run.status} (${run.counts.passed} passed, ${run.counts.failed + run.counts.errors} failed, ${run.counts.skipped} skipped)${tree}`;
}

function runningText(run) {
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(run.started_at)) / 1000));
  return `started ${time(run.started_at)} (${seconds} s ago), ${run.output_bytes} bytes of output so far, last at ${time(run.last_output_at)}; not evidence until the server stores it`;
}

function mergedText(merged) {
  const where = `${merged.merge_commit.slice(0, 12)} into ${merged.base_branch}`;
  return merged.changed_files.length === 0
    ? `${where}: the ${merged.approved_files} approved file(s) unchanged (signed merge record)`
    : `${where}, but changed since: ${merged.changed_files.join(', ')}`;
}

/** Passed / failed / skipped of each turn's last run, stacked. */
function chart(turns) {
  const bars = turns.filter((turn) => turn.tests);
  if (bars.length === 0) return null;
  const max = Math.max(
    1,
    ...bars.map(
      (turn) =>
        turn.tests.total ||
        turn.tests.passed + turn.tests.failed + turn.tests.errors + turn.tests.skipped,
    ),
  );
  const bar = { width: 36, gap: 28, height: 110, top: 12, left: 36 };
  const width = bar.left + bars.length * (bar.width + bar.gap) + 150;
  const root = svg('svg', {
    viewBox: `0 0 ${width} ${bar.height + 44}`,
    width,
    height: bar.height + 44,
    role: 'img',
    class: 'chart',
  });
  root.append(svg('title', {}, 'Tests per turn: passed, failed, skipped'));
  root.append(svg('text', { x: 0, y: bar.top + 4, class: 'axis' }, max));
  root.append(svg('text', { x: 0, y: bar.top + bar.height, class: 'axis' }, 0));
  root.append(
    svg('line', {
      x1: bar.left - 6,
      y1: bar.top + bar.height,
      x2: width - 150,
      y2: bar.top + bar.height,
      class: 'baseline',
    }),
  );
  bars.forEach((turn, index) => {
    const x = bar.left + index * (bar.width + bar.gap);
    let y = bar.top + bar.height;
    for (const [kind, count] of [
      ['passed', turn.tests.passed],
      ['failed', turn.tests.failed + turn.tests.errors],
      ['skipped', turn.tests.skipped],
    ]) {
      if (count === 0) continue;
      const h = (count / max) * bar.height;
      y -= h;
      const rect = svg('rect', { x, y, width: bar.width, height: h, class: `bar ${kind}` });
      rect.append(svg('title', {}, `turn ${turn.turn}: ${count} ${kind}`));
      root.append(rect);
    }
    root.append(
      svg(
        'text',
        { x: x + bar.width / 2, y: bar.top + bar.height + 16, class: 'axis middle' },
        `turn ${turn.turn}`,
      ),
    );
  });
  const legendX = width - 130;
  [
    ['passed', 'passed'],
    ['failed', 'failed + errors'],
    ['skipped', 'skipped'],
  ].forEach(([kind, text], index) => {
    root.append(
      svg('rect', {
        x: legendX,
        y: bar.top + index * 20,
        width: 12,
        height: 12,
        class: `bar ${kind}`,
      }),
    );
    root.append(
      svg('text', { x: legendX + 18, y: bar.top + index * 20 + 10, class: 'axis' }, text),
    );
  });
  return el('div', { class: 'chart-box' }, [
    el('h3', { text: 'Tests per turn (the server’s runs)' }),
    root,
  ]);
}

function turnItem(task, turn) {
  const coach = turn.coach;
  const outcome = coach
    ? coach.decision === 'approve'
      ? ['ok', 'approved']
      : [
          'bad',
          `feedback · strike ${coach.strikes}${coach.status === 'blocked' ? ' · blocked' : ''}`,
        ]
    : turn.refused.length > 0
      ? ['warn', 'approval refused']
      : ['muted', 'awaiting the Coach'];
  return el('li', { class: `turn ${outcome[0]}` }, [
    el('div', { class: 'turn-head' }, [
      el('span', { class: 'turn-number', text: `Turn ${turn.turn}` }),
      el('span', { class: `pill ${outcome[0]}`, text: outcome[1] }),
    ]),
    el('div', { class: 'lanes' }, [
      lane('Player report', playerBlock(turn.player)),
      lane('Server runs', runsBlock(task, turn)),
      lane('Coach', coachBlock(turn)),
    ]),
  ]);
}

function lane(title, children) {
  return el('div', { class: 'lane' }, [el('h4', { text: title }), ...children]);
}

function playerBlock(player) {
  if (!player) return [el('p', { class: 'muted', text: 'No report this turn.' })];
  if (player.problem) return [el('p', { class: 'problem', text: player.problem })];
  return [
    el('p', { class: 'muted', text: time(player.recorded_at) }),
    el('p', {
      text: `Claims tests ${player.tests_passed_claimed ? 'pass' : 'fail'} (a claim, not evidence).`,
    }),
    player.notes ? el('p', { class: 'quote', text: player.notes }) : null,
    list('files', player.files),
    list('addresses', player.requirements_addressed),
    list('remaining', player.requirements_remaining),
    list('concerns', player.concerns),
    el('p', { class: 'sig muted', text: 'server copy (Player turns are not signed)' }),
  ];
}

function list(title, items) {
  if (!items || items.length === 0) return null;
  return el('div', { class: 'list' }, [
    el('span', { class: 'list-title', text: `${title}: ` }),
    el('span', { text: items.join(', ') }),
  ]);
}

function runsBlock(task, turn) {
  if (turn.runs.length === 0)
    return [el('p', { class: 'muted', text: 'No run stored this turn.' })];
  const blocks = [];
  if (turn.failing) {
    const { now, added, fixed } = turn.failing;
    blocks.push(
      el('div', { class: 'failing' }, [
        el('span', {
          class: 'list-title',
          text: now.length === 0 ? 'nothing failing' : `failing (${now.length}):`,
        }),
        el(
          'ul',
          {},
          now.map((id) =>
            el('li', {
              class: added.includes(id) ? 'new' : '',
              text: added.includes(id) ? `${id}  (new)` : id,
            }),
          ),
        ),
        fixed.length > 0
          ? el('div', { class: 'fixed' }, [
              el('span', { class: 'list-title', text: 'fixed since last turn: ' }),
              el('span', { text: fixed.join(', ') }),
            ])
          : null,
      ]),
    );
  }
  for (const run of turn.runs) blocks.push(runBlock(task, run));
  return blocks;
}

function runBlock(task, run) {
  const key = `${task.id}/${run.run_id}`;
  const details = el('details', { class: 'run', attrs: { 'data-key': key } }, [
    el('summary', {}, [
      el('span', { class: `pill ${run.status === 'passed' ? 'ok' : 'bad'}`, text: run.status }),
      el('span', {
        text: ` ${run.counts.passed} passed · ${run.counts.failed + run.counts.errors} failed · ${run.counts.skipped} skipped`,
      }),
      el('span', {
        class: 'muted',
        // A passed run has no failure class: "none" alone would read as "no tests".
        text: ` · ${run.failure_class === 'none' ? '' : `${run.failure_class} · `}${(run.duration_ms / 1000).toFixed(1)} s`,
      }),
    ]),
    el('p', { class: 'muted', text: `${run.run_id} · ${run.command}` }),
    el('p', {
      class: `sig ${run.signature.signed ? 'ok-text' : 'bad-text'}`,
      text: `${run.signature.signed ? '✓' : '✗'} ${run.signature.text}`,
    }),
    run.advice ? el('p', { class: 'quote', text: run.advice }) : null,
    el('pre', { class: 'output', text: run.summary }),
    logBlock(task, run, key),
  ]);
  return details;
}

function logBlock(task, run, key) {
  const box = el('div', { class: 'log' });
  const loaded = state.logs.get(key);
  if (loaded) {
    box.append(
      el('p', { class: 'muted', text: loaded.note }),
      el('pre', { class: 'output', text: loaded.text }),
    );
    return box;
  }
  const button = el('button', {
    class: 'small',
    text: 'Show the log (last 64 KB)',
    attrs: { type: 'button' },
  });
  button.addEventListener('click', async () => {
    const response = await fetch(
      `api/log?task=${encodeURIComponent(task.id)}&run=${encodeURIComponent(run.run_id)}`,
      { headers: headers() },
    );
    const body = await response.json();
    const entry = response.ok
      ? {
          note: `${body.truncated ? `last 64 KB of ${body.bytes} bytes` : `${body.bytes} bytes`} · from the worktree (logs are not signed; the summary above is)`,
          text: body.text,
        }
      : { note: body.error, text: '' };
    state.logs.set(key, entry);
    // A poll may have redrawn the page meanwhile: then draw again, now with the log.
    if (!box.isConnected) return render();
    box.replaceChildren(
      el('p', { class: 'muted', text: entry.note }),
      el('pre', { class: 'output', text: entry.text }),
    );
  });
  box.append(button);
  return box;
}

function coachBlock(turn) {
  const blocks = [];
  for (const refused of turn.refused) {
    blocks.push(
      el('div', { class: 'refused' }, [
        el('strong', { text: 'Approval refused by the server' }),
        el('p', {
          class: 'muted',
          text: `${time(refused.recorded_at)} · Coach said: ${refused.rationale}`,
        }),
        el(
          'ul',
          {},
          refused.reasons.map((reason) => el('li', { text: reason })),
        ),
        signature(refused.signature),
      ]),
    );
  }
  if (turn.integrity.length > 0)
    blocks.push(
      el('div', { class: 'integrity' }, [
        el('strong', { text: 'Integrity findings' }),
        el(
          'ul',
          {},
          turn.integrity.map((item) => el('li', { text: item })),
        ),
      ]),
    );
  const coach = turn.coach;
  if (!coach) {
    if (blocks.length === 0) blocks.push(el('p', { class: 'muted', text: 'No verdict yet.' }));
    return blocks;
  }
  blocks.push(
    el('div', { class: `verdict ${coach.decision}` }, [
      el('strong', { text: coach.decision === 'approve' ? '✓ Approved' : '✗ Feedback' }),
      el('p', {
        class: 'muted',
        text: `${time(coach.recorded_at)}${coach.run_id ? ` · ${coach.decision === 'approve' ? 'rests on' : 'latest'} run ${coach.run_id}` : ''}`,
      }),
      el('p', { class: 'quote', text: coach.rationale }),
      coach.issues.length > 0
        ? el(
            'ul',
            {},
            coach.issues.map((issue) =>
              el('li', {
                text: `${issue.severity}: ${issue.description}${issue.location ? ` (${issue.location})` : ''}`,
              }),
            ),
          )
        : null,
      coach.stall_reason
        ? el('p', { class: 'bad-text', text: `stall: ${coach.stall_reason}` })
        : null,
      trustedRun(coach.trusted_run, coach.passing_on_base_code),
      // An approval sends nothing back to the Player.
      coach.feedback && coach.decision !== 'approve' ? feedback(coach.feedback) : null,
      signature(coach.signature),
    ]),
  );
  return blocks;
}

function trustedRun(evaluation, onBase) {
  if (!evaluation) return null;
  const names = (items) => (items.length === 0 ? 'none' : items.join(', '));
  const lines = [
    `base tests on the base code: ${evaluation.baseline ? `${evaluation.baseline.status}, ${evaluation.baseline.tests_total} tests` : 'not run'}`,
    `base tests on the Player's code: ${evaluation.trusted ? `${evaluation.trusted.status}, ${evaluation.trusted.tests_total} tests` : 'not run'}`,
    `regressions: ${evaluation.regressions.length === 0 ? 'none' : evaluation.regressions.map((item) => `${item.test} (${item.outcome})`).join(', ')}`,
    // The list holds the base's own tests too: only ids naming a Player's file are the Player's.
    `tests in the Player's files that pass on the base code: ${names(onBase.in_player_files)}`,
    `other tests that pass on the base code (the base's, or ids naming no file): ${names(onBase.others)}`,
  ];
  if (evaluation.uncollected_test_files.length > 0)
    lines.push(`never collected: ${evaluation.uncollected_test_files.join(', ')}`);
  if (evaluation.planted.length > 0)
    lines.push(
      `planted: ${evaluation.planted.map((item) => `${item.file} (${item.problem})`).join(', ')}`,
    );
  return el('div', { class: 'trusted' }, [
    el('span', { class: 'list-title', text: 'Trusted run' }),
    el(
      'ul',
      {},
      lines.map((line) => el('li', { text: line })),
    ),
  ]);
}

function feedback(text) {
  return el(
    'details',
    { class: 'feedback', attrs: { 'data-key': `feedback/${text.length}/${text.slice(0, 40)}` } },
    [el('summary', { text: 'Feedback for the Player' }), el('pre', { class: 'output', text })],
  );
}

function signature(sig) {
  return el('p', {
    class: `sig ${sig.signed ? 'ok-text' : 'bad-text'}`,
    text: `${sig.signed ? '✓' : '✗'} ${sig.text}`,
  });
}

function rememberOpen() {
  for (const node of document.querySelectorAll('details[data-key]')) {
    if (node.open) state.open.add(node.dataset.key);
    else state.open.delete(node.dataset.key);
  }
}

function restoreOpen() {
  for (const node of document.querySelectorAll('details[data-key]'))
    if (state.open.has(node.dataset.key)) node.open = true;
}

void poll();
setInterval(() => void poll(), POLL_MS);
