/**
 * An HAProxy configuration in front of Verity servers (docs/scale-out.md):
 * round robin, health checks on /api/health, a refused connection tried on
 * another server (never a request one may have answered), and an
 * `X-Served-By` header naming the server that answered. Used by
 * `npm run scale-out` and tests/live/scale-out.test.ts.
 */
export interface HaproxyBackend {
  name: string;
  /** host:port */
  address: string;
}

export function haproxyConfig(options: { port: number; backends: HaproxyBackend[]; statsUri?: string }): string {
  return `global
  maxconn 1024
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  # Long-lived responses (live updates) outlast timeout server.
  timeout tunnel 1h
  # A connection refused by a dead server is tried on another.
  retries 2
  option redispatch
frontend verity
  bind 127.0.0.1:${options.port}
${options.statsUri ? `  stats enable\n  stats uri ${options.statsUri}\n  stats refresh 2s\n` : ""}  default_backend verity
backend verity
  balance roundrobin
  option httpchk GET /api/health
  http-check expect status 200
  default-server inter 500ms fall 2 rise 2
  http-response set-header X-Served-By %[srv_name]
${options.backends.map((b) => `  server ${b.name} ${b.address} check`).join("\n")}
`;
}
