import { randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';

/** Access tokens (CONTRACT §3): HS256 only, one hour, issuer and audience checked. */
export const ACCESS_TOKEN = { issuer: 'ledgergate', audience: 'ledgergate-api', lifetimeSeconds: 3600 } as const;

export interface AccessTokenClaims {
  userId: string;
  orgId: string;
}

export const issueAccessToken = (key: Uint8Array, claims: AccessTokenClaims, now: Date): Promise<string> =>
  new SignJWT({ org: claims.orgId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.userId)
    .setIssuer(ACCESS_TOKEN.issuer)
    .setAudience(ACCESS_TOKEN.audience)
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime(Math.floor(now.getTime() / 1000) + ACCESS_TOKEN.lifetimeSeconds)
    .setJti(randomUUID())
    .sign(key);

/** the claims of a valid token, or null for an expired, tampered, foreign or malformed one */
export const verifyAccessToken = async (key: Uint8Array, token: string, now: Date): Promise<AccessTokenClaims | null> => {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      issuer: ACCESS_TOKEN.issuer,
      audience: ACCESS_TOKEN.audience,
      currentDate: now,
      requiredClaims: ['sub', 'exp', 'iat'],
    });
    if (typeof payload.sub !== 'string' || typeof payload.org !== 'string') return null;
    return { userId: payload.sub, orgId: payload.org };
  } catch {
    return null;
  }
};
