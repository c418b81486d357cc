// Drives Hawtio in Debian's headless Chromium for HawtioBrowserIT:
//   node hawtio-browser.mjs HAWTIO_URL AGENT_PORT OPERATOR OPERATOR_PW VIEWER VIEWER_PW SCREENSHOT_DIR CHROMIUM
// Prints one "STEP ..." line per step reached; exits 1 (with a screenshot of the page) at the first step that fails.
// Every wait is on a condition with a deadline, never a fixed sleep.
import { chromium } from 'playwright-core';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [hawtio, agentPort, opUser, opPassword, viewUser, viewPassword, shots, chromiumPath] = process.argv.slice(2);
const WAIT = 30_000;
mkdirSync(shots, { recursive: true });

// The connection as Hawtio's Connect tab saves it (localStorage), to the agent through Hawtio's proxy.
const CONNECTION = { id: 'npu-node', name: 'npu-node', scheme: 'http', host: '127.0.0.1', port: Number(agentPort),
  path: '/jolokia' };

const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hawtio-chromium-')), {
  executablePath: chromiumPath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
  viewport: { width: 1400, height: 1000 },
});
context.setDefaultTimeout(WAIT);

let current = null;
let stepName = 'start';
function step(name) {
  stepName = name;
  console.log('STEP ' + name);
}

async function shot(page, name) {
  await page.screenshot({ path: join(shots, name + '.png') });
}

/** A new tab (its own sessionStorage, so its own Hawtio login) logged in to the agent as user. */
async function login(user, password, who) {
  const page = await context.newPage();
  current = page;
  page.on('console', m => { if (m.type() === 'error') console.log(`[${who} console] ${m.text()}`); });
  page.on('response', r => { if (r.url().includes('/proxy/') && r.status() !== 200)
    console.log(`[${who} proxy] ${r.status()} ${r.url()}`); });
  await page.goto(hawtio + '/');
  await page.evaluate(c => localStorage.setItem('connect.connections', JSON.stringify({ [c.id]: c })), CONNECTION);
  await page.goto(hawtio + '/?con=' + CONNECTION.id);
  await page.locator('#connect-login-form-username').fill(user);
  await page.locator('#connect-login-form-password').fill(password);
  await shot(page, who + '-1-login');
  // Hawtio keeps the credentials in the tab once a request through its proxy has succeeded with them; a navigation
  // before that (seen on a loaded machine) loads the console without them: every Jolokia request then gets 401 and the
  // JMX tree stays empty, since Hawtio does not list it again
  const authenticated = page.waitForResponse(r => r.url().includes('/proxy/') && r.status() === 200,
    { timeout: 60000 });
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('#connect-login-form-username').waitFor({ state: 'detached' });
  await authenticated;
  step(who + ' logged in');
  await page.goto(hawtio + '/jmx');
  return page;
}

/** Selects an MBean of the io.npulifecycle domain in the JMX tree. */
async function select(page, ...path) {
  const tree = page.locator('.pf-v5-c-tree-view, .pf-c-tree-view, [role=tree]').first();
  for (const label of path) {
    const node = tree.getByRole('treeitem', { name: label, exact: true }).first();
    const button = node.locator('button').first();
    await button.waitFor();
    await button.click();
  }
}

/** Opens the Operations tab of the selected MBean and expands the operation. */
async function open(page, operation) {
  await page.getByRole('tab', { name: 'Operations' }).or(page.getByRole('link', { name: 'Operations' })).first()
    .click();
  const item = page.locator('li', { hasText: operation + '(' }).first();
  await item.locator('button[aria-controls], button[id^="ex-toggle"], .pf-v5-c-data-list__toggle button, '
    + '.pf-c-data-list__toggle button').first().click();
  return item;
}

/** Opens the operation of the selected MBean, fills its fields and executes it. */
async function execute(page, operation, values) {
  const item = await open(page, operation);
  const inputs = item.locator('input');
  for (let i = 0; i < values.length; i++) {
    await inputs.nth(i).fill(String(values[i]));
  }
  await item.getByRole('button', { name: 'Execute' }).click();
  return item;
}

try {
  // operator: the tree, HealthWatch's attributes, Simulator.wedge
  const op = await login(opUser, opPassword, 'operator');
  await op.getByText('io.npulifecycle', { exact: true }).first().waitFor();
  step('tree io.npulifecycle');
  await select(op, 'io.npulifecycle', 'HealthWatch');
  await op.getByText('ExpectedChips').first().waitFor();
  await op.getByText('0:0,1:0,2:0,3:0,4:0,5:0,6:0,7:0').first().waitFor();
  step('healthwatch');
  await shot(op, 'operator-2-healthwatch');

  await select(op, 'Chip');
  await op.getByRole('treeitem', { name: 'npu4-chip0', exact: true }).first().waitFor();
  step('chip tree');
  await shot(op, 'operator-3-chips');

  await select(op, 'Simulator');
  const wedge = await execute(op, 'wedge', [4, 0]);
  await wedge.getByText('4:0 wedged').first().waitFor();
  await wedge.getByText('4:0 wedged').first().scrollIntoViewIfNeeded();
  step('operator wedge 4:0 wedged');
  await shot(op, 'operator-4-wedge');

  // viewer: the agent's list answer says a viewer may invoke nothing, so Hawtio shows the MBeans locked and
  // disables Execute; the agent itself still refuses a viewer's exec, with the reason
  const viewer = await login(viewUser, viewPassword, 'viewer');
  await select(viewer, 'io.npulifecycle', 'Simulator');
  const item = await open(viewer, 'wedge');
  await item.locator('button:disabled', { hasText: 'Execute' }).waitFor();
  await item.locator('button:disabled', { hasText: 'Execute' }).scrollIntoViewIfNeeded();
  step('viewer execute disabled');
  await shot(viewer, 'viewer-2-execute-disabled');
  const answer = await viewer.evaluate(async ([user, password, url]) => {
    const r = await fetch(url, { method: 'POST', headers: { Authorization: 'Basic ' + btoa(user + ':' + password),
      'Content-Type': 'application/json' }, body: JSON.stringify({ type: 'exec',
      mbean: 'io.npulifecycle:type=Simulator', operation: 'wedge(int,int)', arguments: [5, 0] }) });
    return r.status + ' ' + await r.text();
  }, [viewUser, viewPassword, `${hawtio}/proxy/http/127.0.0.1/${agentPort}/jolokia`]);
  console.log('viewer exec through the proxy: ' + answer);
  if (!answer.includes('role viewer may not exec')) {
    throw new Error('the viewer\'s exec was not refused: ' + answer);
  }
  step('viewer refused');
  await context.close();
} catch (e) {
  console.log(`FAILED at step after "${stepName}": ${e}`);
  if (current) {
    try {
      await shot(current, 'failure');
      console.log('page text:\n' + (await current.locator('body').innerText()).slice(0, 4000));
    } catch (e2) {
      console.log('no screenshot: ' + e2);
    }
  }
  await context.close().catch(() => {});
  process.exit(1);
}
