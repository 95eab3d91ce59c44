import type { OrganizationServices } from '../../application/organizations.js';
import { createRouter } from '../router.js';
import { loginHandler, profileHandler } from './handlers.js';
import type { LoginLimits } from './login-limits.js';
import { loginRoute, profileRoute } from './routes.js';

/** POST /auth/login is public; failures are limited per username and client address (login-limits.ts). */
export const loginRoutes = (services: OrganizationServices, limits: LoginLimits) => createRouter().openapi(loginRoute, loginHandler(services, limits));

/** GET /auth/profile, behind authentication and requirePerson. */
export const profileRoutes = (services: OrganizationServices) => createRouter().openapi(profileRoute, profileHandler(services));
