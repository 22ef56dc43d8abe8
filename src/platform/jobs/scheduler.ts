// Periodic jobs that run once across all instances: before each run an instance takes the job's
// lease row in the database; the lease lasts one interval, so whichever instance takes it first
// runs the job and the others skip that round.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type { Executor } from '../db/values.js';

export interface Job {
  name: string;
  /** What it answers (a count of rows cleaned, say) is not used. */
  run(): Promise<unknown>;
}

export class Scheduler {
  private readonly instance = randomUUID();
  private readonly jobs: Job[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Executor,
    private readonly intervalSeconds: number,
    private readonly log: Pick<FastifyBaseLogger, 'error'>,
    private readonly onRun: (job: string, outcome: 'ok' | 'failed', seconds: number) => void = () => {},
  ) {}

  add(job: Job) {
    this.jobs.push(job);
  }

  start() {
    this.timer = setInterval(() => void this.tick(), this.intervalSeconds * 1000);
    this.timer.unref();
  }

  /** No new round starts; resolves once the round under way (if any) has ended. */
  async stop() {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /**
   * Gives back the leases this instance holds, after stop(): another instance takes them at its next
   * round instead of waiting for them to run out (up to one interval with the job not run).
   */
  async releaseLeases() {
    await this.db.deleteFrom('job_leases').where('holder', '=', this.instance).execute();
  }

  /** One round: every job whose lease this instance wins runs now. */
  tick(): Promise<void> {
    this.running ??= this.runDueJobs().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * Runs every job (or the one named) now on this instance, without taking a lease: for an operator's
   * or a test's explicit request, which must not wait for the next round nor be skipped by one.
   */
  async runNow(name?: string): Promise<void> {
    for (const job of this.jobs) if (!name || job.name === name) await this.runJob(job);
  }

  private async runJob(job: Job) {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      await job.run();
      this.onRun(job.name, 'ok', seconds());
    } catch (err) {
      this.log.error({ err, job: job.name }, 'scheduled job failed');
      this.onRun(job.name, 'failed', seconds());
    }
  }

  private async runDueJobs() {
    for (const job of this.jobs) {
      let leased = false;
      try {
        leased = await this.takeLease(job.name);
      } catch (err) {
        this.log.error({ err, job: job.name }, 'scheduled job lease could not be taken');
      }
      if (leased) await this.runJob(job);
    }
  }

  private async takeLease(name: string): Promise<boolean> {
    // Leases share real timer rounds between instances: the system clock, not the injected one.
    const now = new Date();
    // A little short of the interval, so that timer drift never makes an instance skip its turn.
    const until = new Date(now.getTime() + this.intervalSeconds * 900).toISOString();
    const taken = await this.db
      .insertInto('job_leases')
      .values({ name, holder: this.instance, lease_until: until })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder: this.instance, lease_until: until })
          .where(sql<boolean>`job_leases.lease_until < ${now.toISOString()}`),
      )
      .returning('name')
      .executeTakeFirst();
    return taken !== undefined;
  }
}
