// The bodies the benches post to POST /leads: a new lead (its contacts and address unique to this process and count),
// and a 422 (fields the rules refuse).
let seq = 0;

/** A new lead each call, with a username, phone and visitor address no other call of this process gives. */
export function newLead(prefix = 'bench') {
  seq += 1;
  return JSON.stringify({
    request_id: crypto.randomUUID(),
    name: 'Бенчмарк Тестович',
    telegram: `@${prefix}_${process.pid}_${seq}`,
    phone: `+7${String(9_000_000_000 + ((process.pid * 1_000_003 + seq) % 999_999_999))}`,
    date: '14 февраля',
    guests: '30',
    comment: 'Нагрузочный тест: стикеры для свадьбы',
    client_ip: `10.${(seq >> 16) & 255}.${(seq >> 8) & 255}.${seq & 255}`,
  });
}

/** A body the field rules refuse (422). */
export const invalid = () => JSON.stringify({ request_id: crypto.randomUUID(), name: 'A', telegram: '@x', phone: '12' });
