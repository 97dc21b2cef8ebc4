import { migrateToLatest, openDatabase } from '../database/database';
import { ChatMigrationsRepository } from './chat-migrations.repository';
import { SettingsRepository } from './settings.repository';

async function build() {
  const { db } = openDatabase(':memory:');
  await migrateToLatest(db);
  const settings = new SettingsRepository(db);
  return { db, settings, migrations: new ChatMigrationsRepository(settings) };
}

describe('ChatMigrationsRepository', () => {
  it('keeps each configured chat apart by kind and id, across a new process', async () => {
    const { settings, migrations } = await build();
    await migrations.remember('route', '-100', '-1001', 1);
    expect(await migrations.current('route', '-100', 2)).toBe('-1001');
    expect(await migrations.current('admin', '-100', 2)).toBe('-100');
    expect(await migrations.current('route', '-200', 2)).toBe('-200');
    expect(await new ChatMigrationsRepository(settings).current('route', '-100', 3)).toBe('-1001');
  });

  it('peeks only at what was read, with no query', async () => {
    const { settings, migrations } = await build();
    await settings.set('admin_chat_id:-100', '-1001', 1);
    expect(migrations.peek('admin', '-100')).toBe('-100');
    await migrations.current('admin', '-100', 2);
    expect(migrations.peek('admin', '-100')).toBe('-1001');
  });

  it('follows a migration in this process even when the database refuses to keep it', async () => {
    const { db, migrations } = await build();
    await db.destroy();
    await expect(migrations.remember('admin', '-100', '-1001', 1)).rejects.toThrow();
    expect(migrations.peek('admin', '-100')).toBe('-1001');
    expect(await migrations.current('admin', '-100', 2)).toBe('-1001');
  });

  it("takes the leads group's unkeyed setting of an earlier version as LEADS_CHAT_ID's as configured", async () => {
    const { settings, migrations } = await build();
    await settings.set('leads_chat_id', '-1002', 1);
    expect(await migrations.current('leads', '-100', 2)).toBe('-1002');
    expect(await settings.get('leads_chat_id')).toBeNull();
    expect(await settings.get('leads_chat_id:-100')).toBe('-1002');
  });
});
