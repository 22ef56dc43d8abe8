// What stopping the service does after its HTTP server has closed, as one ordered list of named steps
// that any part registers into (the webhook worker adds its stop() to 'stop-work' and nothing else
// changes).
import type { FastifyBaseLogger } from 'fastify';

/**
 * The phases in the order they run; within a phase, steps run in the order they were added.
 * - stop-work: nothing new starts (the scheduler's timer, the webhook worker); what is running finishes.
 * - release: what this instance holds for itself (job leases) is given back, for the other instances.
 * - disconnect: the event bus, key providers, the database pool, tracing.
 * The first waits no longer than the drain's deadline; the other two always run, since they
 * release what others wait for and close what would keep the process alive.
 */
export const SHUTDOWN_PHASES = ['stop-work', 'release', 'disconnect'] as const;
export type ShutdownPhase = (typeof SHUTDOWN_PHASES)[number];
const BOUNDED: ReadonlySet<ShutdownPhase> = new Set(['stop-work']);

interface Step {
  phase: ShutdownPhase;
  name: string;
  run(): Promise<void>;
}

export class ShutdownSteps {
  private readonly steps: Step[] = [];
  /** When the grace ends (ms since the epoch); the waiting phases give up then. Unset: they wait as long as it takes. */
  private deadline: number | undefined;

  add(phase: ShutdownPhase, name: string, run: () => Promise<void>) {
    this.steps.push({ phase, name, run });
  }

  /** Bounds the waiting phases of a later run() by this time (ms since the epoch). */
  waitNoLongerThan(deadline: number) {
    this.deadline = deadline;
  }

  /** Runs every step, phase by phase; a step that fails or outlasts the deadline is logged, and the next runs anyway. */
  async run(log: Pick<FastifyBaseLogger, 'warn' | 'error'>) {
    for (const phase of SHUTDOWN_PHASES) {
      for (const step of this.steps.filter((s) => s.phase === phase)) {
        const outcome = await this.bounded(
          phase,
          step.run().then(() => 'done' as const),
        );
        if (outcome instanceof Error) log.error({ err: outcome, step: step.name }, 'shutdown step failed');
        else if (outcome === 'deadline')
          log.warn({ step: step.name }, 'shutdown step still running at the end of the grace: not waited for');
      }
    }
  }

  private bounded(phase: ShutdownPhase, work: Promise<'done'>): Promise<'done' | 'deadline' | Error> {
    const caught = work.catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    const deadline = this.deadline;
    if (!BOUNDED.has(phase) || deadline === undefined) return caught;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'deadline'>((resolve) => {
      // A real timer to a deadline on the system clock (see drain.ts): elapsed time, not the injected clock.
      timer = setTimeout(() => resolve('deadline'), Math.max(0, deadline - Date.now()));
    });
    return Promise.race([caught, late]).finally(() => clearTimeout(timer));
  }
}

/** The service's stop as its parts see it: whether it is draining, and what stopping runs. */
export class Lifecycle {
  readonly steps = new ShutdownSteps();
  private drainingSince: number | undefined;

  /** From now on readiness answers 503; the waiting steps end at `deadline` (ms since the epoch). */
  startDraining(deadline: number) {
    this.drainingSince ??= Date.now();
    this.steps.waitNoLongerThan(deadline);
  }

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }
}
