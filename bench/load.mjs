// A small closed-loop load generator: N connections (keep-alive sockets), each sending its next request as soon as
// the previous answer arrives, for a fixed time. Reports throughput and latency percentiles.
import { Agent, request } from 'node:http';

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function post(agent, url, body, headers) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Runs `connections` loops for `seconds`; `next(i)` gives the i-th body. `url` is one URL, or several: the i-th
 * request goes to `url[i % url.length]` (round robin, as a load balancer in front of several instances would).
 * Returns {rps, p50, p99, count, sent, statuses, errors}.
 */
export async function load({ url, connections, seconds, next, headers = {}, warmupSeconds = 0.5 }) {
  const urls = Array.isArray(url) ? url : [url];
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let i = 0;
  const latencies = [];
  const statuses = {};
  let errors = 0;
  let measuring = false;
  const warmupEnd = Date.now() + warmupSeconds * 1000;
  const end = warmupEnd + seconds * 1000;
  const loop = async () => {
    while (Date.now() < end) {
      if (!measuring && Date.now() >= warmupEnd) measuring = true;
      try {
        const n = i++;
        const r = await post(agent, urls[n % urls.length], next(n), headers);
        if (measuring) {
          latencies.push(r.ms);
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        }
      } catch {
        errors += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    count: latencies.length,
    /** Requests answered or failed, warm-up included (for costs per request measured over the whole run). */
    sent: i,
    statuses,
    errors,
  };
}
