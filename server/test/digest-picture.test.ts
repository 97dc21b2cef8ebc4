/**
 * The daily digest's picture: the leads-per-day chart as a PNG sent with sendPhoto after the text, through the gateway,
 * into the sandbox (which takes the upload as Telegram does and shows it); a failed picture never holds the text back.
 */
import { join } from 'node:path';
import { ADMIN_CHAT, NO_RATE_LIMITS, sandboxSuite, submitLead } from './harness';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { PNG_SIGNATURE, svgToPng } from '../src/charts/chart-png';

const { tmp, sandbox, start } = sandboxSuite();
let n = 0;
const startDigest = () => start({ dbPath: join(tmp.dir, `digest-${(n += 1)}.sqlite`), env: NO_RATE_LIMITS });

describe("the digest's picture", () => {
  it('follows the text as a photo: a PNG of the chart, shown by the sandbox', async () => {
    const server = await startDigest();
    await submitLead(server, { source: { landing: 'wedding' } });
    await submitLead(server);
    // 12:00 in Moscow, after LEADS_DIGEST_AT (09:00).
    expect(await server.app.get(HousekeepingService).digest()).toBe(true);

    const [text, photo] = sandbox.messages(ADMIN_CHAT);
    expect(text.text).toContain('🗓 Сводка за сутки: заявок 2');
    expect(photo.text).toBe('📈 Заявки по дням за 30 дней');
    expect(photo.photo).toHaveLength(1);
    const { file_id, width, height, file_size } = photo.photo![0];
    // The per-day chart with its legend (720 × 344) at twice its size, for a phone's screen.
    const size = { width: 1440, height: 688 };
    expect({ width, height }).toEqual(size);
    const png = sandbox.state.photos.get(file_id)!.content;
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([size.width, size.height]);
    expect(file_size).toBe(png.length);

    // The Bot API's answer carries it as Telegram's does, and the sandbox serves it for its page.
    const call = sandbox.callsOf('sendPhoto')[0];
    expect([call.status, call.params.chat_id, call.params.caption]).toEqual([200, String(ADMIN_CHAT), '📈 Заявки по дням за 30 дней']);
    const served = await fetch(`${sandbox.url}/sandbox/files/${file_id}`);
    expect([served.status, served.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(png);
    const page = await (await fetch(`${sandbox.url}/`)).text();
    expect(page).toContain('\'<img class="photo" src="/sandbox/files/\'');
  });

  it('a landing with U+FFFE (sent now, or stored so by an older version) still gets its picture', async () => {
    const server = await startDigest();
    const sent = await submitLead(server, { source: { landing: 'wed\uFFFEding' } });
    const old = await submitLead(server, { source: { landing: 'summer' } });
    // The shared normalisation drops the noncharacter before the lead is stored.
    const stored = await server.db.db
      .selectFrom('leads')
      .select(['id', 'source_landing'])
      .where('id', 'in', [sent, old])
      .orderBy('id')
      .execute();
    expect(stored.map((r) => r.source_landing)).toEqual(['wedding', 'summer']);
    // A value stored before that rule: every character XML refuses, in the landing's name the chart shows.
    await server.db.db.updateTable('leads').set({ source_landing: 'sum\uFFFEmer\u0001\uFFFF\uD800' }).where('id', '=', old).execute();

    expect(await server.app.get(HousekeepingService).digest()).toBe(true);
    expect(server.logger.lines.filter((l) => l.includes('digest picture not sent'))).toEqual([]);
    const [text, photo] = sandbox.messages(ADMIN_CHAT);
    expect(text.text).toContain('🗓 Сводка за сутки: заявок 2');
    expect(photo.photo).toHaveLength(1);
    expect(sandbox.state.photos.get(photo.photo![0].file_id)!.content.subarray(0, 8)).toEqual(PNG_SIGNATURE);
  });

  it('a picture Telegram refuses is logged; the text went, and the day is done', async () => {
    const server = await startDigest();
    sandbox.inject({ method: 'sendPhoto', kind: 'server_error', count: 5 });
    const housekeeping = server.app.get(HousekeepingService);
    expect(await housekeeping.digest()).toBe(true);
    const messages = sandbox.messages(ADMIN_CHAT);
    expect(messages).toHaveLength(1);
    expect(messages[0].text).toContain('🗓 Сводка за сутки: заявок 0');
    expect(server.logger.lines.some((l) => l.includes('digest picture not sent'))).toBe(true);
    // Not tried again with the text at the next minute.
    server.clock.advance(60_000);
    expect(await housekeeping.digest()).toBe(false);
    expect(sandbox.callsOf('sendPhoto')).toHaveLength(1);
  });
});

describe("the sandbox's sendPhoto", () => {
  const upload = (photo: Buffer, caption?: string) => {
    const form = new FormData();
    form.set('chat_id', String(ADMIN_CHAT));
    if (caption !== undefined) form.set('caption', caption);
    form.set('photo', new Blob([photo]), 'chart.png');
    return fetch(`${sandbox.url}/bot${sandbox.token}/sendPhoto`, { method: 'POST', body: form }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));
  };

  it('refuses what is not an image, an empty file, a missing photo and a long caption, as Telegram does', async () => {
    expect((await upload(Buffer.from('not a picture'))).body).toMatchObject({
      ok: false,
      error_code: 400,
      description: 'Bad Request: IMAGE_PROCESS_FAILED',
    });
    expect((await upload(Buffer.alloc(0))).body.description).toBe('Bad Request: file must be non-empty');
    // Sides more than 20 to 1.
    const strip = svgToPng('<svg xmlns="http://www.w3.org/2000/svg" width="50" height="2"/>').png;
    expect((await upload(strip)).body.description).toBe('Bad Request: PHOTO_INVALID_DIMENSIONS');
    const square = svgToPng('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>').png;
    expect((await upload(square, 'x'.repeat(1025))).body.description).toBe('Bad Request: message caption is too long');
    const none = await fetch(`${sandbox.url}/bot${sandbox.token}/sendPhoto`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ chat_id: ADMIN_CHAT }),
    });
    expect(((await none.json()) as any).description).toBe('Bad Request: there is no photo in the request');
    const ok = await upload(square, 'квадрат');
    expect(ok.body.result).toMatchObject({ caption: 'квадрат', photo: [{ width: 8, height: 8, file_size: square.length }] });
    expect(ok.body.result.text).toBeUndefined();
  });
});
