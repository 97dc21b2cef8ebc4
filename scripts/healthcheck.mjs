// Docker HEALTHCHECK for either role: the server's /health on PORT (3000), or the landing's on PORT (3001).
const ports = process.env.PORT ? [process.env.PORT] : ['3000', '3001'];
for (const port of ports) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(3000) });
    if (res.ok) process.exit(0);
  } catch {
    /* try the next */
  }
}
process.exit(1);
