import { DomainError } from '../domain/errors.js';

/**
 * An in-process serializer keyed by stream name. Commands on one hot stream (an organization's
 * ledger of one token takes every deposit and withdrawal of that token) run one after another
 * in this process instead of colliding on the expected revision and retrying; conflicts with other
 * processes are still possible and still retried by the command itself.
 *
 * Bounded: at most `maxQueuedPerStream` tasks wait on one stream; beyond that a task is refused
 * with SERVICE_UNAVAILABLE at once rather than queued without limit. Idle streams leave no entry.
 */
export class StreamQueue {
  private readonly queues = new Map<string, { tail: Promise<void>; queued: number }>();

  constructor(readonly maxQueuedPerStream = 10_000) {}

  /** runs `task` after every task queued earlier on `stream` has settled; its result or error is the caller's */
  run<T>(stream: string, task: () => Promise<T>): Promise<T> {
    const queue = this.queues.get(stream) ?? { tail: Promise.resolve(), queued: 0 };
    if (queue.queued >= this.maxQueuedPerStream) {
      return Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'Too many commands are waiting on one ledger; retry shortly', { stream }));
    }
    queue.queued++;
    this.queues.set(stream, queue);
    const result = queue.tail.then(task);
    queue.tail = result.then(
      () => this.settled(stream, queue),
      () => this.settled(stream, queue),
    );
    return result;
  }

  /** streams with tasks running or waiting (for tests and diagnostics) */
  get activeStreams(): number {
    return this.queues.size;
  }

  private settled(stream: string, queue: { queued: number }) {
    queue.queued--;
    if (queue.queued === 0 && this.queues.get(stream) === queue) this.queues.delete(stream);
  }
}

/** The process's queue: every command module shares it, so all writers of one stream take turns. */
export const sharedStreamQueue = new StreamQueue();
