import { describe, expect, it } from 'vitest';
import { streams } from '../../src/domain/streams.js';

/**
 * Stream names are stored identifiers: a claim made yesterday must be found by today's name. The
 * digested parts are SHA-256 of the value's UTF-8 bytes, in hex, pinned here to values computed once.
 */
describe('stream names', () => {
  it('digest the reference, the login name and the external user id as they always did', () => {
    expect(streams.withdrawalReference('org-1', 'ref-ünïcode-€-1')).toBe('withdrawalReference-org-1-588f1e10f3d52b982c1dccd4b55632ce744fff2a15e66e54ac3e2b16ee45ee76');
    expect(streams.usernameClaim('ALICE')).toBe('username-2bd806c97f0e00af1a1fc3328fa763a9269723c8db8fac4f93af71db186d6e90');
    expect(streams.account('org-1', 'eip155:1', 'user-42')).toBe('account-org-1-eip155:1-6d894aa3ee802549d7f340e7c1cf0d1c1cb14cd84f768d92ffaa6785337c4997');
  });
});
