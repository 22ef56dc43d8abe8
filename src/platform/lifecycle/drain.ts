// The stop a signal asks for (SIGTERM, SIGINT): readiness goes to 503 at once, requests are still
// served for SHUTDOWN_DELAY_SECONDS (while a load balancer takes the instance out), then the listener
// closes, requests in flight finish, and the shutdown steps run; whatever is still open when
// SHUTDOWN_GRACE_SECONDS (counted from the signal) are over is cut, and the stop goes on.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Lifecycle } from './shutdown.js';

export interface DrainOutcome {
  /** Connections still open at the end of the grace, cut then (0: a clean drain). */
  cut: number;
}

export interface DrainTimes {
  delaySeconds: number;
  graceSeconds: number;
}

/** The server's open connections (keep-alive, in flight, event streams), counted and cut at the end of the grace. */
export function trackConnections(server: Server): ReadonlySet<Socket> {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return open;
}

/**
 * Every answer sent while draining says `Connection: close`: a client with a kept-alive connection
 * opens its next one through the load balancer (to another instance) instead of reusing this one,
 * and the server does not wait for the connection's keep-alive timeout once the answer is out.
 */
export function closeConnectionsWhileDraining(app: FastifyInstance, lifecycle: Lifecycle) {
  app.addHook('onSend', async (_request, reply, payload) => {
    if (lifecycle.draining) reply.header('connection', 'close');
    return payload;
  });
}

export async function drain(
  app: FastifyInstance,
  lifecycle: Lifecycle,
  connections: ReadonlySet<Socket>,
  times: DrainTimes,
): Promise<DrainOutcome> {
  // The grace period is real time that real timers wait out: the system clock, not the injected one.
  const deadline = Date.now() + times.graceSeconds * 1000;
  lifecycle.startDraining(deadline);
  app.log.info(
    { delaySeconds: times.delaySeconds, graceSeconds: times.graceSeconds },
    'draining: readiness answers 503; the listener closes after the delay',
  );
  if (times.delaySeconds > 0) await new Promise((resolve) => setTimeout(resolve, times.delaySeconds * 1000));
  app.log.info({ connections: connections.size }, 'draining: listener closed, finishing requests in flight');
  let cut = 0;
  const graceOver = setTimeout(
    () => {
      cut = connections.size;
      if (cut > 0) app.log.warn({ connections: cut }, 'draining: grace over, cutting the connections still open');
      app.server.closeAllConnections();
      // Event streams and other hijacked replies are no longer the HTTP server's to close.
      for (const socket of connections) socket.destroy();
    },
    Math.max(0, deadline - Date.now()),
  );
  try {
    // The server closes (its event streams end, its idle connections close), then the shutdown steps run.
    await app.close();
  } finally {
    clearTimeout(graceOver);
  }
  return { cut };
}
