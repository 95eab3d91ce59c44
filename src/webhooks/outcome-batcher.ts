import type { AttemptOutcome, ClaimedDelivery, RecordedOutcome } from './claims.js';

type RecordMany = (attempts: { claim: ClaimedDelivery; outcome: AttemptOutcome }[]) => Promise<RecordedOutcome[]>;

interface Waiting {
  claim: ClaimedDelivery;
  outcome: AttemptOutcome;
  resolve: (recorded: RecordedOutcome) => void;
  reject: (error: unknown) => void;
}

/** Attempts recorded per statement at most. */
const MAX_RECORD_BATCH = 500;

/**
 * Group commit for attempt outcomes: an outcome is written at once when no write is under way;
 * the ones that end meanwhile wait and go together in the next statement. So a quiet dispatcher
 * records each attempt straight away, and a busy one makes one round trip (and one commit) for
 * many attempts instead of a transaction each. Each caller still learns its own outcome, after it
 * is committed.
 */
export class OutcomeBatcher {
  private waiting: Waiting[] = [];
  private writing: Promise<void> | null = null;

  constructor(private readonly recordMany: RecordMany) {}

  record(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<RecordedOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ claim, outcome, resolve, reject });
      this.writing ??= this.writeAll();
    });
  }

  private async writeAll(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_RECORD_BATCH);
      try {
        const recorded = await this.recordMany(batch.map(({ claim, outcome }) => ({ claim, outcome })));
        batch.forEach((entry, index) => entry.resolve(recorded[index]!));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.writing = null;
  }
}
