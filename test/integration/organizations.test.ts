import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, bootstrapOrganization } from '../../src/application/organizations.js';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { DomainError } from '../../src/errors.js';
import { ORGANIZATIONS_PROJECTION } from '../../src/projections/organizations.js';
import { startTestService, type TestService } from '../support/api-harness.js';

describe('organizations under concurrency', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => service.stop());

  it('lets exactly one of 10 concurrent bootstraps claim a username', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, index) => bootstrapOrganization(service.services, { name: `Org ${index}`, usernames: [`own${index}`, 'zed'] }, { actor: 'test' })),
    );
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const lost = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect(won).toHaveLength(1);
    for (const outcome of lost) expect(outcome.reason).toMatchObject({ code: 'DUPLICATE_USERNAME' });
    await waitForProjection(service.infrastructure.db, ORGANIZATIONS_PROJECTION, await service.infrastructure.store.headPosition());
    const organizations = await service.infrastructure.db.selectFrom('organizations').select('name').execute();
    expect(organizations).toHaveLength(1);
    // the losers' other usernames were not claimed either: they can be used now
    const loserIndex = outcomes.findIndex((outcome) => outcome.status === 'rejected');
    await expect(bootstrapOrganization(service.services, { name: 'Later', usernames: [`own${loserIndex}`] }, { actor: 'test' })).resolves.toBeDefined();
  });

  it('adds 20 users concurrently to one organization: every one lands, each a signer', async () => {
    const { organization } = await service.bootstrap('Busy', ['first']);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => addUser(service.services, organization.id, `member${index}`, { actor: 'test' })),
    );
    await waitForProjection(service.infrastructure.db, ORGANIZATIONS_PROJECTION, results.reduce((max, result) => (result.position > max ? result.position : max), 0n));
    const users = await service.infrastructure.db.selectFrom('users').select('username').where('org_id', '=', organization.id).execute();
    expect(users.map((user) => user.username).sort()).toEqual(['first', ...Array.from({ length: 20 }, (_, index) => `member${index}`)].sort());
    const error = await addUser(service.services, organization.id, 'Member3', { actor: 'test' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'DUPLICATE_USERNAME' });
  });
});
