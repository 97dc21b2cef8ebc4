// The built server and CLI as real processes: a DATABASE_PATH that cannot be opened stops the start with one line,
// HOST binds one address, and `npm run leads -- backup` copies the database of a running server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { SECRET, freePort, root, run, waitForHttp } from './stack.mjs';

const dir = mkdtempSync(join(tmpdir(), 'leads-hardening-e2e-'));
const children = [];
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once('exit', r)))));
  rmSync(dir, { recursive: true, force: true });
});

const baseEnv = { LEADS_SECRET: SECRET, LEADS_IP_SALT: 'e2e-salt', LEADS_IP_LIMIT: '1000', LEADS_HOURLY_LIMIT: '1000' };

const post = (url, body) =>
  fetch(`${url}/leads`, { method: 'POST', headers: { 'X-Stickers-Leads-Secret': SECRET }, body: JSON.stringify(body) });

/** `npm run leads -- backup <target>`, as its own process, on the database at `dbPath`. */
const backup = (dbPath, target) =>
  spawnSync(process.execPath, ['server/dist/cli.js', 'backup', target], {
    cwd: root,
    env: { PATH: process.env.PATH, DATABASE_PATH: dbPath },
    encoding: 'utf8',
  });

function exited(child) {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', (code) => r(code)));
}

describe('server start', () => {
  it('an unusable DATABASE_PATH exits 1 with one line naming the variable and the path', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a folder');
    const path = join(file, 'leads.sqlite');
    const child = run('server', ['server/dist/main.js'], { ...baseEnv, PORT: String(await freePort()), DATABASE_PATH: path });
    children.push(child);
    assert.equal(await exited(child), 1, child.output);
    const lines = child.output.trim().split('\n');
    assert.equal(lines.length, 1, child.output);
    assert.match(lines[0], new RegExp(`^config error: DATABASE_PATH=${path}: cannot open: `));
  });

  it('HOST=127.0.0.1 listens on loopback and says so', async () => {
    const port = await freePort();
    const env = { ...baseEnv, PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: join(dir, 'host', 'leads.sqlite') };
    const child = run('server', ['server/dist/main.js'], env);
    children.push(child);
    await waitForHttp(`http://127.0.0.1:${port}/health`, child, 'server');
    assert.match(child.output, new RegExp(`listening on http://127\\.0\\.0\\.1:${port} `));
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0, child.output);
  });
});

describe('npm run leads -- backup', () => {
  it('copies the database of a running server: the copy opens and holds every lead', async () => {
    const port = await freePort();
    const dbPath = join(dir, 'live', 'leads.sqlite');
    const server = run('server', ['server/dist/main.js'], { ...baseEnv, PORT: String(port), DATABASE_PATH: dbPath });
    children.push(server);
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/health`, server, 'server');
    const ids = [];
    for (let i = 0; i < 25; i += 1) {
      const body = {
        request_id: crypto.randomUUID(),
        name: 'Резерв Копия',
        telegram: `@backup_user_${i}`,
        phone: `+7911000${String(i).padStart(4, '0')}`,
        client_ip: `192.0.2.${i + 1}`,
      };
      const res = await post(url, body);
      assert.equal(res.status, 201, await res.text());
      ids.push(body.request_id);
    }

    const target = join(dir, 'leads-backup.sqlite');
    const cli = backup(dbPath, target);
    assert.equal(cli.status, 0, cli.stderr + cli.stdout);
    assert.match(cli.stdout, /^backup written: .* \(25 leads, \d+ bytes, integrity ok\)\n$/);

    const copy = new Database(target, { readonly: true, fileMustExist: true });
    const stored = new Set(copy.prepare('select request_id from leads').pluck().all());
    copy.close();
    assert.equal(stored.size, 25);
    for (const id of ids) assert.ok(stored.has(id), `lead ${id} missing from the backup`);

    // The server still takes leads afterwards, and a second backup to the same name is refused.
    const later = { request_id: crypto.randomUUID(), name: 'После Копии', telegram: '@after_backup', phone: '+79110009999' };
    const again = await post(url, later);
    assert.equal(again.status, 201);
    const refused = backup(dbPath, target);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /already exists/);
  });
});
