// What the PostgreSQL drills (cluster.mjs, database.mjs) share: the guard that no server instance outlives the drill,
// the stop-everything-on-exit list, and the check of acknowledged leads against what the database holds.

/**
 * A `--import` for a server instance: an instance whose parent is gone (the drill killed by SIGKILL) kills itself, so
 * no instance outlives the drill.
 */
export const EXIT_WITH_PARENT = `data:text/javascript,${encodeURIComponent(
  'const p = process.ppid; setInterval(() => { if (process.ppid !== p) process.kill(process.pid, "SIGKILL"); }, 1000).unref();',
)}`;

/**
 * Everything the drill started is stopped by `cleanup()`, last started first, whether the drill passes, fails, throws
 * or is interrupted (SIGINT, SIGTERM: then the process exits 130 / 143 once it is done). A cleanup that fails does not
 * hold the others back, and the process does not end before the last one is done. `cleanup()` is safe to call more
 * than once.
 */
export function cleanupList(progress) {
  const cleanups = [];
  let cleaning = null;
  function cleanup() {
    cleaning ??= (async () => {
      // Held until the end: a cleanup that waits only for an unref'd child's exit must not let the process end first.
      const keepAlive = setInterval(() => undefined, 1000);
      for (const fn of cleanups.reverse())
        await Promise.resolve()
          .then(fn)
          .catch(() => undefined);
      clearInterval(keepAlive);
    })();
    return cleaning;
  }
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ]) {
    process.on(signal, () => {
      progress(`${signal}: stopping everything`);
      void cleanup().finally(() => process.exit(code));
    });
  }
  return { add: (fn) => void cleanups.push(fn), cleanup };
}

/** Every stored request_id (leads and repeats) and the lead number it got, read with `query` (a pg pool or client). */
export async function storedRequests(query) {
  const leads = (await query.query('select id, request_id from leads')).rows;
  const repeats = (await query.query('select lead_id, request_id from lead_repeats')).rows;
  return {
    leads: leads.length,
    repeats: repeats.length,
    byRequest: new Map([...leads.map((l) => [l.request_id, Number(l.id)]), ...repeats.map((r) => [r.request_id, Number(r.lead_id)])]),
  };
}

/**
 * Acknowledged leads against the database. `answers`: request_id -> Set of the lead numbers it was answered with;
 * `stored`: request_id -> lead number (storedRequests().byRequest). Lost: acknowledged, not stored. Two numbers: one
 * request_id answered with two numbers, or stored under another number than it was answered with.
 * @returns {{ lost: string[], twoNumbers: string[], violations: string[] }} the request_ids, and one line for each
 */
export function checkAcknowledged(answers, stored) {
  const lost = [];
  const twoNumbers = [];
  const violations = [];
  for (const [requestId, numbers] of answers) {
    const number = [...numbers][0];
    if (numbers.size > 1 || (stored.has(requestId) && stored.get(requestId) !== number)) {
      twoNumbers.push(requestId);
      violations.push(`request_id ${requestId} answered as #${[...numbers].join(', #')}, stored as #${stored.get(requestId)}`);
    }
    if (!stored.has(requestId)) {
      lost.push(requestId);
      violations.push(`request_id ${requestId} acknowledged as #${number} is not in leads nor lead_repeats`);
    }
  }
  return { lost, twoNumbers, violations };
}
